"""Python API: load scenarios, run them, get pandas DataFrames (Arrow-backed)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from iwlab import _core
from iwlab.scenario import Scenario, load

__all__ = ["Result", "run", "load"]


def _frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    return pa.table(columns).to_pandas(types_mapper=pd.ArrowDtype)


@dataclass
class Result:
    """What one run produced: per-flow, per-page, per-link rows, queue samples, a summary."""

    scenario: Scenario
    seed: int
    flows: pd.DataFrame
    pages: pd.DataFrame
    links: pd.DataFrame
    queues: pd.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)

    def save(self, out: str | Path) -> Path:
        """Writes flows/pages/links/queues as Parquet and summary.json into `out`."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("flows", "pages", "links", "queues"):
            getattr(self, name).to_parquet(out / f"{name}.parquet", index=False)
        meta = dict(self.summary, scenario=self.scenario.name, scenario_hash=self.scenario.hash())
        (out / "summary.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
        (out / "scenario.toml").write_text(self.scenario.to_toml())
        return out


def run(scenario: Scenario | str | Path, seed: int | None = None, pcap: str | Path | None = None,
        flows: list[int] | None = None) -> Result:
    """Runs `scenario` (a Scenario, a TOML path or a preset name) once.

    >>> r = run("rfc2415", seed=1)            # doctest: +SKIP
    >>> r.pages["delay"].median()             # doctest: +SKIP
    """
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    raw = _core.run(sc.to_json(), "json", seed, None if pcap is None else str(pcap), flows)
    return Result(
        scenario=sc,
        seed=int(raw["summary"]["seed"]),
        flows=_frame(raw["flows"]),
        pages=_frame(raw["pages"]),
        links=_frame(raw["links"]),
        queues=_frame(raw["queues"]),
        summary=dict(raw["summary"]),
    )
