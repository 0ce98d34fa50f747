"""The study's figures: latency improvement per bucket, retransmission rates, the populations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from iwlab.studies.base import Figure, Table
from iwlab.studies.rfc6928.population import ALL, BDP_LABELS, BW_LABELS, RTT_LABELS


def _series(t: Table, labels: Sequence[str], col: str) -> tuple[list[float], list[float], list[float]]:
    get = lambda df: [float(df.loc[r, col]) if r in df.index and col in df.columns else np.nan for r in labels]
    return get(t.frame), get(t.low), get(t.high)


def figures(tabs: dict[str, Table], data: dict[str, pd.DataFrame]) -> list[Figure]:
    from iwlab.report import figures as fg

    panels = []
    for name, labels, title in (("latency_by_bandwidth", BW_LABELS, "by access bandwidth"),
                                ("latency_by_rtt", RTT_LABELS, "by base RTT"),
                                ("latency_by_bdp", BDP_LABELS, "by BDP")):
        t = tabs[name]
        panels.append((title, "latency improvement IW10 vs IW3 (%)",
                       {pop: _series(t, [ALL, *labels], f"{pop} improvement %") for pop in data}))
    figs = [Figure("fig_improvement", _bars(panels, [[ALL, *BW_LABELS], [ALL, *RTT_LABELS], [ALL, *BDP_LABELS]]),
                   "Latency improvement of IW10 over IW3 per bucket (95 % bootstrap intervals across seeds).")]
    rt, fb = tabs["retransmissions"], tabs["fallback"]
    rpanels = []
    for pop in data:
        rows = [f"{pop} {b}" for b in (ALL, *BW_LABELS)]
        rpanels.append((pop, "retransmission rate (%)", {
            "IW3": _series(rt, rows, "IW3 %"), "IW10": _series(rt, rows, "IW10 %"),
            "IW10 + fallback": _series(fb, rows, "fallback retx %")}))
    figs.append(Figure("fig_retransmissions", _bars(rpanels, [[ALL, *BW_LABELS]] * len(rpanels)),
                       "Retransmission rate per access-bandwidth bucket: IW3, IW10 and IW10 with the fallback cache."))
    seed1 = {pop: f[(f["iw"] == "iw3") & (f["seed"] == f["seed"].min())].drop_duplicates("client") for pop, f in data.items()}
    figs.append(Figure("fig_population", fg.cdf_panels(
        [("access rate", {pop: h["rate"] / 1e6 for pop, h in seed1.items()}),
         ("base RTT", {pop: h["rtt"] * 1000 for pop, h in seed1.items()})], "access rate (Mb/s) | base RTT (ms)"),
        "The populations (first seed's client hosts): access rate (Mb/s) and base RTT (ms). Delays are drawn "
        "from the same stream in both populations, so their RTT curves coincide."))
    return figs


def _bars(panels: Sequence[tuple[str, str, dict[str, tuple[list[float], list[float], list[float]]]]],
          xlabels: Sequence[Sequence[str]]) -> bytes:
    from matplotlib.figure import Figure as MplFigure

    from iwlab.report.figures import png

    fig = MplFigure(figsize=(11.0, 3.8 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False).ravel()
    for ax, (title, ylabel, series), labels in zip(axes, panels, xlabels):
        x = np.arange(len(labels))
        width = 0.8 / max(1, len(series))
        for i, (label, (y, lo, hi)) in enumerate(series.items()):
            y, lo, hi = (np.asarray(a, dtype=float) for a in (y, lo, hi))
            err = np.clip(np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)]), 0, None)
            ax.bar(x + (i - (len(series) - 1) / 2) * width, np.nan_to_num(y), width, yerr=err, capsize=3, label=label,
                   color=f"C{i}")
        ax.axhline(0, color="k", linewidth=0.8)
        ax.set_xticks(x, list(labels))
        ax.set(title=title, ylabel=ylabel)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
    return png(fig)
