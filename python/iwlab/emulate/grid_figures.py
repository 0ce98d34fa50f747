"""The kernel grid's figures in the docs, written from the stored comparison only
(`data/kernel/grid-compare/`: the tables `iwlab compare --grid … --out` wrote, and its
`compare.json` with the command), so no figure in the text can go stale:

    python -m iwlab.emulate.grid_figures            # rewrite the marked blocks
    python -m iwlab.emulate.grid_figures --check    # exit 1 if a block differs from the stored data

A block sits between `<!-- grid-figures:NAME -->` and `<!-- /grid-figures:NAME -->`;
`tests/test_grid_figures.py` runs the check. The heat maps of Δ (`docs/kernel-grid-delta-*.png`)
carry a digest of the numbers they are drawn from in their PNG text, which the check compares.

Every figure is given against two kernel references: all stored units, and the units run on a
quiet machine (`grid_compare.DEFAULT_MAX_UNIT_LOAD`).

The goals the grid is held to, over the lossy cells (cells where some kernel short flow had an
RTO or lost part of its first flight), per arrival pattern and per engine variant (`sim`: the
engine's own arrival draws; `replay`: each kernel unit's own start times and (size, IW) order):
mean |Δratio| no larger than the sampling-noise floor of both sides' CIs; at least 85 % of rows
inside the kernel's 95 % CI; no IW3/IW10 order that differs from the kernel's where the kernel's
CI excludes 1; and the engine's change of the ratio between arrival patterns (each against the
closed loop) within 0.1 of the kernel's.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from iwlab.emulate.grid_compare import DEFAULT_MAX_UNIT_LOAD, REFERENCES, Z95, md_table, noise_floor, reference_rows, slice_table

ROOT = Path(__file__).resolve().parents[3]
STORED = ROOT / "data" / "kernel" / "grid-compare"
IN_CI_SHARE = 0.85
SENSITIVITY_TOLERANCE = 0.1
BASE_PATTERN = "closed"

BACKGROUNDS = {"none": "no background", "udp60": "UDP 60 %", "udp80": "UDP 80 %", "udp90": "UDP 90 %",
               "tcp1": "1 long-lived CUBIC flow", "tcp2": "2 long-lived flows", "tcp4": "4 long-lived flows",
               "udp60-tcp1": "UDP 60 % + 1 long-lived", "udp80-tcp1": "UDP 80 % + 1 long-lived",
               "udp90-tcp1": "UDP 90 % + 1 long-lived"}
PATTERNS = {"closed": "closed loop", "periodic": "periodic 2 s", "poisson10": "Poisson 10 %",
            "poisson30": "Poisson 30 %"}


def load(stored: Path = STORED) -> tuple[pd.DataFrame, dict]:
    rows = pd.read_csv(stored / "grid-rows.csv")
    meta = json.loads((stored / "compare.json").read_text())
    return rows, meta


def lossy_cells(rows: pd.DataFrame) -> set[str]:
    """Cells where some kernel short flow (any stored unit) had an RTO or lost part of its first flight."""
    r = reference_rows(rows, "all")
    loss = (r["kern_rto"].fillna(0) > 0) | (r["kern_ff"].fillna(0) > 0)
    return set(r.loc[loss, "cell"])


def order_flips(rows: pd.DataFrame, side: str) -> pd.DataFrame:
    """Rows where the kernel's CI excludes 1 and the engine puts IW 3 and IW 10 the other way."""
    col = f"{side}_ratio"
    sure = rows[(rows["kern_lo"] > 1) | (rows["kern_hi"] < 1)].dropna(subset=[col])
    return sure[np.sign(sure[col] - 1) * np.sign(sure["kern_ratio"] - 1) < 0]


def sensitivity_changes(rows: pd.DataFrame, side: str) -> pd.DataFrame:
    """Per (size, background, pattern) at the smallest buffer: the ratio's change from the closed
    loop to that pattern, kernel and engine, and their difference."""
    b = rows[rows["buffer"] == rows["buffer"].min()]
    base = b[b["arrivals"] == BASE_PATTERN].set_index(["size", "background"])
    out = []
    for _, r in b[b["arrivals"] != BASE_PATTERN].iterrows():
        key = (r["size"], r["background"])
        if key not in base.index:
            continue
        k0, e0 = base.loc[key, "kern_ratio"], base.loc[key, f"{side}_ratio"]
        dk, de = r["kern_ratio"] - k0, r[f"{side}_ratio"] - e0
        # Each ratio's standard error from its 95 % CI; the difference of the two changes has four.
        sd = [(hi - lo) / (2 * Z95) for lo, hi in ((base.loc[key, "kern_lo"], base.loc[key, "kern_hi"]),
                                                   (base.loc[key, f"{side}_lo"], base.loc[key, f"{side}_hi"]),
                                                   (r["kern_lo"], r["kern_hi"]), (r[f"{side}_lo"], r[f"{side}_hi"]))]
        out.append({"size": int(r["size"]), "background": r["background"], "arrivals": r["arrivals"],
                    "kernel_change": dk, "engine_change": de, "difference": de - dk,
                    "noise": math.sqrt(2 / math.pi) * math.sqrt(sum(x * x for x in sd))})
    cols = ["size", "background", "arrivals", "kernel_change", "engine_change", "difference", "noise"]
    return pd.DataFrame(out, columns=cols).dropna(subset=["difference"])


