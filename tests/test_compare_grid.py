"""The engine against the stored kernel grid (data/kernel/grid/), on a fixed slice: no background,
UDP at 80 % and one long-lived CUBIC flow at buffer 25, under two arrival patterns — the
closed-loop client and Poisson arrivals at 10 % load, the first two slices the runner fills —
chosen by that order, not by how the engine fares on them.

The bound comes from the two sides' sampling error alone: for each (cell, size) the difference
of the IW10/IW3 ratios over its standard error (each side's from its bootstrap 95 % CI) is
N(0, 1) when the engine behaves like Linux there, so their squares sum to a χ² with one degree
of freedom per row; the test fails beyond its 99.9 % quantile. A change that moves the engine
away from the kernel on these paths moves that sum; noise alone fails it once in a thousand.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from iwlab.emulate.grid import Grid, stored_seeds
from iwlab.emulate.grid_compare import (DEFAULT_MAX_UNIT_LOAD, Z95, compare_rows, noise_floor, reference_rows,
                                        reference_units, simulate, slice_table)

GRID = Path(__file__).resolve().parents[1] / "data" / "kernel" / "grid.toml"
SLICE = tuple(f"{a}-b25-{b}" for a in ("closed", "poisson10") for b in ("none", "udp80", "tcp1"))
SIM_SEEDS = 4
#: Rows where the engine and Linux differ by more than the kernel's sampling noise, not yet traced
#: to a rule. Each is held where it stands (|Δ| may not grow beyond the measured one plus the
#: kernel's CI half-width), so a change that moves it further from Linux still fails.
#: 3-segment responses with no loss: IW 3 and IW 10 send the same three segments, and the engine's
#: ratio is 1 by construction; the kernel's IW 10 flows are ~1 % faster (0.991 [0.986, 0.997] and
#: 0.986 [0.976, 0.995]) — a per-route difference of the testbed (each IW has its own server
#: address and route) or of Linux, not yet told apart.
KNOWN = {("closed-b25-none", 3): 0.009, ("closed-b25-udp80", 3): 0.014}


@pytest.fixture(scope="module")
def rows():
    grid = Grid.load(GRID)
    cells = [grid.cell(n) for n in SLICE]
    missing = [c.name for c in cells if not stored_seeds(grid, c)]
    assert not missing, f"no stored kernel units for {missing} (python -m iwlab.emulate.grid run)"
    rows = compare_rows(grid, cells, simulate(grid, cells, SIM_SEEDS, replay=False, first_flight=False, workers=1))
    return reference_rows(rows, "all")


def test_the_engines_ratios_are_within_the_kernels_sampling_noise(rows):
    r = rows.dropna(subset=["kern_ratio", "sim_ratio", "kern_lo", "kern_hi", "sim_lo", "sim_hi"])
    known = r[[(c, int(z)) in KNOWN for c, z in zip(r["cell"], r["size"])]]
    for _, k in known.iterrows():
        held = KNOWN[(k["cell"], int(k["size"]))] + (k["kern_hi"] - k["kern_lo"]) / 2
        assert abs(k["sim_ratio"] - k["kern_ratio"]) <= held, k
    r = r.drop(known.index)
    assert len(r) >= 24 and r["arrivals"].nunique() >= 2  # four cells' sizes, over two arrival patterns
    se = np.sqrt(((r["kern_hi"] - r["kern_lo"]) / (2 * Z95)) ** 2 + ((r["sim_hi"] - r["sim_lo"]) / (2 * Z95)) ** 2)
    z2 = float(((r["sim_ratio"] - r["kern_ratio"]) / se).pow(2).sum())
    bound = float(stats.chi2.ppf(0.999, len(r)))
    worst = r.assign(z=(r["sim_ratio"] - r["kern_ratio"]) / se).sort_values("z", key=abs).tail(3)
    assert z2 <= bound, (f"sum of squared z = {z2:.1f} > χ²(0.999, {len(r)}) = {bound:.1f}; worst rows:\n"
                         + worst[["cell", "size", "kern_ratio", "kern_lo", "kern_hi", "sim_ratio", "z"]].to_string())


def test_the_noise_floor_is_what_equal_ratios_would_show():
    """E|Δ| of two unbiased estimates with 95 % half-widths h_k, h_s: sqrt(2/π)·sqrt(σ_k² + σ_s²)."""
    import pandas as pd

    t = pd.DataFrame({"kern_lo": [0.9, 0.8], "kern_hi": [1.1, 1.2], "sim_lo": [0.95, 0.9], "sim_hi": [1.05, 1.1]})
    sk, ss = np.array([0.1, 0.2]) / Z95, np.array([0.05, 0.1]) / Z95
    assert noise_floor(t) == pytest.approx(float(np.mean(math.sqrt(2 / math.pi) * np.sqrt(sk ** 2 + ss ** 2))))
    rng = np.random.default_rng(1)
    d = rng.normal(0, math.sqrt(sk[0] ** 2 + ss[0] ** 2), 200_000)
    assert float(np.abs(d).mean()) == pytest.approx(noise_floor(t.iloc[:1]), rel=0.01)


def test_slices_count_rows_in_the_kernels_ci(rows):
    s = slice_table(rows)
    top = s[s["slice"] == "all"].iloc[0]
    n_in, n = map(int, top["sim_in_ci"].split("/"))
    assert n == len(rows.dropna(subset=["kern_ratio", "delta"])) and 0 <= n_in <= n
    assert set(s.loc[s["slice"] == "size", "value"]) == {3, 9, 10, 21, 22, 30}


def test_an_unknown_cell_is_refused_by_name():
    from iwlab.emulate.grid import GridError
    from iwlab.emulate.grid_compare import compare_grid

    with pytest.raises(GridError, match=r"--cells: closed-b25-nowhere not in .*allowed: closed-b25-none"):
        compare_grid(GRID, cells=["closed-b25-nowhere"])


# ---- the quiet reference: units run on a loaded machine are left out, and counted --------------
def _store(tmp_path, loads: dict[int, float]):
    """A grid whose store holds closed-b25-tcp1's units `loads` (seed -> load average) — the
    stored flows, with the run.json's load average set."""
    import json
    import shutil

    grid = Grid.load(GRID)
    src = grid.store / "closed-b25-tcp1"
    (tmp_path / "grid.toml").write_text(GRID.read_text())
    for seed, load in loads.items():
        d = tmp_path / "grid" / "closed-b25-tcp1" / f"seed-{seed}"
        d.mkdir(parents=True)
        shutil.copy(src / f"seed-{seed}" / "flows.parquet", d / "flows.parquet")
        run = json.loads((src / f"seed-{seed}" / "run.json").read_text())
        run["load_average"]["mean"] = load
        (d / "run.json").write_text(json.dumps(run))
    g = Grid.load(tmp_path / "grid.toml")
    return g, g.cell("closed-b25-tcp1")


