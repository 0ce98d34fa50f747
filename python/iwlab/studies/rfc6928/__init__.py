"""RFC 6928, "Increasing TCP's Initial Window" (Chu, Dukkipati, Cheng, Mathis, 2013).

Five parts:

(a) **§5.1 round-trip table** by simulation: a response of N segments (MSS 1460) over a
    lossless path of practically infinite bandwidth (1 Tb/s links, 100 ms RTT), the receiver
    ACKing every 2nd segment with a 10 s delayed-ACK timer; rounds = (last byte at the client −
    SYN-ACK at the client) / RTT. The request leaves with the handshake's ACK and reaches the
    server half an RTT later, when the server sends its first data; the last byte arrives
    (k − ½) RTT after that for k rounds. Must equal the RFC's table exactly.
(b) **Population experiment**: web clients whose access rate and delay are drawn per host
    (AvgDC-like: median ≈ 1.7 Mb/s; SlowDC-like: ~20 % below 100 kb/s) fetch pages from
    servers using the RFC 3390 IW (3 segments) or the RFC 6928 IW (10 segments); latency
    improvement per bandwidth, RTT and BDP bucket, and the change of the retransmission rate.
(c) **Fallback cache**: RFC 6928's per-destination fallback to the RFC 3390 IW after loss in
    the initial window (`rfc6928-fallback`) against plain `rfc6928`.
(d) **IW sizes** (Appendix A, "Why 10 segments?"): the AvgDC population at fixed IWs of 6, 16
    and 32 segments too (`iw_sizes`).
(e) **Testbed** (§6, §9, Appendix A's [CW10]): a 300 ms RTT dumbbell with slow bottlenecks and
    small queues — drops against load, IW3 beside IW10 flows, a bulk flow beside short flows,
    five simultaneous connections, spurious RTOs (`testbed`, `testbed_tables`,
    `testbed_ledger`).

Runs go through `iwlab.sweep` (resumable under `opts.out/raw/<population>/`). A seed fixes
the population: IW3, IW10 and IW10-fallback runs of one seed see the same hosts.

Modules: `round_trips` (a), `population` and `population_tables` (b, c), `iw_sizes` (d), the
testbed's three (e), `figures`, `conclusions`, and `ledger` (the evidence, claims and errata);
this one runs them.

Modes: full = 10 seeds, 200 clients, 300 s; quick = 5 seeds, 200 clients, 120 s; tiny
(`IWLAB_STUDY_TINY=1`, tests) = 2 seeds, 60 clients, 40 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from iwlab.studies.base import Options, StudyResult, metric_name
from iwlab.studies.rfc6928 import iw_sizes, testbed, testbed_tables
from iwlab.studies.rfc6928.conclusions import conclusions
from iwlab.studies.rfc6928.figures import figures
from iwlab.studies.rfc6928.ledger import errata, evidence, ledger, population_ledger
from iwlab.studies.rfc6928.population import (BDP_LABELS, BW_LABELS, IWS, POPULATIONS, RTT_LABELS, TAIL, Plan, plan,
                                              population_scenario, web_flows, web_responses)
from iwlab.studies.rfc6928.population_tables import fallback_table, latency_table, retransmission_table
from iwlab.studies.rfc6928.round_trips import section_5_1, table_5_1

# Names the tests read from the study itself (`rfc6928.RFC_LATENCY`, `rfc6928.hosts`, ...).
from iwlab.studies.rfc6928.ledger import RFC_LATENCY, RFC_RETX, SMALL_RESPONSE  # noqa: F401
from iwlab.studies.rfc6928.population import ALL, hosts  # noqa: F401
from iwlab.studies.rfc6928.round_trips import RFC_ROUNDS, SEGMENTS, TABLE_RTT  # noqa: F401

NAME = "rfc6928"
TITLE = "RFC 6928 — Increasing TCP's initial window: round trips, a client population, the fallback cache"


def run(opts: Options) -> StudyResult:
    import iwlab

    p = plan(opts)
    t51 = section_5_1()
    data: dict[str, pd.DataFrame] = {}
    for pop in POPULATIONS:
        raw = Path(opts.out) / "raw" / pop.lower()
        iwlab.sweep(population_scenario(pop, p), grid={"iw.default": list(IWS)}, seeds=p.seeds, jobs=opts.jobs,
                    dask=opts.dask, out=raw, progress=opts.progress and f"{NAME} · {pop} population")
        data[pop] = web_flows(raw, p)
    # Appendix A, "Why 10 segments?": the AvgDC population at IW 6, 16 and 32 beside its IW3/IW10 runs.
    raw = Path(opts.out) / "raw" / f"{iw_sizes.POPULATION.lower()}-iw-sizes"
    iwlab.sweep(iw_sizes.scenario(population_scenario(iw_sizes.POPULATION, p)),
                grid={"iw.default": list(iw_sizes.POLICY)}, seeds=p.seeds, jobs=opts.jobs, dask=opts.dask, out=raw,
                progress=opts.progress and f"{NAME} · {iw_sizes.POPULATION} at IW {', '.join(map(str, iw_sizes.EXTRA))}")
    sizes = pd.concat([data[iw_sizes.POPULATION], web_responses(raw, p)], ignore_index=True)
    # §6, §9 and Appendix A's testbed claims.
    tp = testbed.plan(p.seeds, p.mode)
    bed = testbed.run(tp, Path(opts.out) / "raw" / "testbed", opts.jobs, opts.dask, opts.progress)
    tabs = [table_5_1(t51),
            latency_table("latency_by_bandwidth", "bw_bucket", BW_LABELS, data),
            latency_table("latency_by_rtt", "rtt_bucket", RTT_LABELS, data),
            latency_table("latency_by_bdp", "bdp_bucket", BDP_LABELS, data),
            retransmission_table(data),
            fallback_table(data),
            iw_sizes.table(sizes),
            *testbed_tables.tables(bed, tp)]
    by_name = {t.name: t for t in tabs}
    medians = {pop: float(f.drop_duplicates(["seed", "client"])["rate"].median() / 1e6) for pop, f in data.items()}
    below = {pop: float((f.drop_duplicates(["seed", "client"])["rate"] < 100e3).mean() * 100) for pop, f in data.items()}
    notes = [
        "§5.1: one response of N × 1460 bytes per run over 1 Tb/s links (100 ms RTT, 100 000-packet queues, no loss); "
        "fixed IW 3 or 10; the client ACKs every 2nd segment with a 10 s delayed-ACK timer (RFC 6928's 'standard "
        "delayed ACKs with a large timer'); rounds = round((last byte − SYN-ACK at the client) / RTT).",
        f"Population: {p.clients} web clients, each on its own access link whose rate and one-way delay are drawn "
        "per host from the seed (rate: piecewise-linear CDF over the RFC's buckets; delay: lognormal, median 30 ms, "
        "mean 45 ms, 2–500 ms), 4 servers in a data centre behind a 1 Gb/s, 5 ms backbone (not the bottleneck); "
        "50-packet drop-tail queues on the access links.",
        "AvgDC-like rate CDF (the preset): 3 / 10 / 29 / 43 / 15 % of the clients in the five buckets; SlowDC-like: "
        "8 % below 56 kb/s, 20 % below 100 kb/s, 33 / 60 / 90 % below 256 kb/s / 1 / 5 Mb/s. Measured medians: "
        + ", ".join(f"{pop} {medians[pop]:.2f} Mb/s ({below[pop]:.0f} % below 100 kb/s)" for pop in data)
        + ". These are documented stand-ins for the RFC's data centres, not their data.",
        "Web clients (HTTP/1.0): a primary object (lognormal, median 8 kB, mean 20 kB) then 3 embedded objects "
        "(Pareto 1.2, scale 1122 B) on parallel connections; think time exponential, mean 5 s; 400-byte requests. "
        "Linux TCP (tcp.profile = \"linux\"): MSS 1448 with timestamps, CUBIC with HyStart, SACK with PRR, delayed "
        "ACK 2/40 ms after 16 quick ACKs, RTO 1 s initial / 200 ms min; "
        "SYN loss rule of RFC 6928 (keep the IW unless the SYN/SYN-ACK was retransmitted twice).",
        "IWs: rfc3390 = min(4·MSS, max(2·MSS, 4380 B)) = 3 segments; rfc6928 = min(10·MSS, max(2·MSS, 14600 B)) "
        "= 10 segments; rfc6928-fallback = rfc6928 with the per-destination cache (expiry 3600 s).",
        "Buckets: client access rate; base RTT = 2 × (access delay + 5 ms backbone + 0.1 ms server link), "
        "propagation only; BDP = rate × base RTT. Latency = last response byte − SYN-ACK at the client, which is "
        "the RFC's server-side measure (request received → last byte acknowledged) shifted by half an RTT at "
        f"both ends. Responses starting in the warm-up or the last {TAIL:g} s are left out.",
        f"Mode {p.mode}: {p.seeds} seeds × {p.duration:g} s per (population, IW). Full = 10 seeds × 300 s; "
        "quick = 5 seeds × 120 s; IWLAB_STUDY_TINY=1 (tests) = 2 seeds × 40 s with 60 clients.",
    ]
    notes += [
        f"IW sizes (Appendix A): the {iw_sizes.POPULATION} population also at fixed IWs of "
        f"{', '.join(map(str, iw_sizes.EXTRA))} segments, same seeds (same hosts, pages and think times) as its IW3 "
        "and IW10 runs; latency and retransmissions counted as above.",
        "Testbed (§6, §9, Appendix A — [CW10] as the RFC describes it: 300 ms RTT, bottlenecks as slow as 64 kb/s, "
        "queues as small as 40 packets): a dumbbell of 4 client/server pairs with 100 Mb/s, 1 ms access links and a "
        "148 ms bottleneck each way; short flows (100-byte request, responses of 2, 4, 8, 16, 32 × 1448 B, equally "
        "often) with Poisson arrivals at 30 / 60 / 90 / 120 % of the bottleneck (payload), on 64 kb/s and 1 Mb/s with "
        "40-packet drop-tail queues; fixed IW 3 or 10 for every flow, or half and half (two mirrored runs); the same "
        "with one long-lived bulk connection on a fifth pair (loads 30 / 60 / 90 %). §6: one client opening 5 "
        f"connections at once, bursts at {testbed.FIVE_LOAD * 100:g} % of the link (exponential gaps), on 64 kb/s "
        "with 40 packets and on 1 Mb/s with 11 packets (§6's 130 ms of buffer at 1 Mb/s). §9: one client, Poisson "
        f"responses at {testbed.SPURIOUS_LOAD * 100:g} % of a 64 or 256 kb/s path with {testbed.SPURIOUS_QUEUE}-packet "
        "queues, so nothing is dropped and every RTO is spurious (a seed with a drop would be left out). Runs of "
        + ", ".join(f"{k} {tp.duration(v):g} s" for k, v in {"64 kb/s": 64e3, "256 kb/s": 256e3, "1 Mb/s": 1e6}.items())
        + f" ({tp.warmup(1e6):g} s warm-up); flows starting in the last {testbed.TAIL_SHARE * 100:g} % are not counted.",
    ]
    setup = {"mode": p.mode, "seeds": p.seeds, "clients": p.clients, "duration_s": p.duration, "warmup_s": p.warmup,
             "testbed": {"load_paths": list(tp.load_rates), "loads": tp.loads, "five": list(tp.five),
                         "spurious": list(tp.spurious)},
             "populations": list(POPULATIONS), "iw_policies": list(IWS),
             "responses": {pop: int(len(f)) for pop, f in data.items()}, "raw": str(Path(opts.out) / "raw")}
    from iwlab.studies.claims import Evidence, judge, where_it_holds

    for t in tabs:
        if t.row_keys is not None:
            continue  # set where the table is made
        if t.name.startswith("latency_by"):
            t.row_keys = lambda r, d=t.name.removeprefix("latency_by_"): {d: str(r)}
            t.col_keys = _pop_col_keys
        elif t.name in ("retransmissions", "fallback"):
            t.row_keys = lambda r: dict(zip(("population", "bandwidth"), str(r).split(" ", 1)))
            t.col_keys = lambda c: {"metric": metric_name(str(c))}
        else:
            t.row_keys = lambda r: {"iw": int(str(r).split()[0].removeprefix("IW=")), "by": str(r).split(" ", 1)[1]}
            t.col_keys = lambda c: {"segments": int(c), "metric": "round_trips"}
    book = ledger()
    judged = judge(book, Evidence(by_name, evidence(data), seeds=p.seeds))
    if p.mode != "tiny" and opts.where:
        where_it_holds(judged, book, _variants(opts, p), "access-link buffer (the RFC gives none; preset 50 packets)",
                       only=[c.id for c in population_ledger()])
        setup["where-it-holds variants"] = f"{', '.join(VARIANTS)}; IW3 and IW10; {p.seeds} seeds × {p.duration:g} s"
        notes.append("Claims: the verdicts use the preset (50-packet drop-tail access buffers). Claims not reproduced "
                     "are judged again with the clients' access buffer at " + " and ".join(VARIANTS) + " (IW3 and "
                     "IW10 only, both populations), the model choice the RFC's data centres leave open.")
    return StudyResult(NAME, TITLE, tabs, figures(by_name, data),
                       [*conclusions(t51, by_name, list(data)), iw_sizes.conclusion(by_name["iw_sizes"])], [], setup,
                       notes, claims=judged, errata=errata())


#: "Where it holds" variants: the clients' access-link buffer (preset: 50 packets).
VARIANTS = {"access buffer 10 pkt": "10pkt", "access buffer 200 pkt": "200pkt"}


def _variants(opts: Options, p: Plan) -> dict[str, Any]:
    import iwlab
    from iwlab.studies.claims import Evidence

    out = {}
    for label, limit in VARIANTS.items():
        data: dict[str, pd.DataFrame] = {}
        for pop in POPULATIONS:
            raw = Path(opts.out) / "raw" / f"where-{limit}-{pop.lower()}"
            sc = population_scenario(pop, p).with_overrides(
                {"topology.left[0].access.queue": {"kind": "drop-tail", "limit": limit}})
            iwlab.sweep(sc, grid={"iw.default": ["iw3", "iw10"]}, seeds=p.seeds, jobs=opts.jobs, dask=opts.dask,
                        out=raw, progress=opts.progress and f"{NAME} · where: {label}, {pop}")
            data[pop] = web_flows(raw, p)
        tabs = [latency_table("latency_by_bandwidth", "bw_bucket", BW_LABELS, data),
                latency_table("latency_by_rtt", "rtt_bucket", RTT_LABELS, data),
                latency_table("latency_by_bdp", "bdp_bucket", BDP_LABELS, data), retransmission_table(data)]
        out[label] = Evidence({t.name: t for t in tabs}, seeds=p.seeds)
    return out


def _pop_col_keys(c: Any) -> dict[str, Any]:
    """"AvgDC IW3 (ms)" → population AvgDC, iw 3, metric latency_ms; "AvgDC flows %" → flows_pct."""
    from iwlab.studies.base import iw_col_keys

    pop, rest = str(c).split(" ", 1)
    k = iw_col_keys(rest)
    return {"population": pop, **k}
