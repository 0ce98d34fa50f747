"""The kernel grid's figures in the docs, written from the stored comparison only
(`data/kernel/grid-compare/`: the tables `iwlab compare --grid … --out` wrote, and its
`compare.json` with the command), so no figure in the text can go stale:

    python -m iwlab.emulate.grid_figures            # rewrite the marked blocks
    python -m iwlab.emulate.grid_figures --check    # exit 1 if a block differs from the stored data

A block sits between `<!-- grid-figures:NAME -->` and `<!-- /grid-figures:NAME -->`;
`tests/test_grid_figures.py` runs the check.

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

from iwlab.emulate.grid_compare import Z95, md_table, noise_floor, slice_table

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
    """Cells where some kernel short flow had an RTO or lost part of its first flight."""
    loss = (rows["kern_rto"].fillna(0) > 0) | (rows["kern_ff"].fillna(0) > 0)
    return set(rows.loc[loss, "cell"])


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


def goals(rows: pd.DataFrame, side: str) -> pd.DataFrame:
    """One row per arrival pattern (and all), over the lossy cells: the four goals and whether each holds."""
    delta = "delta" if side == "sim" else "replay_delta"
    in_ci = "in_ci" if side == "sim" else "replay_in_ci"
    lossy = rows[rows["cell"].isin(lossy_cells(rows))].dropna(subset=["kern_ratio", delta])
    changes = sensitivity_changes(rows[rows["cell"].isin(lossy_cells(rows))], side)
    out = []
    for pattern, g in [("all", lossy), *lossy.groupby("arrivals", sort=False)]:
        mad, floor = float(g[delta].abs().mean()), noise_floor(g, side)
        n_in = int(g[in_ci].astype(bool).sum())
        flips = order_flips(g, side)
        ch = changes if pattern == "all" else changes[changes["arrivals"] == pattern]
        ok_ch = int((ch["difference"].abs() <= SENSITIVITY_TOLERANCE).sum())
        out.append({"arrivals": pattern, "cells": g["cell"].nunique(), "rows": len(g),
                    "mean_abs_delta": mad, "noise_floor": floor, "delta_within_noise": mad <= floor,
                    "in_ci": f"{n_in}/{len(g)}", "in_ci_85": n_in >= IN_CI_SHARE * len(g),
                    "order_flips": len(flips), "no_flip": len(flips) == 0,
                    "pattern_changes_within_0.1": "" if pattern == BASE_PATTERN else f"{ok_ch}/{len(ch)}",
                    "sensitivity_holds": True if pattern == BASE_PATTERN else ok_ch == len(ch)})
    return pd.DataFrame(out)


# ---- the testbed's load ------------------------------------------------------------------------
LOW_LOAD, HIGH_LOAD = 5.0, 15.0


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
    both = u.assign(level=np.where(u["load"] < LOW_LOAD, "low", np.where(u["load"] > HIGH_LOAD, "high", "")))
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


def low_load_rows(rows: pd.DataFrame, units: dict[str, list[int]],
                  grid_path: Path = ROOT / "data" / "kernel" / "grid.toml") -> pd.DataFrame:
    """The lossy rows again, against those of the comparison's kernel units (`units`) run at a load
    average ≤ LOW_LOAD only (cells that have one): the kernel's ratio and CI from those units, the
    engine's as stored."""
    from iwlab.emulate.grid import Grid, per_size, unit_dir

    grid = Grid.load(grid_path)
    out = []
    for name in sorted(lossy_cells(rows)):
        c = grid.cell(name)
        quiet = [s for s in units.get(name, []) if json.loads(
            (unit_dir(grid, c, s) / "run.json").read_text())["load_average"]["mean"] <= LOW_LOAD]
        if not quiet:
            continue
        f = pd.concat([pd.read_parquet(unit_dir(grid, c, s) / "flows.parquet") for s in quiet], ignore_index=True)
        t = per_size(f[~f["in_warmup"].astype(bool)], grid.mss(), grid.sizes).set_index("size")
        for _, r in rows[rows["cell"] == name].iterrows():
            k = t.loc[int(r["size"])]
            out.append({**r.to_dict(), "units": len(quiet), "kern_ratio": k["ratio"], "kern_lo": k["ratio_lo"],
                        "kern_hi": k["ratio_hi"], "delta": r["sim_ratio"] - k["ratio"],
                        "in_ci": bool(k["ratio_lo"] <= r["sim_ratio"] <= k["ratio_hi"])})
    return pd.DataFrame(out).dropna(subset=["kern_ratio", "delta"])


