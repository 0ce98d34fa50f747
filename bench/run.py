#!/usr/bin/env python3
"""Side-by-side benchmark of iwlab against ns-3.

Runs every case on both simulators in alternation (iwlab, ns-3, ns-3 with
Ipv4::WeakEsModel=false; the order flips on every other repetition), each run in a fresh
process, and prints three markdown tables: speed, ratios, and the agreement of the answers.
Everything measured is also written to a JSON file (bench/results.json by default).

    .venv/bin/python bench/run.py                     # every case, the default repetitions
    .venv/bin/python bench/run.py --only A,B --reps 5  # groups (A, B, C) or keys (A-scale, B-iw3)
    .venv/bin/python bench/run.py --quick             # short simulated durations (a minute or two)
    .venv/bin/python bench/run.py --duration 1 --reps 1 --only A-default,B-iw10,C   # smoke
    .venv/bin/python bench/run.py --only D --bdp-reps 3  # the high-BDP case (minutes per ns-3 run)

Build first: `bash bench/install-ns3.sh && make -C bench/ns3 && make ext` (`make bench` does all).

What is measured
- ns-3: `wall_s` from the program's JSON line (steady_clock around Simulator::Run() only) and the
  whole process's wall time; answers from the same JSON line.
- iwlab: a fresh `python -c` process per run calls `iwlab.run(scenario, seed)`; the primary time
  is `summary["wall_seconds"]` (the engine run only, like ns-3's `wall_s`); the process wall time
  (interpreter start, imports of pandas/pyarrow, scenario parsing, result tables) is reported too.
  The child computes the answers exactly as bench/ns3/*.cc define theirs (see `iwlab_answers`).
- Peak memory: `ru_maxrss` of the child from `os.wait4` (its whole life, kB).
- CPU time of the run alone, less sensitive than wall time to other load on a shared machine:
  ns-3's `cpu_s` (`std::clock()` around Simulator::Run()) against iwlab's
  `summary["cpu_seconds"]` (the engine thread's CPU time around the run). The process totals
  (`process_cpu_s`, and iwlab's whole `iwlab.run()` call, `call_cpu_s`) are kept in the JSON.
- Link transmissions: packets put on any link, once per hop (ns-3: PhyTxBegin on every device;
  iwlab: `summary["link_transmissions"]`, the links table's packets summed), per second of the
  primary wall time: unlike events, the same unit in both simulators.
- Repetition r (1-based) runs with iwlab seed r and ns-3 `--run r`: the answers are compared as
  means over the repetitions, so one draw of the workload cannot decide agreement.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
NS3_BUILD = BENCH / "ns3" / "build"


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    kind: str  # bulk | short | rfc2415: which answers apply
    toml: str  # relative to bench/scenarios
    ns3: tuple[str, ...]  # program and flags (without --duration / --run / --weakEs)
    duration: float  # simulated seconds (both sides)
    quick: float  # simulated seconds with --quick
    heavy: str = ""  # "scale": repetitions from --scale-reps, "bdp": from --bdp-reps, else --reps
    weakes0: bool = True  # also run ns-3 with Ipv4::WeakEsModel=false

    @property
    def group(self) -> str:
        return self.key.split("-")[0]


CASES = [
    Case("A-default", "A bulk N=100 B=100 Mb/s 60 s", "bulk", "bulk.toml", ("bulk",), 60, 2),
    Case("A-scale", "A bulk N=1000 B=1 Gb/s 10 s", "bulk", "bulk-scale.toml",
         ("bulk", "--flows", "1000", "--bottleneckMbps", "1000"), 10, 0.5, heavy="scale"),
    Case("B-iw10", "B short flows IW 10, 60 s", "short", "short-flows.toml", ("short_flows", "--iw", "10"), 60, 5),
    Case("B-iw3", "B short flows IW 3, 60 s", "short", "short-flows-iw3.toml", ("short_flows", "--iw", "3"), 60, 5),
    Case("C", "C RFC 2415 32 web + 3 FTP, IW 4, 360 s", "rfc2415", "rfc2415.toml", ("rfc2415",), 360, 30),
    # D: high BDP, windows of thousands of segments, CUBIC + SACK. Its ns-3 runs
    # take ~15 minutes of CPU each (ns-3's cost per segment sent grows with the window), so it
    # runs 5 simulated seconds, has its own repetitions and no WeakEs=0 runs; --quick stops it at
    # 0.5 s, before the loss episode.
    Case("D", "D high BDP: 4 CUBIC/SACK flows, 1 Gb/s 20 ms, 4000-pkt buffer, 64 MiB windows, 5 s",
         "bdp", "bulk-bdp.toml",
         ("bulk", "--flows", "4", "--bottleneckMbps", "1000", "--delayMs", "20", "--queuePackets", "4000",
          "--accessMbps", "10000", "--accessQueue", "10000", "--cc", "cubic", "--mss", "1448",
          "--timestamps", "1", "--bufBytes", "67108864", "--startWindow", "0", "--senderStats", "1"),
         5, 0.5, heavy="bdp", weakes0=False),
]

# Answers compared per kind, with the benchmark's tolerances (relative to ns-3). Counts of pages
# and transfers and C's delays are held to the 10 % of B's completion times.
ANSWERS: dict[str, list[tuple[str, float]]] = {
    "bulk": [("goodput_mbps", 0.02), ("bottleneck_utilisation", 0.02), ("bottleneck_drops", 0.15)],
    # D: retransmitted data segments are held to the drops' 15 %.
    "bdp": [
        ("goodput_mbps", 0.02),
        ("bottleneck_utilisation", 0.02),
        ("bottleneck_drops", 0.15),
        ("retransmissions", 0.15),
    ],
    "short": [
        ("goodput_mbps", 0.02),
        ("bottleneck_utilisation", 0.02),
        ("bottleneck_drops", 0.15),
        ("completion_median_s", 0.10),
        ("completion_p99_s", 0.10),
    ],
    "rfc2415": [
        ("goodput_mbps", 0.02),
        ("bottleneck_utilisation", 0.02),
        ("bottleneck_drops", 0.15),
        ("pages_completed", 0.10),
        ("page_delay_median_s", 0.10),
        ("ftp_completed", 0.10),
        ("ftp_delay_median_s", 0.10),
    ],
}
# B's load is a Poisson draw from each simulator's own random streams, so one run's goodput and
# utilisation follow its number of arrivals (±1.8 % per run at 3000 flows); divided by
# flows_started they compare the model rather than the draw. Judged with the same 2 %.
NORMALISED: dict[str, list[tuple[str, str, float]]] = {
    "bulk": [],
    "bdp": [],
    "short": [("goodput_mbps", "flows_started", 0.02), ("bottleneck_utilisation", "flows_started", 0.02)],
    "rfc2415": [],
}
# Shown for context, not judged.
CONTEXT: dict[str, list[str]] = {
    "bulk": [],
    "bdp": ["data_segments", "max_cwnd_segments"],
    "short": ["flows_started", "flows_completed"],
    "rfc2415": ["web_bytes", "ftp_bytes"],
}


# ---------------------------------------------------------------------------------------------
# The iwlab side (runs inside the child process)
# ---------------------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float | None:
    """Nearest-rank quantile, as bench/ns3/metrics.h: the smallest value with at least q·n
    values at or below it; None for an empty sample."""
    v = sorted(values)
    if not v:
        return None
    import math

    rank = min(max(math.ceil(q * len(v)), 1), len(v))
    return v[rank - 1]


def iwlab_answers(result: Any, kind: str) -> dict[str, Any]:
    """The answers of one iwlab run, defined as bench/ns3/*.cc define theirs.

    goodput: application bytes received (by the data receivers: sinks, short-flow and web/FTP
    clients) × 8 / duration, start-up included. Utilisation, drops and packets of the
    bottleneck's data direction: the bottleneck port carrying the most payload. Utilisation is
    bytes started × 8 / (rate × duration); iwlab serialises IP bytes only (ns-3 adds a 2-byte
    PPP header, +0.13 % for a full segment). Medians and p99 are nearest-rank over completed
    flows (completion = last byte at the client − connect), pages (first connect → last byte)
    and FTP transfers.
    """
    s, links, flows, pages = result.summary, result.links, result.flows, result.pages
    duration = float(s["duration"])
    routers = {"router-left", "router-right"}
    bn = links[links["from"].isin(routers) & links["to"].isin(routers)]
    data = bn.loc[bn["payload_bytes"].astype("int64").idxmax()]
    out: dict[str, Any] = {
        "wall_s": float(s["wall_seconds"]),
        "cpu_s": float(s["cpu_seconds"]),  # the engine thread's CPU time, like ns-3's cpu_s
        "events": int(s["events"]),
        "packets": int(links["packets"].astype("int64").sum()),  # per hop, as ns-3's PhyTxBegin count
        # The same count over the whole run (equal here: no warm-up), as ns-3's link_transmissions.
        "link_transmissions": int(s["link_transmissions"]),
        "goodput_mbps": float(flows["delivered_bytes"].astype("int64").sum()) * 8 / duration / 1e6,
        "bottleneck_utilisation": float(data["bytes"]) * 8 / (float(data["rate_bps"]) * duration),
        "bottleneck_drops": int(data["queue_drops"]),
        "bottleneck_packets": int(data["packets"]),
        "flows": int(s["flows"]),
        "core_version": s.get("core_version"),
    }
    if kind == "short":
        done = flows[flows["completed"].astype(bool)]
        comp = [float(x) for x in done["completion"]]
        out.update(
            flows_started=len(flows),
            flows_completed=len(done),
            completion_median_s=quantile(comp, 0.5),
            completion_p99_s=quantile(comp, 0.99),
        )
    if kind == "bdp":
        mss = int(str(result.scenario.data["tcp"]["mss"]).removesuffix("B"))  # normalised: "1448B"
        out.update(
            retransmissions=int(flows["retransmits"].astype("int64").sum()),
            data_segments=int(flows["data_segments"].astype("int64").sum()),
            max_cwnd_segments=float(flows["max_cwnd"].astype("int64").max()) / mss,
        )
    if kind == "rfc2415":
        pc = pages[pages["completed"].astype(bool)]
        ftp = flows[(flows["app_kind"] == "ftp") & flows["completed"].astype(bool)]
        out.update(
            pages_completed=len(pc),
            page_delay_median_s=quantile([float(x) for x in pc["delay"]], 0.5),
            ftp_completed=len(ftp),
            ftp_delay_median_s=quantile([float(x) for x in ftp["completion"]], 0.5),
            web_bytes=int(flows.loc[flows["app_kind"] == "web", "delivered_bytes"].astype("int64").sum()),
            ftp_bytes=int(flows.loc[flows["app_kind"] == "ftp", "delivered_bytes"].astype("int64").sum()),
        )
    return out


def iwlab_child() -> None:
    """Entry point of the iwlab child process: argv[1] is a JSON job; prints one JSON line."""
    job = json.loads(sys.argv[1])
    import iwlab

    sc = iwlab.load(job["toml"])
    if job.get("duration") is not None:
        data = dict(sc.data, duration=f"{job['duration']:g}s")
        sc = iwlab.Scenario.from_data(data, sc.source)
    cpu0 = time.process_time()
    r = iwlab.run(sc, seed=job["seed"])
    cpu = time.process_time() - cpu0  # the whole call: parsing, engine, result tables
    print(json.dumps(dict(iwlab_answers(r, job["kind"]), call_cpu_s=cpu)))


# ---------------------------------------------------------------------------------------------
# Running children
# ---------------------------------------------------------------------------------------------


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def popen_rusage(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs argv; returns its last JSON stdout line plus process wall time and peak RSS (the
    child is reaped with os.wait4 to get its own rusage)."""
    load = loadavg()
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = bytearray()
    err = bytearray()
    # Drain both pipes until EOF without waiting on the process (subprocess would reap it).
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, out)
    sel.register(p.stderr, selectors.EVENT_READ, err)
    while sel.get_map():
        for key, _ in sel.select():
            chunk = os.read(key.fileobj.fileno(), 65536)
            if chunk:
                key.data.extend(chunk)
            else:
                sel.unregister(key.fileobj)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)  # tell Popen it is reaped
    p.stdout.close()
    p.stderr.close()
    text, etext = out.decode(errors="replace"), err.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {p.returncode}:\n{etext.strip()[-2000:]}")
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("{")]
    if not lines:
        raise RuntimeError(f"{' '.join(argv)} printed no JSON line:\n{text[-2000:]}\n{etext[-2000:]}")
    res = json.loads(lines[-1])
    res["process_wall_s"] = wall
    res["load_before"] = load
    res["peak_rss_kb"] = ru.ru_maxrss  # kB on Linux; the child's whole life
    res["process_cpu_s"] = ru.ru_utime + ru.ru_stime
    return res


def ns3_argv(case: Case, rep: int, weak_es: bool, duration: float) -> list[str]:
    prog, *flags = case.ns3
    return [
        str(NS3_BUILD / prog),
        *flags,
        "--duration",
        f"{duration:g}",
        "--run",
        str(rep),
        "--weakEs",
        "1" if weak_es else "0",
    ]


def iwlab_argv(case: Case, rep: int, duration: float | None) -> list[str]:
    job = {"toml": str(BENCH / "scenarios" / case.toml), "seed": rep, "kind": case.kind, "duration": duration}
    code = f"import sys; sys.path.insert(0, {str(BENCH)!r}); import run; run.iwlab_child()"
    return [sys.executable, "-c", code, json.dumps(job)]


def display(argv: list[str]) -> str:
    """A command as a user would type it from the repository root."""
    out = []
    for a in argv:
        a = a.replace(str(ROOT) + "/", "")
        out.append(a if a and all(c.isalnum() or c in "-_./=:," for c in a) else "'" + a.replace("'", "'\\''") + "'")
    return " ".join(out)


# ---------------------------------------------------------------------------------------------
# Summaries and tables
# ---------------------------------------------------------------------------------------------


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def mean(xs: list[Any]) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def link_tx(r: dict[str, Any]) -> int:
    """Packets put on any link, once per hop (older result files have only `packets`)."""
    return int(r.get("link_transmissions", r["packets"]))


def summarise(case: Case, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians, spreads, ratios and the agreement of one case."""
    sides: dict[str, Any] = {}
    for side, rs in runs.items():
        if not rs:
            continue
        walls = [r["wall_s"] for r in rs]
        procs = [r["process_wall_s"] for r in rs]
        w = med(walls)
        sides[side] = {
            "reps": len(rs),
            "wall_median_s": w,
            "wall_min_s": min(walls),
            "wall_max_s": max(walls),
            "process_wall_median_s": med(procs),
            "cpu_median_s": med([r.get("cpu_s", r["process_cpu_s"]) for r in rs]),
            "process_cpu_median_s": med([r["process_cpu_s"] for r in rs]),
            "peak_rss_mb": max(r["peak_rss_kb"] for r in rs) / 1024,
            "events": med([r["events"] for r in rs]),
            "packets": med([r["packets"] for r in rs]),
            "events_per_s": med([r["events"] / r["wall_s"] for r in rs]),
            "packets_per_s": med([r["packets"] / r["wall_s"] for r in rs]),
            # Link transmissions (the same count as packets) per wall-second and per CPU-second.
            "link_transmissions": med([link_tx(r) for r in rs]),
            "link_tx_per_wall_s": med([link_tx(r) / r["wall_s"] for r in rs]),
            "link_tx_per_cpu_s": med([link_tx(r) / r.get("cpu_s", r["process_cpu_s"]) for r in rs]),
        }
    out: dict[str, Any] = {"sides": sides}
    iw = sides.get("iwlab")
    for side in ("ns3", "ns3_weakes0"):
        if iw and side in sides:
            out[f"ratio_{side}"] = sides[side]["wall_median_s"] / iw["wall_median_s"]
            out[f"ratio_{side}_process"] = sides[side]["process_wall_median_s"] / iw["process_wall_median_s"]
            out[f"ratio_{side}_cpu"] = sides[side]["cpu_median_s"] / iw["cpu_median_s"]
    agree = []
    if runs.get("iwlab") and runs.get("ns3"):
        for name, tol in ANSWERS[case.kind]:
            a = mean([r.get(name) for r in runs["ns3"]])
            b = mean([r.get(name) for r in runs["iwlab"]])
            if a is None and b is None:
                diff, ok = None, None  # nothing completed on either side (short runs)
            elif a is None or b is None:
                diff, ok = None, False
            elif a == 0:
                diff, ok = (0.0, True) if b == 0 else (None, False)
            else:
                diff = (b - a) / abs(a)
                ok = abs(diff) <= tol
            agree.append({"answer": name, "ns3": a, "iwlab": b, "diff": diff, "tolerance": tol, "agree": ok})
        for name, per, tol in NORMALISED[case.kind]:
            a = mean([r[name] / r[per] for r in runs["ns3"] if r.get(per)])
            b = mean([r[name] / r[per] for r in runs["iwlab"] if r.get(per)])
            diff = (b - a) / abs(a) if a else None
            ok = diff is not None and abs(diff) <= tol
            agree.append({"answer": f"{name} / {per}", "ns3": a, "iwlab": b, "diff": diff, "tolerance": tol, "agree": ok})
        for name in CONTEXT[case.kind]:
            a = mean([r.get(name) for r in runs["ns3"]])
            b = mean([r.get(name) for r in runs["iwlab"]])
            diff = (b - a) / abs(a) if a else None
            agree.append({"answer": name, "ns3": a, "iwlab": b, "diff": diff, "tolerance": None, "agree": None})
        # Ipv4::WeakEsModel changes speed only: the answers must be identical.
        if runs.get("ns3_weakes0"):
            keys = [n for n, _ in ANSWERS[case.kind]]
            same = all(
                all(r0.get(k) == r1.get(k) for k in keys) for r0, r1 in zip(runs["ns3"], runs["ns3_weakes0"])
            )
            out["weakes0_same_answers"] = same
    out["agreement"] = agree
    return out


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3g}"
        return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}".replace(",", " ")
    if isinstance(x, int):
        return f"{x:,}".replace(",", " ")
    return str(x)


def big(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}"


SIDE_NAMES = {"iwlab": "iwlab (engine)", "ns3": "ns-3", "ns3_weakes0": "ns-3 WeakEs=0"}


def tables(cases: list[Case], summaries: dict[str, dict[str, Any]]) -> str:
    lines = [
        "### Speed",
        "",
        "Wall time: iwlab = engine run only (`summary.wall_seconds`); ns-3 = `Simulator::Run()` only. "
        "Process = the whole child process. Spread = min–max over the repetitions. CPU = CPU time of "
        "the run alone: ns-3 `std::clock()` around `Simulator::Run()`, iwlab the engine thread's "
        "(`summary.cpu_seconds`); less disturbed than wall time by other load on a shared machine. "
        "Link tx = link transmissions: packets put on any link, once per hop (ns-3 `PhyTxBegin` on every "
        "device, iwlab `summary.link_transmissions`), the unit that means the same in both simulators; "
        "events/s and link tx/s use the primary wall time, link tx per CPU s the CPU time.",
        "",
        "| case | simulator | reps | wall median s | spread s | process median s | CPU median s | peak RSS MB | events | events/s | link tx | link tx/s | link tx per CPU s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cases:
        sm = summaries.get(c.key)
        if not sm:
            continue
        for side in ("iwlab", "ns3", "ns3_weakes0"):
            s = sm["sides"].get(side)
            if not s:
                continue
            lines.append(
                f"| {c.key} | {SIDE_NAMES[side]} | {s['reps']} | {s['wall_median_s']:.4g} | "
                f"{s['wall_min_s']:.4g}–{s['wall_max_s']:.4g} | {s['process_wall_median_s']:.3g} | "
                f"{s['cpu_median_s']:.3g} | "
                f"{s['peak_rss_mb']:.0f} | {big(s['events'])} | {big(s['events_per_s'])} | "
                f"{big(s['link_transmissions'])} | {big(s['link_tx_per_wall_s'])} | {big(s['link_tx_per_cpu_s'])} |"
            )
    lines += [
        "",
        "### Ratios (median wall time ns-3 / iwlab; target ≥ 50× on A, B and D)",
        "",
        "| case | ns-3 / iwlab engine | ns-3 WeakEs=0 / iwlab engine | CPU ns-3 / iwlab | CPU WeakEs=0 / iwlab | process ns-3 / iwlab | process WeakEs=0 / iwlab | ≥ 50× (engine wall and CPU) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for c in cases:
        sm = summaries.get(c.key)
        if not sm or "ratio_ns3" not in sm:
            continue
        def x(v: float | None, d: int = 0) -> str:
            return "–" if v is None else f"{v:.{d}f}×"

        r0 = sm.get("ratio_ns3_weakes0")
        r0c = sm.get("ratio_ns3_weakes0_cpu")
        worst = min(sm["ratio_ns3"], r0 or sm["ratio_ns3"], sm["ratio_ns3_cpu"], r0c or sm["ratio_ns3_cpu"])
        target = "" if c.group == "C" else ("yes" if worst >= 50 else "no")
        lines.append(
            f"| {c.key} | {x(sm['ratio_ns3'])} | {x(r0)} | {x(sm['ratio_ns3_cpu'])} | "
            f"{x(sm.get('ratio_ns3_weakes0_cpu'))} | {x(sm['ratio_ns3_process'], 1)} | "
            f"{x(sm.get('ratio_ns3_weakes0_process'), 1)} | {target} |"
        )
    lines += [
        "",
        "### Agreement (means over the repetitions; diff = (iwlab − ns-3) / ns-3)",
        "",
        "| case | answer | ns-3 | iwlab | diff | tolerance | verdict |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for c in cases:
        sm = summaries.get(c.key)
        if not sm:
            continue
        for a in sm["agreement"]:
            verdict = {True: "agree", False: "**DISAGREE**", None: "(context)" if a["tolerance"] is None else "n/a"}[
                a["agree"]
            ]
            diff = "–" if a["diff"] is None else f"{a['diff'] * 100:+.1f} %"
            tol = "" if a["tolerance"] is None else f"{a['tolerance'] * 100:.0f} %"
            lines.append(f"| {c.key} | {a['answer']} | {fmt(a['ns3'], 4)} | {fmt(a['iwlab'], 4)} | {diff} | {tol} | {verdict} |")
        if "weakes0_same_answers" in sm:
            lines.append(
                f"| {c.key} | ns-3 answers with WeakEs=0 identical | | | | | "
                f"{'yes' if sm['weakes0_same_answers'] else '**no**'} |"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def select(only: str | None) -> list[Case]:
    if not only:
        return list(CASES)
    want = [w.strip() for w in only.split(",") if w.strip()]
    keys = {c.key for c in CASES} | {c.group for c in CASES}
    bad = [w for w in want if w not in keys]
    if bad:
        raise SystemExit(f"--only: unknown {bad}; expected keys {[c.key for c in CASES]} or groups A, B, C, D")
    return [c for c in CASES if c.key in want or c.group in want]


def load_ns3_runs(paths: list[str]) -> dict[str, dict[str, Any]]:
    """Earlier ns-3 runs by their command (as `display` writes it): from results.json files
    (every case's ns3 and ns3_weakes0 runs) or files of one run object per line."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        text = Path(path).read_text()
        try:
            doc = json.loads(text)
            docs = [doc]
        except json.JSONDecodeError:
            docs = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
        for d in docs:
            runs = [d] if "command" in d else [
                r for c in d.get("cases", {}).values() for side in ("ns3", "ns3_weakes0") for r in c["runs"].get(side, [])
            ]
            for r in runs:
                out[r["command"]] = dict(r, reused_from=str(path))
    return out


def environment() -> dict[str, Any]:
    def cmd(argv: list[str]) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, check=False).stdout.strip()
        except OSError:
            return ""

    cpu = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "ns3": cmd(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"]),
        "git_commit": cmd(["git", "rev-parse", "HEAD"]),
        "git_dirty": bool(cmd(["git", "status", "--porcelain", "--untracked-files=no"])),
        "load_start": loadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated case keys or groups (A, B, C, D); default all")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of A-default, B and C (default 3)")
    ap.add_argument("--scale-reps", type=int, default=1, help="repetitions of A-scale (default 1)")
    ap.add_argument("--bdp-reps", type=int, default=1, help="repetitions of D (default 1)")
    ap.add_argument("--quick", action="store_true", help="short simulated durations (per case)")
    ap.add_argument("--duration", type=float, help="simulated seconds for every case (overrides --quick)")
    ap.add_argument("--no-weakes0", action="store_true", help="skip the ns-3 runs with WeakEsModel=false")
    ap.add_argument("--ns3-from", help="comma-separated JSON files of earlier ns-3 runs (a results.json, or "
                    "one run object per line); an ns-3 command found there is not run again but its run reused "
                    "(ns-3 and its answers do not change when iwlab does)")
    ap.add_argument("--out", default=str(BENCH / "results.json"), help="JSON output (default bench/results.json)")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.scale_reps < 1 or args.bdp_reps < 1:
        raise SystemExit("--reps, --scale-reps and --bdp-reps must be >= 1")
    if args.duration is not None and args.duration <= 0:
        raise SystemExit(f"--duration = {args.duration}; expected > 0 seconds")
    cases = select(args.only)
    missing = sorted({c.ns3[0] for c in cases if not (NS3_BUILD / c.ns3[0]).exists()})
    if missing:
        raise SystemExit(f"ns-3 programs not built: {missing}; run `bash bench/install-ns3.sh && make -C bench/ns3`")

    reuse = load_ns3_runs(args.ns3_from.split(",")) if args.ns3_from else {}
    env = environment()
    print(f"# iwlab vs ns-3 — {env['date']}, {env['cpus']} CPUs ({env['cpu']}), load {env['load_start']}", flush=True)
    results: dict[str, Any] = {"environment": env, "args": vars(args), "cases": {}}
    summaries: dict[str, dict[str, Any]] = {}
    for case in cases:
        reps = {"scale": args.scale_reps, "bdp": args.bdp_reps}.get(case.heavy, args.reps)
        duration = args.duration if args.duration is not None else (case.quick if args.quick else case.duration)
        iw_duration = None if duration == case.duration else duration
        runs: dict[str, list[dict[str, Any]]] = {"iwlab": [], "ns3": [], "ns3_weakes0": []}
        commands: list[str] = []
        for rep in range(1, reps + 1):
            jobs = [("iwlab", iwlab_argv(case, rep, iw_duration)), ("ns3", ns3_argv(case, rep, True, duration))]
            if case.weakes0 and not args.no_weakes0:
                jobs.append(("ns3_weakes0", ns3_argv(case, rep, False, duration)))
            if rep % 2 == 0:
                jobs = jobs[1:] + jobs[:1]  # A B A B …: alternate who goes first
            for side, cmd in jobs:
                earlier = reuse.get(display(cmd)) if side != "iwlab" else None
                res = dict(earlier) if earlier else popen_rusage(cmd)
                res["rep"] = rep
                res["command"] = display(cmd)
                runs[side].append(res)
                commands.append(res["command"])
                print(
                    f"  {case.key:9s} rep {rep} {SIDE_NAMES[side]:15s} wall {res['wall_s']:8.3f} s  "
                    f"process {res['process_wall_s']:8.2f} s  load {res['load_before']}",
                    flush=True,
                )
        summaries[case.key] = summarise(case, runs)
        results["cases"][case.key] = {
            "title": case.title,
            "duration_s": duration,
            "reps": reps,
            "runs": runs,
            "summary": summaries[case.key],
            "commands": commands,
        }
    results["environment"]["load_end"] = loadavg()
    text = tables(cases, summaries)
    results["tables_markdown"] = text
    Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=False, default=str) + "\n")
    print()
    print(text)
    print(f"\n(results in {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
