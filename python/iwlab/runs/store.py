"""Stored runs: one folder of runs, each written whole or not at all.

    OUT/
      manifest.json          the plan: format, versions, base scenario and hash, grid, seeds,
                             one entry per run (run_id, point, seed, scenario_hash)
      scenario.toml          the base scenario (before the grid)
      runs/<hash>-s<seed>/   one folder per run, renamed into place when complete:
          flows.parquet pages.parquet links.parquet queues.parquet   the record tables
          summary.json scenario.toml                                 as `Result.save` writes them
          run.json           grid point, seed, scenario hash, versions, engine_id, metrics (last)

Every file is written under a temporary name (`.tmp-…-<pid>`) and renamed; temporaries whose
process is gone are removed by `clean_stale`. A run is reused only if the same engine build
(`run.json`'s `engine_id`, `iwlab.engine_id()`) stored it: results may differ between builds.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iwlab.runs.execute import FORMAT, TABLES, Records
from iwlab.runs.task import Task
from iwlab.workers import pid_alive as _alive

if TYPE_CHECKING:
    import pyarrow as pa

    from iwlab.scenario_io import Scenario

__all__ = ["MANIFEST", "RUN_META", "write_run", "load_meta", "reusable", "run_dir", "read_table", "row",
           "clean_stale", "write_manifest", "read_manifest", "write_atomic"]

MANIFEST = "manifest.json"
RUN_META = "run.json"


def _write(path: Path, data: bytes | str) -> None:
    with open(path, "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)
        fh.flush()
        os.fsync(fh.fileno())


def _write_parquet(path: Path, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    with open(path, "wb") as fh:
        pq.write_table(table, fh)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes | str) -> None:
    """`data` into `path` through a temporary file and a rename."""
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    _write(tmp, data)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def run_dir(out: str | Path, run_id: str) -> Path:
    return Path(out) / "runs" / run_id


def write_run(out: str | Path, rec: Records) -> None:
    """Stores one run's records under `out/runs/<run_id>/` (complete, or not at all)."""
    runs = Path(out) / "runs"
    final = runs / rec.run_id
    tmp = runs / f".tmp-{rec.run_id}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, table in rec.tables.items():
        _write_parquet(tmp / f"{name}.parquet", table)
    _write(tmp / "summary.json", json.dumps(rec.summary, indent=2, sort_keys=True))
    _write(tmp / "scenario.toml", rec.toml)
    _write(tmp / RUN_META, json.dumps(rec.meta, indent=2))
    _fsync_dir(tmp)
    stored = load_meta(out, rec.run_id)
    if stored is not None and stored.get("engine_id") != rec.meta["engine_id"]:
        shutil.rmtree(final)  # stored by another engine build: this run replaces it
    try:
        os.rename(tmp, final)
    except OSError:  # another process finished the same run first: same scenario, same seed
        if not (final / RUN_META).exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    _fsync_dir(runs)


def load_meta(out: str | Path, run_id: str) -> dict[str, Any] | None:
    """`run.json` of a stored run; None if the run is not (completely) stored."""
    path = run_dir(out, run_id) / RUN_META
    return json.loads(path.read_text()) if path.exists() else None


def reusable(out: str | Path, run_id: str) -> dict[str, Any] | None:
    """`run.json` of a stored run that this engine build made (None otherwise: run it again)."""
    from iwlab import engine_id

    meta = load_meta(out, run_id)
    return meta if meta is not None and meta.get("engine_id") == engine_id() else None


def read_table(out: str | Path, run_id: str, table: str, columns: Sequence[str] | None = None) -> pa.Table:
    """One record table of a stored run, as Arrow."""
    import pyarrow.parquet as pq

    if table not in TABLES:
        raise ValueError(f"table = {table!r} is not allowed; expected one of {list(TABLES)}")
    return pq.read_table(run_dir(out, run_id) / f"{table}.parquet", columns=None if columns is None else list(columns))


def row(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A run's row: grid values, seed, hash, run id, versions, then its metrics."""
    return {**meta["point"], "seed": meta["seed"], "scenario_hash": meta["scenario_hash"],
            "run_id": meta["run_id"], "iwlab_version": meta["iwlab_version"],
            "core_version": meta["core_version"], "engine_id": meta.get("engine_id"), **meta["metrics"]}


def clean_stale(out: str | Path) -> None:
    """Removes temporaries left by killed processes (the pid in their name is gone)."""
    out = Path(out)
    for p in [*out.glob(".tmp-*"), *(out / "runs").glob(".tmp-*")]:
        pid = p.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def write_manifest(out: str | Path, base: Scenario, grid: Mapping[str, Sequence[Any]], seeds: Sequence[int],
                   tasks: Sequence[Task]) -> None:
    """The plan of a set of runs: `manifest.json` and the base `scenario.toml`."""
    from iwlab import __version__, core_version, engine_id

    out = Path(out)
    manifest = {
        "format": FORMAT,
        "iwlab_version": __version__,
        "core_version": core_version(),
        "engine_id": engine_id(),
        "scenario": base.name,
        "scenario_hash": base.hash(),
        "grid": {k: list(v) for k, v in grid.items()},
        "seeds": list(seeds),
        "runs": [{"run_id": t.run_id, "point": t.point, "seed": t.seed, "scenario_hash": t.scenario_hash}
                 for t in tasks],
    }
    (out / "runs").mkdir(parents=True, exist_ok=True)
    write_atomic(out / "scenario.toml", base.to_toml())
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2))


def read_manifest(out: str | Path) -> dict[str, Any]:
    """The plan stored in `out` (grid, seeds, runs)."""
    path = Path(out) / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"{out}: not a sweep directory (no {MANIFEST})")
    return json.loads(path.read_text())
