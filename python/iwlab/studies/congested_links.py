"""SPEC S1.2 — "Impact of High TCP's Initial Window in Congested Links" (Nathan & Rai).

IW3 vs IW10 for request/response flows of 9, 10, 21 and 22 segments (MSS 1448 with
timestamps) over a congested 2 Mb/s, 200 ms RTT bottleneck, under three congestion patterns
at levels 60 … 95 % of the bottleneck:

* **constant** — UDP background at the level's share of the bottleneck (Poisson packet gaps);
* **varying** — TCP background only: Poisson arrivals of bulk (FTP-like) transfers whose
  *offered load* is the level (arrival rate = level × bandwidth / (8 × mean size)), so the
  number of competing TCP flows and their share change all the time;
* **mixed** — both, half of the level each.

Each (pattern, level, size, IW) is its own run: one client/server pair sends a short flow
every 2 s (the testbed's netperf) over the background; a run with IW3 and one with IW10 use
the same seed, hence the same background arrivals. Packet losses of a short flow are counted
exactly: its data packets that started serialisation on the bottleneck (from a pcap of the
bottleneck restricted to the short flows) are subtracted from the data packets it sent.
That needs a pcap, which `iwlab.sweep` does not take, so this study has its own small
resumable runner (`opts.out/raw/runs/<scenario hash>-s<seed>.parquet`, local processes or
Dask).

Modes: full = 10 seeds × 300 s; quick = 3 seeds × 120 s; tiny (`IWLAB_STUDY_TINY=1`, for
tests) = 2 seeds × 40 s, sizes 10 and 22, levels 60 and 95 %.
"""

from __future__ import annotations

import copy
import os
import struct
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from io import BytesIO
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Cell, Figure, Options, StudyResult, Table, cell, quantity, tiny

NAME = "congested-links"
TITLE = "Impact of a high initial window in congested links (Nathan & Rai) — IW3 vs IW10"

SIZES = (9, 10, 21, 22)
LEVELS = (60, 70, 80, 90, 95)
PATTERNS = ("constant", "varying", "mixed")
IWS = ("iw3", "iw10")
#: Short flows started in the last TAIL seconds are not counted (they may not finish).
TAIL = 20.0
#: TCP background transfers: lognormal sizes (bytes), "long-lived" next to the short flows.
BG_SIZE = {"kind": "lognormal", "median": 300_000, "mean": 600_000, "min": 50_000, "cap": 10_000_000}
BG_PAIRS = 4
#: IW of the TCP background (Linux's default since 2.6.39), the same in IW3 and IW10 runs.
BG_IW = "iw10"
#: The TCP background of the varying and mixed patterns: Poisson arrivals of transfers (the
#: verdicts' model) or 1…N long-lived bulk connections (iperf-like; the "where it holds" sweep).
TCP_BACKGROUNDS = ("poisson", "long-lived")


@dataclass(frozen=True)
class Plan:
    seeds: int
    duration: float
    warmup: float
    sizes: tuple[int, ...]
    levels: tuple[int, ...]
    patterns: tuple[str, ...]
    mode: str


def plan(opts: Options) -> Plan:
    if tiny():
        return Plan(opts.seeds or 2, 40.0, 5.0, (10, 22), (60, 95), PATTERNS, "tiny")
    if opts.quick:
        return Plan(opts.n_seeds(10, 3), 120.0, 5.0, SIZES, LEVELS, PATTERNS, "quick")
    return Plan(opts.n_seeds(10, 3), 300.0, 5.0, SIZES, LEVELS, PATTERNS, "full")


# ---------------------------------------------------------------------------------------------
# Scenarios


def preset_defaults() -> dict[str, float]:
    """Bottleneck rate (Mb/s) and base RTT (ms) of the `congested-links` preset."""
    from iwlab.scenario import load

    topo = load("congested-links").data["topology"]
    access = topo["left"][0]["access"]["delay"], topo["right"][0]["access"]["delay"]
    one_way = quantity(topo["bottleneck"]["delay"]) + sum(quantity(a) for a in access)
    return {"bandwidth_mbps": quantity(topo["bottleneck"]["rate"]) / 1e6, "rtt_ms": 2000 * one_way}


