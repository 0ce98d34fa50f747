"""Congested-links study: per-run metrics, the tables in the paper's layout (IW10/IW3 ratios, losses,
retransmissions, timeouts), the figures and the sentences computed from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Cell, Figure, Table, cell
from iwlab.studies.congested_links.scenarios import IWS, Plan


# ---------------------------------------------------------------------------------------------
# Tables


def unreceived(flows: pd.DataFrame) -> pd.Series:
    """Flows recorded as complete although a lost data packet was never sent again (more packets
    lost than retransmitted): the receiver took data it never got. A simulator defect (an
    out-of-order bare FIN moves the receiver past the holes before it); such flows' completion
    times are wrong, so the tables treat them as not completed."""
    return flows["completed"].astype(bool) & (flows["lost"] > flows["retransmits"])


def per_run(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per (pattern, level, size, iw, seed): the short flows' averages."""
    keys = ["pattern", "level", "size", "iw", "seed"]
    f = flows.copy()
    bad = unreceived(f)
    f.loc[bad, "completion"] = np.nan
    f.loc[bad, "completed"] = False
    f["throughput"] = np.where(f["completion"] > 0, f["response_bytes"] * 8 / f["completion"] / 1e3, np.nan)
    g = f.groupby(keys, sort=False)
    out = g.agg(flows=("flow", "size"), completed=("completed", "mean"), completion=("completion", "mean"),
                throughput=("throughput", "mean"), lost=("lost", "mean"), retransmits=("retransmits", "mean"),
                timeouts=("timeouts", "mean"), fast_retransmits=("fast_retransmits", "mean"),
                syn_retransmits=("syn_retransmits", "mean"), util=("util", "first"),
                drop_rate=("drop_rate", "first"))
    return out.reset_index()


def _row(pattern: str, level: float) -> str:
    return f"{pattern} {level:g} %"


def _cells_by(runs: pd.DataFrame, metric: str, scale: float = 1.0) -> dict[str, dict[str, Cell]]:
    cells: dict[str, dict[str, Cell]] = {}
    for (pattern, level), g in runs.groupby(["pattern", "level"], sort=False):
        row = cells.setdefault(_row(pattern, level), {})
        for size in sorted(g["size"].unique()):
            for iw in IWS:
                v = g[(g["size"] == size) & (g["iw"] == iw)][metric] * scale
                row[f"{size} seg {iw.upper()}"] = cell(v)
    return cells


