"""One probe: a TCP client in user space that never acknowledges the server's data.

The method (Padhye & Floyd's TBIT, and the IW scans after it): open a connection advertising a
large receive window, send a request (an HTTP GET of a large object, or a TLS ClientHello whose
answer carries the certificate chain), then withhold every ACK. The server sends its initial
window and stops until its retransmission timer fires (RFC 6298); the data received before the
first retransmission is the initial window, and the time from the first data segment to that
retransmission is the server's initial RTO.

The client sends on a raw socket (the kernel writes the IP header, the TCP header and its
checksum are ours) marked with `rstguard.MARK`, and reads every TCP packet of the namespace on
the same socket, keeping those of its connection. A TCP socket bound to the source port (never
connected) reserves the port so that no kernel connection picks it; `RstGuard` drops the RSTs
the kernel would send for it.
"""

from __future__ import annotations

import math
import os
import select
import socket
import struct
import threading
import time
from dataclasses import asdict, dataclass

import iwlab.probe.packet as packet
from iwlab.probe.errors import ProbeError, ProbeInputError
from iwlab.probe.request import request_for
from iwlab.probe.rstguard import MARK, RstGuard
from iwlab.probe.target import Target, resolve

WSCALE = 7  # 65535 << 7 ≈ 8 MB advertised: the receive window never limits the first flight
SYN_RETRIES_AT = (1.0, 2.0)  # seconds after the first SYN (RFC 6298's 1 s initial RTO)
MSS_RANGE = (88, 65495)
HEAD_MAX = 1 << 20  # bytes of the response kept to read its framing
IP_MTU, IPV6_MTU = 14, 24  # <linux/in.h>, <linux/in6.h> (the socket module lacks IP_MTU)


@dataclass
class Result:
    target: str
    address: str
    port: int
    source: str  # the prober's address
    mss: int  # advertised in the SYN
    server_mss: int | None  # the SYN-ACK's MSS option
    segment_size: int  # min of the two: the size of a full segment
    segments: int  # segments of the first flight (a packet of n·segment_size bytes counts n)
    bytes: int  # payload bytes of the first flight
    lower_bound: bool  # the response ended before the window: the IW is at least `segments`
    why: str  # how the flight ended
    rto_ms: float | None  # first data segment → first retransmission
    first_data_ms: float  # request sent → first data segment

    def to_json(self) -> dict:
        return asdict(self)

    def iw_text(self) -> str:
        return f"{'≥ ' if self.lower_bound else ''}{self.segments}"


def _source(family: int, dst: str, port: int, label: str) -> tuple[str, int]:
    """The source address the kernel would pick for `dst`, and the path MTU it knows (a UDP
    socket's connect() sends nothing)."""
    with socket.socket(family, socket.SOCK_DGRAM) as u:
        try:
            u.connect((dst, port))
        except OSError as e:
            raise ProbeError(f"{label}: {dst}: {e.strerror.lower() if e.strerror else e}") from None
        src = u.getsockname()[0]
        try:
            mtu = (u.getsockopt(socket.IPPROTO_IP, IP_MTU) if family == socket.AF_INET
                   else u.getsockopt(socket.IPPROTO_IPV6, IPV6_MTU))
        except OSError:
            mtu = 1500
    return src, mtu


def default_mss(mtu: int, family: int) -> int:
    return max(MSS_RANGE[0], min(MSS_RANGE[1], mtu - (40 if family == socket.AF_INET else 60)))


def check_mss(mss: int) -> int:
    if not MSS_RANGE[0] <= mss <= MSS_RANGE[1]:
        raise ProbeInputError(f"--mss = {mss}: allowed {MSS_RANGE[0]}..{MSS_RANGE[1]} bytes")
    return mss


