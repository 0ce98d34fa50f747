"""The testbed's tables (per seed first: a seed holds arrivals and sizes fixed across the IWs, so
differences and ratios are taken within a seed, then the mean and its interval across seeds)."""

from __future__ import annotations

import pandas as pd

from iwlab.studies.base import Cell, Table, cell, metric_name
from iwlab.studies.rfc6928.testbed import BULK_LOADS, FIVE_LOAD, LOADS, SPURIOUS_LOAD, SPURIOUS_QUEUE, Plan


def _by_seed(df: pd.DataFrame, col: str, population: str, iw: int | None = None) -> pd.Series:
    d = df[df["population"] == population]
    if iw is not None:
        d = d[d["iw"] == iw]
    if col in ("latency",) and population == "mixed":  # both mirrored half-and-half runs, flow-weighted
        w = d.assign(_s=d["latency"] * d["completed"]).groupby("seed")[["_s", "completed"]].sum()
        return w["_s"] / w["completed"].where(w["completed"] > 0)
    return d.groupby("seed")[col].mean()


def load_table(runs: pd.DataFrame, p: Plan) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for path in p.load_rates:
        for load in p.loads:
            d = runs[(runs["path"] == path) & (runs["load"] == load)]
            if d.empty:
                continue
            d3, d10 = _by_seed(d, "drop_pct", "IW3"), _by_seed(d, "drop_pct", "IW10")
            l3, l10 = _by_seed(d, "latency", "IW3", 3), _by_seed(d, "latency", "IW10", 10)
            m3, m10 = _by_seed(d, "latency", "mixed", 3), _by_seed(d, "latency", "mixed", 10)
            cells[row(path, load)] = {
                "IW3 drops %": cell(d3), "IW10 drops %": cell(d10), "drops IW10 − IW3 (pp)": cell(d10 - d3),
                "IW3 latency (s)": cell(l3), "IW10 latency (s)": cell(l10),
                "IW3 flows mixed vs alone %": cell((m3 / l3 - 1) * 100),
                "IW10 flows mixed vs alone %": cell((m10 / l10 - 1) * 100),
            }
    return Table.from_cells("testbed_load", "Testbed: drop rate and short-flow latency against load, IW3, IW10 and "
                            "half-and-half", cells, fmt="{:.2f}", index_name="bottleneck, load",
                            note="Drop rate of the bottleneck (servers → clients) after the warm-up; latency = mean "
                                 "completion time (SYN → last response byte) of the completed short flows; mixed vs "
                                 "alone = the IW3 (IW10) flows of the two half-and-half runs against the all-IW3 "
                                 "(all-IW10) run of the same seed and load.")


def bulk_table(runs: pd.DataFrame, p: Plan) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for path in p.load_rates:
        for load in BULK_LOADS:
            d = runs[(runs["path"] == path) & (runs["load"] == load)]
            if d.empty:
                continue
            g3, g10 = _by_seed(d, "bulk_bps", "IW3") / 1e3, _by_seed(d, "bulk_bps", "IW10") / 1e3
            cells[row(path, load)] = {"bulk beside IW3 (kb/s)": cell(g3), "bulk beside IW10 (kb/s)": cell(g10),
                                      "bulk goodput change %": cell((g10 / g3 - 1) * 100)}
    return Table.from_cells("testbed_bulk", "Testbed: a long-lived bulk flow's goodput beside IW3 or IW10 short flows",
                            cells, fmt="{:.2f}", index_name="bottleneck, load of the short flows",
                            note="Goodput = bytes the bulk connection delivered over the whole run ÷ its duration.")


def five_table(runs: pd.DataFrame, p: Plan) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for path in p.five:
        d = runs[runs["path"] == path]
        if d.empty:
            continue
        l3, l10 = _by_seed(d, "burst_latency", "IW3"), _by_seed(d, "burst_latency", "IW10")
        d3, d10 = _by_seed(d, "drop_pct", "IW3"), _by_seed(d, "drop_pct", "IW10")
        cells[path] = {"IW3 total latency (s)": cell(l3), "IW10 total latency (s)": cell(l10),
                       "latency improvement %": cell((1 - l10 / l3) * 100), "IW3 drops %": cell(d3),
                       "IW10 drops %": cell(d10), "drops IW10 − IW3 (pp)": cell(d10 - d3)}
    return Table.from_cells("five_connections", "§6: five connections opened at once over a slow link with a small "
                            "buffer", cells, fmt="{:.2f}", index_name="bottleneck, queue",
                            note="One client opens 5 connections at once (responses drawn from 2, 4, 8, 16, 32 "
                                 f"segments), bursts {FIVE_LOAD * 100:g} % of the link on average, exponential gaps; "
                                 "total latency = burst start → last byte of its last response, bursts whose five "
                                 "responses all completed; improvement = 1 − IW10/IW3 per seed.")


def spurious_table(runs: pd.DataFrame, p: Plan) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for path in p.spurious:
        d = runs[runs["path"] == path]
        if d.empty:
            continue
        # An RTO is known spurious only if nothing was dropped: a run with a drop is left out.
        clean = d[d["drops_any"] == 0]
        r3, r10 = _by_seed(clean, "rto_pct", "IW3"), _by_seed(clean, "rto_pct", "IW10")
        dropped = d[d["drops_any"] > 0]["seed"].nunique()
        cells[path] = {"IW3 responses with an RTO %": cell(r3), "IW10 responses with an RTO %": cell(r10),
                       "RTO share IW10 − IW3 (pp)": cell(r10 - r3),
                       "seeds with a drop": Cell(float(dropped), float(dropped), float(dropped), 0)}
    return Table.from_cells("spurious_rtos", "§9: responses with a (spurious) RTO on low-bandwidth paths that drop "
                            "nothing", cells, fmt="{:.2f}", index_name="path",
                            note=f"RTT 300 ms, {SPURIOUS_QUEUE}-packet queues, Poisson responses at "
                                 f"{SPURIOUS_LOAD * 100:g} % of the path; a seed any of whose runs dropped a packet is "
                                 "left out (an RTO there could be genuine).")


def row(path: str, load: str) -> str:
    return f"{path} {load} ({LOADS[load] * 100:g} %)"


def tables(res: dict[str, pd.DataFrame], p: Plan) -> list[Table]:
    tabs = [load_table(res["load"], p), bulk_table(res["bulk"], p), five_table(res["five"], p),
            spurious_table(res["spurious"], p)]
    for t in tabs:
        t.row_keys = lambda r: {"condition": str(r)}
        t.col_keys = lambda c: {"metric": metric_name(str(c))}
    return tabs