def _engine_ff(stored: Path = STORED) -> pd.DataFrame | None:
    return pd.read_csv(stored / ENGINE_FF) if (stored / ENGINE_FF).exists() else None


def _low_load_md(rows: pd.DataFrame, units: dict[str, list[int]]) -> str:
    q = low_load_rows(rows, units)
    same = rows.set_index(["cell", "size"]).loc[list(zip(q["cell"], q["size"]))].dropna(subset=["delta"]).reset_index()
    q = q.set_index(["cell", "size"]).loc[list(zip(same["cell"], same["size"]))].reset_index()
    t = pd.DataFrame([{"kernel units": label, "cells": d["cell"].nunique(), "rows": len(d),
                       "mean \\|Δ\\| (engine)": float(d["delta"].abs().mean()), "noise floor": noise_floor(d),
                       "in CI": f"{int(d['in_ci'].astype(bool).sum())}/{len(d)}"}
                      for label, d in (("all", same), (f"load ≤ {LOW_LOAD:g} only", q))])
    return ("The same lossy rows (cells with at least one unit run at a load average ≤ "
            f"{LOW_LOAD:g}) against every stored unit and against the quiet units alone:\n\n" + md_table(t))


# ---- the text blocks ---------------------------------------------------------------------------
def _yes(v: bool) -> str:
    return "yes" if v else "**no**"


def _slices_md(rows: pd.DataFrame) -> str:
    s = slice_table(rows)
    s["value"] = [BACKGROUNDS.get(v, PATTERNS.get(v, v)) if isinstance(v, str) else v for v in s["value"]]
    s["value"] = [f"{v} seg" if sl == "size" else (f"{v} pkt" if sl == "buffer" else v)
                  for sl, v in zip(s["slice"], s["value"])]
    cols = {"slice": "slice", "value": "value", "rows": "rows", "sim_mean_abs_delta": "mean \\|Δ\\| (engine)",
            "sim_in_ci": "in CI", "sim_noise_floor": "noise floor", "replay_mean_abs_delta": "mean \\|Δ\\| (replay)",
            "replay_in_ci": "in CI (replay)", "replay_noise_floor": "noise floor (replay)"}
    return md_table(s[[c for c in cols if c in s]].rename(columns=cols))


def _goals_md(rows: pd.DataFrame) -> str:
    parts = []
    for side, label in (("sim", "engine's own arrivals"), ("replay", "kernel's arrivals replayed")):
        if f"{side}_ratio" not in rows:
            continue
        g = goals(rows, side)
        t = pd.DataFrame({
            "arrivals": [PATTERNS.get(a, a) for a in g["arrivals"]], "lossy cells": g["cells"], "rows": g["rows"],
            "mean \\|Δ\\|": g["mean_abs_delta"], "noise floor": g["noise_floor"],
            "\\|Δ\\| ≤ floor": [_yes(v) for v in g["delta_within_noise"]],
            "in CI": g["in_ci"], "≥ 85 %": [_yes(v) for v in g["in_ci_85"]],
            "order flips": g["order_flips"],
            "change vs closed loop within 0.1": [c if c else "—" for c in g["pattern_changes_within_0.1"]]})
        parts.append(f"{label.capitalize()}:\n\n" + md_table(t))
    return "\n\n".join(parts)


def _flips_md(rows: pd.DataFrame) -> str:
    lines = []
    for side, label in (("sim", "engine"), ("replay", "replay")):
        if f"{side}_ratio" not in rows:
            continue
        f = order_flips(rows[rows["cell"].isin(lossy_cells(rows))], side)
        cells = ", ".join(f"{c} {int(z)} seg (kernel {k:.2f} [{lo:.2f}, {hi:.2f}], {label} {e:.2f})"
                          for c, z, k, lo, hi, e in zip(f["cell"], f["size"], f["kern_ratio"], f["kern_lo"],
                                                        f["kern_hi"], f[f"{side}_ratio"]))
        lines.append(f"* Lossy rows where the kernel's CI excludes 1 and the {label} orders IW 3 and IW 10 the other way: "
                     + (cells if cells else "none"))
    return "\n".join(lines)


def _worst_md(rows: pd.DataFrame, n: int = 8) -> str:
    w = rows.dropna(subset=["delta"]).assign(abs_delta=lambda d: d["delta"].abs()).nlargest(n, "abs_delta")
    cols = ["cell", "size", "n_kernel", "kern_ratio", "kern_lo", "kern_hi", "sim_ratio", "replay_ratio",
            "kern_rto", "sim_rto", "kern_ff", "sim_ff"]
    return md_table(w[[c for c in cols if c in w]])


