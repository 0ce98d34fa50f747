"""Congested-links study: the plan, the dumbbell scenarios (UDP/TCP background patterns at each
congestion level, short foreground flows of 9/10/21/22 packets) and the runner (local pool or Dask)."""

from __future__ import annotations

import copy
import os
import struct
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Options, quantity, tiny



NAME = "congested-links"
TITLE = "Impact of a high initial window in congested links (Nathan & Rai) — IW3 vs IW10"

SIZES = (9, 10, 21, 22)
#: The paper's congestion levels: "about 60% to 90%" (§4.1).
LEVELS = (60, 70, 80, 90)
PATTERNS = ("constant", "varying", "mixed")
IWS = ("iw3", "iw10")
#: Two readings of the TCP background, both run and both judged (the paper fixes neither): `iperf`,
#: §3's long-lived iperf flow, which takes whatever the UDP leaves (so the level sets only the UDP
#: share, and varying congestion has no level: Fig. 3's text reports it as "approximately 60% on
#: average"); `load`, Poisson arrivals of bulk transfers whose offered load is the level.
READINGS = {"iperf": "long-lived", "load": "poisson"}
#: The study's rows: a pattern, with its reading of the TCP background where it has one.
ROW_PATTERNS = ("constant", "varying/iperf", "mixed/iperf", "varying/load", "mixed/load")
#: The level the iperf reading's varying row is labelled with (the paper's reported average): its
#: background is one long-lived flow, which no level sets, so it runs once.
VARYING_IPERF_LEVEL = 60
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

    def rows(self) -> list[tuple[str, int]]:
        """(row pattern, level) of every row the plan runs."""
        return [(pt, lv) for pt in self.patterns for lv in levels_of(pt, self.levels)]


def levels_of(row_pattern: str, levels: tuple[int, ...] = LEVELS) -> tuple[int, ...]:
    """The levels a row pattern runs at: all of them, but one for the iperf reading's varying row."""
    return (VARYING_IPERF_LEVEL,) if row_pattern == "varying/iperf" else tuple(levels)


def split(row_pattern: str) -> tuple[str, str]:
    """"mixed/iperf" → ("mixed", "long-lived"): the pattern and `scenario`'s TCP background."""
    pattern, _, reading = row_pattern.partition("/")
    if pattern not in PATTERNS or (reading and reading not in READINGS) or (pattern == "constant") != (not reading):
        raise ValueError(f"row pattern = {row_pattern!r} is not allowed; expected one of {ROW_PATTERNS}")
    return pattern, READINGS.get(reading, "poisson")


def plan(opts: Options) -> Plan:
    if tiny():
        return Plan(opts.seeds or 2, 40.0, 5.0, (10, 22), (60, 90), ROW_PATTERNS, "tiny")
    if opts.quick:
        return Plan(opts.n_seeds(), 120.0, 5.0, SIZES, LEVELS, ROW_PATTERNS, "quick")
    return Plan(opts.n_seeds(), 300.0, 5.0, SIZES, LEVELS, ROW_PATTERNS, "full")


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


def _execute(task: _Task) -> tuple[str, Any]:
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
    import pyarrow as pa

    return task.key, pa.Table.from_pandas(out, preserve_index=False)  # what `to_parquet` stores


def run_all(tasks: list[_Task], opts: Options, phase: str = "runs") -> pd.DataFrame:
    """Runs the tasks not yet stored under `opts.out/raw/runs/`; returns every task's flows.
    `phase` names them on the progress line."""
    import pyarrow.parquet as pq

    from iwlab.runs import run_many
    from iwlab.sweep import progress_line

    runs = Path(opts.out) / "raw" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    todo = [t for t in {t.key: t for t in tasks}.values() if not (runs / f"{t.key}.parquet").exists()]
    scen = Path(opts.out) / "raw" / "scenarios"
    scen.mkdir(exist_ok=True)
    for t in tasks:
        path = scen / f"{t.key.rsplit('-s', 1)[0]}.toml"
        if not path.exists():
            path.write_text(t.scenario.to_toml())
    bar = progress_line(len({t.key for t in tasks}), len({t.key for t in tasks}) - len(todo), f"{NAME} · {phase}",
                        opts.progress)
    try:
        stream = run_many(todo, _execute, jobs=opts.jobs or os.cpu_count() or 1, dask=opts.dask or None)
        for key, table in stream if todo else ():
            tmp = runs / f".tmp-{key}-{os.getpid()}"
            pq.write_table(table, tmp)
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