class _Conn:
    def __init__(self, family: int, src: str, dst: str, sport: int, dport: int):
        self.family, self.src, self.dst, self.sport, self.dport = family, src, dst, sport, dport
        self.raw = socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_TCP)
        try:
            self.raw.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, MARK)
            self.raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        except BaseException:
            self.raw.close()
            raise

    def send(self, seq: int, ack: int, flags: int, options: bytes = b"", payload: bytes = b"") -> None:
        seg = packet.build(self.src, self.dst, self.sport, self.dport, seq, ack, flags, 0xFFFF, options, payload)
        try:
            self.raw.sendto(seg, (self.dst, 0))
        except OSError as e:
            raise ProbeError(f"{self.dst}: {e.strerror.lower() if e.strerror else e}") from None

    def recv(self, until: float, stop: threading.Event | None) -> tuple[float, packet.Segment] | None:
        """The next segment of this connection, or None at `until` (monotonic seconds)."""
        while True:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            left = until - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.raw], [], [], min(left, 0.05))
            if not r:
                continue
            data, addr = self.raw.recvfrom(1 << 17)
            now = time.monotonic()
            if self.family == socket.AF_INET:
                got = packet.ipv4_payload(data)
                if got is None:
                    continue
                src, tcp = got
            else:
                src, tcp = addr[0].split("%")[0], data
            if src != self.dst:
                continue
            seg = packet.parse(tcp)
            if seg is not None and seg.sport == self.dport and seg.dport == self.sport:
                return now, seg

    def close(self) -> None:
        self.raw.close()