def goals(rows: pd.DataFrame, side: str, reference: str = "all") -> pd.DataFrame:
    """One row per arrival pattern (and all), over the lossy cells with units in `reference`: the
    units and flows behind it, the four goals and whether each holds."""
    delta = "delta" if side == "sim" else "replay_delta"
    in_ci = "in_ci" if side == "sim" else "replay_in_ci"
    lossy_set = lossy_cells(rows)
    r = reference_rows(rows, reference)
    r = r[r["cell"].isin(lossy_set)]
    lossy = r.dropna(subset=["kern_ratio", delta])
    changes = sensitivity_changes(r, side)
    out = []
    for pattern, g in [("all", lossy), *lossy.groupby("arrivals", sort=False)]:
        mad, floor = float(g[delta].abs().mean()), noise_floor(g, side)
        n_in = int(g[in_ci].astype(bool).sum())
        flips = order_flips(g, side)
        ch = changes if pattern == "all" else changes[changes["arrivals"] == pattern]
        ok_ch = int((ch["difference"].abs() <= SENSITIVITY_TOLERANCE).sum())
        cells = g.drop_duplicates("cell")
        out.append({"reference": reference, "arrivals": pattern, "cells": g["cell"].nunique(),
                    "units": int(cells["units"].sum()) if "units" in g else np.nan,
                    "kernel_flows": int(g["n_kernel"].sum()) if "n_kernel" in g else np.nan, "rows": len(g),
                    "mean_abs_delta": mad, "noise_floor": floor, "delta_within_noise": mad <= floor,
                    "in_ci": f"{n_in}/{len(g)}", "in_ci_85": n_in >= IN_CI_SHARE * len(g),
                    "order_flips": len(flips), "no_flip": len(flips) == 0,
                    "pattern_changes_within_0.1": "" if pattern == BASE_PATTERN else f"{ok_ch}/{len(ch)}",
                    "sensitivity_holds": True if pattern == BASE_PATTERN else ok_ch == len(ch)})
    return pd.DataFrame(out)


# ---- the testbed's load ------------------------------------------------------------------------
LOW_LOAD, HIGH_LOAD = DEFAULT_MAX_UNIT_LOAD, 15.0


def unit_loads(units: dict[str, list[int]], grid_path: Path = ROOT / "data" / "kernel" / "grid.toml") -> pd.DataFrame:
    """Per kernel unit the comparison used (`units`: cell -> seeds) beside long-lived flows: the
    machine's mean load average while it ran and the mean number of first-flight segments lost by
    IW 10 responses of at least 10 segments (whose whole first flight is 10 segments)."""
    from iwlab.emulate.grid import Grid, unit_dir

    grid = Grid.load(grid_path)
    out = []
    for c in grid.cells():
        if "bulk" not in grid.data["backgrounds"][c.background]:
            continue
        for s in units.get(c.name, []):
            d = unit_dir(grid, c, s)
            f = pd.read_parquet(d / "flows.parquet")
            if "ff_lost" not in f:
                continue
            x = f[(f["app_kind"] == "short") & (f["iw_segments"] == 10) & (f["response_bytes"] >= 10 * grid.mss())
                  & ~f["in_warmup"].astype(bool)]["ff_lost"].dropna()
            if len(x):
                load = json.loads((d / "run.json").read_text())["load_average"]["mean"]
                out.append({"cell": c.name, "seed": s, "load": load, "flows": len(x), "ff_lost_iw10": float(x.mean())})
    return pd.DataFrame(out)


ENGINE_FF = "first-flight-engine.csv"


