"""The emulator runs what the advisor recommends: adaptive IW policies and `iw.routes` are
decided by `iwlab watch` in the sending host's namespace (python/iwlab/emulate/watchers.py), the
simulator's own PolicyEngine, and the kernel sends what it decided — checked on the wire (each
connection's first flight in a capture at the server) and by the server socket's `tcp_info`
(cwnd at accept: the flows' `iw_segments`).

The plan's part runs anywhere; the emulations need marker `netns` (root, namespaces, the
iwlab-link relay); short runs (3 s).
"""

from __future__ import annotations

import json

import pytest

import iwlab
from iwlab.scenario import Scenario
from scenario_common import dumbbell_toml, short_flows


def base(name: str, clients: int) -> str:
    return dumbbell_toml(name, rate="20Mbps", delay="20ms", clients=clients, access_queue=False) + '[tcp]\nprofile = "linux"\n'


# Lossless: every connection closes clean, so AIMD raises the IW by `step` after each one.
AIMD = base("aimd-watch", 1) + """
[iw]
default = "ai"
[iw.policies]
ai = { kind = "aimd", initial = 10, min = 3, max = 40, step = 2, raise_after = 1 }
""" + short_flows("60seg", "0.4s", 6)

# Two clients, 198.18.0.2 and 198.18.0.6 (plan.py's addresses), under two routes of a policy file.
ROUTES = base("routes-watch", 2) + """
[iw]
default = "ten"
[iw.policies]
ten = { kind = "fixed", segments = 10 }
small = { kind = "fixed", segments = 4 }
large = { kind = "fixed", segments = 20 }
[[iw.routes]]
prefix = "198.18.0.0/30"
policy = "small"
[[iw.routes]]
prefix = "198.18.0.4/30"
policy = "large"
""" + short_flows("40seg", "0.5s", 3, extra='\ncount = 2\nmapping = "modulo"')


def _first_flights(segs) -> dict[tuple[str, int], int]:
    """Per connection (client address and port): new data segments the server sent before the
    first ACK of data came back — the initial window on a lossless path."""
    out: dict[tuple[str, int], int] = {}
    synacks = {s.dst: s for s in segs if s.syn and s.has_ack}
    for client, synack in synacks.items():
        server = synack.src
        n, top = 0, synack.seq + 1
        for s in segs:
            if s.src == client and s.dst == server and s.has_ack and s.ack > synack.seq + 1:
                break
            if s.src == server and s.dst == client and s.payload and s.seq >= top:
                n += 1
                top = s.seq + s.payload
        out[client] = n
    return out


def _emulate(text: str, tmp_path):
    from iwlab.emulate import emulate, pcap

    sc = Scenario.from_toml(text, "<test>")
    e = emulate(sc, out=tmp_path, duration=3.0, capture=["right-0"])
    return sc, e, pcap.read(tmp_path / "capture-right-0.pcap")


def test_the_plan_gives_each_server_a_watcher_with_a_route_per_client_of_an_adaptive_app():
    from iwlab.emulate.plan import PlanError, build_plan
    from iwlab.policy import parse_policy

    two_clients = AIMD.replace("count = 1\naccess", "count = 2\naccess", 1).replace("flows = 6", "count = 2\nflows = 6")
    plan = build_plan(Scenario.from_toml(two_clients, "<t>"), pid=1)
    text = plan.watchers["right-0"]
    assert [r.key for r in parse_policy(text).routes] == ["198.18.0.2/32", "198.18.0.6/32"], text
    assert plan.agents["left-0"]["watched"] == [[0, 2]] and plan.agents["left-1"]["watched"] == [[0, 2]]
    # Receive buffers sized for the policy's largest IW, not only its first (40 × 1500 B > 60 kB).
    big = build_plan(Scenario.from_toml(AIMD.replace("max = 40", "max = 60"), "<t>"), pid=1)
    assert big.kernel.sysctls["net.ipv4.tcp_rmem"].split()[1] == str(4 * 60 * (1448 + 52))
    # The RFC 6928 fallback cache is a watcher's too (it was RFC 6928 throughout before).
    fb = build_plan(Scenario.from_toml(AIMD.replace(
        'ai = { kind = "aimd", initial = 10, min = 3, max = 40, step = 2, raise_after = 1 }',
        'ai = { kind = "rfc6928-fallback", expiry = "60s" }'), "<t>"), pid=1)
    assert 'kind = "rfc6928-fallback"' in fb.watchers["right-0"]
    # Two adaptive policies from one server toward one client need two watcher routes for one
    # destination: refused, naming both.
    two = AIMD.replace("[[apps]]", '[[apps]]\nkind = "short-flows"\nclients = "clients"\nservers = "servers"\n'
                       'server_iw = "le"\nresponse = "10seg"\narrivals = { kind = "periodic", period = "1s" }\n'
                       'flows = 1\n\n[[apps]]', 1).replace(
        "[iw.policies]", '[iw.policies]\nle = { kind = "learned" }', 1)
    with pytest.raises(PlanError, match="already decides its IW toward left-0 with policy 'le'"):
        build_plan(Scenario.from_toml(two, "<t>"), pid=1)


@pytest.mark.netns
@pytest.mark.timeout(180)
def test_an_aimd_policy_raises_the_kernels_iw_connection_by_connection_as_simulated(emulation_ready, tmp_path):
    sc, e, segs = _emulate(AIMD, tmp_path)
    sim = iwlab.run(sc)
    simulated = sim.flows.sort_values("start")["iw_segments"].tolist()
    assert simulated == [10.0, 12.0, 14.0, 16.0, 18.0, 20.0], simulated
    # The kernel's cwnd at accept is the watcher's decision, connection by connection.
    assert e.flows.sort_values("start")["iw_segments"].tolist() == simulated
    # On the wire: each first flight is that many segments.
    flights = _first_flights(segs)
    assert sorted(flights.values()) == [int(w) for w in simulated], flights
    # The watcher answered from what it learned (its record: one `closed` event per connection).
    record = [json.loads(line) for line in (tmp_path / "watch-right-0.jsonl").read_text().splitlines()]
    assert sum(1 for r in record if r.get("kind") == "closed") >= 5, record[:5]


@pytest.mark.netns
@pytest.mark.timeout(180)
def test_iw_routes_give_two_destination_prefixes_their_own_iw(emulation_ready, tmp_path):
    _, e, segs = _emulate(ROUTES, tmp_path)
    by_client = e.flows.groupby("client")["iw_segments"].agg(set).to_dict()
    assert sorted(map(sorted, by_client.values())) == [[4.0], [20.0]], by_client
    flights = _first_flights(segs)
    to_first = {n for (addr, _), n in flights.items() if addr == "198.18.0.2"}
    to_second = {n for (addr, _), n in flights.items() if addr == "198.18.0.6"}
    assert to_first == {4} and to_second == {20}, flights