def _sensitivity_md(rows: pd.DataFrame) -> str:
    """Per size and background (buffer 25): kernel → engine ratio per pattern."""
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
    c = sensitivity_changes(rows[rows["cell"].isin(lossy_cells(rows))], "sim")
    w = c.assign(a=c["difference"].abs()).nlargest(6, "a")
    w = w.assign(background=w["background"].map(lambda v: BACKGROUNDS.get(v, v)),
                 arrivals=w["arrivals"].map(lambda v: PATTERNS.get(v, v)))
    return (f"Change of the ratio from the closed loop to each other pattern, lossy cells: "
            f"{int((c['difference'].abs() <= SENSITIVITY_TOLERANCE).sum())}/{len(c)} within "
            f"{SENSITIVITY_TOLERANCE} of the kernel's change; mean \\|engine − kernel\\| "
            f"{c['difference'].abs().mean():.3f}, where sampling noise alone would give {c['noise'].mean():.3f} "
            f"(from the four ratios' CIs). The largest differences:\n\n"
            + md_table(w[["size", "background", "arrivals", "kernel_change", "engine_change", "difference"]], 2))


def _header(meta: dict) -> str:
    cmd = re.sub(r" --out \S+", "", meta["command"])
    cpu = meta.get("simulator_cpu_seconds")
    return (f"Stored in `data/kernel/grid-compare/` (`--out` to that directory) by\n\n```sh\n{cmd}\n```\n\n"
            f"{meta['cells']} cells, {meta['kernel_units']} kernel units of 300 s. The simulator side took "
            f"{meta['simulator_wall_seconds']:.0f} s of wall time with {meta['workers']} worker processes"
            + (f" and {cpu:.0f} CPU seconds in all (≈ {cpu / 2:.0f} s on two idle cores)" if cpu else "") + ".")


def blocks(rows: pd.DataFrame, meta: dict) -> dict[str, str]:
    summary = "\n\n".join([_header(meta), "Per slice (every row; Δ = engine − kernel, IW10/IW3 of mean completion):",
                           _slices_md(rows), "The goals, over the lossy cells:", _goals_md(rows), _flips_md(rows)])
    full = "\n\n".join([summary, "The rows furthest from the kernel (own arrivals):", _worst_md(rows),
                        _sensitivity_summary_md(rows),
                        "IW10/IW3 per size, background and arrival pattern (buffer 25 packets), kernel / engine:",
                        _sensitivity_md(rows),
                        "The testbed's load and the first flight (from the stored kernel units alone):",
                        _load_md(unit_loads(meta["units"]), _engine_ff()), _low_load_md(rows, meta["units"])])
    return {"grid-summary": summary, "grid-full": full}


# ---- the documents -----------------------------------------------------------------------------
DOCUMENTS = {"grid-summary": ROOT / "python" / "iwlab" / "emulate" / "README.md", "grid-full": ROOT / "docs" / "kernel-grid.md"}


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- grid-figures:{name} -->\n)(.*?)(<!-- /grid-figures:{name} -->)", re.S)


def render(text: str, name: str, block: str) -> str:
    p = _pattern(name)
    if not p.search(text):
        raise ValueError(f"no <!-- grid-figures:{name} --> … <!-- /grid-figures:{name} --> block")
    return p.sub(lambda m: m.group(1) + block.rstrip("\n") + "\n" + m.group(3), text, count=1)


def stale(stored: Path = STORED) -> list[str]:
    """Documents whose generated block differs from what the stored data gives."""
    rows, meta = load(stored)
    b = blocks(rows, meta)
    return [str(path.relative_to(ROOT)) for name, path in DOCUMENTS.items()
            if render(path.read_text(), name, b[name]) != path.read_text()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m iwlab.emulate.grid_figures", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a document's block differs from the stored data")
    ap.add_argument("--engine-first-flight", action="store_true",
                    help=f"first simulate the cells of the load table and store {ENGINE_FF} (seeds 1..4)")
    a = ap.parse_args(argv)
    if a.engine_first_flight:
        rows, meta = load()
        u = unit_loads(meta["units"])
        lvl = u.assign(low=u["load"] < LOW_LOAD, high=u["load"] > HIGH_LOAD).groupby("cell")[["low", "high"]].any()
        cells = [c for c in lvl.index if lvl.loc[c, "low"] and lvl.loc[c, "high"]]
        engine_first_flight(cells, 4).to_csv(STORED / ENGINE_FF, index=False)
        print(f"wrote {STORED / ENGINE_FF}")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
