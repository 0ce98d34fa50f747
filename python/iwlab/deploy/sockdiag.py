"""TCP sockets through sock_diag (NETLINK_SOCK_DIAG), with the full `tcp_info`.

Two sources, both netlink messages of the kernel (no `ss` output is parsed):
* `DestroyListener` — the sock_diag destroy multicast groups (SKNLGRP_INET{,6}_TCP_DESTROY,
  `ss -E`): the kernel sends each TCP socket's final `inet_diag_msg` with its `tcp_info` as the
  socket is destroyed, so connections of a few milliseconds are seen as well as long ones;
* `dump()` — an INET_DIAG dump of the live sockets (with their socket cookies), polled for
  early evidence on long connections.
Written on the standard library's AF_NETLINK socket rather than pyroute2's DiagSocket:
pyroute2's `tcp_info` layout stops before `tcpi_bytes_sent`/`tcpi_bytes_retrans`, which the
watcher needs, and a plain `struct` decode costs a few microseconds per socket (the watcher's
CPU at 1 000 connections/s is measured in tests/test_deploy_kernel.py). Sockets are opened in
the caller's current network namespace (see `netlink.in_netns`).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import struct
from dataclasses import dataclass

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
INET_DIAG_INFO = 2
INET_DIAG_CONG = 4  # the congestion control's name (only in dumps that ask for it)
SKNLGRP_INET_TCP_DESTROY, SKNLGRP_INET6_TCP_DESTROY = 1, 3
TCP_LISTEN, TCP_TIME_WAIT, TCP_SYN_RECV = 10, 6, 3
_NLMSG = struct.Struct("=IHHII")
_DIAG_MSG = struct.Struct("=BBBB HH 16s 16s I II IIIII")  # inet_diag_msg (ports big-endian, unpacked below)
_RTA = struct.Struct("=HH")

# struct tcp_info (include/uapi/linux/tcp.h, Linux 6.7+), field by field; shorter (older) infos
# are zero-padded.
_TCP_INFO_FIELDS = (
    "state ca_state retransmits probes backoff options wscale flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering rcv_rtt rcv_space total_retrans "
    "pacing_rate max_pacing_rate bytes_acked bytes_received segs_out segs_in "
    "notsent_bytes min_rtt data_segs_in data_segs_out delivery_rate busy_time rwnd_limited sndbuf_limited "
    "delivered delivered_ce bytes_sent bytes_retrans dsack_dups reord_seen rcv_ooopack snd_wnd rcv_wnd rehash "
    "total_rto total_rto_recoveries total_rto_time").split()
_TCP_INFO = struct.Struct("=8B 24I 4Q 2I 4I 4Q 2I 2Q 2I 4I 2H I")
assert len(_TCP_INFO_FIELDS) == len(_TCP_INFO.unpack(bytes(_TCP_INFO.size)))
_WANTED = {f: i for i, f in enumerate(_TCP_INFO_FIELDS)}


@dataclass(frozen=True, slots=True)
class TcpSock:
    """One socket: addresses, cookie and the `tcp_info` fields the watcher uses."""

    cookie: int
    family: int
    src: str
    sport: int
    dst: str
    dport: int
    state: int
    snd_mss: int
    rtt_us: int
    min_rtt_us: int
    snd_cwnd: int
    total_retrans: int
    bytes_acked: int
    bytes_sent: int  # all data bytes sent, retransmissions included (tcpi_bytes_sent)
    bytes_retrans: int
    data_segs_out: int
    delivery_rate: int
    has_info: bool
    # for the restart-window detector (watch.RestartWindows)
    rto_us: int = 0
    unacked: int = 0  # segments in flight (tcpi_unacked)
    last_data_sent_ms: int = 0  # since the last data segment was sent (tcpi_last_data_sent)
    cong: str = ""  # congestion control, when the dump asked for INET_DIAG_CONG


def parse_tcp_info(raw: bytes) -> dict[str, int]:
    """All fields of a `tcp_info` attribute, by name (tcpi_ prefix dropped)."""
    raw = raw[:_TCP_INFO.size].ljust(_TCP_INFO.size, b"\0")
    return dict(zip(_TCP_INFO_FIELDS, _TCP_INFO.unpack(raw)))


def _addr(family: int, raw: bytes) -> str:
    return str(ipaddress.IPv4Address(raw[:4]) if family == socket.AF_INET else ipaddress.IPv6Address(raw))


def parse_diag_msg(buf: memoryview, off: int, end: int) -> TcpSock:
    fam, state, _timer, _retrans, sport, dport, src, dst, _if, c0, c1, *_ = _DIAG_MSG.unpack_from(buf, off)
    info, cong = None, ""
    pos = off + _DIAG_MSG.size
    while pos + 4 <= end:
        alen, atype = _RTA.unpack_from(buf, pos)
        if alen < 4:
            break
        if atype == INET_DIAG_INFO:
            info = parse_tcp_info(bytes(buf[pos + 4:pos + alen]))
        elif atype == INET_DIAG_CONG:
            cong = bytes(buf[pos + 4:pos + alen]).split(b"\0", 1)[0].decode("ascii", "replace")
        pos += (alen + 3) & ~3
    i = info or {}
    return TcpSock(cookie=c0 | (c1 << 32), family=fam, src=_addr(fam, src), sport=socket.ntohs(sport),
                   dst=_addr(fam, dst), dport=socket.ntohs(dport), state=state, snd_mss=i.get("snd_mss", 0),
                   rtt_us=i.get("rtt", 0), min_rtt_us=i.get("min_rtt", 0), snd_cwnd=i.get("snd_cwnd", 0),
                   total_retrans=i.get("total_retrans", 0), bytes_acked=i.get("bytes_acked", 0),
                   bytes_sent=i.get("bytes_sent", 0), bytes_retrans=i.get("bytes_retrans", 0),
                   data_segs_out=i.get("data_segs_out", 0), delivery_rate=i.get("delivery_rate", 0),
                   has_info=info is not None, rto_us=i.get("rto", 0), unacked=i.get("unacked", 0),
                   last_data_sent_ms=i.get("last_data_sent", 0), cong=cong)


def parse_messages(data: bytes) -> tuple[list[TcpSock], bool]:
    """The sockets in one netlink datagram, and whether it ended a dump (NLMSG_DONE)."""
    buf = memoryview(data)
    out, done, off = [], False, 0
    while off + _NLMSG.size <= len(buf):
        length, mtype, _flags, _seq, _pid = _NLMSG.unpack_from(buf, off)
        if length < _NLMSG.size:
            break
        if mtype == NLMSG_DONE:
            done = True
        elif mtype == NLMSG_ERROR:
            code = struct.unpack_from("=i", buf, off + _NLMSG.size)[0]
            if code:
                raise OSError(-code, f"sock_diag: {errno.errorcode.get(-code, code)}")
        elif mtype == SOCK_DIAG_BY_FAMILY:
            out.append(parse_diag_msg(buf, off + _NLMSG.size, off + length))
        off += (length + 3) & ~3
    return out, done


def _socket() -> socket.socket:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (root): bursts of destroy events
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    return s


def dump(sock: socket.socket | None = None, families=(socket.AF_INET, socket.AF_INET6)) -> list[TcpSock]:
    """Live TCP sockets with data state (not listening, not TIME_WAIT), with `tcp_info`."""
    own = sock is None
    s = sock or _socket()
    ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1))
    states = 0xFFF & ~((1 << TCP_LISTEN) | (1 << TCP_TIME_WAIT) | (1 << TCP_SYN_RECV))
    out: list[TcpSock] = []
    try:
        for seq, fam in enumerate(families, 1):
            req = struct.pack("=BBBxI", fam, socket.IPPROTO_TCP, ext, states) + bytes(48)
            s.send(_NLMSG.pack(_NLMSG.size + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + req)
            while True:
                socks, done = parse_messages(s.recv(1 << 20))
                out.extend(socks)
                if done:
                    break
    finally:
        if own:
            s.close()
    return out


class DestroyListener:
    """Every TCP socket's final state as it is destroyed (IPv4 and IPv6)."""

    def __init__(self):
        self.sock = _socket()
        groups = (1 << (SKNLGRP_INET_TCP_DESTROY - 1)) | (1 << (SKNLGRP_INET6_TCP_DESTROY - 1))
        self.sock.bind((0, groups))
        self.sock.setblocking(False)
        self.overruns = 0  # times the kernel dropped events because the buffer was full

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[TcpSock]:
        """All events queued now (non-blocking)."""
        out: list[TcpSock] = []
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return out
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    self.overruns += 1
                    continue
                raise
            out.extend(parse_messages(data)[0])

    def close(self) -> None:
        self.sock.close()
