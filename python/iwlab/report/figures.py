"""Figures as PNG bytes, drawn with matplotlib's object API on the Agg canvas (no pyplot state).

Each function takes plain data (labels → arrays) so it can be tested and reused without a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from io import BytesIO

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from iwlab import stats

# series label -> (y, ci_low, ci_high) at each x position
Series = Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]

_STYLES = ("-", "--", ":", "-.")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _grid(n: int, ncols: int, width: float = 5.2, height: float = 3.6, **kw) -> tuple[Figure, list]:
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    width = min(width, 11.0 / ncols)  # the page is about 1100 px wide at 100 dpi
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def cdf_panels(panels: Sequence[tuple[str, Mapping[str, Sequence[float]]]], xlabel: str,
               logx: bool = True, ncols: int = 2) -> bytes:
    """One panel per (title, {label: values}): the empirical CDF of each label's values."""
    fig, axes = _grid(len(panels), ncols)
    for ax, (title, groups) in zip(axes, panels):
        for i, (label, values) in enumerate(groups.items()):
            x, p = stats.cdf(values)
            if x.size:
                ax.step(x, p, where="post", label=f"{_cut(label, 30)} (n={x.size})", linestyle=_STYLES[i // 10 % 4])
        _log_x(ax, [np.asarray(v, dtype=float) for v in groups.values()], logx)
        ax.set(title=title, xlabel=xlabel, ylabel="P(X ≤ x)", ylim=(0, 1.02))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    return png(fig)


def _log_x(ax, values: list[np.ndarray], logx: bool) -> None:
    """A log x axis with plain labels when the positive values span at least a decade."""
    pos = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in values]) if values else np.array([])
    if logx and pos.size and pos.max() >= 10 * pos.min():
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())


def versus(panels: Sequence[tuple[str, str, Series]], xlabels: Sequence[str], xlabel: str,
           ncols: int = 3, legend_title: str = "") -> bytes:
    """One panel per (title, ylabel, series): each series' value at each x with its CI as error bars.
    Every panel has the same series; the first one carries the legend."""
    fig, axes = _grid(len(panels), ncols, width=4.6)
    x = np.arange(len(xlabels))
    for n, (ax, (title, ylabel, series)) in enumerate(zip(axes, panels)):
        for i, (label, (y, lo, hi)) in enumerate(series.items()):
            y, lo, hi = (np.asarray(a, dtype=float) for a in (y, lo, hi))
            err = np.vstack([np.where(np.isfinite(lo), y - lo, 0), np.where(np.isfinite(hi), hi - y, 0)])
            ax.errorbar(x + (i - (len(series) - 1) / 2) * 0.04, y, yerr=np.clip(err, 0, None), marker="o",
                        capsize=3, label=label or None, linestyle=_STYLES[i // 10 % 4])
        ax.set_xticks(x, [_cut(str(v), 18) for v in xlabels])
        ax.set_xlim(-0.5, len(xlabels) - 0.5)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.grid(True, alpha=0.3)
        if n == 0 and any(series):
            ax.legend(fontsize="small", title=legend_title or None, title_fontsize="small")
    return png(fig)


def timeseries(panels: Sequence[tuple[str, Mapping[str, tuple[Sequence[float], Sequence[float]]]]],
               ylabel: str, ncols: int = 1) -> bytes:
    """One panel per (title, {label: (t, y)}): step lines over time, axes shared."""
    fig, axes = _grid(len(panels), ncols, width=11.0, height=2.4, sharex=True, sharey=True)
    for ax, (title, lines) in zip(axes, panels):
        for i, (label, (t, y)) in enumerate(lines.items()):
            ax.step(np.asarray(t, dtype=float), np.asarray(y, dtype=float), where="post", label=label,
                    linewidth=0.8, color=f"C{i}")
        ax.set(title=title, xlabel="time (s)", ylabel=ylabel)
        ax.grid(True, alpha=0.3)
        ax.label_outer()
        if lines:
            ax.legend(fontsize="small", loc="upper right")
    return png(fig)
