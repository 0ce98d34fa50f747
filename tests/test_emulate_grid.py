"""The contested grid's cells as emulator work (no root): a (size, IW) mix from one client,
permuted blocks, Poisson arrivals at a load, closed-loop clients; the grid file's errors."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from iwlab.emulate.grid import Grid, GridError
from iwlab.emulate.plan import build_plan

GRID = Path(__file__).resolve().parents[1] / "data" / "kernel" / "grid.toml"


@pytest.fixture(scope="module")
def grid() -> Grid:
    return Grid.load(GRID)


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
    # A flow of the app's own policy (iw10, the scenario's default) carries no per-flow IW.
    combos = collections.Counter((f["response"] // 1448, f.get("policy", "iw10")) for f in sched)
    assert set(combos) == {(s, f"iw{w}") for s in (3, 9, 10, 21, 22, 30) for w in (3, 10)}
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
    assert len(c["combos"]) == 12 and c["order"] == "permuted-blocks" and c["sequence"] == [] and c["thinks"] == []
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


def test_the_runner_gives_a_one_seed_cell_its_second_seed_before_widening_others(grid, monkeypatch):
    # A narrow CI from one seed is still one queue's history: min_units comes before width.
    from iwlab.emulate import grid as g

    names = [c.name for c in grid.cells()]
    states = {n: {"cell": n, "units": 3, "flows": 300, "widest": 0.4, "done": False} for n in names}
    states[names[5]] = {"cell": names[5], "units": 1, "flows": 250, "widest": 0.01, "done": False}
    monkeypatch.setattr(g, "cell_state", lambda gr, c: states[c.name])
    monkeypatch.setattr(g, "in_progress", lambda gr: {})
    monkeypatch.setattr(g, "stored_seeds", lambda gr, c: list(range(1, states[c.name]["units"] + 1)))
    (cell, seed), *_ = g.next_units(grid, set(), 2)
    assert (cell.name, seed) == (names[5], 2)


def test_the_runner_stops_when_units_fail_one_after_another(grid, monkeypatch):
    # A stale extension fails every unit in seconds: the runner must stop, not start units forever.
    from iwlab.emulate import grid as g

    class Failing:
        def __init__(self, *a, **k):
            self.returncode = 1

        def poll(self):
            return 1

        def wait(self):
            return 1

    started = []
    monkeypatch.setattr(g.subprocess, "Popen", lambda *a, **k: started.append(a) or Failing())
    monkeypatch.setattr(g, "in_progress", lambda gr: {})
    monkeypatch.setattr(g, "next_units", lambda gr, busy, k: [(c, 1) for c in grid.cells()[:k]])
    monkeypatch.setattr(g.time, "sleep", lambda s: None)
    with pytest.raises(SystemExit, match="3 units failed in a row"):
        g.run(grid, parallel=3, log=None)
    assert len(started) == 3


def test_with_max_load_the_runner_starts_no_unit_on_a_busy_machine(grid, monkeypatch):
    # Loaded testbed units lose fewer first-flight segments (docs/kernel-grid.md): wait for quiet.
    from iwlab.emulate import grid as g

    loads = iter([9.0, 9.0, 1.0])
    started = []

    class Done:
        returncode = 0

        def poll(self):
            return 0

    monkeypatch.setattr(g.os, "getloadavg", lambda: (next(loads, 1.0), 0.0, 0.0))
    monkeypatch.setattr(g.subprocess, "Popen", lambda *a, **k: started.append(len(started)) or Done())
    monkeypatch.setattr(g, "in_progress", lambda gr: {})
    monkeypatch.setattr(g, "next_units", lambda gr, busy, k: [(c, 1) for c in grid.cells()[:k]])
    monkeypatch.setattr(g.time, "sleep", lambda s: None)
    g.run(grid, parallel=2, log=None, max_units=2, max_load=4.0)
    assert len(started) == 2  # started only at the third look, when the load fell to 1.0