def scenario(pattern: str, level: float, size: int, iw: str, duration: float, warmup: float,
             bandwidth_mbps: float | None = None, rtt_ms: float | None = None, tcp_background: str = "poisson",
             bulk_flows: int = 1, buffer_pkts: int | None = None) -> Any:
    """The preset with one short-flow application (`size` segments, IW `iw`) and the
    background of `pattern` at `level` % of the bottleneck.

    `tcp_background` is the TCP part of the varying and mixed patterns: `"poisson"` (the default,
    what the verdicts use) — Poisson arrivals of bulk transfers at the level's offered load — or
    `"long-lived"` — `bulk_flows` connections that never run dry (Nathan & Rai's iperf), which fill
    whatever the UDP part leaves, so the level then only sets the UDP share. `buffer_pkts` replaces
    the preset's 50-packet bottleneck buffer."""
    from iwlab.scenario import Scenario, load

    if pattern not in PATTERNS:
        raise ValueError(f"pattern = {pattern!r} is not allowed; expected one of {PATTERNS}")
    if not 0 < level <= 100:
        raise ValueError(f"level = {level} is not allowed; expected 0 < level <= 100 (% of the bottleneck)")
    if tcp_background not in TCP_BACKGROUNDS:
        raise ValueError(f"tcp_background = {tcp_background!r} is not allowed; expected one of {TCP_BACKGROUNDS}")
    if bulk_flows < 1:
        raise ValueError(f"bulk_flows = {bulk_flows} is not allowed; expected >= 1")
    if buffer_pkts is not None and buffer_pkts < 1:
        raise ValueError(f"buffer_pkts = {buffer_pkts} is not allowed; expected >= 1 (packets)")
    data = copy.deepcopy(load("congested-links").data)
    data["duration"], data["warmup"] = f"{duration:g}s", f"{warmup:g}s"
    data.pop("sample_interval", None)
    topo = data["topology"]
    if bandwidth_mbps is not None:
        topo["bottleneck"]["rate"] = f"{round(bandwidth_mbps * 1e6)}bps"
    if rtt_ms is not None:
        access = sum(quantity(g[0]["access"]["delay"]) for g in (topo["left"], topo["right"]))
        delay_us = round(rtt_ms * 500 - access * 1e6)
        if delay_us <= 0:
            raise ValueError(f"rtt_ms = {rtt_ms} is not allowed; expected > {2000 * access:g} (the access links' delay)")
        topo["bottleneck"]["delay"] = f"{delay_us}us"
    if buffer_pkts is not None:
        topo["bottleneck"]["queue"] = dict(topo["bottleneck"]["queue"], limit=f"{buffer_pkts}pkt")
    access = copy.deepcopy(topo["left"][0]["access"])
    pairs = max(BG_PAIRS, bulk_flows) if tcp_background == "long-lived" else BG_PAIRS
    topo["left"].append({"name": "bg-clients", "count": pairs, "access": access})
    topo["right"].append({"name": "bg-servers", "count": pairs, "access": copy.deepcopy(access)})
    short = next(a for a in data["apps"] if a["kind"] == "short-flows")
    udp = next(a for a in data["apps"] if a["kind"] == "udp")
    short = dict(short, name=f"short-{iw}", response=f"{size}seg", server_iw=iw, client_iw=iw, offset=0,
                 start=f"{warmup:g}s")
    apps = [short]
    udp_share = {"constant": level, "varying": 0.0, "mixed": level / 2}[pattern]
    tcp_share = {"constant": 0.0, "varying": level, "mixed": level / 2}[pattern]
    if udp_share > 0:
        apps.append(dict(udp, rate=f"{udp_share:g}%", poisson=True, start="0s"))
    if tcp_share > 0 and tcp_background == "long-lived":
        apps.append({"kind": "bulk", "name": "tcp-background", "clients": "bg-clients", "servers": "bg-servers",
                     "count": bulk_flows, "mapping": "distinct", "server_iw": BG_IW, "client_iw": BG_IW})
    elif tcp_share > 0:
        apps.append({"kind": "poisson-flows", "name": "tcp-background", "clients": "bg-clients",
                     "servers": "bg-servers", "count": BG_PAIRS, "mapping": "distinct", "size": BG_SIZE,
                     "load": tcp_share / 100, "request": "100B", "server_iw": BG_IW, "client_iw": BG_IW})
    data["apps"] = apps
    data["description"] = (f"{size}-segment short flows with {iw} under {pattern} congestion at {level:g} % "
                           "(study congested-links)")
    return Scenario.from_data(data, "congested-links (study)")


# ---------------------------------------------------------------------------------------------
# Running: iwlab.run, plus a pcap of the short flows on the bottleneck to count their losses


@dataclass(frozen=True)
class _Task:
    key: str
    point: dict[str, Any]
    seed: int
    scenario: Any


def pcap_data_packets(path: str | Path) -> Counter[int]:
    """Data packets (TCP payload > 0) per client port in a pcap written by `iwlab.run`."""
    buf = Path(path).read_bytes()
    counts: Counter[int] = Counter()
    off = 24  # global header
    while off + 16 <= len(buf):
        incl = struct.unpack_from("<I", buf, off + 8)[0]
        ip = off + 16 + 14
        off += 16 + incl
        if buf[ip + 9] != 6:  # not TCP
            continue
        ihl = (buf[ip] & 0x0F) * 4
        total = struct.unpack_from(">H", buf, ip + 2)[0]
        tcp = ip + ihl
        sport, dport = struct.unpack_from(">HH", buf, tcp)
        if total - ihl - (buf[tcp + 12] >> 4) * 4 > 0:
            counts[max(sport, dport)] += 1  # client ports are 10000 + flow % 50000, the server's is 80
    return counts