def ratios(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """IW10/IW3 of `metric` per (pattern, level, size, seed): same seed ⇒ same background."""
    wide = runs.pivot_table(index=["pattern", "level", "size", "seed"], columns="iw", values=metric,
                            aggfunc="first", sort=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = wide["iw10"] / wide["iw3"]
    return r.rename("ratio").reset_index()


def _ratio_cells(rat: pd.DataFrame) -> dict[str, dict[str, Cell]]:
    cells: dict[str, dict[str, Cell]] = {}
    for (pattern, level, size), g in rat.groupby(["pattern", "level", "size"], sort=False):
        cells.setdefault(_row(pattern, level), {})[f"{size} seg"] = cell(g["ratio"].replace([np.inf, -np.inf], np.nan))
    return cells


def tables(runs: pd.DataFrame) -> list[Table]:
    idx = "pattern, level"
    per_flow = "per short flow (mean over the flows of a run, then over seeds)"
    out = [
        Table.from_cells("completion", "Mean completion time of the short flows (s)", _cells_by(runs, "completion"),
                         note="Completion = connection open (SYN) to the last response byte at the client.",
                         fmt="{:.3f}", index_name=idx),
        Table.from_cells("throughput", "Mean throughput of the short flows (kb/s): size / completion time",
                         _cells_by(runs, "throughput"), fmt="{:.1f}", index_name=idx),
        Table.from_cells("ratio_completion", "IW10/IW3 ratio of the mean completion time (< 1: IW10 faster)",
                         _ratio_cells(ratios(runs, "completion")), fmt="{:.3f}", index_name=idx,
                         note="Ratio per seed (IW3 and IW10 runs share the seed, hence the background), "
                              "then mean and 95 % bootstrap interval across seeds."),
        Table.from_cells("ratio_throughput", "IW10/IW3 ratio of the mean throughput (> 1: IW10 better)",
                         _ratio_cells(ratios(runs, "throughput")), fmt="{:.3f}", index_name=idx),
        Table.from_cells("losses", f"Packet losses {per_flow}", _cells_by(runs, "lost"), fmt="{:.2f}",
                         index_name=idx,
                         note="Data packets of the flow dropped at the bottleneck: sent − seen on the bottleneck (pcap)."),
        Table.from_cells("retransmissions", f"Retransmitted segments {per_flow}", _cells_by(runs, "retransmits"),
                         fmt="{:.2f}", index_name=idx),
        Table.from_cells("timeouts", f"Retransmission timeouts {per_flow}", _cells_by(runs, "timeouts"),
                         fmt="{:.3f}", index_name=idx),
        Table.from_cells("fast_retransmits", f"Fast retransmits (recovery episodes) {per_flow}",
                         _cells_by(runs, "fast_retransmits"), fmt="{:.3f}", index_name=idx),
    ]
    bg: dict[str, dict[str, Cell]] = {}
    for (pattern, level), g in runs.groupby(["pattern", "level"], sort=False):
        bg[_row(pattern, level)] = {
            "utilisation %": cell(g.groupby("seed")["util"].mean() * 100),
            "drop rate %": cell(g.groupby("seed")["drop_rate"].mean() * 100),
            "short flows per run": cell(g["flows"]),
            "completed %": cell(g["completed"] * 100),
        }
    out.append(Table.from_cells("bottleneck", "The bottleneck (servers → clients) as the runs saw it", bg,
                                fmt="{:.1f}", index_name=idx,
                                note="Utilisation and drop rate of all traffic (background + short flows), mean "
                                     "over the runs of a level (all sizes and both IWs)."))
    return out


# ---------------------------------------------------------------------------------------------
# Figures


def _lines(panels: Sequence[tuple[str, str, dict[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]]],
           x: Sequence[float], xlabel: str, ncols: int = 3, hline: float | None = None) -> bytes:
    from matplotlib.figure import Figure as MplFigure

    from iwlab.report.figures import png

    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig = MplFigure(figsize=(11.0, 3.4 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for n, (ax, (title, ylabel, series)) in enumerate(zip(axes, panels)):
        for i, (label, (y, lo, hi)) in enumerate(series.items()):
            y, lo, hi = (np.asarray(a, dtype=float) for a in (y, lo, hi))
            err = np.clip(np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)]), 0, None)
            ax.errorbar(np.asarray(x, dtype=float) + (i - (len(series) - 1) / 2) * 0.25, y, yerr=err, marker="o",
                        markersize=4, capsize=2, label=label, color=f"C{i % 10}",
                        linestyle="--" if "IW3" in label else "-")
        if hline is not None:
            ax.axhline(hline, color="k", linewidth=0.8, alpha=0.6)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.set_xticks(list(x))
        ax.grid(True, alpha=0.3)
        if n == 0:
            ax.legend(fontsize="x-small", ncols=2)
    return png(fig)


def _series(t: Table, rows: Sequence[str], col: str) -> tuple[list[float], list[float], list[float]]:
    get = lambda df: [float(df.loc[r, col]) if df is not None and r in df.index else np.nan for r in rows]
    return get(t.frame), get(t.low), get(t.high)


def figures(tabs: dict[str, Table], p: Plan) -> list[Figure]:
    levels = list(p.levels)
    figs = []
    for name, what, ref in (("ratio_completion", "completion time", 1.0), ("ratio_throughput", "throughput", 1.0)):
        t = tabs[name]
        panels = [(pattern, f"IW10/IW3 {what}",
                   {f"{s} seg": _series(t, [_row(pattern, lv) for lv in levels], f"{s} seg") for s in p.sizes})
                  for pattern in p.patterns]
        figs.append(Figure(f"fig_{name}", _lines(panels, levels, "congestion level (% of the bottleneck)", hline=ref),
                           f"IW10/IW3 ratio of the mean {what} per congestion level, one panel per pattern "
                           "(95 % bootstrap intervals across seeds; the line marks equality)."))
    for name, ylabel, caption in (
            ("completion", "mean completion time (s)", "Mean completion time of the short flows"),
            ("losses", "packets lost per flow", "Packet losses per short flow"),
            ("timeouts", "timeouts per flow", "Retransmission timeouts per short flow")):
        t = tabs[name]
        panels = [(f"{s} segments", ylabel,
                   {f"{pattern} IW{iw[2:]}": _series(t, [_row(pattern, lv) for lv in levels], f"{s} seg {iw.upper()}")
                    for pattern in p.patterns for iw in IWS}) for s in p.sizes]
        figs.append(Figure(f"fig_{name}", _lines(panels, levels, "congestion level (%)", ncols=2),
                           f"{caption} vs congestion level, one panel per flow size; dashed = IW3, solid = IW10."))
    return figs


# ---------------------------------------------------------------------------------------------
# Conclusions: sentences built from the tables


def _fmt_range(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    v = [x for x in values if np.isfinite(x)]
    if not v:
        return "—"
    lo, hi = min(v), max(v)
    return fmt.format(lo) if np.isclose(lo, hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def conclusions(tabs: dict[str, Table], runs: pd.DataFrame, p: Plan, rtt_ms: float) -> list[str]:
    """Six sentences, every number read off the tables (or the per-run records)."""
    rc, rt, ct = tabs["ratio_completion"], tabs["ratio_throughput"], tabs["completion"]
    lost, to, fr = tabs["losses"], tabs["timeouts"], tabs["fast_retransmits"]
    lo_level, hi_level = min(p.levels), max(p.levels)
    # A row pattern that runs at one level only (the iperf reading's varying) is left out of the
    # sentences about the lowest and highest levels.
    low = [_row(pt, lo_level) for pt in p.patterns if _row(pt, lo_level) in rc.frame.index]
    top = [_row(pt, hi_level) for pt in p.patterns if _row(pt, hi_level) in rc.frame.index]
    out = []

    def ranges(level: float) -> str:
        return ", ".join(f"{_fmt_range(rc.frame.loc[_row(pt, level)].to_numpy(dtype=float))} ({pt})"
                         for pt in p.patterns if _row(pt, level) in rc.frame.index)

    out.append(f"The IW10/IW3 ratio of mean completion time across flow sizes is {ranges(lo_level)} at {lo_level} % "
               f"congestion and {ranges(hi_level)} at {hi_level} % (below 1: IW10 finishes sooner).")
    # Where IW10 is significantly worse or better: the whole interval above/below 1.
    worse = [(r, c) for r in rc.frame.index for c in rc.frame.columns if rc.low.loc[r, c] > 1]
    better = [(r, c) for r in rc.frame.index for c in rc.frame.columns if rc.high.loc[r, c] < 1]
    mean_by = ", ".join(f"{float(np.nanmean(rc.frame.loc[[r for r in rc.frame.index if _row_keys(r)['pattern'] == pt]].to_numpy(dtype=float))):.2f} "
                        f"({pt})" for pt in p.patterns)
    if worse:
        shown = ", ".join(f"{c} at {r}" for r, c in worse[:4]) + (" …" if len(worse) > 4 else "")
        out.append(f"IW10 is significantly slower than IW3 (the ratio's whole interval above 1) in {len(worse)} of "
                   f"{rc.frame.size} (pattern, level, size) cases ({shown}) and significantly faster in "
                   f"{len(better)}; averaged over levels and sizes the ratio is {mean_by}.")
    else:
        out.append(f"IW10 is never significantly slower than IW3 (no ratio interval lies above 1) and significantly "
                   f"faster in {len(better)} of {rc.frame.size} (pattern, level, size) cases; averaged over levels and "
                   f"sizes the ratio is {mean_by}.")

    def avg(t: Table, rows: list[str], iw: str) -> float:
        cols = [c for c in t.frame.columns if c.endswith(iw.upper())]
        return float(np.nanmean(t.frame.loc[rows, cols].to_numpy(dtype=float)))

    by_pat = {_row_keys(r)["pattern"]: float(np.nanmean(lost.frame.loc[r].to_numpy(dtype=float))) for r in top}
    worst, best = max(by_pat, key=by_pat.__getitem__), min(by_pat, key=by_pat.__getitem__)
    out.append(f"Averaged over sizes and patterns a short flow loses {avg(lost, low, 'iw3'):.2f} packets with IW3 vs "
               f"{avg(lost, low, 'iw10'):.2f} with IW10 at {lo_level} % and {avg(lost, top, 'iw3'):.2f} vs "
               f"{avg(lost, top, 'iw10'):.2f} at {hi_level} %, where the {worst} pattern costs most "
               f"({by_pat[worst]:.2f} per flow, both IWs) and the {best} pattern least ({by_pat[best]:.2f}).")
    small = [s for s in p.sizes if s <= 10]
    fr10 = (float(np.nanmean(fr.frame[[f"{s} seg IW10" for s in small]].to_numpy(dtype=float))) if small else np.nan)
    tail = ""
    if small and fr10 < 0.01:
        tail = (f"; {'/'.join(map(str, small))}-segment flows with IW10 (all data in the first flight, so losses are "
                f"at its tail) almost never recover by fast retransmit ({fr10:.3f} per flow): timeouts repair them")
    elif small:
        tail = f"; {'/'.join(map(str, small))}-segment flows with IW10 take {fr10:.3f} fast retransmits per flow"
    out.append(f"At {hi_level} % IW10 takes {avg(to, top, 'iw10'):.3f} timeouts and {avg(fr, top, 'iw10'):.3f} fast "
               f"retransmits per flow vs {avg(to, top, 'iw3'):.3f} and {avg(fr, top, 'iw3'):.3f} with IW3" + tail + ".")
    # Sizes: rounds with IW3 (9 vs 10, 21 vs 22) and the gain of IW10 per size, lowest level.
    first = _row(p.patterns[0], lo_level)
    steps = []
    for a, b in ((9, 10), (21, 22)):
        if a in p.sizes and b in p.sizes:
            d3 = ct.frame.loc[first, f"{b} seg IW3"] - ct.frame.loc[first, f"{a} seg IW3"]
            d10 = ct.frame.loc[first, f"{b} seg IW10"] - ct.frame.loc[first, f"{a} seg IW10"]
            steps.append(f"{b} rather than {a} segments add {d3 * 1000:.0f} ms with IW3 and {d10 * 1000:.0f} ms "
                         "with IW10")
    per_size = {c: float(np.nanmean(rt.frame.loc[low, c].to_numpy(dtype=float))) for c in rt.frame.columns}
    out.append((f"At {p.patterns[0]} {lo_level} % " + " and ".join(steps) + f" (RTT {rtt_ms:g} ms); " if steps else "")
               + "the IW10/IW3 throughput ratio at " + f"{lo_level} % (mean over patterns) is "
               + ", ".join(f"{v:.2f} for {c}" for c, v in per_size.items()) + ".")
    # Retransmissions that were not losses.
    share = []
    for iw in IWS:
        g = runs[runs["iw"] == iw]
        rx, lost_ = float((g["retransmits"] * g["flows"]).sum()), float((g["lost"] * g["flows"]).sum())
        if rx > 0:
            share.append(f"{100 * (rx - lost_) / rx:.0f} % of {rx:.0f} with {iw.upper()}")
    if share:
        out.append("Retransmissions overstate losses: " + " and ".join(share) + " retransmitted segments had not been "
                   "lost (go-back after a timeout, the rescue retransmission of a flow's last segment, bare FINs).")
    return out




def _row_keys(r: Any) -> dict[str, Any]:
    pattern, level = str(r).removesuffix(" %").rsplit(" ", 1)
    return {"pattern": pattern, "level": float(level)}


def _col_keys(c: Any, table: str) -> dict[str, Any]:
    """"9 seg IW10" → size 9, iw 10, metric = the table's name; "9 seg" (ratios) → size 9; other
    columns (the bottleneck table) → their own metric."""
    from iwlab.studies.base import metric_name

    parts = str(c).split()
    if len(parts) >= 2 and parts[1] == "seg" and parts[0].isdigit():
        iw = int(parts[2][2:]) if len(parts) > 2 else None
        return {"size": int(parts[0]), "iw": iw, "metric": table}
    return {"size": None, "iw": None, "metric": metric_name(str(c))}
