"""The report of one run directory (`iwlab run --out DIR`, or one run of a sweep)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from iwlab import stats
from iwlab.report import figures, html, parts

TABLES = ("flows", "pages", "links", "queues")


def _iw_label(v: float) -> str:
    return f"IW {v:g}" if np.isfinite(v) else "IW ?"


def build(path: Path) -> tuple[str, str, list[str]]:
    missing = [f"{t}.parquet" for t in TABLES if not (path / f"{t}.parquet").exists()]
    if missing or not (path / "summary.json").exists():
        raise FileNotFoundError(f"{path}: not a run directory (missing {', '.join(missing or ['summary.json'])})")
    flows, pages, links, queues = (pd.read_parquet(path / f"{t}.parquet", dtype_backend="pyarrow") for t in TABLES)
    summary = json.loads((path / "summary.json").read_text())
    metrics = stats.run_metrics(flows, pages, links, summary)
    name = summary.get("scenario", path.name)

    done = parts.completed_flows(flows)
    panels = []
    if len(done):
        done = done.assign(iw=[_iw_label(v) for v in done["iw_segments"].to_numpy(dtype=float, na_value=np.nan)])
        order = sorted(done["iw"].unique().tolist(), key=lambda s: float(s[3:]) if s[3:] != "?" else np.inf)
        for kind in sorted(done["app_kind"].unique().tolist()):
            panels.append((f"{kind} flows", parts.cdf_groups(done[done["app_kind"] == kind], "iw", order)))
    page_delay = pages.loc[pages["completed"].to_numpy(dtype=bool, na_value=False)
                           & ~pages["in_warmup"].to_numpy(dtype=bool, na_value=False), "delay"] if len(pages) else []
    if len(page_delay):
        panels.append(("web pages", {"page delay": np.asarray(page_delay, dtype=float)}))
    cdf = (html.figure(figures.cdf_panels(panels, "completion time (s)", ncols=2),
                       "CDF of flow completion times per initial window, and of web page delays.",
                       "completion time CDFs") if panels else html.note("No completed flows or pages."))

    bottleneck = links[(links["from"].str.startswith("router")) & (links["to"].str.startswith("router"))]
    blocks = [
        html.section("Figures of merit", html.table(pd.DataFrame(
            {"metric": list(metrics), "value": [parts.scaled(m, v) for m, v in metrics.items()],
             "meaning": [parts.heading(m) if m in parts.METRICS else "" for m in metrics]}))),
        html.section("Completion times", cdf),
        html.section("Queue length over time", parts.queue_block({name: (queues, links)},
                                                                 "Bottleneck queue length (packets).")),
        html.section("Bottleneck", html.table(bottleneck)),
        html.section("All links", html.details(f"{len(links)} links", html.table(links))),
        html.section("Summary", html.kv_table(summary)),
        html.section("Scenario", html.pre((path / "scenario.toml").read_text() if (path / "scenario.toml").exists()
                                          else "(scenario.toml not found)")),
        html.section("Versions", parts.versions({"iwlab core": summary.get("core_version", "?"),
                                                     "iwlab engine": summary.get("engine_id", "?")})),
    ]
    subtitle = (f"Run of {name}, seed {summary.get('seed', '?')}, {summary.get('duration', '?')} s simulated: "
                f"{metrics['flows']} flows, {metrics['pages']} pages")
    return f"iwlab run report — {name}", subtitle, blocks