def engine_first_flight(cells: list[str], seeds: int) -> pd.DataFrame:
    """The engine's mean first-flight segments lost by IW 10 responses of ≥ 10 segments per cell
    (its own arrivals, seeds 1..`seeds`), as `unit_loads` counts them on the kernel side."""
    from iwlab.emulate.grid import Grid
    from iwlab.emulate.grid_compare import sim_flows

    grid = Grid.load(ROOT / "data" / "kernel" / "grid.toml")
    out = []
    for name in cells:
        c = grid.cell(name)
        f = pd.concat([sim_flows(grid.scenario(c), s, True, grid.flight_within(c)) for s in range(1, seeds + 1)])
        x = f[(f["app_kind"] == "short") & (f["iw_segments"] == 10) & (f["response_bytes"] >= 10 * grid.mss())]["ff_lost"]
        out.append({"cell": name, "seeds": seeds, "flows": int(x.notna().sum()), "ff_lost_iw10": float(x.mean())})
    return pd.DataFrame(out)


def _load_md(u: pd.DataFrame, engine: pd.DataFrame | None = None) -> str:
    dl = u["load"] - u.groupby("cell")["load"].transform("mean")
    df = u["ff_lost_iw10"] - u.groupby("cell")["ff_lost_iw10"].transform("mean")
    r = float(np.corrcoef(dl, df)[0, 1])
    both = u.assign(level=np.where(u["load"] <= LOW_LOAD, "low", np.where(u["load"] > HIGH_LOAD, "high", "")))
    t = both[both["level"] != ""].pivot_table(index="cell", columns="level", values=["ff_lost_iw10", "load"],
                                              aggfunc="mean").dropna()
    t = pd.DataFrame({"cell": t.index, f"load ≤ {LOW_LOAD:g}": t[("load", "low")].to_numpy(),
                      "lost (low load)": t[("ff_lost_iw10", "low")].to_numpy(),
                      f"load ≥ {HIGH_LOAD:g}": t[("load", "high")].to_numpy(),
                      "lost (high load)": t[("ff_lost_iw10", "high")].to_numpy()})
    fewer = int((t["lost (high load)"] < t["lost (low load)"]).sum())
    note = ""
    if engine is not None:
        t = t.merge(engine[["cell", "ff_lost_iw10"]].rename(columns={"ff_lost_iw10": "lost (engine)"}), on="cell", how="left")
        e = t.dropna(subset=["lost (engine)"])
        near = (e["lost (engine)"] - e["lost (low load)"]).abs() < (e["lost (engine)"] - e["lost (high load)"]).abs()
        note = (f" The engine (`{ENGINE_FF}`, `python -m iwlab.emulate.grid_figures --engine-first-flight`) is nearer "
                f"the quiet units in {int(near.sum())} of these {len(e)} cells.")
    return (f"{len(u)} kernel units beside long-lived flows, IW 10 responses of ≥ 10 segments: the mean number of "
            f"first-flight segments lost against the machine's load average while the unit ran, both taken "
            f"relative to the cell's mean, correlate at r = {r:.2f}. In {fewer} of the {len(t)} cells with units at "
            f"both a low and a high load, the loaded units lost fewer.{note}\n\n" + md_table(t, 2))


def _engine_ff(stored: Path = STORED) -> pd.DataFrame | None:
    return pd.read_csv(stored / ENGINE_FF) if (stored / ENGINE_FF).exists() else None


# ---- the reversed rows ------------------------------------------------------------------------
REVERSED_ENGINE = "reversed-rows-engine.csv"
#: Rows looked at beside the current order flips: the two whose order the engine reversed while
#: their cells had only their first kernel units stored (closed loop beside one long-lived flow at
#: 3 segments; Poisson 30 % beside UDP 60 % and one long-lived flow at 21 segments).
WATCHED = (("closed-b25-tcp1", 3), ("poisson30-b25-udp60-tcp1", 21))
RECORD_COLUMNS = ["cell", "size", "variant", "seed", "iw_segments", "completed", "completion", "timeouts",
                  "retransmits", "ff_lost"]


def reversed_rows(rows: pd.DataFrame) -> list[tuple[str, int]]:
    """Lossy rows whose IW order the engine (either variant) reverses against either reference,
    and the WATCHED rows."""
    lossy = lossy_cells(rows)
    found = set(WATCHED)
    for ref in REFERENCES:
        r = reference_rows(rows, ref)
        for side in ("sim", "replay"):
            if f"{side}_ratio" in r:
                f = order_flips(r[r["cell"].isin(lossy)], side)
                found |= {(c, int(z)) for c, z in zip(f["cell"], f["size"])}
    return sorted(found)


