"""Running one task where it is sent (this process, a pool worker, a Dask worker): the records
come back as Arrow tables — pickled as Arrow IPC buffers, never encoded to Parquet and decoded
again in memory — with the run's metadata; nothing is written here."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iwlab.runs.task import Task

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Records", "run_one", "TABLES", "FORMAT"]

#: The record tables of a stored run (`iwlab.api.TABLES`).
TABLES = ("flows", "pages", "links", "queues")
#: The version of the stored layout (`run.json`'s and `manifest.json`'s `format`).
FORMAT = 1


@dataclass
class Records:
    """What one run sends back: `meta` (the future `run.json`: grid point, seed, hash, versions,
    metrics, wall time), the record `tables`, the `summary` and the scenario as TOML."""

    meta: dict[str, Any]
    tables: dict[str, pa.Table]
    summary: dict[str, Any]
    toml: str

    @property
    def run_id(self) -> str:
        return self.meta["run_id"]

    def frame(self, name: str) -> pd.DataFrame:
        """Table `name` as a pandas DataFrame (Arrow-backed, as `iwlab.run` gives them)."""
        import pandas as pd

        return self.tables[name].to_pandas(types_mapper=pd.ArrowDtype)


def run_one(task: Task) -> Records:
    """Runs `task` and returns its records and metadata."""
    from iwlab import __version__, core_version, engine_id, stats
    from iwlab.api import run

    t0 = time.perf_counter()
    r = run(task.scenario, seed=task.seed)
    tables = {name: r.arrow(name) for name in TABLES}
    meta = {
        "format": FORMAT,
        "run_id": task.run_id,
        "point": task.point,
        "seed": task.seed,
        "scenario_hash": task.scenario_hash,
        "iwlab_version": __version__,
        "core_version": core_version(),
        "engine_id": engine_id(),
        "metrics": stats.run_metrics(r.flows, r.pages, r.links, r.summary),
        "wall_seconds": time.perf_counter() - t0,
    }
    summary = dict(r.summary, scenario=task.scenario.name, scenario_hash=task.scenario_hash)
    return Records(meta, tables, summary, task.scenario.to_toml())
