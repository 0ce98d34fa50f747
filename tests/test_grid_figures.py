"""The kernel grid's figures in python/iwlab/emulate/README.md and docs/kernel-grid.md are written
from the stored comparison (data/kernel/grid-compare/) by `python -m iwlab.emulate.grid_figures`;
these tests fail when a document's block, a heat map's numbers, or the stored summary tables drift
from the stored rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iwlab.emulate import grid_figures as gf
from iwlab.emulate.grid_compare import slice_table


def test_the_documents_show_what_the_stored_comparison_gives():
    assert gf.stale() == [], "regenerate: python -m iwlab.emulate.grid_figures"


def test_the_stored_rows_give_every_figure_against_both_references():
    rows, meta = gf.load()
    assert set(rows["reference"]) == {"all", "quiet"}
    every, quiet = (rows[rows["reference"] == r].set_index(["cell", "size"]) for r in ("all", "quiet"))
    assert list(every.index) == list(quiet.index)  # a cell without quiet units keeps its rows, with 0 units
    assert (quiet["units"] <= every["units"]).all()
    loads = meta["unit_loads"]
    for cell, g in quiet.groupby(level="cell"):
        assert int(g["units"].iloc[0]) == sum(v <= meta["max_unit_load"] for v in loads[cell].values())
    assert meta["quiet_units"] == sum(sum(v <= meta["max_unit_load"] for v in u.values()) for u in loads.values())
    g = pd.concat([gf.goals(rows, "sim", r) for r in ("all", "quiet")])
    assert set(g["reference"]) == {"all", "quiet"} and {"closed", "periodic"} <= set(g["arrivals"])


def test_a_heat_map_drawn_from_other_numbers_is_stale(tmp_path):
    rows, _ = gf.load()
    png = tmp_path / "delta.png"
    assert gf.heat_map_stale(rows, "all", png)  # missing
    gf.write_heat_map(rows, "all", png)
    assert not gf.heat_map_stale(rows, "all", png)
    moved = rows.copy()
    moved.loc[moved.index[0], "delta"] += 0.05
    assert gf.heat_map_stale(moved, "all", png)
    assert gf.heat_map_stale(rows, "quiet", png)


def test_the_stored_slice_table_is_the_stored_rows_summarised():
    rows, _ = gf.load()
    stored = pd.read_csv(gf.STORED / "grid-slices.csv")
    again = slice_table(rows)
    assert list(stored["rows"]) == list(again["rows"])
    for col in ("sim_mean_abs_delta", "sim_noise_floor", "replay_mean_abs_delta"):
        np.testing.assert_allclose(stored[col].to_numpy(float), again[col].to_numpy(float), rtol=1e-9)
    assert list(stored["sim_in_ci"]) == list(again["sim_in_ci"])


def test_the_stored_command_covers_every_cell_with_kernel_units():
    from iwlab.emulate.grid import Grid, stored_seeds

    rows, meta = gf.load()
    grid = Grid.load(gf.ROOT / "data" / "kernel" / "grid.toml")
    assert meta["command"].startswith("iwlab compare --grid")
    stored = {c.name for c in grid.cells() if stored_seeds(grid, c)}
    assert set(rows["cell"]) <= stored and rows["cell"].nunique() == meta["cells"]


def _rows(kern, sim, lo=-0.05, hi=0.05, arrivals="closed", cell="c", background="tcp1", size=9):
    return pd.DataFrame({"cell": cell, "background": background, "arrivals": arrivals, "buffer": 25, "size": size,
                         "kern_ratio": kern, "kern_lo": kern + lo, "kern_hi": kern + hi, "sim_ratio": sim,
                         "sim_lo": sim - 0.05, "sim_hi": sim + 0.05, "delta": sim - kern,
                         "in_ci": (kern + lo <= sim) & (sim <= kern + hi), "kern_rto": 0.1, "kern_ff": 0.2},
                        index=range(np.size(kern)))


def test_an_order_flip_counts_only_where_the_kernels_ci_excludes_one():
    sure = _rows(np.array([1.3]), np.array([0.9]))
    unsure = _rows(np.array([1.03]), np.array([0.97]))
    assert len(gf.order_flips(sure, "sim")) == 1
    assert len(gf.order_flips(unsure, "sim")) == 0


def test_workload_sensitivity_compares_each_patterns_change_from_the_closed_loop():
    r = pd.concat([_rows(np.array([1.5]), np.array([1.5]), arrivals="closed", cell="a"),
                   _rows(np.array([1.1]), np.array([1.3]), arrivals="poisson10", cell="b")], ignore_index=True)
    ch = gf.sensitivity_changes(r, "sim")
    assert ch.iloc[0]["kernel_change"] == pytest.approx(-0.4)
    assert ch.iloc[0]["engine_change"] == pytest.approx(-0.2)
    g = gf.goals(r, "sim").set_index("arrivals")
    assert not g.loc["poisson10", "sensitivity_holds"] and g.loc["closed", "sensitivity_holds"]


def test_lossless_cells_are_left_out_of_the_goals():
    r = pd.concat([_rows(np.array([1.0]), np.array([1.5]), cell="lossless").assign(kern_rto=0.0, kern_ff=0.0),
                   _rows(np.array([1.2]), np.array([1.2]), cell="lossy")], ignore_index=True)
    assert gf.lossy_cells(r) == {"lossy"}
    assert gf.goals(r, "sim").set_index("arrivals").loc["all", "mean_abs_delta"] == pytest.approx(0.0)


def test_a_block_is_replaced_between_its_markers_only():
    text = "a\n<!-- grid-figures:x -->\nold\n<!-- /grid-figures:x -->\nb\n"
    assert gf.render(text, "x", "new") == "a\n<!-- grid-figures:x -->\nnew\n<!-- /grid-figures:x -->\nb\n"
    with pytest.raises(ValueError, match="grid-figures:y"):
        gf.render(text, "y", "new")


def test_a_reversed_row_is_told_unit_by_unit():
    rows, meta = gf.load()
    t = gf.reversal_table("closed-b25-tcp1", 3, None, meta["max_unit_load"], meta["units"]["closed-b25-tcp1"])
    units = t[t["source"].str.startswith("kernel unit")]
    assert len(units) == len(meta["unit_loads"]["closed-b25-tcp1"])
    pooled = t[t["source"].str.startswith("kernel, all units")].iloc[0]
    assert int(units["flows 3"].sum()) == pooled["flows 3"] and int(units["flows 10"].sum()) == pooled["flows 10"]
    # Leaving a unit out and pooling the rest gives the ratio of the rest's means.
    assert units["ratio without it"].notna().all()
