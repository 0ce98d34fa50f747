"""Congested links (docs/studies.md) — "Impact of High TCP's Initial Window in Congested Links" (Nathan & Rai).

IW3 vs IW10 for request/response flows of 9, 10, 21 and 22 segments (MSS 1448 with
timestamps) over a congested 2 Mb/s bottleneck with the paper's 100 ms RTT (its Table 1 trace),
under three congestion patterns at levels 60 … 90 % of the bottleneck (§4.1):

* **constant** — UDP background at the level's share of the bottleneck (Poisson packet gaps);
* **varying** — TCP background only, in two readings of the paper (both run, both judged):
  `iperf`, one long-lived flow (§3's iperf pair), which takes what it can, so it has no level;
  `load`, Poisson arrivals of bulk transfers whose *offered load* is the level (arrival rate =
  level × bandwidth / (8 × mean size)), which gives Fig. 3's "≈ 60 % on average";
* **mixed** — half of the level as UDP, half as the TCP background of the reading.

Each (pattern, level, size, IW) is its own run: one client/server pair sends a short flow
every 2 s (the testbed's netperf) over the background; a run with IW3 and one with IW10 use
the same seed, hence the same background arrivals. Packet losses of a short flow are counted
exactly: its data packets that started serialisation on the bottleneck (from a pcap of the
bottleneck restricted to the short flows) are subtracted from the data packets it sent.
That needs a pcap, which `iwlab.sweep` does not take, so this study has its own small
resumable runner (`opts.out/raw/runs/<scenario hash>-s<seed>.parquet`, local processes or
Dask).

Modes: full = 10 seeds × 300 s; quick = 5 seeds × 120 s; tiny (`IWLAB_STUDY_TINY=1`, for
tests) = 2 seeds × 40 s, sizes 10 and 22, levels 60 and 90 %.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iwlab.studies.base import Options, StudyResult
from iwlab.studies.congested_links.scenarios import (BG_IW, IWS, NAME, Plan, TAIL, TITLE, VARYING_IPERF_LEVEL, _Task,
                                                     plan, preset_defaults, run_all, scenario, split)
from iwlab.studies.congested_links.tables import (_col_keys, _row_keys, conclusions, figures, per_run, tables,
                                                  unreceived)
from iwlab.studies.congested_links.ledger import errata, evidence, ledger
# Re-exported: the names callers and tests use from the study's top level.
from iwlab.studies.congested_links.ledger import HIGH, ledger, paired  # noqa: F401
from iwlab.studies.congested_links.scenarios import (BG_IW, BG_PAIRS, BG_SIZE, IWS, LEVELS, NAME, PATTERNS,  # noqa: F401
                                                     READINGS, ROW_PATTERNS, SIZES, TAIL, TCP_BACKGROUNDS, TITLE, Plan,
                                                     levels_of, pcap_data_packets, plan, preset_defaults, scenario)
from iwlab.studies.congested_links.tables import conclusions, figures, per_run, ratios, tables, unreceived  # noqa: F401


# ---------------------------------------------------------------------------------------------
# The study


def run(opts: Options, *, bandwidth_mbps: float | None = None, rtt_ms: float | None = None) -> StudyResult:
    """Runs the study. `bandwidth_mbps` / `rtt_ms` override the preset's bottleneck (2 Mb/s) and
    base RTT (100 ms); the bottleneck delay becomes RTT/2 minus the two 1 ms access links."""
    p = plan(opts)
    defaults = preset_defaults()
    bw = bandwidth_mbps if bandwidth_mbps is not None else defaults["bandwidth_mbps"]
    rtt = rtt_ms if rtt_ms is not None else defaults["rtt_ms"]
    tasks = []
    for row, level in p.rows():
        tasks.extend(_tasks(row, level, p, bw, rtt))
    flows = run_all(tasks, opts, "main grid")
    n_bad = int(unreceived(flows).sum())
    runs = per_run(flows)
    tabs = tables(runs)
    by_name = {t.name: t for t in tabs}
    bdp = bw * 1e6 * rtt / 1e3 / 8 / 1448
    notes = [
        f"Bottleneck {bw:g} Mb/s, base RTT {rtt:g} ms (BDP ≈ {bdp:.0f} segments of 1448 B), drop-tail buffer of "
        "25 packets (the congested-links preset); access links 100 Mb/s, 1 ms. The RTT is the paper's: its trace "
        "(§3, Table 1) sends the second flight about 100 ms after the first. The paper does not state the "
        "bottleneck's rate or buffer: these model a congested access link in a developing region (a buffer of "
        "≈ 1.5 × the BDP); run(opts, bandwidth_mbps=…, rtt_ms=…) or editing the preset changes them.",
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
        "Varying and mixed congestion have a TCP background the paper describes only as iperf's long-lived flows "
        "(§3) while reporting varying congestion at 'approximately 60% on average' (Fig. 3's text), which one "
        "unlimited long-lived flow would not give; both readings run and every claim on these patterns is judged "
        "under each (ledger ids /iperf and /load). iperf: one long-lived connection (kind bulk) over a further "
        "client/server pair — it takes whatever the UDP leaves, so varying/iperf has no level (its row is "
        "labelled 60 %, the paper's average) and mixed/iperf's level sets only the UDP share. load: Poisson "
        "arrivals of bulk transfers over 4 further pairs, sizes lognormal (median 300 kB, mean 600 kB, "
        "50 kB … 10 MB), at an offered load equal to the level: arrival rate = level × bandwidth / (8 × mean "
        f"size). The table 'bottleneck' shows the utilisation that results. The background uses IW{BG_IW[2:]} in "
        "every run.",
        "Mixed congestion: half of the level as Poisson UDP, the other half as the TCP background of the reading.",
        "Levels are shares of the bottleneck offered by the background alone, 60 … 90 % as the paper's (§4.1); the "
        "short flows add about size × 1500 B × 8 / 2 s (3–7 % of 2 Mb/s).",
        "Packet losses per flow are exact: the flow's data segments sent minus those that started serialisation "
        "on the bottleneck (a pcap of the short flows), the only place in this topology where they can be dropped. "
        "Retransmissions count every retransmitted segment (including spurious ones after a timeout), timeouts "
        "the RTO expiries, fast retransmits the entries into loss recovery.",
        f"{n_bad} of {len(flows)} short flows were recorded as complete although a lost packet was never sent "
        "again (the simulator's receiver jumps over holes when a bare FIN arrives out of order); their completion "
        "times are wrong, so they count as not completed here.",
        f"Mode {p.mode}: {p.seeds} seeds, {p.duration:g} s per run, sizes {list(p.sizes)}, levels {list(p.levels)} %. "
        "Full = 10 seeds × 300 s; quick = 5 seeds × 120 s; IWLAB_STUDY_TINY=1 (tests) = 2 seeds × 40 s, sizes 10 "
        "and 22, levels 60 and 90 %.",
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
        where_it_holds(judged, book, variants, "bottleneck buffer (preset 25 pkt); number of long-lived flows "
                       "(iperf reading)")
        setup["where-it-holds variants"] = (f"{', '.join(VARIANTS)} at {', '.join(f'{a} {b} %' for a, b in VARIANT_ROWS)}"
                                            f"; {p.seeds} seeds × {p.duration:g} s")
    notes.append("Claims: the verdicts use the runs above (25-packet buffer; claims on the varying and mixed "
                 "patterns once per reading of the TCP background). For claims not reproduced, the same claims are "
                 "judged again on variants — a 10- and a 50-packet buffer, and 4 long-lived flows for the iperf "
                 "reading — at constant/mixed 90 % and varying 60 %.")
    return StudyResult(NAME, TITLE, tabs, figures(by_name, p), conclusions(by_name, runs, p, rtt), [], setup, notes,
                       claims=judged, errata=errata())




def _tasks(row: str, level: float, p: Plan, bw: float, rtt: float, **kw: Any) -> list[_Task]:
    """The runs of one row (a pattern with its reading of the TCP background) at one level: every
    size, both IWs, the plan's seeds."""
    pattern, tcp = split(row)
    out = []
    for size in p.sizes:
        for iw in IWS:
            sc = scenario(pattern, level, size, iw, p.duration, p.warmup, bw, rtt, tcp_background=tcp, **kw)
            point = {"pattern": row, "level": level, "size": size, "iw": iw}
            out.extend(_Task(f"{sc.hash()}-s{s}", point, s, sc) for s in range(1, p.seeds + 1))
    return out


