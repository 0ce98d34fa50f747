"""Agent logs and relay counters → the simulator's tables (flows, pages, links, queues).

Column names and types are the simulator's (`crates/iwlab-core/src/metrics/`), so every
report reads both. What the kernel cannot tell is null:

| column | emulated from |
|---|---|
| start, syn_ack, first_byte, last_byte | the client agent's clock (`CLOCK_MONOTONIC` − T0) at `connect()`, `recv()` |
| data_segments | `tcpi_data_segs_out` of both ends |
| retransmits | `tcpi_total_retrans` of both ends, minus the SYN/SYN-ACK retransmissions |
| timeouts | `tcpi_total_rto` of both ends, minus the SYN/SYN-ACK timeouts (Linux ≥ 6.7) |
| syn_retransmits | `tcpi_total_retrans` of the client when `connect()` returns + of the server at `accept()` |
| ecn_marks | `tcpi_received_ce` of both ends (Linux ≥ 6.18), else null |
| iw_bytes, iw_segments | the route's `initcwnd` the flow was given × MSS |
| fast_retransmits, max_cwnd | null (not in `tcp_info`) |
| links.* | the relay's counters at the end of the warm-up and at the end of the run |
| links.payload_bytes | null (the relay counts IP bytes) |

`queues` is empty: the relay reports a queue's peak, not its occupancy over time.

A QUIC flow (an app with `transport = "quic"`, run by a real QUIC endpoint: quic_peer.py or
crates/iwlab-quic-peer) is recorded from the endpoints' own reports, in the engine's terms
(crates/iwlab-core/src/metrics/flow.rs): `syn_ack` is the client's handshake completion;
`iw_bytes` the endpoint's configured window, `iw_segments` it over `max_datagram_size`;
`data_segments` the datagrams of both ends, `retransmits` their lost packets, `timeouts` their
PTOs; and the columns a run with QUIC flows adds — `transport`, `handshake`, `ttfb` (seconds
from the flow's start), `first_flight_bytes`/`first_flight_packets` (the server's datagrams from
its first response byte until it next hears from the client, UDP payload bytes),
`amp_blocked` (the server stopped within one datagram of 3x the client's first datagram
before its second, RFC 9000 §8.1), `pto_count` (both ends); null on TCP rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from iwlab.emulate.plan import Plan

I64, F64, STR, BOOL = pa.int64(), pa.float64(), pa.string(), pa.bool_()

FLOW_SCHEMA = pa.schema([
    ("flow", I64), ("app", I64), ("app_kind", STR), ("role", STR), ("page", I64), ("client", I64), ("server", I64),
    ("sender", STR), ("request_bytes", I64), ("response_bytes", I64), ("delivered_bytes", I64), ("iw_bytes", I64),
    ("iw_segments", F64), ("iw_policy", STR), ("start", F64), ("syn_ack", F64), ("first_byte", F64),
    ("last_byte", F64), ("completion", F64), ("data_segments", I64), ("retransmits", I64), ("timeouts", I64),
    ("fast_retransmits", I64), ("syn_retransmits", I64), ("ecn_marks", I64), ("max_cwnd", I64),
    ("completed", BOOL), ("in_warmup", BOOL), ("app_name", STR), ("server_iw", STR)])
PAGE_SCHEMA = pa.schema([
    ("page", I64), ("app", I64), ("client", I64), ("server", I64), ("start", F64), ("end", F64), ("delay", F64),
    ("objects", I64), ("bytes", I64), ("completed", BOOL), ("in_warmup", BOOL)])
LINK_SCHEMA = pa.schema([
    ("port", I64), ("from", STR), ("to", STR), ("rate_bps", I64), ("delay", F64), ("packets", I64), ("bytes", I64),
    ("payload_bytes", I64), ("queue_drops", I64), ("loss_drops", I64), ("marks", I64), ("busy", F64),
    ("utilisation", F64), ("drop_rate", F64), ("from_time", F64), ("to_time", F64)])
QUEUE_SCHEMA = pa.schema([("time", F64), ("port", I64), ("packets", I64), ("bytes", I64)])
# The engine's QUIC columns (crates/iwlab-core/src/metrics/flow.rs `quic_columns`), after FLOW_SCHEMA's.
QUIC_SCHEMA = pa.schema([("transport", STR), ("handshake", F64), ("ttfb", F64), ("first_flight_bytes", F64),
                         ("first_flight_packets", F64), ("amp_blocked", F64), ("pto_count", F64)])


def frame(rows: list[dict[str, Any]], schema: pa.Schema) -> pd.DataFrame:
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.table(cols, schema=schema).to_pandas(types_mapper=pd.ArrowDtype)


def read_logs(rundir: Path, plan: Plan) -> list[dict[str, Any]]:
    out = []
    for h in plan.hosts:
        p = rundir / f"{h.name}.jsonl"
        if p.exists():
            out += [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    return out


def _get(info: dict[str, Any] | None, key: str) -> int | None:
    return None if not info else info.get(key)


def _delta(rec: dict[str, Any] | None, key: str) -> int | None:
    """Counter at the end minus at connection set-up."""
    if rec is None:
        return 0
    end, begin = _get(rec.get("info"), key), _get(rec.get("info0"), key)
    if end is None:
        return None
    return end - (begin or 0)


def _sum(*xs: int | None) -> int | None:
    return None if any(x is None for x in xs) else sum(xs)  # type: ignore[arg-type]


def flows_and_pages(plan: Plan, records: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    node = {h.name: h.node for h in plan.hosts}
    servers = {r["uid"]: r for r in records if r.get("type") == "server" and "uid" in r}
    quic_servers = {r["flow"]: r for r in records if r.get("type") == "quic-server" and "flow" in r}
    clients = [r for r in records if r.get("type") == "client" and "start" in r]
    pages = sorted((r for r in records if r.get("type") == "page"), key=lambda r: (r["start"], r["key"]))
    page_id = {p["key"]: i for i, p in enumerate(pages)}
    meta = {a["index"]: a for a in plan.apps}
    rows = []
    for c in sorted(clients, key=lambda r: (r["start"], node[r["host"]], r["uid"])):
        if c.get("transport") == "quic":
            rows.append(_quic_row(plan, c, quic_servers.get(c["flow_no"]), node, meta[c["app"]], page_id))
            continue
        s = servers.get(c["uid"])
        ci, si = c.get("info"), (s or {}).get("info")
        done = c.get("completed") and c.get("last_byte") is not None
        app = meta[c["app"]]
        sender = "server" if c["response_bytes"] >= c["request_bytes"] else "client"
        w = c["iw_server"] if sender == "server" else c["iw_client"]
        info0_c, info0_s = c.get("info0"), (s or {}).get("info0")
        if w is None:
            # The server's watcher chose it: the server's cwnd at accept, before any data.
            w = _get(info0_s, "snd_cwnd") or 0
        rows.append({
            "app": c["app_id"], "app_kind": c["app_kind"], "role": c["role"],
            "page": page_id.get(c.get("page"), -1) if c.get("page") is not None else -1,
            "client": node[c["host"]], "server": node[c["server_host"]], "sender": sender,
            "request_bytes": c["request_bytes"], "response_bytes": c["response_bytes"],
            "delivered_bytes": c.get("delivered", 0) if sender == "server" else (s or {}).get("received", 0),
            "iw_bytes": w * app["mss"], "iw_segments": float(w),
            "iw_policy": (c.get("server_kind") or app["server_iw"]) if sender == "server" else app["client_iw"],
            "start": c["start"], "syn_ack": c.get("syn_ack"), "first_byte": c.get("first_byte"),
            "last_byte": c.get("last_byte"),
            "completion": c["last_byte"] - c["start"] if done else None,
            "data_segments": _sum(_get(ci, "data_segs_out"), _get(si, "data_segs_out") if s else 0),
            "retransmits": _sum(_delta(c, "total_retrans"), _delta(s, "total_retrans")),
            "timeouts": _sum(_delta(c, "total_rto"), _delta(s, "total_rto")),
            "fast_retransmits": None,
            "syn_retransmits": _sum(_get(info0_c, "total_retrans") or 0, _get(info0_s, "total_retrans") or 0),
            "ecn_marks": _sum(_get(ci, "received_ce"), _get(si, "received_ce") if s else 0),
            "max_cwnd": None,
            "completed": bool(c.get("completed")),
            "in_warmup": c["start"] < plan.warmup,
            # The scenario's names: the entry, and the server's policy (a mix's per flow).
            "app_name": app["name"], "server_iw": c.get("server_policy") or app["server_policy"],
        })
    for i, r in enumerate(rows):
        r["flow"] = i
    quic = any(c.get("transport") == "quic" for c in clients)
    if quic:
        for r in rows:
            r.setdefault("transport", "tcp")
    page_rows = []
    for i, p in enumerate(pages):
        end = p.get("end")
        page_rows.append({"page": i, "app": p["app"], "client": node[p["host"]], "server": node[p["server_host"]],
                          "start": p["start"], "end": end, "delay": None if end is None else end - p["start"],
                          "objects": p["objects"], "bytes": p["bytes"], "completed": end is not None,
                          "in_warmup": p["start"] < plan.warmup})
    schema = pa.schema(list(FLOW_SCHEMA) + list(QUIC_SCHEMA)) if quic else FLOW_SCHEMA
    return frame(rows, schema), frame(page_rows, PAGE_SCHEMA)


def _quic_row(plan: Plan, c: dict[str, Any], s: dict[str, Any] | None, node, app, page_id) -> dict[str, Any]:
    q, cq, sq = app["quic"], c.get("quic") or {}, s or {}
    done = c.get("completed") and c.get("last_byte") is not None
    since = lambda k: c[k] - c["start"] if c.get(k) is not None else None  # noqa: E731
    both = lambda k: _sum(cq.get(k), sq.get(k)) if s else cq.get(k)  # noqa: E731
    return {
        "app": c["app_id"], "app_kind": c["app_kind"], "role": c["role"],
        "page": page_id.get(c.get("page"), -1) if c.get("page") is not None else -1,
        "client": node[c["host"]], "server": node[c["server_host"]], "sender": "server",
        "request_bytes": c["request_bytes"], "response_bytes": c["response_bytes"],
        "delivered_bytes": c.get("delivered", 0), "iw_bytes": q["iw"], "iw_segments": q["iw"] / q["mds"],
        "iw_policy": f"quic-{q['stack']}/{q['cc']}", "start": c["start"], "syn_ack": c.get("syn_ack"),
        "first_byte": c.get("first_byte"), "last_byte": c.get("last_byte"),
        "completion": c["last_byte"] - c["start"] if done else None,
        "data_segments": both("datagrams"), "retransmits": both("lost"), "timeouts": both("pto"),
        "fast_retransmits": None, "syn_retransmits": None, "ecn_marks": None, "max_cwnd": None,
        "completed": bool(c.get("completed")), "in_warmup": c["start"] < plan.warmup,
        "app_name": app["name"], "server_iw": c.get("server_policy") or app["server_policy"],
        "transport": "quic", "handshake": since("syn_ack"), "ttfb": since("first_byte"),
        "first_flight_bytes": sq.get("first_flight_bytes"), "first_flight_packets": sq.get("first_flight_packets"),
        "amp_blocked": None if s is None else float(bool(sq.get("amp_blocked"))),
        "pto_count": both("pto"),
    }


def links(plan: Plan, final: dict[str, Any], base: dict[str, Any] | None, t_from: float, t_to: float) -> pd.DataFrame:
    """Relay counters over [t_from, t_to]: `final` minus `base` (the warm-up snapshot)."""
    def by_tun(stats: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        return {d["tun"]: d for d in (stats or {}).get("directions", [])}

    f, b = by_tun(final), by_tun(base)
    span = max(t_to - t_from, 1e-9)
    rows = []
    for d in plan.links:
        cur, old = f.get(d.tun, {}), b.get(d.tun, {})

        def diff(key: str) -> int:
            return int(cur.get(key, 0)) - int(old.get(key, 0))

        packets, nbytes = diff("packets_out"), diff("bytes_out")
        qd, ld = diff("queue_drops") + diff("pool_drops"), diff("loss_drops")
        busy = nbytes * 8 / d.rate_bps
        rows.append({"port": d.port, "from": d.src, "to": d.dst, "rate_bps": d.rate_bps, "delay": d.delay,
                     "packets": packets, "bytes": nbytes, "payload_bytes": None, "queue_drops": qd,
                     "loss_drops": ld, "marks": diff("marks"), "busy": busy, "utilisation": busy / span,
                     "drop_rate": (qd + ld) / (packets + qd + ld) if packets + qd + ld else 0.0,
                     "from_time": t_from, "to_time": t_to})
    return frame(rows, LINK_SCHEMA)


def queues() -> pd.DataFrame:
    return frame([], QUEUE_SCHEMA)
