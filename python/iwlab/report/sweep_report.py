"""The report of a sweep directory: metrics vs IW with bootstrap CIs across seeds, CDFs, queues."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab import stats
from iwlab.report import figures, html, parts
from iwlab.sweep import read_manifest, sweep_records

_MAX_COMBOS = 4  # CDF rows: combinations of the other grid keys shown


class _Sweep:
    """A sweep's runs with grid values as labels, its x key (the IW one) and the other keys."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.manifest = read_manifest(path)
        runs = sweep_records(path, "runs")
        if runs.empty:
            raise ValueError(f"{path}: the sweep has no finished runs yet")
        grid = {k: [parts.label(v) for v in vs] for k, vs in self.manifest["grid"].items()}
        if not grid:
            grid = {"scenario": [self.manifest["scenario"]]}
            runs["scenario"] = self.manifest["scenario"]
        for k in grid:
            runs[k] = runs[k].map(parts.label).astype(object)
        self.runs, self.grid, self.keys = runs, grid, list(grid)
        self.x = next((k for k in self.keys if "iw" in k.lower()), self.keys[0])
        self.xs = grid[self.x]
        self.others = [k for k in self.keys if k != self.x]
        self.combos = list(itertools.product(*(grid[k] for k in self.others)))

    def combo_label(self, combo: tuple[str, ...]) -> str:
        """The values of the other keys (the legend's title names the keys), shortened."""
        return parts.short(", ".join(combo), 40)

    def combo_title(self, combo: tuple[str, ...]) -> str:
        return parts.short(", ".join(f"{k}={v}" for k, v in zip(self.others, combo)), 45)

    @property
    def legend_title(self) -> str:
        return parts.short(", ".join(self.others), 40)

    def in_combo(self, df: pd.DataFrame, combo: tuple[str, ...]) -> np.ndarray:
        mask = np.ones(len(df), dtype=bool)
        for k, v in zip(self.others, combo):
            mask &= (df[k] == v).to_numpy(dtype=bool)
        return mask

    def series(self, summ: pd.DataFrame, metric: str, prefix: str = "") -> dict[str, tuple]:
        """{combo label: (values, ci_low, ci_high) at each x} of one metric of a summary."""
        s = summ[summ["metric"] == metric]
        out = {}
        for combo in self.combos:
            sel = s[self.in_combo(s, combo)].set_index(self.x).reindex(self.xs)
            name = " ".join(p for p in (prefix, self.combo_label(combo)) if p)
            out[name] = tuple(parts.scaled(metric, sel[c].to_numpy(dtype=float, na_value=np.nan))
                              for c in ("value", "ci_low", "ci_high"))
        return out


def _has(runs: pd.DataFrame, metric: str) -> bool:
    return metric in runs.columns and bool(np.isfinite(runs[metric].to_numpy(dtype=float, na_value=np.nan)).any())


def _summary_table(sw: _Sweep, summ: pd.DataFrame, metrics: list[str]) -> str:
    """Rows: grid points; columns: metrics; cells: value [ci_low, ci_high] in the shown unit."""
    summ = summ[summ["metric"].isin(metrics)]
    cells = []
    for m, v, lo, hi, n in zip(summ["metric"], summ["value"], summ["ci_low"], summ["ci_high"], summ["n"]):
        v, lo, hi = (parts.scaled(m, float(a)) for a in (v, lo, hi))
        cells.append(f"{html.fmt(v)} [{lo:.3g}, {hi:.3g}]" if n > 1 else html.fmt(v))
    wide = summ.assign(cell=cells).pivot_table(index=sw.keys, columns="metric", values="cell", aggfunc="first",
                                               sort=False)
    wide = wide.reindex(columns=[m for m in metrics if m in wide.columns]).reset_index()
    wide.columns = [parts.heading(c) for c in wide.columns]
    return html.table(wide)


def _cdf_block(sw: _Sweep) -> str:
    flows = sweep_records(sw.path, "flows", columns=["app_kind", "completion", "completed", "in_warmup"])
    flows = parts.completed_flows(flows)
    if flows.empty:
        return html.note("Flow completion CDF: no completed flows.")
    for k in sw.keys:
        flows[k] = flows[k].map(parts.label).astype(object) if k in flows.columns else sw.grid[k][0]
    kinds = sorted(flows["app_kind"].unique().tolist())
    panels = []
    for combo in sw.combos[:_MAX_COMBOS]:
        sel = flows[sw.in_combo(flows, combo)]
        for kind in kinds:
            title = "\n".join(p for p in (f"{kind} flows", sw.combo_title(combo)) if p)
            panels.append((title, parts.cdf_groups(sel[sel["app_kind"] == kind], sw.x, sw.xs)))
    more = (f" Only the first {_MAX_COMBOS} of {len(sw.combos)} combinations of {', '.join(sw.others)} are shown."
            if len(sw.combos) > _MAX_COMBOS else "")
    png = figures.cdf_panels(panels, "flow completion time (s)", ncols=max(1, min(len(kinds), 3)))
    return html.figure(png, f"CDF of the completion time of completed flows per {sw.x}, all seeds pooled."
                       + more, "flow completion time CDFs")


