"""`iwlab probe --quic`: a QUIC server's initial window, measured from the outside (docs/probe.md,
docs/quic.md).

The client is aioquic's sans-IO `QuicConnection` on a UDP socket of our own, so every datagram it
would send passes here first:

1. it sends its Initial (ClientHello) and then *waits*, sending nothing, until the server falls
   silent: what the server sent by then, against 3× what it received, says whether its handshake
   flight was cut by the anti-amplification limit (RFC 9000 §8.1);
2. it completes the handshake (certificates are not verified: it measures, it does not trust).
   Nothing it sends carries an ACK frame (`_no_acks`; quic_flight's docstring says why); when the
   server is stuck at its amplification limit, the client sends what RFC 9002 §6.2.2.1's
   anti-deadlock probe would, a Handshake (or Initial) PING. The server's 1-RTT packets (0.5-RTT
   data) are kept from aioquic until the handshake is done, so none is dropped for want of keys;
3. with its Finished it sends an HTTP/3 GET of PATH, then sends nothing more. Every server datagram
   is decrypted with the connection's keys and its frames read from aioquic's qlog events;
   `quic_flight.first_flight` counts the flight up to the server's first retransmission or probe.

At the end the client sends a CONNECTION_CLOSE so the server frees the connection at once.
No root is needed (an ordinary UDP socket), except for `--netns`.
"""

from __future__ import annotations

import ipaddress
import select
import socket
import ssl
import time
from dataclasses import asdict, dataclass, field

from iwlab.probe.errors import ProbeError, ProbeInputError
from iwlab.probe.quic_flight import MIN_PROBE_GAP, ONE_RTT, Frame, Handshake, Packet, first_flight, gap_for
from iwlab.probe.target import Target, parse_target, resolve

ALLOWED = "allowed: HOST[:PORT] (UDP port 443 by default), [IPV6]:PORT or https://HOST[:PORT]/PATH"
FLOW_CONTROL = 1 << 24  # bytes the client lets the server send: never the limit of a first flight
CID_LENGTH = 8  # aioquic's connection ID length: how short-header packets are parsed


def parse_quic_target(text: str, path: str = "/") -> Target:
    """`HOST[:PORT]`, `[IPV6]:PORT` (port 443 if none) or `https://HOST[:PORT]/PATH` (the URL's path
    wins over `path`). Bad input raises ProbeInputError naming the value."""
    t = text.strip()
    if not path.startswith("/") or any(c in path for c in " \r\n"):
        raise ProbeInputError(f"--path = {path!r}: allowed an absolute path without spaces, e.g. /big.bin")
    if "://" in t:
        if t.split("://", 1)[0].lower() != "https":
            raise ProbeInputError(f"target {text!r}: scheme {t.split('://', 1)[0]!r} with --quic; {ALLOWED}")
        u = parse_target(t)
        return Target(text, "quic", u.host, u.port, u.path if t.split("://", 1)[1].count("/") else path)
    if not t:
        raise ProbeInputError(f"target {text!r} is empty; {ALLOWED}")
    bare_v6 = t.count(":") > 1 and not t.startswith("[")
    if bare_v6 or (":" not in t and not t.startswith("[")):
        if bare_v6:
            try:
                ipaddress.IPv6Address(t)
            except ValueError:
                raise ProbeInputError(f"target {text!r}: not a host or address; {ALLOWED}") from None
        return Target(text, "quic", t, 443, path)
    if t.startswith("[") and t.endswith("]"):
        return Target(text, "quic", t[1:-1], 443, path)
    try:
        u = parse_target(t)
    except ProbeInputError as e:
        raise ProbeInputError(str(e).replace("allowed: http://HOST[:PORT]/PATH, https://HOST[:PORT]/PATH or "
                                             "HOST:PORT", ALLOWED)) from None
    return Target(text, "quic", u.host, u.port, path)