def engine_records(targets: list[tuple[str, int]], seeds: int, grid_path: Path = ROOT / "data" / "kernel" / "grid.toml",
                   workers: int = 2) -> pd.DataFrame:
    """The engine's short flows of each (cell, size): its own arrivals (seeds 1..`seeds`) and the
    replay of every stored kernel unit of the cell (seed = the unit's), with first-flight losses."""
    import tempfile

    from iwlab.emulate.grid import Grid, stored_seeds, unit_dir
    from iwlab.emulate.grid_compare import _sim_job, replay_csv
    from iwlab.runs import run_many

    grid = Grid.load(grid_path)
    tmp = Path(tempfile.mkdtemp(prefix="hg-reversed-"))
    jobs = []
    for name in sorted({c for c, _ in targets}):
        c = grid.cell(name)
        jobs += [(str(grid.path), name, "sim", s, True, None) for s in range(1, seeds + 1)]
        for s in stored_seeds(grid, c):
            kf = pd.read_parquet(unit_dir(grid, c, s) / "flows.parquet")
            jobs.append((str(grid.path), name, "replay", s, True,
                         str(replay_csv(kf.rename(columns={"iw_policy": "server_iw"}) if "server_iw" not in kf else kf,
                                        tmp / f"{name}-{s}.csv"))))
    f = pd.concat(run_many(jobs, _sim_job, jobs=workers, ordered=True), ignore_index=True)
    f = f[f["app_kind"] == "short"].assign(size=lambda d: d["response_bytes"] // grid.mss())
    keep = pd.Series(False, index=f.index)
    for name, size in targets:
        keep |= (f["cell"] == name) & (f["size"] == size)
    return f.loc[keep, RECORD_COLUMNS].reset_index(drop=True)


def _per_iw(f: pd.DataFrame) -> dict:
    """Flows, mean completion, RTOs per flow and the share that lost first-flight segments, per IW,
    and the IW10/IW3 ratio of mean completion (completed flows)."""
    out: dict = {}
    for iw in (3, 10):
        g = f[f["iw_segments"] == iw]
        done = g[g["completed"].astype(bool)]
        ff = g["ff_lost"].dropna() if "ff_lost" in g else pd.Series(dtype=float)
        out.update({f"flows {iw}": len(g), f"mean {iw} (s)": done["completion"].mean() if len(done) else np.nan,
                    f"RTO/flow {iw}": g["timeouts"].mean() if len(g) else np.nan,
                    f"lost ff {iw}": (ff > 0).mean() if len(ff) else np.nan})
    out["ratio"] = out["mean 10 (s)"] / out["mean 3 (s)"]
    return out


def reversal_table(cell: str, size: int, engine: pd.DataFrame | None, max_unit_load: float, units: list[int],
                   grid_path: Path = ROOT / "data" / "kernel" / "grid.toml") -> pd.DataFrame:
    """One (cell, size) per source: each of the kernel units `units` (the ones the stored comparison
    used; its load; the kernel's ratio without it), the kernel's references, the engine's own
    arrivals and its replay of each unit."""
    from iwlab.emulate.grid import Grid, load_flows, ratio_ci
    from iwlab.emulate.grid_compare import unit_load

    grid = Grid.load(grid_path)
    c = grid.cell(cell)
    k = load_flows(grid, c)
    k = k[(k["app_kind"] == "short") & (k["response_bytes"] == size * grid.mss()) & k["seed"].isin(units)]
    seeds = sorted(k["seed"].unique())
    loads = {s: unit_load(grid, c, s) for s in seeds}
    out = []
    for s in seeds:
        rest = k[k["seed"] != s]
        out.append({"source": f"kernel unit {s}", "load": loads[s], **_per_iw(k[k["seed"] == s]),
                    "ratio without it": _per_iw(rest)["ratio"] if len(rest) else np.nan})
    for ref, pick in (("all", seeds), ("quiet", [s for s in seeds if loads[s] <= max_unit_load])):
        g = k[k["seed"].isin(pick)]
        done = g[g["completed"].astype(bool)]
        lo, hi = ratio_ci(*(done.loc[done["iw_segments"] == iw, "completion"].to_numpy(float) for iw in (3, 10)))
        out.append({"source": f"kernel, {ref} units ({len(pick)})", **_per_iw(g), "CI": f"[{lo:.2f}, {hi:.2f}]"
                    if np.isfinite(lo) else ""})
    if engine is not None:
        e = engine[(engine["cell"] == cell) & (engine["size"] == size)]
        own = e[e["variant"] == "sim"]
        if len(own):
            out.append({"source": f"engine, own arrivals (seeds 1–{own['seed'].max()})", **_per_iw(own)})
        for s, g in e[(e["variant"] == "replay") & e["seed"].isin(units)].groupby("seed"):
            out.append({"source": f"engine, replay of unit {s}", "load": loads.get(s, np.nan), **_per_iw(g)})
    cols = ["source", "load", "flows 3", "flows 10", "mean 3 (s)", "mean 10 (s)", "ratio", "CI", "ratio without it",
            "RTO/flow 3", "RTO/flow 10", "lost ff 3", "lost ff 10"]
    t = pd.DataFrame(out)
    return t[[c for c in cols if c in t]]


def _ratio_ci(x: pd.Series) -> str:
    return f"{x['kern_ratio']:.2f} [{x['kern_lo']:.2f}, {x['kern_hi']:.2f}] ({int(x['units'])})" \
        if np.isfinite(x["kern_ratio"]) else f"— ({int(x['units'])})"


def _reversed_summary(rows: pd.DataFrame, engine: pd.DataFrame | None, meta: dict) -> pd.DataFrame:
    """One line per reversed row: both references, the engine, the unit that carries the kernel's
    ratio most (its removal moves it furthest), RTOs and first-flight losses per IW on both sides."""
    out = []
    for cell, size in reversed_rows(rows):
        r = rows[(rows["cell"] == cell) & (rows["size"] == size)].set_index("reference")
        t = reversal_table(cell, size, engine, meta["max_unit_load"], meta["units"][cell]).set_index("source")
        units = t[t.index.str.startswith("kernel unit")]
        pooled = t.loc[t.index.str.startswith("kernel, all units")].iloc[0]
        own = t[t.index.str.startswith("engine, own")]
        row = {"cell": cell, "size": size, "kernel, all units": _ratio_ci(r.loc["all"]),
               "kernel, quiet units": _ratio_ci(r.loc["quiet"]) if "quiet" in r.index else "",
               "engine": r.loc["all", "sim_ratio"], "replay": r.loc["all"].get("replay_ratio", np.nan)}
        if len(units) > 1:
            w = (units["ratio without it"] - pooled["ratio"]).abs().idxmax()
            row["without the unit that moves it most"] = (f"{units.loc[w, 'ratio without it']:.2f} "
                                                          f"(unit {w.split()[-1]}, load {units.loc[w, 'load']:.0f})")
        else:
            row["without the unit that moves it most"] = "one unit"
        for side, src in (("kernel", pooled), ("engine", own.iloc[0] if len(own) else None)):
            row[f"RTO/flow 3 / 10 ({side})"] = "" if src is None else f"{src['RTO/flow 3']:.2f} / {src['RTO/flow 10']:.2f}"
            row[f"lost ff 3 / 10 ({side})"] = "" if src is None else f"{src['lost ff 3']:.2f} / {src['lost ff 10']:.2f}"
        out.append(row)
    return pd.DataFrame(out)


def _reversed_md(rows: pd.DataFrame, meta: dict, stored: Path = STORED) -> str:
    engine = pd.read_csv(stored / REVERSED_ENGINE) if (stored / REVERSED_ENGINE).exists() else None
    load = meta["max_unit_load"]
    missing = [f"{c} {z}" for c, z in reversed_rows(rows)
               if engine is None or not ((engine["cell"] == c) & (engine["size"] == z)).any()]
    parts = [f"Every lossy row whose IW order an engine variant reverses against either reference, and the "
             f"{len(WATCHED)} watched rows: the kernel's ratio [95 % CI] (units) against each reference, the engine's "
             f"(own arrivals; replay of every unit), the kernel's ratio without the unit whose removal moves it "
             f"most, and per IW the RTOs per flow and the share of flows that lost first-flight segments (the "
             f"engine's from its own arrivals, seeds 1–4, `{REVERSED_ENGINE}`):",
             md_table(_reversed_summary(rows, engine, meta), 2)]
    if missing:
        parts.append(f"Not in `{REVERSED_ENGINE}` (`python -m iwlab.emulate.grid_figures --reversed-rows`): "
                     + ", ".join(missing))
    for cell, size in WATCHED:
        parts.append(f"**{cell}, {size} segments**, unit by unit (load = the unit's mean load average; the engine's "
                     "replay of a unit runs that unit's start times and (size, IW) order):\n\n"
                     + md_table(reversal_table(cell, size, engine, load, meta["units"][cell]), 2))
    return "\n\n".join(parts)


# ---- the heat maps -----------------------------------------------------------------------------
HEAT_MAPS = {ref: ROOT / "docs" / f"kernel-grid-delta-{ref}.png" for ref in REFERENCES}
DIGEST_KEY = "Description"


def heat_map_data(rows: pd.DataFrame, reference: str) -> str:
    """What the heat map of `reference` shows, as text: cell, size, Δ (own arrivals) to the
    printed precision, for the rows with a kernel ratio."""
    r = reference_rows(rows, reference).dropna(subset=["delta"])
    return r[["cell", "size", "delta"]].to_csv(index=False, float_format="%.2f")


def _digest(text: str) -> str:
    import hashlib

    return "iwlab grid heat map; data sha256 " + hashlib.sha256(text.encode()).hexdigest()


def write_heat_map(rows: pd.DataFrame, reference: str, path: Path) -> None:
    from iwlab.emulate.grid_compare import heat_map

    r = reference_rows(rows, reference).dropna(subset=["delta"])
    units = int(r.drop_duplicates("cell")["units"].sum()) if "units" in r else 0
    fig = heat_map(r, "delta", f"engine − kernel, IW10/IW3 ({reference} units: {r['cell'].nunique()} cells, {units} units)")
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None, DIGEST_KEY: _digest(heat_map_data(rows, reference))})


