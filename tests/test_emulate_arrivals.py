"""The emulator's side of the arrival model (emulate/workload.py, emulate/agent.py): a closed-loop
client runs one flow at a time and pauses; with the simulator's run as reference it takes the
(size, IW) order and the think times from the reference's records; mixes give each flow its
server's IW; permuted blocks hold every combination once. Plain tests: no kernel."""

from __future__ import annotations

import asyncio
import random

import pandas as pd
import pytest

import iwlab
from iwlab.emulate.agent import Agent
from iwlab.emulate.dists import mix_picks
from iwlab.emulate.plan import PlanError, build_plan
from iwlab.scenario import Scenario

MSS = 1448
BASE = """
name = "testbed-client"
seed = 5
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "drop-tail", limit = "100pkt" } }
left = [{ name = "clients", count = 1, access = { rate = "100Mbps", delay = "1ms" } }]
right = [{ name = "servers", count = 1, access = { rate = "100Mbps", delay = "1ms" } }]
[tcp]
mss = 1448
timestamps = true
[iw]
default = "iw10"
policies.iw3 = { kind = "fixed", segments = 3 }
policies.iw10 = { kind = "fixed", segments = 10 }
[[apps]]
kind = "short-flows"
name = "client"
clients = "clients"
servers = "servers"
mix = [ { response = "9seg", server_iw = "iw3" }, { response = "9seg", server_iw = "iw10" },
        { response = "21seg", server_iw = "iw3" }, { response = "21seg", server_iw = "iw10" } ]
"""
CLOSED = 'arrivals = { kind = "closed-loop", think = { kind = "uniform", lo = 0.5, hi = 1.0 } }\n'


def scenario(arrivals: str = CLOSED) -> Scenario:
    return Scenario.from_toml(BASE + arrivals, "<test>")


def test_mix_picks_hold_every_combination_once_per_block_and_cycle_in_order():
    picks = mix_picks(4, "permuted-blocks", random.Random(1))
    seq = [next(picks) for _ in range(400)]
    assert all(sorted(seq[k:k + 4]) == [0, 1, 2, 3] for k in range(0, 400, 4))
    assert len({tuple(seq[k:k + 4]) for k in range(0, 400, 4)}) > 1
    cyc = mix_picks(3, "cyclic", random.Random(1))
    assert [next(cyc) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]


def test_a_closed_loop_client_takes_the_references_order_and_think_times():
    sc = scenario()
    plan = build_plan(sc, pid=1)
    ref = iwlab.run(sc).flows
    [x] = plan.agents["left-0"]["closed"]
    assert plan.agents["left-0"]["schedule"] == [] and plan.iw_values == [3, 10]
    assert [(c["response"], c["policy"]) for c in x["sequence"]] == \
        list(zip(ref["response_bytes"].astype(int), ref["server_iw"]))
    thinks = (ref["start"].to_numpy()[1:] - ref["last_byte"].to_numpy()[:-1]).tolist()
    assert x["thinks"] == pytest.approx(thinks) and all(0.5 <= t <= 1.0 + 1e-9 for t in thinks)
    assert x["start"] == ref["start"].iloc[0] and x["default"] == "iw10"
    assert x["policies"]["iw3"]["w"] == 3 and x["policies"]["iw10"]["w"] == 10


def test_without_a_reference_the_closed_loop_draws_its_own():
    plan = build_plan(scenario(), pid=1, replay=False)
    [x] = plan.agents["left-0"]["closed"]
    assert x["sequence"] == [] and x["thinks"] == [] and x["order"] == "permuted-blocks"
    assert sorted((c["response"], c["policy"]) for c in x["combos"]) == \
        [(9 * MSS, "iw10"), (9 * MSS, "iw3"), (21 * MSS, "iw10"), (21 * MSS, "iw3")]


def test_open_loop_mixed_flows_carry_their_servers_iw():
    sc = scenario('arrivals = { kind = "poisson", load = "4%" }\n')
    ref = iwlab.run(sc).flows
    flows = build_plan(sc, pid=1).agents["left-0"]["schedule"]
    assert len(flows) == len(ref) > 10
    got = [(f["t"], f["response"], f.get("policy", "iw10")) for f in flows]
    assert got == list(zip(ref["start"], ref["response_bytes"].astype(int), ref["server_iw"]))
    assert all(f["iw"]["w"] == 3 for f in flows if f.get("policy") == "iw3")
    own = build_plan(sc, pid=1, replay=False).agents["left-0"]["schedule"]
    per = pd.Series([(f["response"], f.get("policy", "iw10")) for f in own]).value_counts()
    assert len(per) == 4 and per.max() - per.min() <= 1  # permuted blocks


