"""`iwlab compare --grid GRID.toml`: the simulator over the contested grid against the stored
kernel units (`grid.py`), one row per cell and size.

Per (cell, size): the IW10/IW3 ratio of mean completion times, simulated and on the kernel with
its 95 % CI, |Δ|, whether the simulated ratio is inside the kernel's CI, RTO expiries per short
flow and the share of short flows that lost part of their first flight, on both sides. Two
simulated variants: `sim` (the cell's own arrival model, simulator seeds 1..N) and `replay`
(each kernel unit's own flow start times and (size, IW) order, same seed — the arrivals
`replay` kind), which takes the workload's sampling out of the difference.

Two kernel references: every stored unit (`all`) and the units run on a quiet machine (`quiet`:
the load average over the unit at most `--max-unit-load`, from its `run.json`). Loaded units lose
fewer first-flight segments beside long-lived flows (docs/kernel-grid.md), so each figure is given
against both; each row says how many units and flows its reference has. The replay variant of the
quiet reference replays the quiet units only.

Summaries, per reference: mean |Δ| and in-CI count overall and per slice (size, background, arrivals, buffer);
the sampling-noise floor (the mean |Δ| two equal ratios would show, from both sides' CIs: for
normal errors E|Δ| = sqrt(2/π)·sqrt(σ_kernel² + σ_sim²)); a workload-sensitivity table (per size
and background, the ratio per arrival pattern, kernel beside engine); an HTML report with a
heat map of Δ.

The engine is never fitted: every figure is the engine as it is against the stored runs.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.emulate.grid import Cell, Grid, GridError, load_flows, per_size, stored_seeds, unit_dir

Z95 = 1.959964
#: The quiet reference's bound on a unit's mean load average: the threshold the load table of
#: docs/kernel-grid.md set between quiet and loaded units for the first-flight losses, kept for the
#: comparison rather than chosen by it. The testbed VM has 2 cores, and the stored units' load
#: averages part near 5 (a group up to about 5, the rest from about 10 up).
DEFAULT_MAX_UNIT_LOAD = 5.0
REFERENCES = ("all", "quiet")


@dataclass
class GridComparison:
    rows: pd.DataFrame          # one per (cell, size)
    slices: pd.DataFrame        # mean |Δ|, in-CI count, noise floor per slice
    sensitivity: pd.DataFrame   # size x background x arrivals: kernel and engine ratios

    def markdown(self) -> str:
        return "\n\n".join([md_table(self.rows[[c for c in ROW_COLUMNS if c in self.rows]]), md_table(self.slices),
                             md_table(self.sensitivity, 2)]) + "\n"

    def text(self) -> str:
        have = [c for c in ROW_COLUMNS if c in self.rows]
        return "\n\n".join([self.rows[have].round(3).to_string(index=False), self.slices.round(3).to_string(index=False)])


ROW_COLUMNS = ["reference", "cell", "size", "units", "n_kernel", "kern_ratio", "kern_lo", "kern_hi", "sim_ratio", "delta",
               "in_ci", "replay_ratio", "replay_delta", "kern_rto", "sim_rto", "kern_ff", "sim_ff"]


# ---- the simulated side ------------------------------------------------------------------------
def sim_flows(sc, seed: int, first_flight: bool, within: float = 0.27) -> pd.DataFrame:
    """The simulator's flows of one run (warm-up excluded), with `ff_lost` from its bottleneck
    trace of the short flows when `first_flight`."""
    import iwlab
    from iwlab.emulate.grid import first_flight_losses

    f = iwlab.run(sc, seed=seed).flows
    f = f.assign(app_kind=np.where(f["app_kind"].astype(str) == "bulk", "bulk", "short"))
    f["ff_lost"] = np.nan
    if first_flight:
        short = f[f["app_kind"] == "short"]
        with tempfile.TemporaryDirectory(prefix="hg-ff-") as d:
            trace = Path(d) / "trace.pcap"
            iwlab.run(sc, seed=seed, pcap=trace, flows=[int(x) for x in short["flow"]])
            f["ff_lost"] = first_flight_losses(f, trace, 1448, within, world="sim")
    return f[~f["in_warmup"].astype(bool)].assign(seed=seed)


def replay_csv(flows: pd.DataFrame, path: Path) -> Path:
    """A kernel unit's short flows as the arrivals `replay` file: start, response, server_iw."""
    s = flows[flows["app_kind"] == "short"].sort_values("start")
    pd.DataFrame({"start": s["start"].astype(float), "response": s["response_bytes"].astype("int64"),
                  "server_iw": s["server_iw"].astype(str), "request": s["request_bytes"].astype("int64")}
                 ).to_csv(path, index=False)
    return path