def heat_map_stale(rows: pd.DataFrame, reference: str, path: Path) -> bool:
    """True when the PNG is missing or was drawn from other numbers than `rows` give."""
    if not path.exists():
        return True
    from PIL import Image

    with Image.open(path) as im:
        return im.text.get(DIGEST_KEY) != _digest(heat_map_data(rows, reference))


# ---- the text blocks ---------------------------------------------------------------------------
def _yes(v: bool) -> str:
    return "yes" if v else "**no**"


def _slices_md(rows: pd.DataFrame, side: str) -> str:
    """Per slice, both references side by side, for one engine variant."""
    s = slice_table(rows)
    s["value"] = [BACKGROUNDS.get(v, PATTERNS.get(v, v)) if isinstance(v, str) else v for v in s["value"]]
    s["value"] = [f"{v} seg" if sl == "size" else (f"{v} pkt" if sl == "buffer" else v)
                  for sl, v in zip(s["slice"], s["value"])]
    parts = []
    for ref in REFERENCES:
        r = s[s["reference"] == ref].reset_index(drop=True) if "reference" in s else s
        if not len(r):
            continue
        cols = {"rows": "rows", "units": "units", f"{side}_mean_abs_delta": "mean \\|Δ\\|", f"{side}_in_ci": "in CI",
                f"{side}_noise_floor": "noise floor"}
        t = r[[c for c in cols if c in r]].rename(columns={k: f"{v} ({ref})" for k, v in cols.items()})
        parts.append(t if parts else pd.concat([r[["slice", "value"]], t], axis=1))
    return md_table(pd.concat(parts, axis=1))