@dataclass
class QuicResult:
    """One measurement (docs/probe.md, "QUIC": what each number means)."""

    target: str
    address: str
    port: int
    path: str
    initial_window_bytes: int  # ack-eliciting 1-RTT bytes before the first retransmission or probe
    packets: int  # those packets
    max_datagram_size: int  # largest datagram the server sent (UDP payload)
    lower_bound: bool  # the response or the wait ended first: the IW is at least this
    why: str  # how the flight ended
    half_rtt_bytes: int  # of the IW, bytes sent with the handshake (0.5-RTT: SETTINGS, …)
    response_bytes: int  # stream bytes of the response in the flight
    http_status: int | None
    pto_ms: float | None  # last packet of the flight → the retransmission or probe
    flight_ms: float | None  # first → last packet sent after the request (pacing)
    rtt_ms: float  # the client's smallest RTT sample (Initial → first answer)
    amplification_limited: bool  # the handshake flight stopped at 3× the client's bytes
    handshake: dict  # before the client's 2nd flight: client_bytes, server_bytes, server_datagrams,
    # complete; acked_bytes: the server's handshake bytes the client had to acknowledge (0 unless the
    # handshake was larger than the window; then the IW may include them, RFC 9002 §7.3.1); retry:
    # the server validated the address with a Retry first (then it is never amplification-limited)
    transport_parameters: dict = field(default_factory=dict)  # the server's, as advertised
    transport: str = "quic"
    recording: dict = field(default_factory=dict, repr=False)  # packets seen, for replay (not in JSON)

    def to_json(self) -> dict:
        out = asdict(self)
        del out["recording"]
        return out

    def line(self) -> str:
        lb = "≥ " if self.lower_bound else ""
        pto = f"{self.pto_ms:g} ms" if self.pto_ms is not None else "-"
        hs = self.handshake
        amp = ("amplification-limited" if self.amplification_limited
               else "complete" if hs["complete"] else "not at the limit")
        if hs["retry"]:
            amp = "a Retry first, then validated"
        if hs["acked_bytes"]:
            amp += (f"; larger than the window: {hs['acked_bytes']} B of it acknowledged, which the IW "
                    "may include")
        return (f"{self.target}  {self.address}:{self.port}  QUIC IW {lb}{self.initial_window_bytes} bytes "
                f"({lb}{self.packets} packets, datagrams ≤ {self.max_datagram_size} B, "
                f"{self.half_rtt_bytes} B of them 0.5-RTT)  PTO {pto}  "
                f"handshake {hs['server_bytes']} B for {hs['client_bytes']} B: {amp}  [{self.why}]")