def test_bursts_and_replays_without_a_reference(tmp_path):
    bursts = build_plan(scenario('arrivals = { kind = "bursts", flows = 4, gap = "5s" }\n'), pid=1, replay=False)
    assert [f["t"] for f in bursts.agents["left-0"]["schedule"]] == [0.0] * 4 + [5.0] * 4 + [10.0] * 4 + [15.0] * 4
    (tmp_path / "flows.csv").write_text("start,response,server_iw\n1.5,1448,iw3\n0.25,2896,\n")
    text = BASE.replace("mix = [", "xmix = [").split("xmix")[0] + 'arrivals = { kind = "replay", file = "flows.csv" }\n'
    (tmp_path / "r.toml").write_text(text)
    plan = build_plan(iwlab.load(tmp_path / "r.toml"), pid=1, replay=False)
    got = [(f["t"], f["response"], f.get("policy")) for f in plan.agents["left-0"]["schedule"]]
    assert got == [(0.25, 2896, None), (1.5, 1448, "iw3")]


def test_an_adaptive_policy_cannot_be_a_mix_combination():
    text = (BASE + CLOSED).replace('policies.iw10 = { kind = "fixed", segments = 10 }',
                                   'policies.iw10 = { kind = "fixed", segments = 10 }\npolicies.aimd = { kind = "aimd" }')
    text = text.replace('{ response = "21seg", server_iw = "iw10" }', '{ response = "21seg", server_iw = "aimd" }')
    with pytest.raises(PlanError, match="adaptive policy 'aimd' cannot be emulated per flow"):
        build_plan(Scenario.from_toml(text, "<test>"), pid=1, replay=False)


def test_the_agents_closed_loop_runs_one_flow_at_a_time_and_pauses():
    agent = Agent({"host": "h", "g": 0, "apps": {"0": {}}, "rundir": "/nonexistent", "stop": 10.0})
    agent.t0 = 0.0
    log: list[tuple[str, float, int, object]] = []
    clock = {"now": 0.0}
    agent.now = lambda: clock["now"]  # type: ignore[method-assign]

    async def fake_exchange(app, server, request, response, label, server_iw=None, **kw):
        log.append(("start", clock["now"], response, label.get("server_policy")))
        clock["now"] += 0.1  # the flow takes 100 ms
        log.append(("end", clock["now"], response, None))
        return True

    async def fake_sleep(d):
        clock["now"] += d

    agent.exchange = fake_exchange  # type: ignore[method-assign]
    combos = [{"response": 100, "policy": "iw3"}, {"response": 200, "policy": "iw10"}]
    x = {"app": 0, "app_id": 0, "start": 0.0, "server": {"host": "s", "g": 1}, "request": 1, "combos": combos,
         "policies": {"iw3": {"name": "fixed", "w": 3}, "iw10": {"name": "fixed", "w": 10}}, "default": "iw10",
         "order": "cyclic", "think": {"kind": "constant", "value": 0.5}, "flows": 5, "seed": 1,
         "sequence": [{"response": 200, "policy": "iw10"}], "thinks": [0.25]}
    real_sleep = asyncio.sleep
    asyncio.sleep = fake_sleep  # type: ignore[assignment]
    try:
        asyncio.run(agent.run_closed(x))
    finally:
        asyncio.sleep = real_sleep  # type: ignore[assignment]
    starts = [e for e in log if e[0] == "start"]
    ends = [e for e in log if e[0] == "end"]
    assert [e[0] for e in log] == ["start", "end"] * 5  # never two at once
    assert [s[2] for s in starts] == [200, 100, 200, 100, 200]  # the reference's first, then cyclic
    assert [s[3] for s in starts] == [None, "iw3", None, "iw3", None]  # the app's own policy unlabelled
    gaps = [round(s[1] - e[1], 9) for e, s in zip(ends, starts[1:])]
    assert gaps == [0.25, 0.5, 0.5, 0.5]  # the reference's think time, then its own draws