def _goals_md(rows: pd.DataFrame) -> str:
    parts = []
    for side, label in (("sim", "engine's own arrivals"), ("replay", "kernel's arrivals replayed")):
        if f"{side}_ratio" not in rows:
            continue
        g = pd.concat([goals(rows, side, ref) for ref in REFERENCES], ignore_index=True)
        t = pd.DataFrame({
            "kernel units": g["reference"], "arrivals": [PATTERNS.get(a, a) for a in g["arrivals"]],
            "lossy cells": g["cells"], "units": g["units"], "kernel flows": g["kernel_flows"], "rows": g["rows"],
            "mean \\|Δ\\|": g["mean_abs_delta"], "noise floor": g["noise_floor"],
            "\\|Δ\\| ≤ floor": [_yes(v) for v in g["delta_within_noise"]],
            "in CI": g["in_ci"], "≥ 85 %": [_yes(v) for v in g["in_ci_85"]],
            "order flips": g["order_flips"],
            "change vs closed loop within 0.1": [c if c else "—" for c in g["pattern_changes_within_0.1"]]})
        parts.append(f"{label.capitalize()}:\n\n" + md_table(t))
    return "\n\n".join(parts)


def _flips_md(rows: pd.DataFrame) -> str:
    lines = []
    lossy = lossy_cells(rows)
    for ref in REFERENCES:
        r = reference_rows(rows, ref)
        for side, label in (("sim", "engine"), ("replay", "replay")):
            if f"{side}_ratio" not in r:
                continue
            f = order_flips(r[r["cell"].isin(lossy)], side)
            cells = ", ".join(f"{c} {int(z)} seg (kernel {k:.2f} [{lo:.2f}, {hi:.2f}], {label} {e:.2f})"
                              for c, z, k, lo, hi, e in zip(f["cell"], f["size"], f["kern_ratio"], f["kern_lo"],
                                                            f["kern_hi"], f[f"{side}_ratio"]))
            lines.append(f"* Against {ref} units, lossy rows where the kernel's CI excludes 1 and the {label} orders "
                         "IW 3 and IW 10 the other way: " + (cells if cells else "none"))
    return "\n".join(lines)


