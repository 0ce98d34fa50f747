"""Figures of runs, sweeps and packet traces, as matplotlib `Figure`s (for notebooks and scripts):

    import iwlab, iwlab.plot
    runs = {iw: iwlab.run("rfc2415", seed=1, ...) for iw in ...}   # or DataFrames of flows
    iwlab.plot.completion_cdf(runs)                 # completion-time CDFs, one line per run
    iwlab.plot.ratio_vs_size(runs, baseline="iw1")  # median completion / the baseline's, by size
    iwlab.plot.cwnd_time("trace.pcap")              # bytes in flight over time, from `iwlab trace`
    iwlab.plot.grid_heatmap(df, x=..., y=..., value=...)  # a sweep's grid (iwlab.sweep's rows)

matplotlib and pandas are imported when a function is called, never by `import iwlab` or on
the `iwlab run` path. Figures are drawn with the object API (`matplotlib.figure.Figure`, no
pyplot state): a notebook shows each one returned (after `%matplotlib inline`), a script saves it with
`fig.savefig(PATH)`. Every function takes `ax=` to draw into an existing axes instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["completion_cdf", "ratio_vs_size", "cwnd_time", "flight_series", "grid_heatmap"]

_STYLES = ("-", "--", ":", "-.")


def _axes(ax, figsize=(6.0, 4.0)):
    """(figure, axes): a new Figure (object API) unless `ax` is given."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _flows(run) -> Any:
    """The flows table of a `Result`, or the DataFrame itself."""
    return run.flows if hasattr(run, "flows") and not hasattr(run, "columns") else run


def _named(runs) -> dict[str, Any]:
    if isinstance(runs, Mapping):
        return {str(k): _flows(v) for k, v in runs.items()}
    flows = _flows(runs)
    return {str(getattr(runs, "summary", {}).get("scenario", "run")): flows}


def _completed(flows, column: str):
    f = flows[flows["completed"] & ~flows["in_warmup"]] if "in_warmup" in flows else flows[flows["completed"]]
    return f[column].astype(float).dropna()


