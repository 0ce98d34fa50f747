#!/usr/bin/env python3
"""A QUIC endpoint on aioquic for the emulator: the server or the client of a host's QUIC
applications, in the host's namespace, on the kernel's UDP.

    python quic_peer.py server --listen IP:PORT --iw BYTES --mds N --chain BYTES --cc reno|cubic --log FILE
    python quic_peer.py client --mds N --cc reno|cubic

The wire protocol is the simulator's (crates/iwlab-core/src/quic/conn.rs): one connection per
flow, ALPN `h3`, the request up and the response down one client-initiated bidirectional stream
without HTTP/3 framing. The request's first 16 bytes say what the server is to do: the response
size and the flow's number (big-endian u64 each); the rest is zeros. The server answers when the
request stream ends; the client closes the connection (CONNECTION_CLOSE) once it has the whole
response. `crates/iwlab-quic-peer` (quinn) speaks the same protocol and takes the same options.

The client reads one JSON object per line on stdin, `{uid, flow, bind, dst, port, request,
response}`, opens that connection from `bind` and writes one JSON line per finished flow to
stdout: times in seconds of `CLOCK_MONOTONIC` (`start`, `handshake`, `first_byte`,
`last_byte`), `delivered`, `completed`, `pto`, `datagrams`, `lost`, `error`. The server
prints `ready` once it listens and appends one JSON line per connection to `--log` when the
connection ends: the server's first flight (its datagrams from the first response byte until it
next receives a datagram, UDP payload bytes — the engine's `first_flight_bytes`), the bytes it
sent before the client's second datagram against the client's first (RFC 9000 §8.1), PTOs and
lost packets.

The initial window is aioquic's congestion controller (NewReno or CUBIC) with
`congestion_window` set to `--iw` bytes at creation (RFC 9002 §7.2), registered under its own
name with `register_congestion_control`. aioquic always paces (`QuicPacketPacer`).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import signal
import socket
import struct
import sys
import time
from typing import Any

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.congestion.base import register_congestion_control
from aioquic.quic.congestion.cubic import CubicCongestionControl
from aioquic.quic.congestion.reno import RenoCongestionControl
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted, StreamDataReceived

ALPN = ["h3"]
HEADER = struct.Struct("!QQ")  # response bytes, flow number
PAD_OID = "1.3.6.1.4.1.99999.1"  # the engine's padding extension (crates/iwlab-core/src/quic/crypto.rs)
CONTROLLERS = {"reno": RenoCongestionControl, "cubic": CubicCongestionControl}
CHUNK = bytes(1 << 16)


def controller(base: type, iw: int) -> str:
    """Registers `base` with its window starting at `iw` bytes; returns the name."""

    class FixedIw(base):  # type: ignore[misc, valid-type]
        lost = 0

        def __init__(self, *, max_datagram_size: int) -> None:
            super().__init__(max_datagram_size=max_datagram_size)
            self.congestion_window = iw  # RFC 9002 §7.2: the window at the start, in bytes

        def on_packets_lost(self, *, now: float, packets) -> None:
            packets = list(packets)
            self.lost += len(packets)
            super().on_packets_lost(now=now, packets=packets)

    name = f"iwlab-{base.__name__}-{iw}"
    register_congestion_control(name, FixedIw)
    return name


def certificate(chain: int):
    """One Ed25519 certificate of exactly `chain` DER bytes (padded by a private extension, as
    the engine's), and its key. Ed25519 signatures have one length, so the size is stable."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.hazmat.primitives.serialization import Encoding
    from cryptography.x509.oid import NameOID

    key = ed25519.Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "iwlab.quic.test")])
    now = datetime.datetime.now(datetime.timezone.utc)

    def build(pad: int | None):
        b = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
             .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
             .not_valid_after(now + datetime.timedelta(days=2)))
        if pad is not None:
            b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(PAD_OID), bytes(pad)),
                                critical=False)
        return b.sign(key, None)

    bare = len(build(None).public_bytes(Encoding.DER))
    if chain <= bare:
        return build(None), key
    pad, tried = max(0, chain - bare - 16), set()
    while pad not in tried:  # DER length fields grow at 128 and 256 bytes: converge in a few steps
        tried.add(pad)
        cert = build(pad)
        n = len(cert.public_bytes(Encoding.DER))
        if n == chain:
            return cert, key
        pad = max(0, pad + chain - n)
    return cert, key