@dataclass
class QuicError:
    """A target that could not be measured."""

    target: str
    error: str
    transport: str = "quic"

    def to_json(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        return f"{self.target}  error: {self.error}"


class _Recorder:
    """aioquic's qlog hook: keeps the events of one connection (packets with their frames, the
    server's transport parameters)."""

    def __init__(self) -> None:
        from aioquic.quic.logger import QuicLogger, QuicLoggerTrace

        events = self.events = []

        class Trace(QuicLoggerTrace):
            def log_event(self, *, category: str, event: str, data: dict) -> None:
                events.append((event, data))

        class Logger(QuicLogger):
            def start_trace(self, is_client: bool, odcid: bytes) -> QuicLoggerTrace:
                return Trace(is_client=is_client, odcid=odcid)

        self.logger = Logger()

    def take(self) -> list[tuple[str, dict]]:
        out, self.events[:] = list(self.events), []
        return out


def split(datagram: bytes) -> tuple[bytes, bytes]:
    """(long-header packets, short-header packet) of a datagram: a short-header (1-RTT) packet has
    no length and runs to the end of its datagram (RFC 9000 §12.2); bytes after the long-header
    packets whose fixed bit (0x40, §17.3.1) is clear are padding."""
    from aioquic.buffer import Buffer
    from aioquic.quic.packet import pull_quic_header

    buf = Buffer(data=datagram)
    while not buf.eof():
        start = buf.tell()
        if not datagram[start] & 0x80:
            return datagram[:start], datagram[start:] if datagram[start] & 0x40 else b""
        try:
            header = pull_quic_header(buf, host_cid_length=CID_LENGTH)
        except ValueError:
            return datagram[:start], b""
        buf.seek(min(start + header.packet_length, len(datagram)))
    return datagram, b""


class _Client:
    """One connection: a UDP socket, aioquic's client and the packets it decrypted."""

    def __init__(self, t: Target, timeout: float) -> None:
        from aioquic.h3.connection import H3_ALPN
        from aioquic.quic.configuration import QuicConfiguration
        from aioquic.quic.connection import QuicConnection

        self.t, self.timeout = t, timeout
        family, self.address = resolve(t)
        self.rec = _Recorder()
        literal = True
        try:
            ipaddress.ip_address(t.host)
        except ValueError:
            literal = False
        config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                                   server_name=None if literal else t.host, max_data=FLOW_CONTROL,
                                   max_stream_data=FLOW_CONTROL, quic_logger=self.rec.logger,
                                   connection_id_length=CID_LENGTH)
        self.quic = QuicConnection(configuration=config)
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        try:
            self.sock.connect((self.address, t.port))
        except OSError as e:
            self.sock.close()
            raise ProbeError(f"{self.where()}: {(e.strerror or str(e)).lower()}") from None
        self.peer = self.sock.getpeername()
        self.t0 = time.monotonic()
        self.packets: list[Packet] = []
        self.datagrams = 0
        self.client_bytes = 0
        self.server_bytes = 0
        self.params: dict = {}
        self.acked_bytes = 0  # Initial and Handshake bytes of the server acknowledged (a handshake > cwnd)
        self.retry = False  # the server answered the first Initial with a Retry
        self.closed = False
        self.events: list = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    def where(self) -> str:
        """The target as written, and the address it resolved to when that differs."""
        plain = f"{self.address}:{self.t.port}" in (self.t.text, f"[{self.address}]:{self.t.port}")
        return self.t.text if plain else f"{self.t.text} ({self.address}:{self.t.port})"

    def send(self, probe: bool = False, acks: bool = False) -> int:
        """Sends what aioquic has to send, without ACK frames unless `acks`; `probe`: with a PING."""
        if acks:
            self.acked_bytes = sum(p.size for p in self.packets if p.space != ONE_RTT and p.ack_eliciting)
        _no_acks(self.quic, keep_handshake=acks)
        if probe:
            self.quic._probe_pending = True  # the PING of a PTO probe, in the Handshake (else Initial) space
        n = 0
        for data, _ in self.quic.datagrams_to_send(now=time.monotonic()):
            try:
                self.sock.send(data)
            except OSError as e:
                raise ProbeError(f"{self.where()}: {(e.strerror or str(e)).lower()}") from None
            n += len(data)
        self.client_bytes += n
        return n

    def recv(self, wait: float) -> tuple[bytes, float] | None:
        """The next datagram and its arrival time, or None after `wait` seconds of silence."""
        ready, _, _ = select.select([self.sock], [], [], max(wait, 0))
        if not ready:
            return None
        try:
            data = self.sock.recv(65536)
        except ConnectionRefusedError:
            raise ProbeError(f"{self.where()}: UDP port unreachable (ICMP): no QUIC server") from None
        except OSError as e:
            raise ProbeError(f"{self.where()}: {(e.strerror or str(e)).lower()}") from None
        self.server_bytes += len(data)
        return data, self.now()

    def feed(self, data: bytes, at: float, index: int) -> None:
        """Gives (part of) a datagram to aioquic and records the packets it decrypted."""
        from aioquic.quic.events import ConnectionTerminated

        self.quic.receive_datagram(data, self.peer, now=time.monotonic())
        for event, d in self.rec.take():
            if event == "packet_received" and d["header"]["packet_type"] == "retry":
                self.retry = True  # RFC 9000 §8.1.2: the address is validated by the token it carries
            elif event == "packet_received":
                self.packets.append(Packet(at, index, d["header"]["packet_type"], d["header"]["packet_number"],
                                           d["raw"]["length"], tuple(Frame.from_qlog(f) for f in d["frames"])))
            elif event == "parameters_set" and d.get("owner") == "remote":
                self.params = {k: v for k, v in d.items() if k != "owner" and isinstance(v, (int, bool))}
        while (ev := self.quic.next_event()) is not None:
            self.events.append(ev)
            if isinstance(ev, ConnectionTerminated):
                self.closed = True

    def close(self) -> None:
        try:
            if not self.closed:
                self.quic.close(reason_phrase="iwlab probe done")
                self.send()
        except ProbeError:
            pass
        finally:
            self.sock.close()


def _no_acks(quic, keep_handshake: bool = False) -> None:
    """No ACK frame in what aioquic sends next: aioquic writes one for a packet number space
    whenever `ack_at` is set (QuicConnection._write_handshake, _write_application).
    `keep_handshake`: ACK frames for everything received in the Initial and Handshake spaces."""
    from aioquic import tls

    for epoch, space in quic._spaces.items():
        handshake = epoch in (tls.Epoch.INITIAL, tls.Epoch.HANDSHAKE)
        space.ack_at = time.monotonic() if keep_handshake and handshake and len(space.ack_queue) else None


