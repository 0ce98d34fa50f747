"""The contested grid's cells as emulator work (no root): a (size, IW) mix from one client,
permuted blocks, Poisson arrivals at a load, closed-loop clients; the grid file's errors."""

from __future__ import annotations

import collections
import random
from pathlib import Path

import pytest

from iwlab.emulate import dists
from iwlab.emulate.grid import Grid, GridError
from iwlab.emulate.plan import build_plan

GRID = Path(__file__).resolve().parents[1] / "data" / "kernel" / "grid.toml"


@pytest.fixture(scope="module")
def grid() -> Grid:
    return Grid.load(GRID)


def test_permuted_blocks_give_every_combination_once_per_block():
    mix = list(range(12))
    order = dists.MixOrder(mix, "permuted-blocks", 7)
    blocks = [[order.next() for _ in mix] for _ in range(20)]
    assert all(sorted(b) == mix for b in blocks)
    assert len({tuple(b) for b in blocks}) > 15  # the permutation is drawn anew for each block


def test_cyclic_keeps_the_given_order_and_random_is_iid():
    order = dists.MixOrder(["a", "b", "c"], "cyclic", 1)
    assert [order.next() for _ in range(7)] == list("abcabca")
    r = dists.MixOrder(list(range(4)), "random", 1)
    draws = [r.next() for _ in range(4000)]
    blocks = [sorted(draws[i:i + 4]) for i in range(0, 4000, 4)]
    assert sum(b != [0, 1, 2, 3] for b in blocks) > 500  # not blocks
    assert all(800 < n < 1200 for n in collections.Counter(draws).values())


def test_the_grid_has_every_background_with_every_slice(grid):
    cells = grid.cells()
    assert len(cells) == len(grid.data["backgrounds"]) * len(grid.data["slices"])
    assert cells[0].name == "closed-b25-none"  # closed loop first: the runner's priority
    assert {c.buffer for c in cells if c.arrivals == "closed"} == {25, 50}


def test_a_cell_is_one_client_with_all_twelve_combinations(grid):
    sc = grid.scenario(grid.cell("poisson10-b25-udp80-tcp1"), engine=False)
    p = build_plan(sc, seed=1, replay=False, pid=1)
    assert p.iw_values == [3, 10]
    assert (p.forward.rate_bps, p.forward.queue) == (2_000_000, "droptail:25pkt")
    assert p.forward.delay + 2 * 0.001 == pytest.approx(0.05)
    sched = p.agents["left-0"]["schedule"]
    combos = collections.Counter((f["response"] // 1448, f["server_iw"]["w"]) for f in sched)
    assert set(combos) == {(s, w) for s in (3, 9, 10, 21, 22, 30) for w in (3, 10)}
    assert max(combos.values()) - min(combos.values()) <= 1  # permuted blocks
    # Poisson at 10 % of 2 Mb/s over a mean response of 95/6 segments: ~1.09 flows/s.
    rate = 0.1 * 2e6 / (8 * 1448 * 95 / 6)
    assert len(sched) == pytest.approx(rate * (grid.unit_seconds - 1), rel=0.15)
    assert {a["kind"] for a in sc.data["apps"]} == {"short-flows", "udp", "bulk"}


def test_a_closed_loop_cell_gives_the_agent_a_client_not_a_schedule(grid):
    sc = grid.scenario(grid.cell("closed-b50-tcp2"), engine=False)
    p = build_plan(sc, seed=3, replay=False, pid=1)
    a = p.agents["left-0"]
    assert a["schedule"] == [] and len(a["closed"]) == 1
    c = a["closed"][0]
    assert c["think"] == {"kind": "uniform", "lo": 0.5, "hi": 1.0}
    assert len(c["mix"]) == 12 and c["order"] == [] and c["thinks"] == []
    assert p.forward.queue == "droptail:50pkt"


def test_periodic_cells_start_one_flow_every_period(grid):
    p = build_plan(grid.scenario(grid.cell("periodic-b25-none"), engine=False), seed=1, replay=False, pid=1)
    t = [f["t"] for f in p.agents["left-0"]["schedule"]]
    assert all(b - a == pytest.approx(2.0) for a, b in zip(t, t[1:]))


def test_a_bad_grid_names_the_field(tmp_path):
    text = GRID.read_text().replace('arrivals = "poisson30"', 'arrivals = "bursty"')
    (tmp_path / "g.toml").write_text(text)
    with pytest.raises(GridError, match=r"slices\[3\]\.arrivals = 'bursty'; allowed: closed, periodic"):
        Grid.load(tmp_path / "g.toml")
    (tmp_path / "h.toml").write_text(GRID.read_text().replace("iws = [3, 10]", "iws = [4, 10]"))
    with pytest.raises(GridError, match=r"flows\.iws = \[4, 10\]"):
        Grid.load(tmp_path / "h.toml")


def test_the_closed_loop_agent_replays_order_and_thinks_then_draws(monkeypatch):
    """The agent's loop: the reference's combinations and think times first, then its own."""
    import asyncio

    from iwlab.emulate import agent as ag

    calls: list[tuple[int, float]] = []
    a = ag.Agent({"host": "left-0", "g": 0, "apps": {}, "rundir": "/nonexistent", "stop": 100.0, "listen": [],
                  "udp_sinks": []})

    async def fake_exchange(app, server, request, response, label, **kw):
        calls.append((response, a.now()))
        return True

    monkeypatch.setattr(a, "exchange", fake_exchange)
    slept: list[float] = []

    async def fake_sleep(d):
        slept.append(d)

    monkeypatch.setattr(ag.asyncio, "sleep", fake_sleep)
    mix = [{"response": r, "server_iw": {"kind": "const", "w": 3, "name": "fixed"}, "policy": "iw3"} for r in (1, 2, 3)]
    x = {"app": 0, "app_id": 0, "start": 0.0, "server": {"host": "right-0", "g": 1}, "request": 100, "mix": mix,
         "mix_order": "cyclic", "think": {"kind": "constant", "value": 0.25}, "order": [2, 2], "thinks": [0.9],
         "flows": 5, "seed": random.Random(1).getrandbits(63)}
    a.t0 = ag.time.monotonic()
    asyncio.run(a.run_closed(x))
    assert [c[0] for c in calls] == [3, 3, 1, 2, 3]
    assert slept == [0.9, 0.25, 0.25, 0.25, 0.25]