def _sim_job(args: tuple[str, str, str, int, bool, str | None]) -> pd.DataFrame:
    grid_path, cell_name, variant, seed, ff, replay_file = args
    grid = Grid.load(grid_path)
    cell = grid.cell(cell_name)
    arrivals = {"kind": "replay", "file": replay_file} if variant == "replay" else None
    sc = grid.scenario(cell, arrivals=arrivals)
    if variant == "replay":
        # Replayed flows come from the file: no mix to cycle.
        data = copy.deepcopy(sc.data)
        for k in ("mix", "mix_order"):
            data["apps"][0].pop(k, None)
        from iwlab.scenario import Scenario

        sc = Scenario.from_data(data, sc.source)
    return sim_flows(sc, seed, ff, grid.flight_within(cell)).assign(cell=cell_name, variant=variant)


def simulate(grid: Grid, cells: list[Cell], sim_seeds: int, replay: bool, first_flight: bool, workers: int) -> pd.DataFrame:
    jobs = []
    tmp = Path(tempfile.mkdtemp(prefix="hg-replay-"))
    for c in cells:
        jobs += [(str(grid.path), c.name, "sim", s, first_flight, None) for s in range(1, sim_seeds + 1)]
        if replay:
            for s in stored_seeds(grid, c):
                kf = pd.read_parquet(unit_dir(grid, c, s) / "flows.parquet")
                if "server_iw" not in kf:
                    kf = kf.rename(columns={"iw_policy": "server_iw"})
                f = replay_csv(kf, tmp / f"{c.name}-{s}.csv")
                jobs.append((str(grid.path), c.name, "replay", s, False, str(f)))
    from iwlab.runs import run_many

    parts = list(run_many(jobs, _sim_job, jobs=workers, ordered=True))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# ---- the comparison ----------------------------------------------------------------------------
def unit_load(grid: Grid, cell: Cell, seed: int) -> float:
    """The machine's mean load average while the kernel unit ran (its `run.json`)."""
    return float(json.loads((unit_dir(grid, cell, seed) / "run.json").read_text())["load_average"]["mean"])


def reference_units(grid: Grid, cell: Cell, max_unit_load: float) -> dict[str, list[int]]:
    """The cell's stored seeds in each reference: `all`, and `quiet` (load average ≤ max_unit_load)."""
    seeds = stored_seeds(grid, cell)
    return {"all": seeds, "quiet": [s for s in seeds if unit_load(grid, cell, s) <= max_unit_load]}


def compare_rows(grid: Grid, cells: list[Cell], sim: pd.DataFrame,
                 max_unit_load: float = DEFAULT_MAX_UNIT_LOAD) -> pd.DataFrame:
    """One row per (reference, cell, size). A cell with no unit in a reference keeps its rows there,
    with `units` 0 and no kernel ratio, so what was left out stays counted."""
    rows = []
    mss = grid.mss()
    for c in cells:
        kernel = load_flows(grid, c)
        own = sim[(sim["cell"] == c.name) & (sim["variant"] == "sim")] if len(sim) else sim
        for ref, seeds in reference_units(grid, c, max_unit_load).items():
            k = per_size(kernel[kernel["seed"].isin(seeds)], mss, grid.sizes)
            replayed = (sim[(sim["cell"] == c.name) & (sim["variant"] == "replay") & sim["seed"].isin(seeds)]
                        if len(sim) else sim)
            parts = {"sim": per_size(own, mss, grid.sizes) if len(own) else None,
                     "replay": per_size(replayed, mss, grid.sizes) if len(replayed) else None}
            load = float(np.mean([unit_load(grid, c, s) for s in seeds])) if seeds else float("nan")
            for i, kr in k.iterrows():
                row: dict[str, Any] = {"reference": ref, "cell": c.name, "background": c.background,
                                       "arrivals": c.arrivals, "buffer": c.buffer, "size": int(kr["size"]),
                                       "units": len(seeds), "units_load": load, "n_kernel": int(kr["n3"] + kr["n10"]),
                                       "kern_ratio": kr["ratio"], "kern_lo": kr["ratio_lo"], "kern_hi": kr["ratio_hi"],
                                       "kern_iw3": kr["iw3_mean"], "kern_iw10": kr["iw10_mean"],
                                       "kern_rto": kr["rto_per_flow"], "kern_ff": kr["ff_loss_share"]}
                for key, t in parts.items():
                    if t is None:
                        continue
                    sr = t.iloc[i]
                    row.update({f"{key}_ratio": sr["ratio"], f"{key}_lo": sr["ratio_lo"], f"{key}_hi": sr["ratio_hi"],
                                f"{key}_rto": sr["rto_per_flow"], f"{key}_ff": sr["ff_loss_share"],
                                f"{key}_n": int(sr["n3"] + sr["n10"])})
                    row["delta" if key == "sim" else "replay_delta"] = sr["ratio"] - kr["ratio"]
                    row["in_ci" if key == "sim" else "replay_in_ci"] = bool(kr["ratio_lo"] <= sr["ratio"] <= kr["ratio_hi"])
                rows.append(row)
    return pd.DataFrame(rows)


