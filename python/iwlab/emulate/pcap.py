"""First flights from a capture (libpcap format, Ethernet or Linux cooked), standard library only.

The first flight of a connection's data sender is what it sends before the first ACK that
acknowledges any of its data: with a response of at least IW segments and no loss, exactly
IW segments (RFC 6928 §2). Taken at the sender's interface, so the count does not depend on
what the network does to the flight.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from pathlib import Path

from iwlab.probe.packet import options


@dataclass(frozen=True)
class Segment:
    time: float
    src: tuple[str, int]
    dst: tuple[str, int]
    seq: int
    ack: int
    flags: int
    payload: int
    tsval: int | None = None  # the timestamp option's TSval (RFC 7323), when present

    @property
    def syn(self) -> bool:
        return bool(self.flags & 0x02)

    @property
    def has_ack(self) -> bool:
        return bool(self.flags & 0x10)


def read(path: str | Path) -> list[Segment]:
    """TCP/IPv4 segments of a pcap file."""
    data = Path(path).read_bytes()
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError(f"{path}: not a pcap file")
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = struct.unpack_from(end + "I", data, 20)[0]
    l2 = {1: 14, 113: 16, 101: 0, 228: 0}.get(linktype)
    if l2 is None:
        raise ValueError(f"{path}: link type {linktype} not supported")
    out = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from(end + "IIII", data, off)
        pkt = data[off + 16: off + 16 + incl]
        off += 16 + incl
        ip = pkt[l2:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack_from("!H", ip, 2)[0]
        tcp = ip[ihl:]
        if len(tcp) < 20:
            continue
        sport, dport, seq, ack, off_flags = struct.unpack_from("!HHIIH", tcp, 0)
        thl = (off_flags >> 12) * 4
        out.append(Segment(sec + frac * (1e-9 if nano else 1e-6),
                           (socket.inet_ntoa(ip[12:16]), sport), (socket.inet_ntoa(ip[16:20]), dport),
                           seq, ack, off_flags & 0x1FF, total - ihl - thl, _tsval(tcp[20:thl])))
    return out


def _tsval(opts: bytes) -> int | None:
    """TSval of a TCP option list (kind 8: TSval, TSecr), if there is one."""
    return next((struct.unpack("!I", v[:4])[0] for k, v in options(opts) if k == 8 and len(v) == 8), None)


@dataclass
class Connection:
    server: tuple[str, int]
    client: tuple[str, int]
    first_flight: int | None  # the data sender's segments before the first ACK of data (None: never ACKed)
    data_bytes: int  # highest sequence number the data sender sent, minus its ISN (retransmissions once)


def connections(path: str | Path, data_from: str = "server") -> list[Connection]:
    """Every connection whose SYN-ACK is in the capture, in order of their SYN-ACKs. The first
    flight and data bytes are those of `data_from`: "server" (responses) or "client" (uploads)."""
    if data_from not in ("server", "client"):
        raise ValueError(f"data_from = {data_from!r}: allowed 'server' or 'client'")
    isn: dict[tuple, int] = {}
    count: dict[tuple, int] = {}
    top: dict[tuple, int] = {}
    done: dict[tuple, int] = {}
    order: list[tuple] = []
    for s in read(path):
        if s.syn and s.has_ack:  # SYN-ACK: s.src is the server; the client's ISN is its ack - 1
            key = (s.src, s.dst)
            isn[key] = s.seq if data_from == "server" else (s.ack - 1) % (1 << 32)
            count[key], top[key] = 0, 0
            done.pop(key, None)
            order.append(key)
            continue
        to_client = (s.src, s.dst) in isn
        key = (s.src, s.dst) if to_client else (s.dst, s.src)
        if key not in isn:
            continue
        if to_client == (data_from == "server"):  # from the data sender
            if s.payload > 0:
                top[key] = max(top[key], (s.seq - isn[key] - 1) % (1 << 32) + s.payload)
                if key not in done:
                    count[key] += 1
        elif key not in done and s.has_ack and 0 < (s.ack - isn[key] - 1) % (1 << 32) < (1 << 31):
            done[key] = count[key]
    return [Connection(k[0], k[1], done.get(k), top[k]) for k in order]


def first_flights(path: str | Path) -> dict[tuple[tuple[str, int], tuple[str, int]], int]:
    """(server, client) → data segments the server sent before its data was first ACKed."""
    return {(c.server, c.client): c.first_flight for c in connections(path) if c.first_flight is not None}
