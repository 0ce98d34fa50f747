"""Python API: load scenarios, run them, get pandas DataFrames (Arrow-backed).

>>> import iwlab
>>> sc = iwlab.load("rfc2415", sets=["duration=20s"])
>>> r = iwlab.run(sc, seed=2)
>>> r.seed, len(r.flows) == r.summary["flows"], r.summary["pages_completed"] <= r.summary["pages"]
(2, True, True)
>>> str(r.pages["delay"].dtype)
'double[pyarrow]'
>>> 0 < r.summary["bottleneck_reverse_utilisation"] <= 1
True
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from iwlab import _core
from iwlab.scenario import Scenario, ScenarioError, load

__all__ = ["Result", "run", "load", "TABLES"]

#: The record tables of a run, in file order.
TABLES = ("flows", "pages", "links", "queues")

# Column types of the core → Arrow. Unsigned counts become int64 (they fit, and differences of
# them stay signed).
_ARROW = {"u64": pa.int64(), "i64": pa.int64(), "f64": pa.float64(), "opt_f64": pa.float64(),
          "bool": pa.bool_(), "str": pa.string()}


def _frame(columns: dict[str, list[Any]], types: dict[str, str]) -> pd.DataFrame:
    arrays = {name: pa.array(values, type=_ARROW[types[name]]) for name, values in columns.items()}
    return pa.table(arrays).to_pandas(types_mapper=pd.ArrowDtype)


def _median(s: pd.Series) -> float | None:
    s = s.dropna()
    return None if s.empty else float(s.median())


def headline(flows: pd.DataFrame, pages: pd.DataFrame, links: pd.DataFrame, summary: dict[str, Any]) -> dict[str, Any]:
    """The numbers `iwlab run` prints: medians over completed records after warm-up (None if
    there are none), bottleneck utilisation and drop rate per direction (L → R is forward),
    simulator events and link transmissions (packets put on any link, once per hop) per
    wall-clock second of the engine run."""
    out: dict[str, Any] = {}
    done = flows[flows["completed"] & ~flows["in_warmup"]]
    out["median_flow_completion"] = _median(done["completion"])
    done = pages[pages["completed"] & ~pages["in_warmup"]]
    out["median_page_delay"] = _median(done["delay"])
    for direction, (a, b) in (("forward", ("router-left", "router-right")), ("reverse", ("router-right", "router-left"))):
        row = links[(links["from"] == a) & (links["to"] == b)]
        out[f"bottleneck_{direction}_utilisation"] = float(row["utilisation"].iloc[0]) if len(row) else None
        out[f"bottleneck_{direction}_drop_rate"] = float(row["drop_rate"].iloc[0]) if len(row) else None
    wall = summary.get("wall_seconds") or 0.0
    out["events_per_second"] = summary["events"] / wall if wall > 0 else None
    tx = summary.get("link_transmissions")
    out["link_tx_per_wall_s"] = tx / wall if wall > 0 and tx is not None else None
    return out


@dataclass
class Result:
    """What one run produced: per-flow, per-page, per-link rows, queue samples, a summary.

    `summary` holds the core's counters (`seed`, `events`, `flows`, `flows_completed`,
    `pages`, `pages_completed`, `packets_*`, `wall_seconds` and `cpu_seconds` of the engine run,
    …), the scenario's name and hash,
    and the headline numbers of `headline()`.
    """

    scenario: Scenario
    seed: int
    flows: pd.DataFrame
    pages: pd.DataFrame
    links: pd.DataFrame
    queues: pd.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={len(getattr(self, n))}" for n in TABLES)
        return f"Result(scenario={self.scenario.name!r}, seed={self.seed}, {sizes})"

    def _repr_html_(self) -> str:
        """A summary table for Jupyter."""
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in summary_rows(self.summary))
        title = html.escape(f"iwlab run: {self.scenario.name}, seed {self.seed}")
        return f"<table><caption style='text-align:left'><b>{title}</b></caption>{rows}</table>"

    def save(self, out: str | Path) -> Path:
        """Writes flows/pages/links/queues as Parquet, summary.json and scenario.toml into `out`."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            getattr(self, name).to_parquet(out / f"{name}.parquet", index=False)
        meta = dict(self.summary, scenario=self.scenario.name, scenario_hash=self.scenario.hash())
        (out / "summary.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        (out / "scenario.toml").write_text(self.scenario.to_toml())
        return out

    @classmethod
    def load(cls, folder: str | Path) -> Result:
        """Reads back what `save` wrote."""
        folder = Path(folder)
        frames = {n: pd.read_parquet(folder / f"{n}.parquet", dtype_backend="pyarrow") for n in TABLES}
        summary = json.loads((folder / "summary.json").read_text())
        scenario = Scenario.from_toml((folder / "scenario.toml").read_text(), str(folder / "scenario.toml"))
        return cls(scenario=scenario, seed=int(summary["seed"]), summary=summary, **frames)


def _fmt_seconds(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "-"
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.3f} s"


def _fmt_pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f} %"


def summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a summary, as `iwlab run` and `Result._repr_html_` show them."""
    eps = s.get("events_per_second")
    tps = s.get("link_tx_per_wall_s")
    return [
        ("scenario", f"{s.get('scenario', '')} ({s.get('scenario_hash', '')})"),
        ("seed", str(s.get("seed"))),
        ("simulated", f"{s.get('duration', 0):g} s (warm-up {s.get('warmup', 0):g} s)"),
        ("flows completed", f"{s.get('flows_completed')} / {s.get('flows')}"),
        ("median flow completion", _fmt_seconds(s.get("median_flow_completion"))),
        ("pages completed", f"{s.get('pages_completed')} / {s.get('pages')}"),
        ("median page delay", _fmt_seconds(s.get("median_page_delay"))),
        ("bottleneck L→R utilisation", _fmt_pct(s.get("bottleneck_forward_utilisation"))),
        ("bottleneck L→R drop rate", _fmt_pct(s.get("bottleneck_forward_drop_rate"))),
        ("bottleneck R→L utilisation", _fmt_pct(s.get("bottleneck_reverse_utilisation"))),
        ("bottleneck R→L drop rate", _fmt_pct(s.get("bottleneck_reverse_drop_rate"))),
        ("packets created / dropped", f"{s.get('packets_created')} / {s.get('packets_dropped')}"),
        ("events", f"{s.get('events')} ({'-' if eps is None else f'{eps / 1e6:.2f} M'} events/s)"),
        ("link transmissions",
         f"{s.get('link_transmissions', '-')} ({'-' if tps is None else f'{tps / 1e6:.2f} M'} /s)"),
        ("wall time", _fmt_seconds(s.get("wall_seconds"))),
    ]


def run(scenario: Scenario | str | Path, seed: int | None = None, pcap: str | Path | None = None,
        flows: list[int] | None = None) -> Result:
    """Runs `scenario` (a Scenario, a TOML path or a preset name) once, with `seed` (default:
    the scenario's). With `pcap`, the packets of the bottleneck (both directions) of the
    flows `flows` (ids of the `flow` column; all if None) are written to that file.

    >>> r = run(load("congested-links", sets=["duration=10s", "warmup=1s"]), seed=1)
    >>> list(r.queues.columns), r.summary["scenario"]
    (['time', 'port', 'packets', 'bytes'], 'congested-links')
    """
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    try:
        raw = _core.run(sc.to_json(), "json", seed, None if pcap is None else str(pcap), flows)
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e, sc.source, located=False) from None
    types = raw["types"]
    frames = {name: _frame(raw[name], types[name]) for name in TABLES}
    summary = dict(raw["summary"], scenario=sc.name, scenario_hash=sc.hash())
    summary.update(headline(frames["flows"], frames["pages"], frames["links"], summary))
    return Result(scenario=sc, seed=int(summary["seed"]), summary=summary, **frames)
