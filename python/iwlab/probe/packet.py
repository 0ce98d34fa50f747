"""TCP segments as bytes (RFC 9293 section 3.1): building the client's segments and reading
the server's. The IP header is the kernel's (raw sockets without IP_HDRINCL); the TCP checksum
covers the pseudo-header of RFC 9293 (IPv4) or RFC 8200 section 8.1 (IPv6)."""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator
from dataclasses import dataclass

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
PROTO_TCP = 6


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def pseudo_header(src: str, dst: str, length: int) -> bytes:
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if a.version == 4:
        return a.packed + b.packed + struct.pack("!BBH", 0, PROTO_TCP, length)
    return a.packed + b.packed + struct.pack("!I3xB", length, PROTO_TCP)


def syn_options(mss: int, wscale: int) -> bytes:
    """MSS and window scale only: no SACK-permitted (RFC 2018), because a Linux sender schedules
    its tail loss probe (RFC 8985 section 7) only on SACK connections (tcp_schedule_loss_probe),
    and that probe would send one new segment beyond the initial window before the RTO; no
    timestamps, so that every data segment carries a full MSS of payload."""
    return struct.pack("!BBH", 2, 4, mss) + struct.pack("!BBBB", 1, 3, 3, wscale)


def build(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, window: int,
          options: bytes = b"", payload: bytes = b"") -> bytes:
    """One TCP segment (header, options, payload) with its checksum."""
    assert len(options) % 4 == 0
    off = (20 + len(options)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4, flags,
                      min(window, 0xFFFF), 0, 0) + options
    seg = hdr + payload
    c = checksum(pseudo_header(src, dst, len(seg)) + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


@dataclass(frozen=True)
class Segment:
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    window: int
    mss: int | None  # the MSS option (SYN segments)
    payload: bytes


def parse(tcp: bytes) -> Segment | None:
    """Reads a TCP segment (the bytes after the IP header); None if it is too short."""
    if len(tcp) < 20:
        return None
    sport, dport, seq, ack, off, flags, window = struct.unpack("!HHIIBBH", tcp[:16])
    hlen = (off >> 4) * 4
    if hlen < 20 or hlen > len(tcp):
        return None
    mss = next((struct.unpack("!H", v)[0] for k, v in options(tcp[20:hlen]) if k == 2 and len(v) == 2), None)
    return Segment(sport, dport, seq, ack, flags, window, mss, tcp[hlen:])


def options(opts: bytes) -> Iterator[tuple[int, bytes]]:
    """(kind, value) of each option in a TCP header's option bytes (RFC 9293 §3.1), NOPs skipped;
    stops at End of Option List or at a malformed length."""
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            return
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or i + opts[i + 1] > len(opts):
            return
        yield kind, opts[i + 2:i + opts[i + 1]]
        i += opts[i + 1]


def ipv4_payload(packet: bytes) -> tuple[str, bytes] | None:
    """(source address, TCP bytes) of an IPv4 packet as a raw IPv4 socket receives it."""
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] != PROTO_TCP:
        return None
    ihl = (packet[0] & 0x0F) * 4
    total = struct.unpack("!H", packet[2:4])[0]
    return str(ipaddress.IPv4Address(packet[12:16])), packet[ihl:total if total >= ihl else len(packet)]