def _http_complete(head: bytes, total: int) -> bool | None:
    """Whether the bytes received hold the whole HTTP response (by its Content-Length); None
    when the response does not say (no header yet, chunked, not HTTP)."""
    end = head.find(b"\r\n\r\n")
    if end < 0 or not head.startswith(b"HTTP/"):
        return None
    for line in head[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return total >= end + 4 + int(value.strip())
    return None


def _tls_flight_done(data: bytes) -> bool | None:
    """Whether the bytes end with a whole TLS record (RFC 8446 section 5.1: type, version,
    16-bit length); None if they are not TLS records."""
    i = 0
    while i + 5 <= len(data):
        if data[i] not in (20, 21, 22, 23) or data[i + 1] != 3:
            return None
        i += 5 + struct.unpack("!H", data[i + 3:i + 5])[0]
    return i == len(data)


def probe_once(target: Target, guard: RstGuard, mss: int | None = None, timeout: float = 3.0,
               stop: threading.Event | None = None, request: bytes | None = None) -> Result:
    """Measures the first flight of `target` once (advertising `mss`; default: path MTU − headers).
    `timeout`: for the SYN-ACK, for the first data, and after the last data for a retransmission.
    `request`: the bytes to send instead of the target's HTTP GET or ClientHello."""
    family, dst = resolve(target)
    src, mtu = _source(family, dst, target.port, target.text)
    mss = check_mss(mss) if mss is not None else default_mss(mtu, family)
    request = request if request is not None else request_for(target)
    reserve = socket.socket(family, socket.SOCK_STREAM)
    conn = None
    established = False
    seq = 0
    try:
        reserve.bind((src, 0))
        sport = reserve.getsockname()[1]
        guard.add(sport)
        try:
            conn = _Conn(family, src, dst, sport, target.port)
            iss = struct.unpack("!I", os.urandom(4))[0]
            syn_opts = packet.syn_options(mss, WSCALE)
            start = time.monotonic()
            conn.send(iss, 0, packet.SYN, syn_opts)
            retries = [start + t for t in SYN_RETRIES_AT if t < timeout]
            synack = None
            while synack is None:
                until = min([start + timeout, *retries[:1]])
                got = conn.recv(until, stop)
                if got is None:
                    if retries and time.monotonic() >= retries[0]:
                        retries.pop(0)
                        conn.send(iss, 0, packet.SYN, syn_opts)
                        continue
                    raise ProbeError(f"{target.text}: no answer to the SYN from {dst} port {target.port} "
                                     f"within {timeout:g} s")
                _, seg = got
                if seg.flags & packet.RST:
                    raise ProbeError(f"{target.text}: connection refused ({dst} port {target.port} sent a RST)")
                if seg.flags & packet.SYN and seg.flags & packet.ACK and seg.ack == (iss + 1) & 0xFFFFFFFF:
                    synack = seg
            irs = synack.seq
            established = True
            size = min(mss, synack.mss or 536)
            # the request, in segments of at most the server's MSS; it acknowledges the SYN-ACK only
            seq = iss + 1
            for i in range(0, len(request), size):
                chunk = request[i:i + size]
                conn.send(seq, irs + 1, packet.ACK | (packet.PSH if i + size >= len(request) else 0), b"", chunk)
                seq += len(chunk)
            sent = time.monotonic()
            return _first_flight(conn, target, dst, mss, synack.mss, size, irs, sent, timeout, stop)
        finally:
            if conn is not None:
                if established:  # free the server's connection; the mark lets this RST through
                    try:
                        conn.send(seq, 0, packet.RST)
                    except ProbeError:
                        pass
                conn.close()
            guard.remove(sport)
    finally:
        reserve.close()


def _first_flight(conn: _Conn, target: Target, dst: str, mss: int, server_mss: int | None, size: int, irs: int,
                  sent: float, timeout: float, stop) -> Result:
    hi = 0  # end of the data received so far, relative to the server's ISN + 1
    got_ranges: list[tuple[int, int]] = []  # [start, end) of every data segment received
    segments = nbytes = last_len = 0
    first = None
    head = b""
    why, rto = "", None
    until = sent + timeout
    while True:
        got = conn.recv(until, stop)
        if got is None:
            if first is None:
                raise ProbeError(f"{target.text}: connected, but no data within {timeout:g} s of the request")
            why = f"no retransmission within {timeout:g} s after the last segment"
            break
        now, seg = got
        if seg.payload:
            rel = (seg.seq - irs - 1) & 0xFFFFFFFF
            if any(rel < b and a < rel + len(seg.payload) for a, b in got_ranges):
                # data received before: the retransmission timer fired (a segment that fills a
                # hole left by reordering is new data, not a retransmission)
                rto = (now - first) * 1000
                why = "retransmission"
                break
            if first is None:
                first = now
            n = len(seg.payload)
            segments += math.ceil(n / size)
            nbytes += n
            if rel == hi and len(head) == hi and hi < HEAD_MAX:
                head += seg.payload
            got_ranges.append((rel, rel + n))
            hi = max(hi, rel + n)
            if rel + n == hi:
                last_len = n  # the segment that ends the data so far
            until = now + timeout
        if seg.flags & packet.RST:
            if first is None:
                raise ProbeError(f"{target.text}: the server reset the connection before sending data")
            why = "reset by the server"
            break
        if seg.flags & packet.FIN:
            why = "the server closed (FIN)"
            break
    if first is None:  # pragma: no cover — a FIN before data
        raise ProbeError(f"{target.text}: the server closed the connection without data")
    lower = why != "retransmission"
    # Did the server stop because the window was full, or because it had nothing more to send?
    # The response itself says so where it can (Content-Length; a TLS flight ends with a whole
    # record), else a last segment shorter than a full one means the sender ran out of data.
    known = len(head) == hi
    done = (_tls_flight_done(head) if target.tls else _http_complete(head, hi)) if known else None
    if not lower and done:
        lower, why = True, ("the handshake flight ended with a whole TLS record" if target.tls
                            else "the whole response (Content-Length) fit in the window")
    elif not lower and done is None and last_len % size != 0:
        lower, why = True, "the last segment was not full: the server ran out of data"
    return Result(target.text, dst, target.port, conn.src, mss, server_mss, size, segments, nbytes, lower, why,
                  None if rto is None else round(rto, 1), round((first - sent) * 1000, 1))
