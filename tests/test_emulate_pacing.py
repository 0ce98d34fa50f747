"""The emulator's pacing (python/iwlab/emulate/agent.py): the server agents do on their sockets
what iwlab-bpf's sock_ops program does at establishment — SO_MAX_PACING_RATE at IW·MSS per
handshake RTT, lifted after the first RTT, or internal pacing alone. Loopback sockets of this
process; the plan carries the scenario's keys to the agents."""

from __future__ import annotations

import socket
import struct

import pytest

from iwlab.emulate.agent import SO_MAX_PACING_RATE, lift_pacing, start_pacing, tcp_info

UNLIMITED = (1 << 64) - 1  # ~0UL: sk_getsockopt() hands back the unsigned long


def _max_rate(s: socket.socket) -> int:
    return struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, 8))[0]


@pytest.fixture
def conn():
    with socket.socket() as ls:
        # A small MSS keeps IW·MSS per loopback RTT (µs) below the highest 32-bit rate.
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
        ls.bind(("127.0.0.1", 0))
        ls.listen()
        c = socket.create_connection(ls.getsockname())
        a, _ = ls.accept()
        try:
            yield a
        finally:
            a.close()
            c.close()


def test_a_paced_iw_caps_the_rate_at_iw_mss_per_rtt_until_lifted(conn):
    assert _max_rate(conn) == UNLIMITED
    info = tcp_info(conn)
    rtt = start_pacing(conn, pacing=True, paced_iw=True)
    assert rtt == info["rtt_us"] / 1e6 > 0
    want = info["snd_cwnd"] * info["snd_mss"] * 1_000_000 // info["rtt_us"]
    assert want < 0xFFFFFFFE and _max_rate(conn) == want
    lift_pacing(conn)
    assert _max_rate(conn) == UNLIMITED


def test_pacing_alone_leaves_no_cap_and_nothing_to_lift(conn):
    assert start_pacing(conn, pacing=True, paced_iw=False) is None
    assert _max_rate(conn) == UNLIMITED
    assert start_pacing(conn, pacing=False, paced_iw=False) is None


def test_the_plan_hands_the_pacing_to_the_agents():
    import iwlab
    from iwlab.emulate.plan import build_plan

    sc = iwlab.load("rfc6928", sets=["tcp.pacing=true", "tcp.paced_iw=true", "duration=5s", "warmup=0s"])
    plan = build_plan(sc, pid=1)
    apps = [a for ag in plan.agents.values() for a in ag["apps"].values()]
    assert apps and all(a["pacing"] and a["paced_iw"] for a in apps)
    assert any(n.startswith("tcp.paced_iw: the server agents cap SO_MAX_PACING_RATE") for n in plan.notes)
    plain = build_plan(iwlab.load("rfc6928", sets=["duration=5s", "warmup=0s"]), pid=1)
    assert not any(a["pacing"] or a["paced_iw"] for ag in plain.agents.values() for a in ag["apps"].values())