def _crypto_packets(packets: list[Packet]) -> int:
    """Initial and Handshake packets with CRYPTO data received so far (progress of the handshake)."""
    return sum(1 for p in packets if p.space != ONE_RTT and any(f.kind == "crypto" for f in p.frames))


def _handshake_done(events: list) -> bool:
    from aioquic.quic.events import HandshakeCompleted

    return any(isinstance(e, HandshakeCompleted) for e in events)


def _request(c: _Client):
    """The HTTP/3 GET the server answers with its first flight; returns (h3, stream id)."""
    from aioquic.h3.connection import H3Connection

    h3 = H3Connection(c.quic)
    sid = c.quic.get_next_available_stream_id()
    authority = f"[{c.t.host}]" if ":" in c.t.host else c.t.host
    h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", authority.encode()),
                          (b":path", c.t.path.encode()), (b"user-agent", b"iwlab-probe")], end_stream=True)
    return h3, sid


def _status(h3, events: list, sid: int) -> int | None:
    from aioquic.h3.events import HeadersReceived

    for ev in events:
        try:
            for h in h3.handle_event(ev):
                if isinstance(h, HeadersReceived) and h.stream_id == sid:
                    return int(dict(h.headers).get(b":status", b"0"))
        except Exception:  # a malformed HTTP/3 stream does not change what the flight measured
            return None
    return None


def probe_once(t: Target, timeout: float = 3.0, min_gap: float = MIN_PROBE_GAP) -> QuicResult:
    """Measures one target (see the module's docstring). Raises ProbeError when it cannot."""
    c = _Client(t, timeout)
    try:
        return _measure(c, min_gap)
    finally:
        c.close()