def _units_md(rows: pd.DataFrame, meta: dict) -> str:
    """Per cell: units and short flows in each reference, and the units' load averages."""
    out = []
    for cell, g in rows.groupby("cell", sort=False):
        row = {"cell": cell, "unit loads": ", ".join(f"{v:.1f}" for v in meta.get("unit_loads", {}).get(cell, {}).values())}
        for ref in REFERENCES:
            r = reference_rows(g, ref)
            row[f"units ({ref})"] = int(r["units"].iloc[0]) if len(r) else 0
            row[f"short flows ({ref})"] = int(r["n_kernel"].sum())
        out.append(row)
    t = pd.DataFrame(out)
    return md_table(t[["cell", *[c for c in t.columns if c not in ("cell", "unit loads")], "unit loads"]])


def _worst_md(rows: pd.DataFrame, n: int = 8) -> str:
    r = reference_rows(rows, "all")
    w = r.dropna(subset=["delta"]).assign(abs_delta=lambda d: d["delta"].abs()).nlargest(n, "abs_delta")
    cols = ["cell", "size", "units", "n_kernel", "kern_ratio", "kern_lo", "kern_hi", "sim_ratio", "replay_ratio",
            "kern_rto", "sim_rto", "kern_ff", "sim_ff"]
    return md_table(w[[c for c in cols if c in w]])


def _sensitivity_md(rows: pd.DataFrame) -> str:
    """Per size and background (buffer 25, all units): kernel → engine ratio per pattern."""
    rows = reference_rows(rows, "all")
    b = rows[rows["buffer"] == rows["buffer"].min()]
    pats = [p for p in PATTERNS if p in set(b["arrivals"])]
    t = b.pivot_table(index=["size", "background"], columns="arrivals", values=["kern_ratio", "sim_ratio"],
                      aggfunc="first", sort=False)
    out = []
    for (size, bg), r in t.iterrows():
        row = {"size": int(size), "background": BACKGROUNDS.get(bg, bg)}
        for p in pats:
            k, e = r.get(("kern_ratio", p)), r.get(("sim_ratio", p))
            row[PATTERNS[p]] = "" if k is None or not np.isfinite(k) else f"{k:.2f} / {e:.2f}"
        out.append(row)
    return md_table(pd.DataFrame(out).sort_values(["size", "background"], key=lambda s: s.map(
        {v: i for i, v in enumerate(BACKGROUNDS.values())}) if s.name == "background" else s, kind="stable"))


def _sensitivity_summary_md(rows: pd.DataFrame) -> str:
    lossy = lossy_cells(rows)
    lines = []
    for ref in REFERENCES:
        r = reference_rows(rows, ref)
        c = sensitivity_changes(r[r["cell"].isin(lossy)], "sim")
        if len(c):
            lines.append(f"* Against {ref} units: {int((c['difference'].abs() <= SENSITIVITY_TOLERANCE).sum())}/{len(c)} "
                         f"within {SENSITIVITY_TOLERANCE} of the kernel's change; mean \\|engine − kernel\\| "
                         f"{c['difference'].abs().mean():.3f}, where sampling noise alone would give "
                         f"{c['noise'].mean():.3f} (from the four ratios' CIs).")
    c = sensitivity_changes(reference_rows(rows, "all").pipe(lambda r: r[r["cell"].isin(lossy)]), "sim")
    w = c.assign(a=c["difference"].abs()).nlargest(6, "a")
    w = w.assign(background=w["background"].map(lambda v: BACKGROUNDS.get(v, v)),
                 arrivals=w["arrivals"].map(lambda v: PATTERNS.get(v, v)))
    return ("Change of the ratio from the closed loop to each other pattern, lossy cells:\n\n" + "\n".join(lines)
            + "\n\nThe largest differences (all units):\n\n"
            + md_table(w[["size", "background", "arrivals", "kernel_change", "engine_change", "difference"]], 2))


def _header(meta: dict) -> str:
    cmd = re.sub(r" --out \S+", "", meta["command"])
    cpu = meta.get("simulator_cpu_seconds")
    quiet = (f" ({meta['quiet_units']} of them run at a load average ≤ {meta['max_unit_load']:g}: the quiet reference)"
             if "quiet_units" in meta else "")
    return (f"Stored in `data/kernel/grid-compare/` (`--out` to that directory) by\n\n```sh\n{cmd}\n```\n\n"
            f"{meta['cells']} cells, {meta['kernel_units']} kernel units of 300 s{quiet}. The simulator side took "
            f"{meta['simulator_wall_seconds']:.0f} s of wall time with {meta['workers']} worker processes"
            + (f" and {cpu:.0f} CPU seconds in all (≈ {cpu / 2:.0f} s on two idle cores)" if cpu else "") + ".")