def counters(quic: QuicConnection) -> dict[str, int]:
    """Datagrams and UDP payload bytes sent, PTOs: `datagrams_to_send` and the loss detector's
    timer are wrapped on this connection (aioquic has no counters for them)."""
    c = {"datagrams": 0, "bytes": 0, "pto": 0}
    send, loss = quic.datagrams_to_send, quic._loss
    timeout = loss.on_loss_detection_timeout

    def datagrams_to_send(now: float):
        out = send(now=now)
        c["datagrams"] += len(out)
        c["bytes"] += sum(len(d) for d, _ in out)
        return out

    def on_loss_detection_timeout(*, now: float) -> None:
        before = loss._pto_count
        timeout(now=now)
        c["pto"] += loss._pto_count > before  # RFC 9002 §6.2.1: the PTO fired (not a loss timer)

    quic.datagrams_to_send = datagrams_to_send  # type: ignore[method-assign]
    loss.on_loss_detection_timeout = on_loss_detection_timeout  # type: ignore[method-assign]
    return c


# ---- server ------------------------------------------------------------------------------------

class ServerConn(QuicConnectionProtocol):
    log = None  # the server's record file
    live: set["ServerConn"] = set()  # connections not yet recorded

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.c = counters(self._quic)
        self.rec: dict[str, Any] = {"type": "quic-server", "first_flight_bytes": 0, "first_flight_packets": 0,
                                    "bytes_before_2nd": 0, "client_first_dgram": 0}
        self.received = 0
        self.live.add(self)
        self.in_flight_open = False
        self.buf: dict[int, bytearray] = {}
        send = self._quic.datagrams_to_send

        def counted(now: float):
            out = send(now)
            for d, _ in out:
                if self.in_flight_open:
                    self.rec["first_flight_bytes"] += len(d)
                    self.rec["first_flight_packets"] += 1
                if self.received < 2:
                    self.rec["bytes_before_2nd"] += len(d)
            return out

        self._quic.datagrams_to_send = counted  # type: ignore[method-assign]

    def datagram_received(self, data, addr) -> None:
        self.received += 1
        self.in_flight_open = False  # the first flight lasts until the server next hears from the client
        if self.received == 1:
            self.rec["client_first_dgram"] = len(data)
        super().datagram_received(data, addr)

    def quic_event_received(self, event) -> None:
        if isinstance(event, HandshakeCompleted):
            self.rec["handshake"] = time.monotonic()
        elif isinstance(event, StreamDataReceived):
            buf = self.buf.setdefault(event.stream_id, bytearray())
            if len(buf) < HEADER.size:
                buf += event.data[:HEADER.size - len(buf)]
            if event.end_stream:
                response, flow = HEADER.unpack(bytes(buf[:HEADER.size]).ljust(HEADER.size, b"\0"))
                self.rec["flow"] = flow
                self.in_flight_open = response > 0
                self.respond(event.stream_id, response)
        elif isinstance(event, ConnectionTerminated):
            self.finish()

    def respond(self, sid: int, n: int) -> None:
        if n == 0:
            self._quic.send_stream_data(sid, b"", end_stream=True)
        while n > 0:
            k = min(n, len(CHUNK))
            n -= k
            self._quic.send_stream_data(sid, CHUNK[:k], end_stream=n == 0)
        self.transmit()

    def finish(self) -> None:
        self.live.discard(self)
        if self.log is None or "done" in self.rec:
            return
        self.rec["done"] = True
        q = self._quic
        limit = 3 * self.rec["client_first_dgram"]
        # RFC 9000 §8.1: the server stopped within one datagram of 3x what the client's first
        # datagram brought, before the client's second datagram validated its address.
        self.rec["amp_blocked"] = bool(limit and self.rec["bytes_before_2nd"] > limit - q._max_datagram_size)
        self.rec.update(pto=self.c["pto"], datagrams=self.c["datagrams"], bytes=self.c["bytes"],
                        lost=q._loss._cc.lost if hasattr(q._loss._cc, "lost") else None)
        self.log.write(json.dumps(self.rec) + "\n")
        self.log.flush()

    def connection_lost(self, exc) -> None:  # the server socket closed at the end of the run
        self.finish()


