"""Reading a QUIC server's first flight from the packets a client decrypted but never acknowledged
(no I/O: `iwlab.probe.quic` records, this counts, tests replay recorded sequences).

What is counted (RFC 9002 §7.2, §2): the initial window is the congestion window a server starts
with, in bytes; every ack-eliciting packet it sends is in flight and counts against it until
acknowledged or declared lost. The client acknowledges nothing at all — not even the server's
Initial and Handshake packets: in slow start each acknowledged byte grows the window (§7.3.1),
and whether a stack lets the handshake's ACKs do so (aioquic does; a sender that applies §7.8's
"under-utilized window" rule does not) would blur the count by the handshake's size. Then the only
way bytes leave the server's flight before its first probe timeout (PTO, §6.2) is the discarding
of the Initial and Handshake keys, which the client's second flight causes (RFC 9001 §4.9.1: on
its first Handshake packet; §4.9.2: when the handshake is confirmed) and which removes those
packets from flight without growing the window (§6.4). What arrives before the PTO is then exactly
the server's ack-eliciting 1-RTT packets that fit in its initial window:

* the 0.5-RTT packets sent with the handshake (HTTP/3 SETTINGS, QPACK streams), and everything sent
  after the client's second flight (HANDSHAKE_DONE, NEW_CONNECTION_ID, the response);
* not the Initial and Handshake packets (reported apart);
* not packets that carry only ACK, PADDING or CONNECTION_CLOSE (not ack-eliciting, §2).

`initial_window_bytes` is the sum of those packets' sizes (QUIC header to AEAD tag, without UDP/IP
headers: the unit of bytes_in_flight, RFC 9002 Appendix A.1.1 `sent_bytes`). The measurement is exact to one
datagram: a server that sends a packet only while it fits (RFC 9002 §7: bytes in flight never above
the window; aioquic, quinn) stops up to one datagram short of its window, one that sends while
bytes in flight are below the window (quic-go) overshoots it by up to one datagram.

The flight ends at the first packet that is a retransmission or a probe:
* it repeats data already received: stream bytes at offsets already seen, or a frame a server sends
  once (HANDSHAKE_DONE, the same NEW_CONNECTION_ID, NEW_TOKEN) — a PTO probe that resends;
* or it arrives after a silence that only a PTO explains (a probe that carries new data or a bare
  PING, RFC 9002 §6.2.4). The client never acknowledges anything, so the server has no RTT sample:
  its PTO fires 2–3 × kInitialRtt (+ max_ack_delay) after its last packet (§6.2.2 and Appendix A.8:
  SRTT + 4 × RTTVAR = 3 × kInitialRtt, 1 s with the recommended 333 ms; aioquic: 2 × its 100 ms),
  while a pacer spreads the window over less than kInitialRtt (§7.7: a rate of at least
  cwnd/SRTT), so no pacing gap is as much as half a PTO. `gap_for` sets the threshold: at least
  `MIN_PROBE_GAP` (above the pacing gaps of kInitialRtt ≤ 125 ms, below the PTO of
  kInitialRtt ≥ 50 ms), and twice the largest gap seen earlier in the flight. A PTO sends at most
  two datagrams and then waits twice as long (§6.2.4, §6.2.1), so a silence followed by more
  datagrams within the threshold is a pause of the sender (descheduled), not a probe.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

ONE_RTT = "1RTT"
NOT_ACK_ELICITING = frozenset({"ack", "padding", "connection_close"})
SENT_ONCE = frozenset({"handshake_done", "new_connection_id", "new_token"})
MIN_PROBE_GAP = 0.1  # seconds (see the module's docstring)
PTO_DATAGRAMS = 2  # a PTO sends at most two datagrams (RFC 9002 §6.2.4)


@dataclass(frozen=True)
class Frame:
    """One frame as the client decoded it (qlog names: "stream", "crypto", "ack", "ping", …)."""

    kind: str
    stream: int | None = None
    offset: int | None = None
    length: int = 0
    fin: bool = False
    ident: str = ""  # for frames sent once: what tells two of them apart (a sequence number)

    @classmethod
    def from_qlog(cls, f: dict) -> Frame:
        kind = f.get("frame_type", "unknown")
        if kind in ("stream", "crypto"):
            return cls(kind, f.get("stream_id"), int(f.get("offset", 0)), int(f.get("length", 0)),
                       bool(f.get("fin", False)))
        ident = str(f.get("sequence_number", "")) if kind == "new_connection_id" else ""
        return cls(kind, ident=ident)


@dataclass(frozen=True)
class Packet:
    """One packet of the server as the client received it."""

    at: float  # arrival, seconds since the client's first datagram went out
    datagram: int  # index of its datagram among the server's
    space: str  # "initial", "handshake", "1RTT" (0-RTT never comes from a server)
    number: int  # packet number
    size: int  # bytes on the wire: header to AEAD tag
    frames: tuple[Frame, ...] = ()

    @classmethod
    def from_dict(cls, d: dict) -> Packet:
        """From `dataclasses.asdict` (a recording, iwlab.probe.quic.QuicResult.recording)."""
        return cls(d["at"], d["datagram"], d["space"], d["number"], d["size"],
                   tuple(Frame(**f) for f in d["frames"]))

    @property
    def ack_eliciting(self) -> bool:
        return any(f.kind not in NOT_ACK_ELICITING for f in self.frames)


@dataclass
class Flight:
    """The server's first 1-RTT flight, up to its first retransmission or probe."""

    bytes: int = 0  # initial_window_bytes
    packets: int = 0  # ack-eliciting 1-RTT packets
    half_rtt_bytes: int = 0  # of `bytes`, those sent with the handshake (0.5-RTT)
    max_datagram_size: int = 0  # largest datagram of the server seen (UDP payload)
    lower_bound: bool = True  # the response or the wait ended before the window
    why: str = "no retransmission"
    ended_at: float | None = None  # arrival of the retransmission or probe
    last_at: float | None = None  # arrival of the flight's last packet
    first_response_at: float | None = None  # first ack-eliciting packet after the request
    response_bytes: int = 0  # stream bytes of the response received in the flight
    pending_until: float | None = None  # a packet after a silence: a probe unless more follow by then

    @property
    def pto_ms(self) -> float | None:
        """The flight's last packet → the retransmission or probe (the server's PTO, plus pacing)."""
        if self.ended_at is None or self.last_at is None:
            return None
        return round((self.ended_at - self.last_at) * 1000, 3)

    @property
    def duration_ms(self) -> float | None:
        """First to last packet of the part sent after the request (pacing shows here)."""
        if self.first_response_at is None or self.last_at is None:
            return None
        return round((self.last_at - self.first_response_at) * 1000, 3)