def _execute(task: _Task) -> tuple[str, bytes]:
    from iwlab.api import run

    r = run(task.scenario, seed=task.seed)
    duration = float(r.summary["duration"])
    f = r.flows
    f = f[(f["app_kind"] == "short") & ~f["in_warmup"] & (f["start"] <= duration - TAIL)].copy()
    ids = [int(x) for x in f["flow"]]
    lost = np.zeros(len(f), dtype=np.int64)
    if ids:
        with tempfile.TemporaryDirectory(prefix="iwlab-cl-") as tmp:
            pcap = Path(tmp) / "short.pcap"
            run(task.scenario, seed=task.seed, pcap=pcap, flows=ids)
            seen = pcap_data_packets(pcap)
        lost = np.array([int(d) - seen.get(10_000 + i % 50_000, 0)
                         for i, d in zip(ids, f["data_segments"].astype("int64"))], dtype=np.int64)
    cols = ["flow", "response_bytes", "iw_segments", "start", "completion", "completed", "data_segments",
            "retransmits", "timeouts", "fast_retransmits", "syn_retransmits"]
    out = pd.DataFrame({c: f[c].to_numpy(dtype=float, na_value=np.nan) for c in cols})
    out["completed"] = out["completed"].astype(bool)
    out["lost"] = lost
    row = r.links[(r.links["from"] == "router-right") & (r.links["to"] == "router-left")]
    out["util"] = float(row["utilisation"].iloc[0])
    out["drop_rate"] = float(row["drop_rate"].iloc[0])
    for k, v in task.point.items():
        out[k] = v
    out["seed"] = task.seed
    buf = BytesIO()
    out.to_parquet(buf, index=False)
    return task.key, buf.getvalue()