def test_a_unit_above_the_load_threshold_is_left_out_of_the_quiet_reference(tmp_path):
    import pandas as pd

    from iwlab.emulate.grid import load_flows, per_size

    grid, cell = _store(tmp_path, {1: 2.0, 2: DEFAULT_MAX_UNIT_LOAD + 0.1, 3: DEFAULT_MAX_UNIT_LOAD})
    assert reference_units(grid, cell, DEFAULT_MAX_UNIT_LOAD) == {"all": [1, 2, 3], "quiet": [1, 3]}
    rows = compare_rows(grid, [cell], pd.DataFrame())
    every, quiet = reference_rows(rows, "all"), reference_rows(rows, "quiet")
    assert set(every["units"]) == {3} and set(quiet["units"]) == {2}
    f = load_flows(grid, cell)
    n = {s: int(per_size(f[f["seed"] == s], grid.mss(), grid.sizes)[["n3", "n10"]].to_numpy().sum()) for s in (1, 2, 3)}
    assert int(every["n_kernel"].sum()) == n[1] + n[2] + n[3]
    assert int(quiet["n_kernel"].sum()) == n[1] + n[3]
    s = slice_table(rows).set_index(["reference", "slice"])
    assert s.loc[("all", "all"), "units"] == 3 and s.loc[("quiet", "all"), "units"] == 2
    assert reference_units(grid, cell, 100.0)["quiet"] == [1, 2, 3]


def test_a_cell_with_no_quiet_unit_keeps_its_rows_with_none_counted(tmp_path):
    import pandas as pd

    grid, cell = _store(tmp_path, {1: 19.8, 2: 26.2})
    quiet = reference_rows(compare_rows(grid, [cell], pd.DataFrame()), "quiet")
    assert len(quiet) == len(grid.sizes) and set(quiet["units"]) == {0} and set(quiet["n_kernel"]) == {0}
    assert quiet["kern_ratio"].isna().all()
    s = slice_table(compare_rows(grid, [cell], pd.DataFrame())).set_index(["reference", "slice"])
    assert s.loc[("quiet", "all"), "rows"] == 0 and s.loc[("all", "all"), "rows"] == len(grid.sizes)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_a_max_unit_load_that_is_no_load_average_is_refused_by_name(bad):
    from iwlab.emulate.grid import GridError
    from iwlab.emulate.grid_compare import compare_grid

    with pytest.raises(GridError, match=r"--max-unit-load: .* allowed: a finite number ≥ 0"):
        compare_grid(GRID, max_unit_load=bad)


def test_the_cli_refuses_a_negative_max_unit_load_with_exit_2():
    from typer.testing import CliRunner

    from iwlab.cli import build

    r = CliRunner().invoke(build(), ["compare", "--grid", str(GRID), "--max-unit-load", "-1"])
    assert r.exit_code == 2 and "--max-unit-load" in r.output