def gap_for(rtt: float, max_ack_delay: float, floor: float = MIN_PROBE_GAP) -> float:
    """The smallest silence (s) after which the next ack-eliciting packet is a probe: `floor`, and
    more than the network's share of a PTO (`rtt`: the client's smallest RTT sample)."""
    return max(floor, rtt + 0.0005 + max_ack_delay / 2)


class _Seen:
    """Stream and crypto bytes and once-only frames already received (for repeats)."""

    def __init__(self) -> None:
        self.ranges: dict[tuple[str, int | None], list[tuple[int, int]]] = {}
        self.once: set[tuple[str, str]] = set()

    def repeats(self, frames: Iterable[Frame]) -> bool:
        for f in frames:
            if f.kind in ("stream", "crypto") and f.length:
                for a, b in self.ranges.get((f.kind, f.stream), ()):
                    if f.offset < b and a < f.offset + f.length:
                        return True
            elif f.kind in SENT_ONCE and (f.kind, f.ident) in self.once:
                return True
        return False

    def add(self, frames: Iterable[Frame]) -> None:
        for f in frames:
            if f.kind in ("stream", "crypto") and f.length:
                self.ranges.setdefault((f.kind, f.stream), []).append((f.offset, f.offset + f.length))
            elif f.kind in SENT_ONCE:
                self.once.add((f.kind, f.ident))


