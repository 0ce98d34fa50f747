"""The study's conclusions, in sentences, from its §5.1 rounds and its tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from iwlab.studies.base import Table
from iwlab.studies.rfc6928.population import ALL


def conclusions(t51: pd.DataFrame, tabs: dict[str, Table], pops: Sequence[str]) -> list[str]:
    out = []
    diff = t51[t51["rounds"] != t51["rfc"]]
    if diff.empty:
        out.append(f"The §5.1 round-trip table comes out of the simulation exactly as in the RFC (all {len(t51)} cells).")
    else:
        out.append("The §5.1 table differs from the RFC in " + ", ".join(
            f"IW{r.iw}/{r.segments} segments ({r.rounds} vs {r.rfc})" for r in diff.itertuples()) + ".")
    bw, rtt, bdp = tabs["latency_by_bandwidth"], tabs["latency_by_rtt"], tabs["latency_by_bdp"]

    def v(t: Table, row: str, col: str) -> str:
        x, lo, hi = t.frame.loc[row, col], t.low.loc[row, col], t.high.loc[row, col]
        return f"{x:.1f} % [{lo:.1f}, {hi:.1f}]" if np.isfinite(x) else "—"

    out.append("IW10 lowers the mean response latency by " + " and ".join(
        f"{v(bw, ALL, f'{p} improvement %')} ({p})" for p in pops) + " over all responses "
        "(RFC 6928 reports 11.7 % for AvgDC and 8.7 % for SlowDC).")
    spans = []
    for p in pops:
        dims = []
        for t, what in ((bw, "bandwidth"), (rtt, "RTT"), (bdp, "BDP")):
            col = t.frame[f"{p} improvement %"].drop(ALL, errors="ignore").dropna()
            if len(col):
                dims.append(f"by {what} from {col.min():.1f} % ({col.idxmin()}) to {col.max():.1f} % ({col.idxmax()})")
        if dims:
            spans.append(f"{p} " + ", ".join(dims))
    if spans:
        out.append("Per bucket the gain ranges — " + "; ".join(spans) + ".")
    parts = []
    rt = tabs["retransmissions"]
    for p in pops:
        r = f"{p} {ALL}"
        parts.append(f"{rt.frame.loc[r, 'IW3 %']:.2f} % → {rt.frame.loc[r, 'IW10 %']:.2f} % "
                     f"({rt.frame.loc[r, 'IW10 − IW3 (pp)']:+.2f} pp [{rt.low.loc[r, 'IW10 − IW3 (pp)']:+.2f}, "
                     f"{rt.high.loc[r, 'IW10 − IW3 (pp)']:+.2f}]) for {p}")
    out.append("The retransmission rate goes " + ", ".join(parts) + " (RFC 6928: +0.3 pp and +0.7 pp).")
    fb = tabs["fallback"]
    parts = []
    for p in pops:
        r = f"{p} {ALL}"
        parts.append(f"{p}: {fb.frame.loc[r, 'responses with a reduced IW %']:.1f} % of responses start with a "
                     "reduced IW, "
                     f"retransmissions {fb.frame.loc[r, 'retx change (pp)']:+.2f} pp, latency "
                     f"{fb.frame.loc[r, 'latency change %']:+.1f} %")
    out.append("The fallback cache, against plain RFC 6928: " + "; ".join(parts) + ".")
    return out