def completion_cdf(runs, column: str = "completion", logx: bool = True, ax=None):
    """Empirical CDF of flow completion times (`column` of the flows table: `completion`,
    seconds from the first byte requested to the last delivered), completed flows after warm-up,
    one line per run. `runs`: a Result or a flows DataFrame, or a mapping label → either."""
    import numpy as np

    fig, ax = _axes(ax)
    for i, (label, flows) in enumerate(_named(runs).items()):
        x = np.sort(_completed(flows, column).to_numpy())
        if x.size:
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=f"{label} (n={x.size})",
                    linestyle=_STYLES[i // 10 % 4])
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=f"flow {column} time (s)", ylabel="P(X ≤ x)", ylim=(0, 1.02))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def ratio_vs_size(runs: Mapping[str, Any], baseline: str, size: str = "response_bytes",
                  column: str = "completion", bins: int = 12, ax=None):
    """Median completion time of each run divided by the baseline run's, per flow-size bin
    (log-spaced bins of `size`, bytes; a bin is drawn where both have flows). Below 1: faster
    than the baseline. `runs`: label → Result or flows DataFrame, `baseline` one of the labels."""
    import numpy as np
    import pandas as pd

    named = _named(runs)
    if baseline not in named:
        raise ValueError(f"baseline = {baseline!r}: allowed one of {sorted(named)}")
    sizes = pd.concat([f.loc[f["completed"], size] for f in named.values()]).astype(float)
    sizes = sizes[sizes > 0]
    if sizes.empty:
        raise ValueError("no completed flow with a size > 0")
    edges = np.unique(np.geomspace(sizes.min(), sizes.max() * (1 + 1e-9), bins + 1))

    def medians(flows):
        f = flows[flows["completed"]]
        cut = pd.cut(f[size].astype(float), edges, include_lowest=True)
        return f.groupby(cut, observed=False)[column].median().to_numpy(dtype=float)

    base = medians(named[baseline])
    mids = np.sqrt(edges[:-1] * edges[1:])
    fig, ax = _axes(ax)
    for i, (label, flows) in enumerate(named.items()):
        if label == baseline:
            continue
        ratio = medians(flows) / base
        ok = np.isfinite(ratio)
        ax.plot(mids[ok], ratio[ok], marker="o", label=label, linestyle=_STYLES[i // 10 % 4])
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set(xlabel=f"flow size ({size}, bytes)", ylabel=f"median {column} / {baseline}'s")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def flight_series(pcap: str | Path) -> dict[tuple, tuple[list[float], list[int]]]:
    """Per connection (server address, client address) of a pcap file (`iwlab trace`, or a
    capture of the emulator): at each data segment the server sends, the time and the bytes in
    flight after it — highest sequence sent minus highest cumulative ACK seen from the client,
    where the capture was taken. While the sender is window-limited this is its cwnd (RFC 5681
    FlightSize); after an idle or when the application has nothing to send, it is less."""
    from iwlab.emulate import pcap as reader

    servers: dict[tuple, int] = {}  # (server, client) -> the server's ISN
    top: dict[tuple, int] = {}
    acked: dict[tuple, int] = {}
    out: dict[tuple, tuple[list[float], list[int]]] = {}
    wrap = 1 << 32
    for s in reader.read(pcap):
        if s.syn and s.has_ack:
            key = (s.src, s.dst)
            servers[key], top[key], acked[key] = s.seq, 0, 0
            out[key] = ([], [])
            continue
        if (s.src, s.dst) in servers and s.payload > 0:
            key = (s.src, s.dst)
            top[key] = max(top[key], (s.seq - servers[key] - 1) % wrap + s.payload)
            out[key][0].append(s.time)
            out[key][1].append(max(0, top[key] - acked[key]))
        elif (s.dst, s.src) in servers and s.has_ack:
            key = (s.dst, s.src)
            a = (s.ack - servers[key] - 1) % wrap
            if a < wrap // 2:
                acked[key] = max(acked[key], a)
    return {k: v for k, v in out.items() if v[0]}


def cwnd_time(pcap: str | Path, connections: int | None = 6, mss: int | None = None, ax=None):
    """Bytes in flight over time (`flight_series`), one step line per connection — the
    `connections` that sent the most data segments (None: all) —, in segments when `mss` is given."""
    series = flight_series(pcap)
    longest = sorted(series.items(), key=lambda kv: -len(kv[1][0]))[:connections]
    fig, ax = _axes(ax)
    for i, ((server, client), (t, flight)) in enumerate(longest):
        y = [b / mss for b in flight] if mss else flight
        ax.step(t, y, where="post", label=f"{client[0]}:{client[1]}", linestyle=_STYLES[i // 10 % 4])
    ax.set(xlabel="time (s)", ylabel="in flight (segments)" if mss else "in flight (bytes)",
           title="in flight (≈ cwnd while window-limited)")
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize="small", title="client")
    return fig


def grid_heatmap(rows, x: str, y: str, value: str, agg: str = "mean", fmt: str = "{:.3g}", ax=None,
                 center: float | None = None, cmap: str | None = None, figsize: tuple[float, float] | None = None):
    """A sweep's grid as a heat map: `rows` (what `iwlab.sweep` returns, or
    `iwlab.sweep_records(out, table="runs")`), `x` and `y` two grid keys, `value` a per-run
    metric, aggregated over seeds (and other keys) with `agg`; each cell is labelled. With
    `center` the colour scale is symmetric about it (for signed differences; `cmap` a diverging one)."""
    import numpy as np

    for key in (x, y, value):
        if key not in rows.columns:
            raise ValueError(f"{key!r} is not a column of the rows; allowed: {', '.join(map(str, rows.columns))}")
    table = rows.assign(**{x: rows[x].astype(str), y: rows[y].astype(str)}).pivot_table(
        index=y, columns=x, values=value, aggfunc=agg, sort=False)
    fig, ax = _axes(ax, figsize=figsize or (2.8 + 1.2 * table.shape[1], 1.8 + 0.6 * table.shape[0]))
    data = table.to_numpy(dtype=float)
    scale = {}
    if center is not None:
        half = float(np.nanmax(np.abs(data - center))) if np.isfinite(data).any() else 1.0
        scale = {"vmin": center - (half or 1.0), "vmax": center + (half or 1.0)}
    im = ax.imshow(data, aspect="auto", cmap=cmap or "viridis", **scale)
    ax.set_xticks(range(table.shape[1]), table.columns)
    ax.set_yticks(range(table.shape[0]), table.index)
    ax.set(xlabel=x, ylabel=y, title=f"{value} ({agg} over seeds)")
    mid = np.nanmean(data) if np.isfinite(data).any() else 0
    for (r, c), v in np.ndenumerate(data):
        if np.isfinite(v):
            # Dark ends of a diverging scale (far from the centre) take white text; viridis is dark below its mean.
            dark = abs(v - center) > 0.6 * (scale["vmax"] - center) if center is not None else v < mid
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize="small" if center is None else "x-small",
                    color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label=value)
    return fig