def reference_rows(rows: pd.DataFrame, reference: str) -> pd.DataFrame:
    """The rows of one reference (rows stored before there were two are all `all`)."""
    if reference not in REFERENCES:
        raise ValueError(f"reference {reference!r}: allowed {', '.join(REFERENCES)}")
    if "reference" not in rows:
        return rows if reference == "all" else rows.iloc[:0]
    return rows[rows["reference"] == reference]


def noise_floor(rows: pd.DataFrame, side: str = "sim") -> float:
    """Mean |Δ| that sampling noise alone gives when the two ratios are equal: each side's
    standard error from its 95 % CI, E|N(0, σ_k² + σ_s²)| = sqrt(2/π)·sqrt(σ_k² + σ_s²)."""
    lo, hi = f"{side}_lo", f"{side}_hi"
    if lo not in rows:
        return float("nan")
    sk = (rows["kern_hi"] - rows["kern_lo"]) / (2 * Z95)
    ss = (rows[hi] - rows[lo]) / (2 * Z95)
    e = math.sqrt(2 / math.pi) * np.sqrt(sk ** 2 + ss ** 2)
    return float(e.dropna().mean())


def slice_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per reference and slice: rows with a kernel ratio, units and flows behind them, mean |Δ|,
    in-CI count and noise floor of each engine variant."""
    out = []
    groups = [("all", None)] + [(k, k) for k in ("size", "background", "arrivals", "buffer")]
    for ref in REFERENCES:
        rr = reference_rows(rows, ref)
        if not len(rr):
            continue
        for label, key in groups:
            for val, g in ([("", rr)] if key is None else rr.groupby(key, sort=False)):
                cells = g.drop_duplicates("cell")
                g = g.dropna(subset=["kern_ratio"])
                r = {"reference": ref, "slice": label, "value": val, "rows": len(g),
                     "units": int(cells["units"].sum()) if "units" in g else np.nan,
                     "kernel_flows": int(g["n_kernel"].sum())}
                for side in ("sim", "replay"):
                    d = "delta" if side == "sim" else "replay_delta"
                    ic = "in_ci" if side == "sim" else "replay_in_ci"
                    if d in g:
                        gg = g.dropna(subset=[d])
                        r[f"{side}_mean_abs_delta"] = float(gg[d].abs().mean()) if len(gg) else float("nan")
                        r[f"{side}_in_ci"] = f"{int(gg[ic].astype(bool).sum())}/{len(gg)}"
                        r[f"{side}_noise_floor"] = noise_floor(gg, side)
                out.append(r)
    return pd.DataFrame(out)


def sensitivity(rows: pd.DataFrame) -> pd.DataFrame:
    """Per reference, size and background: the IW10/IW3 ratio under each arrival pattern (the
    smallest buffer), kernel and engine side by side."""
    parts = []
    for ref in REFERENCES:
        r = reference_rows(rows, ref)
        r = r[r["buffer"] == r["buffer"].min()].dropna(subset=["kern_ratio"])
        if not len(r):
            continue
        cols = {"kern_ratio": "kernel"}
        if "sim_ratio" in r:
            cols["sim_ratio"] = "engine"
        t = r.pivot_table(index=["size", "background"], columns="arrivals", values=list(cols), aggfunc="first")
        t.columns = [f"{a} {cols[v]}" for v, a in t.columns]
        order = sorted(t.columns, key=lambda c: (c.split()[0], c.split()[1] != "kernel"))
        parts.append(t[order].reset_index().assign(reference=ref))
    if not parts:
        return pd.DataFrame()
    t = pd.concat(parts, ignore_index=True)
    return t[["reference", *[c for c in t.columns if c != "reference"]]]


def _cpu_seconds() -> float:
    """User + system time of this process and its finished workers."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def compare_grid(grid_path: str | Path, sim_seeds: int = 4, replay: bool = True, first_flight: bool = True,
                 workers: int = 2, cells: list[str] | None = None, out: str | Path | None = None,
                 max_unit_load: float = DEFAULT_MAX_UNIT_LOAD) -> GridComparison:
    if not (isinstance(max_unit_load, (int, float)) and math.isfinite(max_unit_load) and max_unit_load >= 0):
        raise GridError(f"--max-unit-load: {max_unit_load!r} is not a load average; allowed: a finite number ≥ 0")
    grid = Grid.load(grid_path)
    unknown = sorted(set(cells or []) - {c.name for c in grid.cells()})
    if unknown:
        raise GridError(f"--cells: {', '.join(unknown)} not in {grid.path}; allowed: "
                        + ", ".join(c.name for c in grid.cells()))
    todo = [c for c in grid.cells() if stored_seeds(grid, c) and (not cells or c.name in cells)]
    t0, c0 = time.monotonic(), _cpu_seconds()
    sim = simulate(grid, todo, sim_seeds, replay, first_flight, workers)
    wall, cpu = time.monotonic() - t0, _cpu_seconds() - c0
    rows = compare_rows(grid, todo, sim, max_unit_load)
    res = GridComparison(rows, slice_table(rows), sensitivity(rows) if len(rows) else pd.DataFrame())
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        rows.to_csv(out / "grid-rows.csv", index=False)
        res.slices.to_csv(out / "grid-slices.csv", index=False)
        res.sensitivity.to_csv(out / "grid-sensitivity.csv", index=False)
        (out / "grid-report.html").write_text(html_report(res, grid))
        (out / "grid-tables.md").write_text(res.markdown())
        import iwlab

        (out / "compare.json").write_text(json.dumps({
            "command": " ".join(["iwlab compare --grid", str(grid_path), f"--seeds {sim_seeds}",
                                 *(["--no-replay"] if not replay else []), *(["--no-first-flight"] if not first_flight else []),
                                 *([f"--cells {','.join(cells)}"] if cells else []), f"--workers {workers}",
                                 *([f"--max-unit-load {max_unit_load:g}"] if max_unit_load != DEFAULT_MAX_UNIT_LOAD else []),
                                 f"--out {out}"]),
            "grid": str(grid.path), "sim_seeds": sim_seeds, "replay": replay, "first_flight": first_flight,
            "workers": workers, "cells": len(todo), "kernel_units": sum(len(stored_seeds(grid, c)) for c in todo),
            "max_unit_load": max_unit_load,
            "quiet_units": sum(len(reference_units(grid, c, max_unit_load)["quiet"]) for c in todo),
            "units": {c.name: stored_seeds(grid, c) for c in todo},
            "unit_loads": {c.name: {str(s): round(unit_load(grid, c, s), 2) for s in stored_seeds(grid, c)} for c in todo},
            "simulator_wall_seconds": round(wall, 1),
            "simulator_cpu_seconds": round(cpu, 1), "engine": iwlab.engine_id()}, indent=1) + "\n")
    return res


