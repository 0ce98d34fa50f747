"""The emulator's pacing (python/iwlab/emulate/agent.py): the server agents do on their sockets
what iwlab-bpf's sock_ops program does at establishment — SO_MAX_PACING_RATE at IW·MSS per
handshake RTT, lifted after the first RTT, or internal pacing alone. Loopback sockets of this
process; the plan carries the scenario's keys to the agents."""

from __future__ import annotations

import socket
import struct

import pytest

from iwlab.emulate.agent import SO_MAX_PACING_RATE, lift_pacing, start_pacing, tcp_info
from scenario_common import TCP_SACK_RENO, dumbbell_toml, short_flows

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


PACED_SCENARIO = dumbbell_toml("paced-iw20", seed=3) + TCP_SACK_RENO + """pacing = true
paced_iw = true
[iw]
default = "iw20"
[iw.policies]
iw20 = { kind = "fixed", segments = 20 }
""" + short_flows("40seg", "1s", 2, start="0.5s")


@pytest.mark.netns
@pytest.mark.timeout(180)
def test_an_emulated_paced_iw_leaves_rtt_over_iw_apart_after_linuxs_ten(emulation_ready, tmp_path):
    from iwlab.emulate import emulate, pcap
    from iwlab.scenario import Scenario

    emulate(Scenario.from_toml(PACED_SCENARIO, "<test>"), out=tmp_path, duration=3.0, capture=["right-0"])
    segs = pcap.read(tmp_path / "capture-right-0.pcap")
    conns = {(s.src, s.dst) for s in segs if s.syn and s.has_ack}
    assert len(conns) == 2, conns
    for server, client in conns:
        mine = [s for s in segs if {s.src, s.dst} == {server, client}]
        synack = next(s for s in mine if s.src == server and s.syn)
        ack = next(s for s in mine if s.dst == server and not s.syn and s.ack == synack.seq + 1)
        rtt = ack.time - synack.time
        first, top = [], synack.seq + 1
        for s in mine:
            if s.dst == server and s.ack > synack.seq + 1:
                break  # the first ACK of data
            if s.src == server and s.payload and s.seq >= top:
                first.append(s.time)
                top = s.seq + s.payload
        assert len(first) == 20, (server, len(first))
        # Linux sends the first 10 back to back, then the rest RTT/IW apart on average.
        assert first[9] - first[0] < 0.1 * rtt / 20 * 9, first
        spacing = (first[-1] - first[9]) / 10
        assert 0.6 * rtt / 20 < spacing < 1.6 * rtt / 20, (spacing, rtt / 20)