VARIANT_ROWS = (("constant", 90), ("varying/iperf", VARYING_IPERF_LEVEL), ("mixed/iperf", 90), ("varying/load", 60),
                ("mixed/load", 90))
VARIANTS: dict[str, dict[str, Any]] = {
    "buffer 10 pkt": {"buffer_pkts": 10},
    "buffer 50 pkt": {"buffer_pkts": 50},
    "iperf ×4": {"bulk_flows": 4},
}


def variant_evidence(opts: Options, p: Plan, bw: float, rtt: float) -> dict[str, Any]:
    """Runs every variant at VARIANT_ROWS (all sizes, both IWs, the plan's seeds; resumable in the
    same raw folder) and returns each one's claims evidence. Long-lived variants change only the
    patterns with TCP background."""
    from iwlab.studies.claims import Evidence

    out = {}
    for label, kw in VARIANTS.items():
        tasks = []
        for row, level in VARIANT_ROWS:
            if kw.get("bulk_flows", 1) > 1 and not row.endswith("/iperf"):
                continue
            tasks.extend(_tasks(row, level, p, bw, rtt, **kw))
        runs = per_run(run_all(tasks, opts, f"where: {label}"))
        tabs = {t.name: t for t in tables(runs)}
        out[label] = Evidence(tabs, evidence(runs), seeds=p.seeds)
    return out