def datagram_sizes(packets: Iterable[Packet]) -> dict[int, int]:
    """Bytes of each datagram (the sum of its packets' sizes)."""
    out: dict[int, int] = {}
    for p in packets:
        out[p.datagram] = out.get(p.datagram, 0) + p.size
    return out


def first_flight(packets: Sequence[Packet], request_at: float, gap: float, response_stream: int,
                 closed: bool = False, now: float = math.inf) -> Flight:
    """The first flight in `packets` (in arrival order). `request_at`: when the client's second
    flight (Finished and the request) went out; 1-RTT packets that arrived before it are 0.5-RTT
    data. `gap`: `gap_for`'s threshold. `closed`: the server closed the connection after these.
    `now`: how long the client has listened (a recording: to the end). A packet after a silence is
    a probe only if at most `PTO_DATAGRAMS` datagrams follow it within `gap` (RFC 9002 §6.2.4: a PTO
    sends one or two, then waits twice as long); more are a sender that paused — descheduled, or
    its application late — and count. Until `gap` has passed after it, the flight is `pending`."""
    fl = Flight()
    sizes = datagram_sizes(packets)
    seen = _Seen()
    numbers: set[int] = set()
    last: float | None = None  # arrival of the previous ack-eliciting 1-RTT packet
    widest = 0.0  # the largest gap between ack-eliciting packets after the request (pacing)
    fin = False
    for i, p in enumerate(packets):
        fl.max_datagram_size = max(fl.max_datagram_size, sizes[p.datagram])
        if p.space != ONE_RTT or not p.ack_eliciting:
            continue
        if p.number in numbers:  # a duplicated datagram, not a retransmission
            continue
        numbers.add(p.number)
        if seen.repeats(p.frames):
            fl.ended_at, fl.lower_bound = p.at, False
            fl.why = "retransmission (data already received)"
            break
        after_request = p.at >= request_at
        if after_request and last is not None and last >= request_at:
            if p.at - last >= max(gap, 2 * widest):
                burst = {q.datagram for q in packets[i:] if q.space == ONE_RTT and q.ack_eliciting
                         and q.at < p.at + gap}
                if len(burst) <= PTO_DATAGRAMS and now < p.at + gap:
                    fl.pending_until = p.at + gap  # wait: a probe, or a pause before more of the flight
                    break
                if len(burst) <= PTO_DATAGRAMS:
                    fl.ended_at, fl.lower_bound = p.at, False
                    fl.why = f"probe after {(p.at - last) * 1000:.1f} ms of silence (PTO)"
                    break
            else:
                widest = max(widest, p.at - last)
        seen.add(p.frames)
        fl.bytes += p.size
        fl.packets += 1
        if not after_request:
            fl.half_rtt_bytes += p.size
        elif fl.first_response_at is None:
            fl.first_response_at = p.at
        last = fl.last_at = p.at
        for f in p.frames:
            if f.kind == "stream" and f.stream == response_stream:
                fl.response_bytes += f.length
                fin = fin or f.fin
    if fl.ended_at is not None and fin:
        fl.lower_bound, fl.why = True, "the whole response fit in the window (stream FIN)"
    elif fl.ended_at is None:
        fl.why = "the server closed the connection" if closed else "no retransmission before the timeout"
    return fl


@dataclass
class Handshake:
    """What the server sent before the client's second flight (RFC 9000 §8.1: at most 3× the
    bytes received until the client's address is validated)."""

    client_bytes: int  # UDP payload the client sent before its second flight
    server_bytes: int  # UDP payload the server sent in that time
    server_datagrams: int
    complete: bool  # the client could finish the handshake from those alone
    amplification_limited: bool = field(init=False)

    def __post_init__(self) -> None:
        self.amplification_limited = limited(self.client_bytes, self.server_bytes, self.complete)


def limited(client_bytes: int, server_bytes: int, complete: bool, slack: int = 1200) -> bool:
    """The server stopped at its anti-amplification limit: its handshake flight could not be
    finished without the client's second flight, and it had sent within `slack` (one minimum-size
    datagram, RFC 9000 §14.1) of 3× what it received."""
    return not complete and server_bytes >= 3 * client_bytes - slack