def blocks(rows: pd.DataFrame, meta: dict) -> dict[str, str]:
    summary = "\n\n".join([
        _header(meta), "Per slice (Δ = engine − kernel, IW10/IW3 of mean completion; rows with a kernel ratio in "
        "each reference), the engine's own arrivals:", _slices_md(rows, "sim"),
        "The goals, over the lossy cells, against each reference:", _goals_md(rows), _flips_md(rows)])
    full = "\n\n".join([
        summary, "The same slices with the kernel's arrivals replayed:", _slices_md(rows, "replay"),
        "Δ per cell and size (own arrivals), against all units and against the quiet units:",
        f"![Δ against all kernel units](kernel-grid-delta-all.png)\n![Δ against the quiet kernel units]"
        f"(kernel-grid-delta-quiet.png)",
        "The rows furthest from the kernel (own arrivals, all units):", _worst_md(rows),
        _sensitivity_summary_md(rows),
        "IW10/IW3 per size, background and arrival pattern (buffer 25 packets, all units), kernel / engine:",
        _sensitivity_md(rows),
        "The testbed's load and the first flight (from the stored kernel units alone):",
        _load_md(unit_loads(meta["units"]), _engine_ff()),
        "Units and short flows per cell in each reference:", _units_md(rows, meta)])
    return {"grid-summary": summary, "grid-full": full, "grid-reversed": _reversed_md(rows, meta)}


# ---- the documents -----------------------------------------------------------------------------
DOCUMENTS = {"grid-summary": ROOT / "python" / "iwlab" / "emulate" / "README.md", "grid-full": ROOT / "docs" / "kernel-grid.md",
             "grid-reversed": ROOT / "docs" / "kernel-grid.md"}


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- grid-figures:{name} -->\n)(.*?)(<!-- /grid-figures:{name} -->)", re.S)


def render(text: str, name: str, block: str) -> str:
    p = _pattern(name)
    if not p.search(text):
        raise ValueError(f"no <!-- grid-figures:{name} --> … <!-- /grid-figures:{name} --> block")
    return p.sub(lambda m: m.group(1) + block.rstrip("\n") + "\n" + m.group(3), text, count=1)


def stale(stored: Path = STORED) -> list[str]:
    """Documents whose generated block, and heat maps whose numbers, differ from what the stored data gives."""
    rows, meta = load(stored)
    b = blocks(rows, meta)
    bad = [str(path.relative_to(ROOT)) for name, path in DOCUMENTS.items()
           if render(path.read_text(), name, b[name]) != path.read_text()]
    return bad + [str(p.relative_to(ROOT)) for ref, p in HEAT_MAPS.items() if heat_map_stale(rows, ref, p)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m iwlab.emulate.grid_figures", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a document's block differs from the stored data")
    ap.add_argument("--engine-first-flight", action="store_true",
                    help=f"first simulate the cells of the load table and store {ENGINE_FF} (seeds 1..4)")
    ap.add_argument("--reversed-rows", action="store_true",
                    help=f"first simulate the reversed rows' cells and store their short flows in {REVERSED_ENGINE} "
                         "(own arrivals, seeds 1..4, and the replay of every kernel unit)")
    a = ap.parse_args(argv)
    if a.engine_first_flight:
        rows, meta = load()
        u = unit_loads(meta["units"])
        lvl = u.assign(low=u["load"] <= LOW_LOAD, high=u["load"] > HIGH_LOAD).groupby("cell")[["low", "high"]].any()
        cells = [c for c in lvl.index if lvl.loc[c, "low"] and lvl.loc[c, "high"]]
        engine_first_flight(cells, 4).to_csv(STORED / ENGINE_FF, index=False)
        print(f"wrote {STORED / ENGINE_FF}")
    if a.reversed_rows:
        rows, _ = load()
        engine_records(reversed_rows(rows), 4).to_csv(STORED / REVERSED_ENGINE, index=False)
        print(f"wrote {STORED / REVERSED_ENGINE}")
    if a.check:
        bad = stale()
        for p in bad:
            print(f"{p}: the grid figures differ from data/kernel/grid-compare/ (python -m iwlab.emulate.grid_figures)")
        return 1 if bad else 0
    rows, meta = load()
    for name, block in blocks(rows, meta).items():
        path = DOCUMENTS[name]
        path.write_text(render(path.read_text(), name, block))
        print(f"wrote {path.relative_to(ROOT)}")
    for ref, path in HEAT_MAPS.items():
        write_heat_map(rows, ref, path)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