def _local(tasks: list[_Task], jobs: int) -> Iterator[tuple[str, bytes]]:
    if jobs == 1 or len(tasks) == 1:
        yield from map(_execute, tasks)
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=get_context("spawn")) as pool:
        pending = {pool.submit(_execute, t) for t in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()


def _dask(tasks: list[_Task], address: str) -> Iterator[tuple[str, bytes]]:
    from distributed import Client, as_completed

    with Client(address) as client:
        futures = client.map(_execute, tasks, key=[f"iwlab-cl-{t.key}" for t in tasks], pure=False)
        for fut in as_completed(futures):
            yield fut.result()


def run_all(tasks: list[_Task], opts: Options) -> pd.DataFrame:
    """Runs the tasks not yet stored under `opts.out/raw/runs/`; returns every task's flows."""
    from tqdm import tqdm

    runs = Path(opts.out) / "raw" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    todo = [t for t in {t.key: t for t in tasks}.values() if not (runs / f"{t.key}.parquet").exists()]
    scen = Path(opts.out) / "raw" / "scenarios"
    scen.mkdir(exist_ok=True)
    for t in tasks:
        path = scen / f"{t.key.rsplit('-s', 1)[0]}.toml"
        if not path.exists():
            path.write_text(t.scenario.to_toml())
    bar = tqdm(total=len({t.key for t in tasks}), initial=len({t.key for t in tasks}) - len(todo),
               desc=NAME, unit="run", disable=not opts.progress, dynamic_ncols=True)
    try:
        stream = _dask(todo, opts.dask) if opts.dask else _local(todo, opts.jobs or os.cpu_count() or 1)
        for key, data in stream if todo else ():
            tmp = runs / f".tmp-{key}-{os.getpid()}"
            tmp.write_bytes(data)
            os.replace(tmp, runs / f"{key}.parquet")
            bar.update(1)
    finally:
        bar.close()
    frames = []
    for t in tasks:
        df = pd.read_parquet(runs / f"{t.key}.parquet")
        for k, v in t.point.items():  # two points never share a scenario, but be explicit
            df[k] = v
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


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
    low = [_row(pt, lo_level) for pt in p.patterns]
    top = [_row(pt, hi_level) for pt in p.patterns]
    out = []

    def ranges(level: float) -> str:
        return ", ".join(f"{_fmt_range(rc.frame.loc[_row(pt, level)].to_numpy(dtype=float))} ({pt})"
                         for pt in p.patterns)

    out.append(f"The IW10/IW3 ratio of mean completion time across flow sizes is {ranges(lo_level)} at {lo_level} % "
               f"congestion and {ranges(hi_level)} at {hi_level} % (below 1: IW10 finishes sooner).")
    # Where IW10 is significantly worse or better: the whole interval above/below 1.
    worse = [(r, c) for r in rc.frame.index for c in rc.frame.columns if rc.low.loc[r, c] > 1]
    better = [(r, c) for r in rc.frame.index for c in rc.frame.columns if rc.high.loc[r, c] < 1]
    mean_by = ", ".join(f"{float(np.nanmean(rc.frame.loc[[_row(pt, lv) for lv in p.levels]].to_numpy(dtype=float))):.2f} "
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

    by_pat = {pt: float(np.nanmean(lost.frame.loc[_row(pt, hi_level)].to_numpy(dtype=float))) for pt in p.patterns}
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


# ---------------------------------------------------------------------------------------------
# The study


def run(opts: Options, *, bandwidth_mbps: float | None = None, rtt_ms: float | None = None) -> StudyResult:
    """Runs the study. `bandwidth_mbps` / `rtt_ms` override the preset's bottleneck (2 Mb/s) and
    base RTT (200 ms); the bottleneck delay becomes RTT/2 minus the two 1 ms access links."""
    p = plan(opts)
    defaults = preset_defaults()
    bw = bandwidth_mbps if bandwidth_mbps is not None else defaults["bandwidth_mbps"]
    rtt = rtt_ms if rtt_ms is not None else defaults["rtt_ms"]
    tasks = []
    for pattern in p.patterns:
        for level in p.levels:
            for size in p.sizes:
                for iw in IWS:
                    sc = scenario(pattern, level, size, iw, p.duration, p.warmup, bw, rtt)
                    point = {"pattern": pattern, "level": level, "size": size, "iw": iw}
                    tasks.extend(_Task(f"{sc.hash()}-s{s}", point, s, sc) for s in range(1, p.seeds + 1))
    flows = run_all(tasks, opts)
    n_bad = int(unreceived(flows).sum())
    runs = per_run(flows)
    tabs = tables(runs)
    by_name = {t.name: t for t in tabs}
    bdp = bw * 1e6 * rtt / 1e3 / 8 / 1448
    notes = [
        f"Bottleneck {bw:g} Mb/s, base RTT {rtt:g} ms (BDP ≈ {bdp:.0f} segments of 1448 B), drop-tail buffer of "
        "50 packets (the congested-links preset); access links 100 Mb/s, 1 ms. The paper does not state its "
        "bottleneck: these model a congested access link in a developing region; run(opts, bandwidth_mbps=…, "
        "rtt_ms=…) or editing the preset changes them.",
        "Linux TCP (tcp.profile = \"linux\"): MSS 1448 B (1460 minus 12 bytes of timestamps), CUBIC with HyStart, "
        "SACK recovery with PRR, limited transmit, initial RTO 1 s, minimum RTO 200 ms; receivers delay ACKs "
        "(every 2 segments or 40 ms) after the 16 immediate ACKs of Linux's quick-ACK mode at connection start, "
        "which cover the 9- and 10-segment responses and the first 16 segments of the 21- and 22-segment ones, and "
        "that is what makes 9 and 21 segments take no more rounds than 10 and 22 with IW3 (3 + 6 = 9, "
        "3 + 6 + 12 = 21).",
        "Short flows: one client/server pair; a 100-byte request every 2 s answered by a response of 9, 10, 21 or "
        "22 segments on a new connection (netperf-like). Each (pattern, level, size, IW) is its own run; IW3 and "
        "IW10 runs of the same seed see the same background arrivals. Flows starting in the 5 s warm-up or in the "
        f"last {TAIL:g} s are not counted.",
        "Constant congestion: UDP (1472-byte payloads) at the level's share of the bottleneck, with exponential "
        "gaps (an aggregate of sources; a perfectly paced stream never queues below 100 % and would leave every "
        "seed identical).",
        "Varying congestion: TCP only — Poisson arrivals of bulk transfers over 4 further client/server pairs, "
        "sizes lognormal (median 300 kB, mean 600 kB, 50 kB … 10 MB), with an offered load equal to the level: "
        "arrival rate = level × bandwidth / (8 × mean size). The number of competing TCP flows, hence the "
        "congestion, changes all the time; the table 'bottleneck' shows the utilisation that results. The "
        f"background uses IW{BG_IW[2:]} in every run.",
        "Mixed congestion: half of the level as Poisson UDP, half as the TCP transfers above.",
        "Levels are shares of the bottleneck offered by the background alone; the short flows add about "
        "size × 1500 B × 8 / 2 s (3–7 % of 2 Mb/s), so the 95 % level overloads the link.",
        "Packet losses per flow are exact: the flow's data segments sent minus those that started serialisation "
        "on the bottleneck (a pcap of the short flows), the only place in this topology where they can be dropped. "
        "Retransmissions count every retransmitted segment (including spurious ones after a timeout), timeouts "
        "the RTO expiries, fast retransmits the entries into loss recovery.",
        f"{n_bad} of {len(flows)} short flows were recorded as complete although a lost packet was never sent "
        "again (the simulator's receiver jumps over holes when a bare FIN arrives out of order); their completion "
        "times are wrong, so they count as not completed here.",
        f"Mode {p.mode}: {p.seeds} seeds, {p.duration:g} s per run, sizes {list(p.sizes)}, levels {list(p.levels)} %. "
        "Full = 10 seeds × 300 s; quick = 3 seeds × 120 s; IWLAB_STUDY_TINY=1 (tests) = 2 seeds × 40 s, sizes 10 "
        "and 22, levels 60 and 95 %.",
    ]
    setup = {"mode": p.mode, "seeds": p.seeds, "duration_s": p.duration, "warmup_s": p.warmup,
             "bandwidth_mbps": bw, "rtt_ms": rtt, "sizes": list(p.sizes), "levels_pct": list(p.levels),
             "patterns": list(p.patterns), "runs": len(tasks), "short_flows": int(runs["flows"].sum()),
             "flows_with_unreceived_data": n_bad,
             "raw": str(Path(opts.out) / "raw")}
    from iwlab.studies.claims import Evidence, judge, where_it_holds

    for t in tabs:
        t.row_keys = _row_keys
        t.col_keys = lambda c, name=t.name: _col_keys(c, name)
    book = ledger()
    judged = judge(book, Evidence(by_name, evidence(runs), seeds=p.seeds))
    if p.mode != "tiny" and opts.where:
        variants = variant_evidence(opts, p, bw, rtt)
        where_it_holds(judged, book, variants, "bottleneck buffer (preset 50 pkt); TCP background model "
                       "(Poisson arrivals vs long-lived flows)")
        setup["where-it-holds variants"] = (f"{', '.join(VARIANTS)} at {', '.join(f'{a} {b} %' for a, b in VARIANT_ROWS)}"
                                            f"; {p.seeds} seeds × {p.duration:g} s")
    notes.append("Claims: the verdicts use the runs above (50-packet buffer, Poisson TCP arrivals as the TCP "
                 "background). For claims not reproduced, the same claims are judged again on variants — a 10- and "
                 "20-packet buffer, and a long-lived TCP background of 1 or 4 bulk connections (iperf-like) in "
                 "place of the Poisson arrivals — at constant/mixed 90 % and varying 60 %; with long-lived flows "
                 "the TCP part fills whatever the UDP part leaves, so the level only sets the UDP share.")
    return StudyResult(NAME, TITLE, tabs, figures(by_name, p), conclusions(by_name, runs, p, rtt), [], setup, notes,
                       claims=judged)


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


# ---------------------------------------------------------------------------------------------
# Claims ledger: Nathan & Rai's directional claims (seeds/001; the figures did not
# survive, so the claims are the directions their text states). Sentences are ours.

HIGH = (80, 90, 95)


def paired(runs: pd.DataFrame, metric: str, a: dict[str, Any], b: dict[str, Any]) -> Cell:
    """Per seed: `metric` at selection `b` − at selection `a` (same seed ⇒ same background), then
    the mean and its 95 % interval."""
    def sel(d: dict[str, Any]) -> pd.Series:
        m = runs
        for k, v in d.items():
            m = m[m[k] == v]
        return m.groupby("seed")[metric].mean()

    x, y = sel(a).align(sel(b), join="inner")
    return cell((y - x).replace([np.inf, -np.inf], np.nan))


def evidence(runs: pd.DataFrame) -> dict[str, Cell]:
    """Named paired cells for the claims: size and IW differences, changes of the ratios with level."""
    ev: dict[str, Cell] = {}
    patterns, levels, sizes = runs["pattern"].unique(), sorted(runs["level"].unique()), set(runs["size"].unique())
    rc, rt = ratios(runs, "completion"), ratios(runs, "throughput")
    present = set(zip(runs["pattern"], runs["level"]))
    for pt in patterns:
        for lv in levels:
            if (pt, lv) not in present:
                continue
            row = {"pattern": pt, "level": lv}
            if {9, 10} <= sizes:
                r = rc[(rc["pattern"] == pt) & (rc["level"] == lv)].pivot_table(index="seed", columns="size",
                                                                                  values="ratio", aggfunc="first")
                if {9, 10} <= set(r.columns):
                    ev[f"ratio 10-9 {pt} {lv:g}"] = cell((r[10] - r[9]).replace([np.inf, -np.inf], np.nan))
            for size in sizes:
                for metric in ("lost", "retransmits", "timeouts", "fast_retransmits"):
                    ev[f"{metric} IW10-IW3 {pt} {lv:g} {size}"] = paired(
                        runs, metric, {**row, "size": size, "iw": "iw3"}, {**row, "size": size, "iw": "iw10"})
                # Magnitudes the paper states: timeouts "about twice" with IW10 (Fig. 8), fast
                # retransmits of ≈ 10 % (IW3) and ≈ 5 % (IW10) of flows (Fig. 9).
                per = {iw: runs[(runs["pattern"] == pt) & (runs["level"] == lv) & (runs["size"] == size)
                                & (runs["iw"] == iw)].set_index("seed") for iw in IWS}
                a, b = per["iw3"]["timeouts"].align(per["iw10"]["timeouts"], join="inner")
                ev[f"timeouts IW10/IW3 {pt} {lv:g} {size}"] = cell(b / a.where(a > 0))
                for iw in IWS:
                    ev[f"fast_retransmits {iw} {pt} {lv:g} {size}"] = cell(per[iw]["fast_retransmits"])
            for iw in IWS:
                for a, b in ((9, 10), (21, 22)):
                    if {a, b} <= sizes:
                        for metric in ("completion", "throughput", "lost"):
                            ev[f"{metric} {b}-{a} {pt} {lv:g} {iw}"] = paired(
                                runs, metric, {**row, "size": a, "iw": iw}, {**row, "size": b, "iw": iw})
        mine = sorted(lv for p_, lv in present if p_ == pt)
        if len(mine) > 1:
            for size in sizes:
                w = rt[(rt["pattern"] == pt) & (rt["size"] == size)].pivot_table(index="seed", columns="level",
                                                                                   values="ratio", aggfunc="first")
                if not {mine[0], mine[-1]} <= set(w.columns):
                    continue
                ev[f"thr ratio change {pt} {size}"] = cell((w[mine[-1]] - w[mine[0]]).replace([np.inf, -np.inf],
                                                                                               np.nan))
    return ev


def ledger() -> list[Any]:
    from iwlab.studies.claims import Between, Check, Claim, Direction, Near, Ref

    def rows(pattern: str, levels=LEVELS) -> list[tuple[str, float]]:
        return [(pattern, lv) for lv in levels]

    def ratio_checks(table: str, pats: list[tuple[str, float]], sizes) -> tuple:
        return tuple(Check(f"{pt} {lv:g} %, {s} seg", Ref(table, _row(pt, lv), f"{s} seg")) for pt, lv in pats
                     for s in sizes)

    def ev_checks(fmt: str, pats: list[tuple[str, float]], sizes=(None,), iws=(None,)) -> tuple:
        out = []
        for pt, lv in pats:
            for s in sizes:
                for iw in iws:
                    cond = f"{pt} {lv:g} %" + (f", {s} seg" if s else "") + (f", {iw.upper()}" if iw else "")
                    out.append(Check(cond, fmt.format(pt=pt, lv=f"{lv:g}", s=s, iw=iw)))
        return tuple(out)

    src = "Nathan & Rai"
    C, R = ("ratio_completion", "fig_ratio_completion"), ("ratio_throughput", "fig_ratio_throughput")
    out = [
        Claim("NR-2a", f"{src} Fig. 2(a)", "§4, text on Fig. 2(a)",
              "Under constant (UDP) congestion IW10 takes longer than IW3 to complete 9- and 10-packet flows.",
              "IW10/IW3 ratio of the mean completion time (> 1: IW3 faster)", Direction(">", 1.0),
              ratio_checks("ratio_completion", rows("constant"), (9, 10)), C, "", "> 1 (figure, no numbers)"),
        Claim("NR-2a-10", f"{src} Fig. 2(a)", "§4, text on Fig. 2(a)",
              "Under constant congestion 10-packet flows suffer from IW10 more than 9-packet flows.",
              "completion-time ratio of 10-packet − 9-packet flows", Direction(">", 0.0),
              ev_checks("ratio 10-9 {pt} {lv}", rows("constant")), C, "", "> 0"),
        Claim("NR-2b-21", f"{src} Fig. 2(b)", "§4, text on Fig. 2 (second panel)",
              "Under constant congestion 21-packet flows complete about as fast with IW10 as with IW3.",
              "IW10/IW3 completion-time ratio, 21 packets", Between(0.9, 1.05),
              ratio_checks("ratio_completion", rows("constant"), (21,)), C, "", "≈ 1"),
        Claim("NR-2b-22", f"{src} Fig. 2(b)", "§4, text on Fig. 2 (second panel)",
              "Under constant congestion IW10 completes 22-packet flows sooner than IW3.",
              "IW10/IW3 completion-time ratio, 22 packets", Direction("<", 1.0),
              ratio_checks("ratio_completion", rows("constant"), (22,)), C, "", "< 1"),
        Claim("NR-3-9", f"{src} Fig. 3(a)", "§4, text on Fig. 3",
              "Under varying (TCP-only, ≈ 60 %) congestion IW10 completes 9-packet flows sooner than IW3.",
              "IW10/IW3 completion-time ratio, 9 packets", Direction("<", 1.0),
              ratio_checks("ratio_completion", [("varying", 60)], (9,)), C, "", "< 1"),
        Claim("NR-3-large", f"{src} Fig. 3(a)", "§4, text on Fig. 3",
              "Under varying congestion IW3 completes 21- and 22-packet flows slightly sooner than IW10.",
              "IW10/IW3 completion-time ratio, 21 and 22 packets", Direction(">", 1.0),
              ratio_checks("ratio_completion", [("varying", 60)], (21, 22)), C, "", "> 1"),
        Claim("NR-4", f"{src} Fig. 4", "§4.1, text on Fig. 4",
              "Under mixed congestion the throughput of 9/10-packet flows falls faster with IW10 than with IW3 as "
              "congestion rises.", "change of the IW10/IW3 throughput ratio from the lowest to the highest level",
              Direction("<", 0.0), tuple(Check(f"mixed, {s} seg, lowest → highest level", f"thr ratio change mixed {s}")
                                         for s in (9, 10)), R, "", "< 0"),
        Claim("NR-4-10", f"{src} Fig. 4", "§4.1, text on Fig. 4",
              "Under mixed congestion 10-packet flows get less throughput than 9-packet flows, whatever the IW.",
              "throughput of 10-packet − 9-packet flows, kb/s", Direction("<", 0.0),
              ev_checks("throughput 10-9 {pt} {lv} {iw}", rows("mixed"), iws=IWS), ("throughput",), "kb/s", "< 0"),
        Claim("NR-5a", f"{src} Fig. 5(a)", "§4.1, text on Fig. 5(a)",
              "Under constant congestion IW3 gives 9/10-packet flows more throughput than IW10 at every level.",
              "IW10/IW3 throughput ratio (< 1: IW3 better)", Direction("<", 1.0),
              ratio_checks("ratio_throughput", rows("constant"), (9, 10)), R, "", "< 1"),
        Claim("NR-5b", f"{src} Fig. 5(b)", "§4.1, text on Fig. 5(b)",
              "Under constant congestion the throughput ratio of 21/22-packet flows stays close to 1.",
              "IW10/IW3 throughput ratio, 21 and 22 packets", Between(0.9, 1.1),
              ratio_checks("ratio_throughput", rows("constant"), (21, 22)), R, "", "≈ 1"),
        Claim("NR-6-size", f"{src} Fig. 6", "§4.2, text on Fig. 6",
              "Under mixed congestion 10-packet flows lose more packets than 9-packet flows.",
              "packets lost per flow, 10-packet − 9-packet", Direction(">", 0.0),
              ev_checks("lost 10-9 {pt} {lv} {iw}", rows("mixed"), iws=IWS), ("losses", "fig_losses"), "", "> 0"),
        Claim("NR-6b", f"{src} Fig. 6(b)", "§4.2, text on Fig. 6",
              "Under mixed congestion IW10 loses more packets than IW3 in 10-packet flows.",
              "packets lost per flow, IW10 − IW3", Direction(">", 0.0),
              ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows("mixed"), (10,)), ("losses", "fig_losses"), "", "> 0"),
        Claim("NR-6a", f"{src} Fig. 6(a)", "§4.2, text on Fig. 6",
              "Under heavy mixed congestion IW10 loses fewer packets than IW3 in 9-packet flows.",
              "packets lost per flow, IW10 − IW3, levels ≥ 80 %", Direction("<", 0.0),
              ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows("mixed", HIGH), (9,)), ("losses", "fig_losses"), "", "< 0"),
        Claim("NR-6c", f"{src} Fig. 6", "§4.2, text on Fig. 6",
              "Under mixed congestion IW10 retransmits more than IW3 for flows of at most 10 packets.",
              "retransmitted segments per flow, IW10 − IW3", Direction(">", 0.0),
              ev_checks("retransmits IW10-IW3 {pt} {lv} {s}", rows("mixed"), (9, 10)), ("retransmissions",), "", "> 0"),
        Claim("NR-7a", f"{src} Fig. 7", "§4.2, text on Fig. 7",
              "Under mixed congestion IW10 loses more packets than IW3 in 21/22-packet flows as congestion grows.",
              "packets lost per flow, IW10 − IW3", Direction(">", 0.0),
              ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows("mixed"), (21, 22)), ("losses", "fig_losses"), "", "> 0"),
        Claim("NR-7b", f"{src} Fig. 7", "§4.2, text on Fig. 7",
              "Under mixed congestion IW10 retransmits far more than IW3 in 21/22-packet flows.",
              "retransmitted segments per flow, IW10 − IW3", Direction(">", 0.0),
              ev_checks("retransmits IW10-IW3 {pt} {lv} {s}", rows("mixed"), (21, 22)), ("retransmissions",), "",
              "> 0"),
        Claim("NR-8", f"{src} Fig. 8", "§4.2, text on Fig. 8",
              "Under mixed congestion IW10 takes about twice as many timeouts as IW3 in flows of at most 10 packets.",
              "retransmission timeouts per flow, IW10 ÷ IW3 (seed by seed); 'about twice' read as 1.5–2.5",
              Between(1.5, 2.5, partly_lo=1.2, partly_hi=3.0),
              ev_checks("timeouts IW10/IW3 {pt} {lv} {s}", rows("mixed"), (9, 10)), ("timeouts", "fig_timeouts"), "",
              "≈ 2× IW3"),
        Claim("NR-9", f"{src} Fig. 9", "§4.2, text on Fig. 9",
              "Under mixed congestion 21/22-packet flows enter fast retransmit more often with IW3 (≈ 10 %) than "
              "with IW10 (≈ 5 %).", "fast retransmits per flow (≈ share of flows with one), IW3 and IW10",
              Near(tol=0.03, partly_tol=0.06),
              tuple(Check(f"mixed {lv:g} %, {sz} seg, {iw.upper()}", f"fast_retransmits {iw} mixed {lv:g} {sz}", pub)
                    for lv in LEVELS for sz in (21, 22) for iw, pub in (("iw3", 0.10), ("iw10", 0.05))),
              ("fast_retransmits",), "", "≈ 0.10 (IW3), ≈ 0.05 (IW10)"),
        Claim("NR-C80", f"{src} §5", "§5 (conclusion)",
              "On a link congested at 80 % and more, IW10 serves flows under 10 packets worse than IW3.",
              "IW10/IW3 completion-time ratio, 9 and 10 packets, 80 and 90 % (the paper's range ends at 90 %, §4.1), "
              "constant and mixed patterns", Direction(">", 1.0),
              ratio_checks("ratio_completion", [(pt, lv) for pt in ("constant", "mixed") for lv in (80, 90)], (9, 10)),
              C, "", "> 1"),
        Claim("NR-C60", f"{src} §5", "§5 (conclusion)",
              "At about 60 % congestion and below, IW10 serves flows under 10 packets well (better than IW3).",
              "IW10/IW3 completion-time ratio, 9 and 10 packets, varying pattern (≈ 60 % on average, the paper's "
              "evidence for this, Fig. 3)", Direction("<", 1.0),
              ratio_checks("ratio_completion", [("varying", 60)], (9, 10)), C, "", "< 1",
              conflict="NR-2a and NR-5a say IW3 beats IW10 under constant congestion at every level, 60 % included; "
                       "this conclusion rests on the varying pattern (Fig. 3), which is what it is checked on"),
        Claim("NR-C-size", f"{src} §5", "§5 (conclusion), abstract",
              "Flows of 9 and 21 packets complete sooner than flows of 10 and 22 packets, whatever the IW.",
              "mean completion time, 10 − 9 and 22 − 21 packets, s", Direction(">", 0.0),
              tuple(Check(f"{pt} {lv:g} %, {iw.upper()}, {b} vs {a}", f"completion {b}-{a} {pt} {lv:g} {iw}")
                    for pt in PATTERNS for lv in LEVELS for iw in IWS for a, b in ((9, 10), (21, 22))),
              ("completion", "fig_completion"), "s", "> 0"),
    ]
    return out


