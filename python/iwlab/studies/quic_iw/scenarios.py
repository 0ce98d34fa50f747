"""The quic-iw study's grid, its scenarios and its resumable runner.

A *setting* is a path (RTT, bottleneck rate, buffer) and a background (none, or one long-lived TCP
flow over a second host pair). In each setting, for each IW (datagrams × bytes) and certificate
chain, one run carries one client/server pair making `flows` requests one after another (closed
loop, 1 s think time):

* **QUIC** — quinn-proto flows (`transport = "quic"`), the IW and datagram size from `[quic]`, the
  chain as `certificate_chain`; responses of 10 kB, 100 kB and 1 MB in turn (one run, cyclic mix).
* **TCP + TLS 1.3** — the engine's TCP with MSS = the QUIC datagram size and the same IW in
  segments (so the same bytes), and TLS 1.3 modelled as an HTTP/1.1-like exchange on the
  connection (`web` app): the client's first request is the ClientHello (`TLS_CLIENT_BYTES`), the
  server answers its handshake flight (chain + `TLS_SERVER_OVERHEAD`), which the client must have
  whole before it sends its Finished + HTTP request (`TLS_CLIENT_BYTES` again), answered by the
  response. That is TLS 1.3's full handshake (RFC 8446 §2): one round trip after TCP's. Responses
  are one size per run; a run with a 1-byte response gives the time to first byte.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import as_completed
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from iwlab.studies.model import Options, tiny

NAME = "quic-iw"
TITLE = "QUIC's initial window: certificate chains, anti-amplification, pacing and TCP + TLS 1.3 at the same IW"

#: (datagrams, bytes per datagram): from RFC 9002's default to lsquic's / Google QUICHE's 32 × 1460.
IWS_FULL = ((10, 1200), (10, 1460), (32, 1200), (32, 1460))
IWS_TINY = ((10, 1200), (32, 1460))
#: DER bytes of the server's certificate chain.
CHAINS_FULL = (1500, 4000, 8000, 16000)
CHAINS_TINY = (1500, 16000)
SIZES = (10_000, 100_000, 1_000_000)
#: TLS 1.3 around the chain in the server's flight: ServerHello (~90 B), EncryptedExtensions with
#: ALPN (~25 B), the Certificate message's own framing (~15 B), CertificateVerify with Ed25519
#: (~76 B), Finished (36 B) and four records' headers and AEAD tags (4 × 22 B): ~330 B.
TLS_SERVER_OVERHEAD = 330
#: A ClientHello with one X25519 key share and SNI, unpadded; also the client's Finished + request.
TLS_CLIENT_BYTES = 300
#: The QUIC client's request (stream bytes; the client's Initial is padded to 1 200 B anyway).
QUIC_REQUEST = 100
THINK = 1.0
WARMUP = 3.0
#: The seed decides where the background's sawtooth stands when each request is made: the long-lived
#: flow starts uniformly in its first 2 s and the requests uniformly in a second after the warm-up.
BACKGROUND_START = {"kind": "uniform", "lo": 0.0, "hi": 2.0}
FIRST_REQUEST = {"kind": "uniform", "lo": WARMUP, "hi": WARMUP + 1.0}
#: The TCP background's IW (RFC 6928), in QUIC and TCP runs alike.
BACKGROUND_IW = {"default": "bg", "policies": {"bg": {"kind": "fixed", "segments": 10}}}
PACING = (True,)  # quinn-proto always paces: `pacing = false` is refused by the engine (ledger Q-pacing-off)


@dataclass(frozen=True)
class Setting:
    rtt_ms: int
    rate_mbps: float
    buffer: str  # "shallow" | "deep"
    background: str  # "none" | "tcp"

    @property
    def label(self) -> str:
        return f"{self.rtt_ms} ms, {self.rate_mbps:g} Mb/s {self.buffer}, bg {self.background}"

    def buffer_pkts(self) -> int:
        """Shallow: a quarter of the BDP (at least 8 packets); deep: twice the BDP (at least 32), 1 500-B packets."""
        bdp = self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8 / 1500
        return max(8, math.ceil(bdp / 4)) if self.buffer == "shallow" else max(32, math.ceil(2 * bdp))


def _grid(rtts, rates, buffers, bgs) -> tuple[Setting, ...]:
    return tuple(Setting(r, b, q, g) for r in rtts for b in rates for q in buffers for g in bgs)


@dataclass(frozen=True)
class Plan:
    seeds: int
    flows: int
    settings: tuple[Setting, ...]
    iws: tuple[tuple[int, int], ...]
    chains: tuple[int, ...]
    mode: str


def plan(opts: Options) -> Plan:
    """Full: every setting, IW and chain of the grid at 10 seeds; quick: the same runs at seeds 1–5, so
    every condition full mode judges is judged in quick mode too, on half its seeds (a quick verdict
    can then only be wider, never more favourable); tiny (tests): two settings."""
    if tiny():
        return Plan(opts.seeds or 2, 1, (Setting(100, 10, "deep", "none"), Setting(100, 10, "shallow", "tcp")),
                    IWS_TINY, CHAINS_TINY, "tiny")
    settings = _grid((20, 100, 300), (1, 10, 100), ("shallow", "deep"), ("none", "tcp"))
    if opts.quick:
        return Plan(opts.n_seeds(5, 5), 3, settings, IWS_FULL, CHAINS_FULL, "quick")
    return Plan(opts.n_seeds(10, 5), 3, settings, IWS_FULL, CHAINS_FULL, "full")


def iw_label(iw: tuple[int, int]) -> str:
    return f"{iw[0]}×{iw[1]}"


def duration(s: Setting, sizes: tuple[int, ...], flows: int) -> float:
    """Long enough for `flows` rounds of `sizes` at a third of the bottleneck, each with 20 RTTs of handshakes
    and slow start and 4 s for retransmission timeouts (a flow still open at the end is counted as incomplete)."""
    per = sum(20 * s.rtt_ms / 1e3 + 3 * 8 * n / (s.rate_mbps * 1e6) + 4 + THINK for n in sizes)
    return math.ceil(WARMUP + flows * per + 5)


def _topology(s: Setting) -> dict[str, Any]:
    q = {"kind": "drop-tail", "limit": "1000pkt"}
    access = {"rate": "1Gbps", "delay": "1ms", "queue": q}
    n = 2 if s.background == "tcp" else 1
    return {"kind": "dumbbell",
            "bottleneck": {"rate": f"{s.rate_mbps:g}Mbps", "delay": f"{s.rtt_ms / 2 - 2:g}ms",
                           "queue": {"kind": "drop-tail", "limit": f"{s.buffer_pkts()}pkt"}},
            "left": [{"name": "clients", "count": n, "access": access}],
            "right": [{"name": "servers", "count": n, "access": access}]}


def _background(s: Setting) -> list[dict[str, Any]]:
    if s.background == "none":
        return []
    # Host pair 1 (left-1 → right-1): the clients/servers groups' second hosts.
    return [{"kind": "bulk", "name": "background", "clients": "clients", "servers": "servers", "count": 1,
             "mapping": "distinct", "offset": 1, "server_iw": "bg", "client_iw": "bg", "start": BACKGROUND_START}]


def quic_scenario(s: Setting, iw: tuple[int, int], chain: int, sizes: tuple[int, ...], flows: int) -> Any:
    from iwlab.scenario import Scenario

    dur = duration(s, sizes, flows)
    app = {"kind": "short-flows", "name": "measured", "clients": "clients", "servers": "servers", "count": 1,
           "request": f"{QUIC_REQUEST}B", "mix": [{"response": f"{n}B"} for n in sizes], "mix_order": "cyclic",
           "arrivals": {"kind": "closed-loop", "think": THINK}, "flows": flows * len(sizes), "start": FIRST_REQUEST,
           "transport": "quic"}
    return Scenario.from_data({
        "name": "quic-iw", "description": f"QUIC IW {iw_label(iw)} B, chain {chain} B, {s.label}",
        "duration": f"{dur}s", "warmup": f"{WARMUP:g}s", "topology": _topology(s),
        "quic": {"profile": "rfc9002", "initial_window": f"{iw[0]}pkt", "max_datagram_size": iw[1],
                 "certificate_chain": f"{chain}B"},
        "iw": BACKGROUND_IW,
        "apps": [app, *_background(s)],
    }, "quic-iw (study)")


def tls_scenario(s: Setting, iw: tuple[int, int], chain: int, size: int, flows: int) -> Any:
    """TCP + TLS 1.3: one page per request: the handshake flight, then the response (module docstring)."""
    from iwlab.scenario import Scenario

    dur = duration(s, (size,), flows)
    app = {"kind": "web", "name": "measured", "clients": "clients", "servers": "servers", "count": 1, "http": "1.1",
           "request": f"{TLS_CLIENT_BYTES}B", "primary": f"{chain + TLS_SERVER_OVERHEAD}B", "embedded": f"{size}B",
           "embedded_count": 1, "think": THINK, "pages": flows, "start": FIRST_REQUEST}
    return Scenario.from_data({
        "name": "quic-iw-tcp-tls", "description": f"TCP + TLS 1.3 IW {iw_label(iw)} B, chain {chain} B, {s.label}",
        "duration": f"{dur}s", "warmup": f"{WARMUP:g}s", "topology": _topology(s),
        "tcp": {"mss": iw[1]},
        "iw": {"default": "iw", "policies": {"iw": {"kind": "fixed", "segments": iw[0]}, **BACKGROUND_IW["policies"]}},
        "apps": [app, *_background(s)],
    }, "quic-iw TCP + TLS (study)")


# ---------------------------------------------------------------------------------------------
# Runner: one task = one scenario and seed; results stored as Parquet under out/raw/runs/.


@dataclass(frozen=True)
class Task:
    key: str
    point: dict[str, Any]
    seed: int
    scenario: Any


def tasks(p: Plan) -> list[Task]:
    out = []
    for s in p.settings:
        for iw in p.iws:
            for chain in p.chains:
                base = {"setting": s.label, "rtt_ms": s.rtt_ms, "rate_mbps": s.rate_mbps, "buffer": s.buffer,
                        "background": s.background, "iw": iw_label(iw), "iw_bytes": iw[0] * iw[1], "chain": chain}
                scs = [("quic", 0, quic_scenario(s, iw, chain, SIZES, p.flows))]
                scs += [("tcp", n, tls_scenario(s, iw, chain, n, p.flows)) for n in (1, *SIZES)]
                for transport, size, sc in scs:
                    point = {**base, "transport": transport, "run_size": size}
                    out += [Task(f"{sc.hash()}-s{k}", point, k, sc) for k in range(1, p.seeds + 1)]
    return out


def _execute(task: Task) -> tuple[str, bytes]:
    from iwlab.api import run

    r = run(task.scenario, seed=task.seed)
    f = r.flows
    dur = float(r.summary["duration"])
    bg = f[f["app_kind"] == "bulk"]
    bg_goodput = float(bg["delivered_bytes"].sum()) * 8 / (dur * 1e6) if len(bg) else np.nan
    bg_retx = float(bg["retransmits"].sum()) if len(bg) else np.nan
    if task.point["transport"] == "quic":
        m = f[f["app_kind"] == "short"]
        out = pd.DataFrame({
            "size": m["response_bytes"].to_numpy(dtype=float),
            "completed": m["completed"].to_numpy(dtype=bool),
            "completion": m["completion"].to_numpy(dtype=float, na_value=np.nan),
            "ttfb": m["ttfb"].to_numpy(dtype=float, na_value=np.nan),
            "handshake": m["handshake"].to_numpy(dtype=float, na_value=np.nan),
            "retransmits": m["retransmits"].to_numpy(dtype=float),
            "pto": m["pto_count"].to_numpy(dtype=float, na_value=np.nan),
            "amp_blocked": m["amp_blocked"].to_numpy(dtype=float, na_value=np.nan),
            "first_flight_bytes": m["first_flight_bytes"].to_numpy(dtype=float, na_value=np.nan),
            "first_flight_packets": m["first_flight_packets"].to_numpy(dtype=float, na_value=np.nan),
        })
    else:
        pages = r.pages
        pages = pages[pages["app"] == 0]
        m = f[(f["app_kind"] == "web")]
        n = len(pages)
        out = pd.DataFrame({
            "size": np.full(n, float(task.point["run_size"])),
            "completed": pages["end"].notna().to_numpy(dtype=bool),
            "completion": pages["delay"].to_numpy(dtype=float, na_value=np.nan),
            "ttfb": np.full(n, np.nan), "handshake": np.full(n, np.nan),
            # One connection per page, in page order.
            "retransmits": m["retransmits"].to_numpy(dtype=float)[:n] if len(m) >= n else np.full(n, np.nan),
            "pto": m["timeouts"].to_numpy(dtype=float)[:n] if len(m) >= n else np.full(n, np.nan),
            "amp_blocked": np.full(n, np.nan), "first_flight_bytes": np.full(n, np.nan),
            "first_flight_packets": np.full(n, np.nan),
        })
    out["bg_goodput_mbps"] = bg_goodput
    out["bg_retransmits"] = bg_retx
    for k, v in task.point.items():
        out[k] = v
    out["seed"] = task.seed
    buf = BytesIO()
    out.to_parquet(buf, index=False)
    return task.key, buf.getvalue()


def _local(todo: list[Task], jobs: int) -> Iterator[tuple[str, bytes]]:
    from iwlab import workers

    if jobs == 1 or len(todo) == 1:
        yield from map(_execute, todo)
        return
    # as_completed waits on every future once; wait(FIRST_COMPLETED) in a loop goes through all the
    # pending ones at each completion (O(runs²): a minute of the parent's CPU at the full grid's 28 800).
    with workers.pool(min(jobs, len(todo))) as pool:
        for fut in as_completed([pool.submit(_execute, t) for t in todo]):
            yield fut.result()


def _dask(todo: list[Task], address: str) -> Iterator[tuple[str, bytes]]:
    from distributed import Client, as_completed

    with Client(address) as client:
        futures = client.map(_execute, todo, key=[f"iwlab-quic-iw-{t.key}" for t in todo], pure=False)
        for fut in as_completed(futures):
            yield fut.result()


def run_all(all_tasks: list[Task], opts: Options) -> pd.DataFrame:
    """Runs the tasks not yet stored under `opts.out/raw/runs/`; returns every measured flow."""
    from iwlab.sweep import progress_line

    runs = Path(opts.out) / "raw" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    unique = {t.key: t for t in all_tasks}
    todo = [t for t in unique.values() if not (runs / f"{t.key}.parquet").exists()]
    bar = progress_line(len(unique), len(unique) - len(todo), NAME, opts.progress)
    try:
        stream = _dask(todo, opts.dask) if opts.dask else _local(todo, opts.jobs or os.cpu_count() or 1)
        for key, data in stream if todo else ():
            tmp = runs / f".tmp-{key}-{os.getpid()}"
            tmp.write_bytes(data)
            os.replace(tmp, runs / f"{key}.parquet")
            bar.update(1)
    finally:
        bar.close()
    return pd.concat([pd.read_parquet(runs / f"{t.key}.parquet") for t in unique.values()], ignore_index=True)