def md_table(df: pd.DataFrame, digits: int = 3) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if not np.isfinite(v) else f"{v:.{digits}f}"
        return str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


# ---- the HTML report ---------------------------------------------------------------------------
def heat_map(rows: pd.DataFrame, value: str, title: str, ax=None):
    """Cells (rows) x sizes (columns) of one reference, coloured by `value` (Δ of the ratio, 0 at
    the centre of the colour scale), numbers printed; a matplotlib Figure."""
    from iwlab.plot import grid_heatmap

    label = "engine − kernel, IW10/IW3"
    fig = grid_heatmap(rows.rename(columns={value: label}), x="size", y="cell", value=label, agg="first", fmt="{:+.2f}",
                       center=0.0, cmap="RdBu_r",
                       ax=ax, figsize=(7.5, 0.28 * rows["cell"].nunique() + 1.6))
    ax = ax or fig.axes[0]
    ax.set(xlabel="response (segments)", ylabel="", title=title)
    ax.tick_params(axis="y", labelsize="small")
    return fig


def html_report(res: GridComparison, grid: Grid) -> str:
    from iwlab.report import html as h
    from iwlab.report.figures import png

    blocks = [h.para("IW10/IW3 ratio of mean completion times per cell and size: the engine (`sim`: its own "
                     "arrival draws; `replay`: the kernel runs' own start times and (size, IW) order) against the "
                     f"stored kernel units of {h.esc(str(grid.path))}, every unit (`all`) and the units run on a "
                     "quiet machine (`quiet`). No engine parameter is fitted.")]
    for ref in REFERENCES:
        r = reference_rows(res.rows, ref)
        for col, label in (("delta", "own arrivals"), ("replay_delta", "replayed arrivals")):
            if col in r and r[col].notna().any():
                blocks.append(h.figure(png(heat_map(r, col, f"engine − kernel ({label}), {ref} units")),
                                       f"Δ of the IW10/IW3 ratio per cell and size, {label}, {ref} kernel units",
                                       f"heat map, {label}, {ref}"))
    blocks += [h.section("Slices", h.table(res.slices)), h.section("Workload sensitivity", h.table(res.sensitivity)),
               h.section("Cells", h.table(res.rows))]
    return h.document("iwlab compare --grid", blocks, subtitle=str(grid.path))
