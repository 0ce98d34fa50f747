"""RFC 6928 Appendix A, "Why 10 segments?" (p. 22): the AvgDC-like population of the rfc6928 study
run again with fixed IWs of 6, 16 and 32 segments beside its IW3 (RFC 3390) and IW10 (RFC 6928)
runs — same seeds, so the same hosts, pages and think times — to see whether 10 segments give
most of the latency benefit of the larger windows tried, and what each costs in retransmissions."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Cell, Table, cell, metric_name

#: The extra windows, segments (fixed policies); IW3 and IW10 come from the main sweep.
EXTRA = (6, 16, 32)
POLICY = {f"iw{n}": {"kind": "fixed", "segments": n} for n in EXTRA}
ORDER = ("iw3", "iw6", "iw10", "iw16", "iw32")
#: The larger windows IW10's gain is compared with.
LARGER = ("iw16", "iw32")
POPULATION = "AvgDC"


def scenario(base: Any) -> Any:
    """The population scenario `base` with the fixed IW6/16/32 policies added."""
    from iwlab.scenario import Scenario

    data = copy.deepcopy(base.data)
    data["iw"]["policies"].update(copy.deepcopy(POLICY))
    return Scenario.from_data(data, f"rfc6928 {POPULATION} at IW {', '.join(map(str, EXTRA))} (study)")


def per_seed(f: pd.DataFrame) -> pd.DataFrame:
    """Per (seed, iw): mean latency of the web responses (s) and retransmission rate (%), from
    flow rows with `seed`, `iw`, `latency`, `retransmits`, `data_segments`."""
    g = f[f["iw"].isin(ORDER)].groupby(["seed", "iw"])
    out = g.agg(latency=("latency", "mean"), retx=("retransmits", "sum"), segs=("data_segments", "sum"))
    out["retx_pct"] = out["retx"] / out["segs"] * 100
    return out[["latency", "retx_pct"]].unstack("iw")


def gains(ps: pd.DataFrame) -> pd.DataFrame:
    """Per seed: latency gain over IW3 (1 − L/L3, %) of each IW, and IW10's share of the gain of
    each larger IW (%; left out for a seed where that IW gains nothing, as the share is then
    undefined)."""
    lat = ps["latency"]
    g = (1 - lat.div(lat["iw3"], axis=0)) * 100
    out = g.add_prefix("gain ")
    for k in LARGER:
        if k in g and "iw10" in g:
            out[f"share {k}"] = g["iw10"] / g[k].where(g[k] > 0) * 100
    return out


def table(f: pd.DataFrame) -> Table:
    ps = per_seed(f)
    gn = gains(ps)
    cells: dict[str, dict[str, Cell]] = {}
    for k in ORDER:
        if k not in ps["latency"]:
            continue
        r = {"latency (ms)": cell(ps["latency"][k] * 1000), "improvement over IW3 %": cell(gn[f"gain {k}"]),
             "retransmissions %": cell(ps["retx_pct"][k]),
             "retx − IW3 (pp)": cell(ps["retx_pct"][k] - ps["retx_pct"]["iw3"])}
        if f"share {k}" in gn:
            r["IW10's share of this gain %"] = cell(gn[f"share {k}"])
        cells[k.upper()] = r
    t = Table.from_cells("iw_sizes", f"Why 10 segments: the {POPULATION} population at IW 3, 6, 10, 16 and 32", cells,
                         fmt="{:.2f}", index_name="initial window",
                         note="IW3 = RFC 3390 (4380 B), IW10 = RFC 6928 (10 segments), IW6/16/32 fixed; same seeds "
                              "(same hosts and pages) for every IW; improvement = 1 − L/L(IW3) per seed; IW10's "
                              "share = IW10's improvement ÷ this IW's, per seed.")
    t.row_keys = lambda r: {"iw": int(str(r).removeprefix("IW"))}
    t.col_keys = lambda c: {"metric": metric_name(str(c))}
    return t


# ---------------------------------------------------------------------------------------------
# Claims, written from the RFC's sentence before the first run.

#: "most of the benefits": more than half (as `10-retx-baseline` reads "most").
MOST_PCT = 50.0
#: "not causing significant increase in the retransmission rates": below 1 point (§10.2 calls
#: +0.3 and +0.7 points "modest").
SIGNIFICANT_PP = 1.0


def ledger(pops: list[str], all_label: str) -> list[Any]:
    from iwlab.studies.claims import Check, Claim, Direction, Ref

    return [
        Claim("A-iw10/benefit", "RFC 6928 Appendix A", "Appendix A, p. 22",
              "Of the initial windows tried, 10 segments give most of the latency benefit.",
              f"IW10's latency gain over IW3 as a share of the gain of IW16 and of IW32, %, per seed ({POPULATION}); "
              f"'most' read as above {MOST_PCT:g} %", Direction(">", MOST_PCT),
              tuple(Check(f"{POPULATION}, of {k.upper()}'s gain", Ref("iw_sizes", k.upper(), "IW10's share of this gain %"))
                    for k in LARGER), ("iw_sizes",), "%", f"> {MOST_PCT:g} % ('most', no number)"),
        Claim("A-iw10/retx", "RFC 6928 Appendix A", "Appendix A, p. 22",
              "... without a significant rise in the retransmission rate.",
              f"retransmission rate IW10 − IW3, percentage points, paired by seed; 'significant' read as "
              f"{SIGNIFICANT_PP:g} point or more (§10.2 calls +0.3 and +0.7 points modest)",
              Direction("<", SIGNIFICANT_PP),
              tuple(Check(p, Ref("retransmissions", f"{p} {all_label}", "IW10 − IW3 (pp)")) for p in pops),
              ("retransmissions", "iw_sizes"), "pp", f"< {SIGNIFICANT_PP:g}"),
    ]


def conclusion(t: Table) -> str:
    fr = t.frame
    parts = [f"{k} {fr.loc[k, 'improvement over IW3 %']:.1f} % ({fr.loc[k, 'retx − IW3 (pp)']:+.2f} pp retx)"
             for k in fr.index if k != "IW3" and np.isfinite(fr.loc[k, "improvement over IW3 %"])]
    return f"Latency gain over IW3 in the {POPULATION} population by IW: " + ", ".join(parts) + "."