#: The "where it holds" variants: what the paper leaves open — the bottleneck buffer and the model
#: of the TCP background — at the paper's central conditions (constant and mixed at 90 %, varying
#: at its ≈ 60 %). The verdicts themselves use the preset (50-packet buffer, Poisson TCP arrivals).
VARIANT_ROWS = (("constant", 90), ("varying", 60), ("mixed", 90))
VARIANTS: dict[str, dict[str, Any]] = {
    "buffer 10 pkt": {"buffer_pkts": 10},
    "buffer 20 pkt": {"buffer_pkts": 20},
    "long-lived TCP ×1": {"tcp_background": "long-lived", "bulk_flows": 1},
    "long-lived TCP ×4": {"tcp_background": "long-lived", "bulk_flows": 4},
}


def variant_evidence(opts: Options, p: Plan, bw: float, rtt: float) -> dict[str, Any]:
    """Runs every variant at VARIANT_ROWS (all sizes, both IWs, the plan's seeds; resumable in the
    same raw folder) and returns each one's claims evidence. Long-lived variants change only the
    patterns with TCP background."""
    from iwlab.studies.claims import Evidence

    out = {}
    for label, kw in VARIANTS.items():
        tasks = []
        for pattern, level in VARIANT_ROWS:
            if kw.get("tcp_background") == "long-lived" and pattern == "constant":
                continue
            for size in p.sizes:
                for iw in IWS:
                    sc = scenario(pattern, level, size, iw, p.duration, p.warmup, bw, rtt, **kw)
                    point = {"pattern": pattern, "level": level, "size": size, "iw": iw}
                    tasks.extend(_Task(f"{sc.hash()}-s{s}", point, s, sc) for s in range(1, p.seeds + 1))
        runs = per_run(run_all(tasks, opts))
        tabs = {t.name: t for t in tables(runs)}
        out[label] = Evidence(tabs, evidence(runs), seeds=p.seeds)
    return out