def _queue_block(sw: _Sweep) -> str:
    runs = sw.runs[sw.in_combo(sw.runs, sw.combos[0])]
    samples = {}
    for xv in sw.xs:
        sel = runs[runs[sw.x] == xv].sort_values("seed")
        if len(sel):
            d = sw.path / "runs" / str(sel["run_id"].iloc[0])
            samples[xv] = (pd.read_parquet(d / "queues.parquet"), pd.read_parquet(d / "links.parquet"))
    where = sw.combo_title(sw.combos[0])
    return parts.queue_block(samples, f"Bottleneck queue length per {sw.x} (lowest seed"
                             + (f", {where}" if where else "") + ").")


def build(path: Path) -> tuple[str, str, list[str]]:
    sw = _Sweep(path)
    runs = sw.runs
    pages = _has(runs, "median_page_delay")
    delay, power = ("median_page_delay", "web_power") if pages else ("fct_median", "power")
    other_power = "power" if pages else "web_power"
    has_baseline = bool((runs[sw.x] == sw.xs[0]).any())  # (an unfinished sweep may lack it)
    runs["power_norm"] = (stats.normalize(runs, power, by=sw.x, baseline=sw.xs[0], within=[*sw.others, "seed"])
                          if has_baseline else np.nan)
    metrics = [m for m in parts.METRICS if _has(runs, m)]
    summ = stats.summarize(runs, by=sw.keys, metrics=metrics)

    d_title, d_unit, _ = parts.METRICS[delay]
    p_title, p_unit, _ = parts.METRICS[power]
    vs = figures.versus([(d_title, d_unit, sw.series(summ, delay)),
                         (p_title, p_unit, sw.series(summ, power)),
                         (f"normalised by {sw.x}={sw.xs[0]}", "×", sw.series(summ, "power_norm"))], sw.xs, sw.x,
                        legend_title=sw.legend_title)
    link = figures.versus([(parts.METRICS[m][0], parts.METRICS[m][1], sw.series(summ, m))
                           for m in ("util_reverse", "util_forward", "drop_rate_reverse", "drop_rate_forward")],
                          sw.xs, sw.x, ncols=2, legend_title=sw.legend_title)
    ci = "mean across seeds, error bars: 95 % bootstrap CI"
    man = sw.manifest
    done, planned = len(runs), len({r["run_id"] for r in man["runs"]})
    vs_caption = (f"{d_title.capitalize()}, {p_title} (goodput / {d_title}) and its value relative to "
                  f"{sw.x}={sw.xs[0]} ({ci}).")
    link_caption = ("Utilisation and drop rate of both bottleneck directions, R→L (right to left: servers to "
                    f"clients in the presets) and L→R ({ci}).")
    headline = [x for x in parts.HEADLINE if x in metrics and x != other_power]
    grid_text = "; ".join(f"{k} = {', '.join(v)}" for k, v in sw.grid.items())
    blocks = [
        html.section("Delay and network power", html.figure(vs, vs_caption, "delay and network power vs IW")),
        html.section("Bottleneck utilisation and drops",
                     html.figure(link, link_caption, "utilisation and drop rate vs IW")),
        html.section("Flow completion times", _cdf_block(sw)),
        html.section("Queue length over time", _queue_block(sw)),
        html.section("Summary across seeds", html.para("Each cell: mean across seeds [95 % bootstrap CI]."),
                     _summary_table(sw, summ, headline),
                     html.details("all metrics", _summary_table(sw, summ, metrics))),
        html.section("Runs", html.details(f"{done} runs", html.table(runs[_run_columns(sw, runs)]))),
        html.section("Scenario", html.kv_table({"grid": grid_text, "seeds": ", ".join(map(str, man["seeds"])),
                                                "base scenario hash": man["scenario_hash"]}),
                     html.pre(_read(path / "scenario.toml"))),
        html.section("Versions", parts.versions({"iwlab": man["iwlab_version"], "iwlab core": man["core_version"],
                                                     "iwlab engine": man.get("engine_id", "?")})),
    ]
    if done < planned:
        blocks.insert(0, html.note(f"Incomplete sweep: {done} of {planned} runs are on disk."))
    subtitle = (f"Sweep of {man['scenario']}: {done} runs ({len(sw.xs)} × {len(sw.combos)} points × "
                f"{len(man['seeds'])} seeds)")
    return f"iwlab sweep report — {man['scenario']}", subtitle, blocks


def _run_columns(sw: _Sweep, runs: pd.DataFrame) -> list[str]:
    cols: list[Any] = [*sw.keys, "seed", "run_id"]
    return cols + [c for c in parts.METRICS if c in runs.columns and c not in cols]


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else "(scenario.toml not found)"
