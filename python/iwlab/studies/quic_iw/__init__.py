"""QUIC's initial window (docs/quic.md, "The quic-iw study"): which IW for an HTTP/3 server, given its
certificate chain and its clients' paths — and what the same IW gives TCP + TLS 1.3.

QUIC flows run on quinn-proto inside the engine (RFC 9000/9001/9002, the anti-amplification limit,
PTO, pacing); TCP + TLS 1.3 is the engine's TCP with TLS's extra round trip and the server's
handshake flight modelled as data on the connection (`scenarios`). The grid: IW × certificate chain
× RTT × bottleneck (rate, buffer) × background (none, one long-lived TCP flow); pacing on only
(quinn-proto cannot turn it off: ledger `Q-pacing-off`). Measured: time to first byte, handshake
time, completion of 10 kB, 100 kB and 1 MB responses, retransmissions, the first flight, and the
competing TCP flow's goodput.

Modes: full = 10 seeds, 4 IWs × 4 chains × 36 settings, 3 requests per size per run; quick = the
same runs at seeds 1–5 (every condition full mode judges, on half its seeds); tiny
(`IWLAB_STUDY_TINY=1`, tests) = 2 seeds, 2 IWs × 2 chains × 2 settings, 1 per size.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from iwlab.studies.base import Cell, Options, StudyResult, Table, cell
from iwlab.studies.quic_iw.ledger import LARGE_IW, SMALL_CHAIN, SMALL_IW, evidence, ledger, per_seed
from iwlab.studies.quic_iw.scenarios import (NAME, SIZES, TITLE, TLS_CLIENT_BYTES, TLS_SERVER_OVERHEAD, Plan,
                                             plan, run_all, tasks)

__all__ = ["NAME", "TITLE", "ledger", "run", "tables"]


def _kb(n: float) -> str:
    return f"{n / 1000:g} kB"


def _table(ps: pd.DataFrame, name: str, title: str, row: list[str], col: list[str], value: str, note: str,
           scale: float = 1.0, fmt: str = "{:.3g}") -> Table:
    """A table of per-seed values: one cell (mean, CI over seeds) per (row keys, column keys)."""
    cells: dict[Any, dict[Any, Cell]] = {}
    for keys, g in ps.groupby(row + col, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        r = " · ".join(_show(k, v) for k, v in zip(row, keys[: len(row)]))
        c = " ".join(_show(k, v) for k, v in zip(col, keys[len(row):]))
        v = g.groupby("seed")[value].mean().dropna() * scale
        if len(v):
            cells.setdefault(r, {})[c] = cell(v)
    return Table.from_cells(name, title, cells, note=note, fmt=fmt, index_name=" · ".join(row))


def _show(key: str, v: Any) -> str:
    if key == "chain":
        return f"chain {_kb(v)}"
    if key == "size":
        return _kb(v)
    if key == "transport":
        return {"quic": "QUIC", "tcp": "TCP+TLS"}[v]
    return str(v)


def tables(ps: pd.DataFrame) -> list[Table]:
    q = ps[ps["transport"] == "quic"]
    small = ps[ps["size"] == min(SIZES)]
    out = [
        _table(small, "ttfb", "Time to first byte (ms): QUIC and TCP + TLS 1.3 at the same IW",
               ["setting", "chain"], ["transport", "iw"], "ttfb", "From the connection's first packet to the "
               "response's first byte at the client. TCP + TLS: the page time of a 1-byte response after the "
               "modelled TLS 1.3 handshake.", 1e3),
        _table(q[q["size"] == min(SIZES)], "handshake", "QUIC handshake time (ms) and share of flows held by the 3× "
               "limit", ["setting", "chain"], ["iw"], "handshake", "quinn-proto's Connected at the client.", 1e3),
        _table(q[q["size"] == min(SIZES)], "amplification", "Share of QUIC flows whose server stopped on RFC 9000 "
               "§8.1's 3× limit", ["setting", "chain"], ["iw"], "amp_blocked", "", 1.0, "{:.2f}"),
        _table(ps, "completion", "Completion time (ms) of 10 kB, 100 kB and 1 MB responses",
               ["setting", "chain", "size"], ["transport", "iw"], "completion", "From the connection's first packet "
               "to the response's last byte.", 1e3),
        _table(q[q["size"] == max(SIZES)], "first_flight", "Bytes of the QUIC server's first flight of a 1 MB "
               "response", ["setting", "chain"], ["iw"], "first_flight_bytes", "The server's datagrams (UDP "
               "payload) from its first response byte until it next heard from the client.", 1.0, "{:.0f}"),
        _table(ps, "retransmissions", "Retransmitted packets per flow", ["setting", "size"], ["transport", "iw"],
               "retransmits", "QUIC: packets quinn-proto declared lost; TCP: retransmitted segments.", 1.0, "{:.2f}"),
    ]
    loud = ps[ps["background"] == "tcp"]
    if len(loud):
        out.append(_table(loud, "harm", "Goodput (Mb/s) of the competing long-lived TCP flow over the run",
                          ["setting", "chain"], ["transport", "iw"], "bg_goodput_mbps",
                          "Delivered bytes of the background flow over the whole run (same seed, same run length "
                          "for every IW), think times included: the requests are active for part of the run only, so "
                          "the harm while they run is larger than this average."))
    return out


def _span(v: list[float], fmt: str = "{:.2f}") -> str:
    lo, hi = fmt.format(min(v)), fmt.format(max(v))
    return lo if lo == hi else f"{lo}–{hi}"


def conclusions(ev: dict[str, Cell], ps: pd.DataFrame) -> list[str]:
    out = []
    ttfb = [c.value for k, c in ev.items() if k.startswith("ttfb|")]
    if ttfb:
        lead = (f"{_span(ttfb)} RTT sooner than" if min(ttfb) >= 0 else
                f"between {-min(ttfb):.2f} RTT later and {max(ttfb):.2f} RTT sooner than")
        out.append(f"QUIC reaches the first response byte {lead} TCP + TLS 1.3 at the same IW (small chain, no "
                   "background).")
    hs = {k.rsplit(" · ", 1)[1]: [] for k in ev if k.startswith("hs|")}
    for k, c in ev.items():
        if k.startswith("hs|"):
            hs[k.rsplit(" · ", 1)[1]].append(c.value)
    for iw, v in hs.items():
        out.append(f"A 16 kB chain instead of a 1.5 kB one lengthens the QUIC handshake by {_span(v)} "
                   f"RTT with IW {iw} B.")
    faster = [c.value for k, c in ev.items() if k.startswith("faster|")]
    if faster:
        out.append(f"IW {LARGE_IW} B completes a 100 kB response in {_span([100 * x for x in faster], '{:.0f}')} % "
                   f"of the time {SMALL_IW} B takes, across the settings.")
    harm = [c.value for k, c in ev.items() if k.startswith("harm|")]
    if harm:
        out.append(f"A competing TCP flow's goodput when the QUIC flows use {LARGE_IW} B is "
                   f"{_span([100 * x for x in harm], '{:.1f}')} % of its goodput when they use {SMALL_IW} B.")
    return out


def run(opts: Options) -> StudyResult:
    from iwlab.studies.claims import Evidence, judge

    p: Plan = plan(opts)
    all_tasks = tasks(p)
    flows = run_all(all_tasks, opts)
    incomplete = int((~flows["completed"]).sum())
    ps = per_seed(flows)
    tabs = tables(ps)
    ev = evidence(ps)
    judged = judge(ledger(ev), Evidence({t.name: t for t in tabs}, ev, seeds=p.seeds))
    notes = [
        "QUIC: quinn-proto 0.11 with rustls (TLS 1.3, Ed25519, the chain padded to its DER size), NewReno "
        "(profile rfc9002), pacing on (it cannot be turned off), the IW and max_datagram_size from [quic]; the "
        "client's Initial is 1 200 B, so the anti-amplification limit is 3 600 B. Requests of 100 B on one "
        "bidirectional stream, no HTTP/3 framing.",
        f"TCP + TLS 1.3: the engine's TCP (its default profile) with MSS = the QUIC datagram size and the same "
        f"IW in segments. TLS is modelled as data on the connection: a {TLS_CLIENT_BYTES}-byte ClientHello, the "
        f"server's flight of chain + {TLS_SERVER_OVERHEAD} B (ServerHello, EncryptedExtensions, Certificate, "
        f"CertificateVerify, Finished, record framing), which the client must have whole before its "
        f"{TLS_CLIENT_BYTES}-byte Finished + request, then the response: one round trip after TCP's handshake "
        "(RFC 8446 §2). No session resumption or 0-RTT on either side; no TLS CPU time.",
        "Paths: a dumbbell with 1 Gb/s, 1 ms access links; the bottleneck's delay makes the RTT; its drop-tail "
        "buffer is a quarter of the BDP (at least 8 packets, shallow) or twice the BDP (at least 32, deep). "
        "Background: one long-lived TCP flow (IW 10) over a second host pair, starting uniformly in the run's first "
        "2 s, so that each seed meets its sawtooth at another phase.",
        f"Each run: one client making its requests one after another (1 s think time), the first uniformly between "
        f"3 and 4 s; QUIC runs "
        f"cycle through 10 kB, 100 kB and 1 MB, TCP runs have one size each. Values are per-run means over the "
        f"flows, intervals 95 % bootstrap over {p.seeds} seeds. Runs without background are deterministic "
        "(every seed gives the same numbers; their intervals have no width).",
        f"{incomplete} of {len(flows)} measured flows did not complete within the run and are left out.",
        f"Mode {p.mode}: {p.seeds} seeds, {len(p.settings)} settings, IWs {[f'{a}×{b}' for a, b in p.iws]}, chains "
        f"{[_kb(c) for c in p.chains]}, {len(all_tasks)} runs.",
    ]
    setup = {"mode": p.mode, "seeds": p.seeds, "settings": [s.label for s in p.settings],
             "iws": [f"{a}×{b}" for a, b in p.iws], "chains": list(p.chains), "sizes": list(SIZES),
             "runs": len(all_tasks), "flows": len(flows), "incomplete": incomplete, "small_chain": SMALL_CHAIN}
    return StudyResult(NAME, TITLE, tabs, [], conclusions(ev, ps), [], setup, notes, claims=judged)