def _measure(c: _Client, min_gap: float) -> QuicResult:
    c.quic.connect(c.peer, now=time.monotonic())
    c.send()
    first_flight_bytes = c.client_bytes
    held: list[tuple[bytes, float, int]] = []  # short-header packets kept from aioquic until the request

    def take(data: bytes, at: float) -> None:
        long, short = split(data)
        if long:
            c.feed(long, at, c.datagrams)
        if short:
            held.append((short, at, c.datagrams))
        c.datagrams += 1

    # 1. the server's handshake flight, answered by nothing (RFC 9000 §8.1)
    got = c.recv(c.timeout)
    if got is None:
        raise ProbeError(f"{c.where()}: no answer to the Initial within {c.timeout:g} s")
    rtt = got[1]
    take(*got)
    settle = min(max(rtt / 2, 0.03), 0.25)
    while (got := c.recv(settle)) is not None:
        take(*got)
    hs = Handshake(first_flight_bytes, c.server_bytes, c.datagrams, _handshake_done(c.events))

    # 2. the rest of the handshake: a PING lifts the amplification limit (RFC 9000 §8.1: a
    # Handshake packet validates the client's address; an Initial one raises the limit by 3×). A
    # handshake larger than the server's window cannot finish unacknowledged: after a round that
    # brought no new handshake data, the client acknowledges what it has (reported: a stack may
    # grow its window by those bytes, RFC 9002 §7.3.1)
    deadline = time.monotonic() + c.timeout
    crypto, stalled = _crypto_packets(c.packets), 0
    while not _handshake_done(c.events):
        if c.closed:
            raise ProbeError(f"{c.where()}: the server closed the connection during the handshake")
        if time.monotonic() >= deadline:
            raise ProbeError(f"{c.where()}: the handshake did not complete within {c.timeout:g} s")
        c.send(probe=True, acks=stalled > 0)
        while not _handshake_done(c.events) and (got := c.recv(max(settle, 0.06))) is not None:
            take(*got)
        crypto, before = _crypto_packets(c.packets), crypto
        stalled = stalled + 1 if crypto == before else 0
    h3, sid = _request(c)
    c.send()  # Finished, the client's SETTINGS and the request
    request_at = c.now()
    for data, at, index in held:  # the 0.5-RTT packets, now that nothing more is sent
        c.feed(data, at, index)
    held.clear()

    # 3. the first flight, never acknowledged, up to the first retransmission or probe
    mad = c.params.get("max_ack_delay", 25) / 1000  # RFC 9000 §18.2 default
    gap = gap_for(rtt, mad, min_gap)
    flight = first_flight(c.packets, request_at, gap, sid, now=c.now())
    response_rtt_seen = False
    while flight.ended_at is None and not c.closed:
        pending = flight.pending_until is not None
        got = c.recv(max(flight.pending_until - c.now(), 0) if pending else c.timeout)
        if got is None:
            if pending:  # the silence after a lone packet outlasted the threshold: it was a probe
                flight = first_flight(c.packets, request_at, gap, sid)
                continue
            break
        if not response_rtt_seen:
            response_rtt_seen = True
            rtt = min(rtt, got[1] - request_at)
            gap = gap_for(rtt, mad, min_gap)
        take(*got)
        for data, at, index in held:
            c.feed(data, at, index)
        held.clear()
        flight = first_flight(c.packets, request_at, gap, sid, now=c.now())
    flight = first_flight(c.packets, request_at, gap, sid, closed=c.closed)
    if flight.packets == 0:
        raise ProbeError(f"{c.where()}: handshake complete, but no 1-RTT data within {c.timeout:g} s")
    if flight.ended_at is None and flight.why.startswith("no retransmission"):
        flight.why = f"no retransmission within {c.timeout:g} s after the last packet"
    return QuicResult(
        target=c.t.text, address=c.address, port=c.t.port, path=c.t.path,
        initial_window_bytes=flight.bytes, packets=flight.packets, max_datagram_size=flight.max_datagram_size,
        lower_bound=flight.lower_bound, why=flight.why, half_rtt_bytes=flight.half_rtt_bytes,
        response_bytes=flight.response_bytes, http_status=_status(h3, c.events, sid),
        pto_ms=flight.pto_ms, flight_ms=flight.duration_ms, rtt_ms=round(rtt * 1000, 3),
        amplification_limited=hs.amplification_limited,
        handshake={"client_bytes": hs.client_bytes, "server_bytes": hs.server_bytes,
                   "server_datagrams": hs.server_datagrams, "complete": hs.complete,
                   "acked_bytes": c.acked_bytes, "retry": c.retry},
        transport_parameters=c.params,
        recording={"request_at": request_at, "gap": gap, "response_stream": sid,
                   "packets": [asdict(p) for p in c.packets]})


def probe_quic(target: str | Target, path: str = "/", timeout: float = 3.0, netns: str | None = None,
               min_gap: float = MIN_PROBE_GAP) -> QuicResult:
    """Measures one QUIC server. Raises ProbeInputError for bad input, ProbeError when the target
    cannot be measured."""
    from iwlab.probe.netns import in_netns

    t = target if isinstance(target, Target) else parse_quic_target(target, path)
    with in_netns(netns):
        return probe_once(t, timeout, min_gap)


def probe_quic_many(targets: list[str], path: str = "/", timeout: float = 3.0, netns: str | None = None,
                    concurrency: int | None = None, rate: float | None = None, stop=None,
                    on_done=None, min_gap: float = MIN_PROBE_GAP) -> list[QuicResult | QuicError]:
    """Every target, with the polite limits of `iwlab.probe.many`; a target that cannot be measured
    gives a QuicError. Bad input raises ProbeInputError before any traffic."""
    from iwlab.probe import many
    from iwlab.probe.netns import in_netns

    parsed = [parse_quic_target(x, path) for x in targets]
    concurrency = concurrency or many.DEFAULT_CONCURRENCY
    rate = rate or many.DEFAULT_RATE
    if not 1 <= concurrency <= 256:
        raise ProbeInputError(f"--concurrency = {concurrency}: allowed 1..256")
    if not 0 < rate <= 1000:
        raise ProbeInputError(f"--rate = {rate:g}: allowed > 0 and ≤ 1000 connections per second")

    def work(t: Target, stop_, pace):
        pace()
        try:
            return probe_once(t, timeout, min_gap)
        except ProbeInputError:
            raise
        except ProbeError as e:
            return QuicError(t.text, str(e))

    with in_netns(netns):  # the pool's threads are created inside the namespace and inherit it
        return many.run_many(parsed, work, concurrency, rate, stop, on_done)