async def run_server(a) -> None:
    cert, key = certificate(a.chain)
    cfg = QuicConfiguration(is_client=False, alpn_protocols=ALPN, max_datagram_size=a.mds,
                            congestion_control_algorithm=controller(CONTROLLERS[a.cc], a.iw),
                            certificate=cert, private_key=key, idle_timeout=30.0)
    ServerConn.log = open(a.log, "a")
    host, port = a.listen.rsplit(":", 1)
    await serve(host, int(port), configuration=cfg, create_protocol=ServerConn)
    stop = asyncio.get_running_loop().create_future()
    # aioquic ends a connection the client closed 3 PTO later (draining, RFC 9000 §10.2): at the
    # end of the run, record those still draining.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    print("ready", flush=True)
    await stop
    for conn in list(ServerConn.live):
        conn.finish()


# ---- client ------------------------------------------------------------------------------------

class ClientConn(QuicConnectionProtocol):
    def __init__(self, *args, want: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.c = counters(self._quic)
        self.want = want
        self.rec: dict[str, Any] = {"delivered": 0, "completed": False}
        self.done = asyncio.get_running_loop().create_future()

    def quic_event_received(self, event) -> None:
        if isinstance(event, HandshakeCompleted):
            self.rec["handshake"] = time.monotonic()
        elif isinstance(event, StreamDataReceived):
            if event.data and "first_byte" not in self.rec:
                self.rec["first_byte"] = time.monotonic()
            self.rec["delivered"] += len(event.data)
            if self.rec["delivered"] >= self.want and event.end_stream:
                self.rec["last_byte"] = time.monotonic()
                self.rec["completed"] = True
                self.close()  # CONNECTION_CLOSE, as the engine's client
        elif isinstance(event, ConnectionTerminated):
            if not self.done.done():
                self.done.set_result(None)


async def exchange(job: dict[str, Any], a) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    cfg = QuicConfiguration(is_client=True, alpn_protocols=ALPN, max_datagram_size=a.mds,
                            congestion_control_algorithm=a.cc_name, verify_mode=0, idle_timeout=30.0,
                            server_name="iwlab.quic.test")
    conn = QuicConnection(configuration=cfg)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((job["bind"], 0))
    out: dict[str, Any] = {"uid": job["uid"]}
    transport = None
    try:
        transport, proto = await loop.create_datagram_endpoint(lambda: ClientConn(conn, want=job["response"]),
                                                               sock=sock)
        out["start"] = time.monotonic()
        proto.connect((job["dst"], job["port"]))
        sid = conn.get_next_available_stream_id()
        request = HEADER.pack(job["response"], job["flow"]) + bytes(max(0, job["request"] - HEADER.size))
        conn.send_stream_data(sid, request, end_stream=True)
        proto.transmit()
        try:
            await proto.done
        finally:
            out.update(proto.rec)
            out.update(pto=proto.c["pto"], datagrams=proto.c["datagrams"], bytes=proto.c["bytes"],
                       lost=getattr(conn._loss._cc, "lost", None))
    except (OSError, ConnectionError) as e:
        out["error"] = repr(e)
    finally:
        if transport is not None:
            transport.close()
        else:
            sock.close()
    return out


async def run_client(a) -> None:
    loop = asyncio.get_running_loop()
    a.cc_name = controller(CONTROLLERS[a.cc], a.iw)  # the client's own window (its request)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: set[asyncio.Task] = set()

    async def one(job: dict[str, Any]) -> None:
        try:
            r = await exchange(job, a)
        except Exception as e:  # noqa: BLE001 — a flow's failure is its record, not the peer's end
            r = {"uid": job["uid"], "error": repr(e)}
        sys.stdout.write(json.dumps(r) + "\n")
        sys.stdout.flush()

    print("ready", flush=True)
    while line := await reader.readline():
        t = loop.create_task(one(json.loads(line)))
        tasks.add(t)
        t.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)  # stdin closed: finish the flows under way


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="quic_peer.py")
    ap.add_argument("role", choices=["server", "client"])
    ap.add_argument("--listen", default="0.0.0.0:4433")
    ap.add_argument("--iw", type=int, default=12000, help="initial window, bytes")
    ap.add_argument("--mds", type=int, default=1200, help="max_datagram_size, UDP payload bytes")
    ap.add_argument("--chain", type=int, default=4000, help="certificate chain, DER bytes")
    ap.add_argument("--cc", choices=sorted(CONTROLLERS), default="reno")
    ap.add_argument("--log", default="/dev/null")
    a = ap.parse_args(argv)
    try:
        asyncio.run(run_server(a) if a.role == "server" else run_client(a))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
