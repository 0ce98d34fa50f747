"""Parameter sweeps: a grid of scenario overrides × seeds, run in parallel, stored resumably.

>>> df = iwlab.sweep("rfc2415", grid={"apps[0].count": [8, 16], "iw.default": ["iw1", "iw3"]},
...                  seeds=3, out="out/sweep")                                  # doctest: +SKIP
>>> flows = iwlab.sweep_records("out/sweep", table="flows")                      # doctest: +SKIP

Runs go through `iwlab.runs` and are stored in its layout (`iwlab.runs.store`): the manifest
(the plan: base scenario hash, grid, seeds, one entry per run), the base scenario, and one folder
per (grid point, seed) under `runs/`, renamed into place when complete.

A run is identified by the hash of its overridden scenario and its seed, so a sweep started
again (after `kill -9`, or with a larger grid or more seeds) skips every run already on disk —
unless another engine build stored it (`run.json`'s `engine_id`, `iwlab.engine_id()`): results
may differ between builds, so such runs are run again and replaced, never mixed in.
"""

from __future__ import annotations

import copy
import itertools
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from iwlab.runs import Task, run_many, store
from iwlab.runs.execute import TABLES
from iwlab.runs.store import read_manifest
from iwlab.scenario_io import Scenario, load

__all__ = ["sweep", "sweep_records", "read_manifest", "parse_value", "parse_values", "parse_assignment",
           "with_overrides", "plan", "TABLES", "progress_line"]


# ---------------------------------------------------------------------------------------------
# Values and overrides


def parse_value(text: str) -> Any:
    """A TOML literal (`8`, `0.5`, `true`, `"x"`, `[1, 2]`, `{ kind = "red" }`) or a bare string.

    >>> parse_value("8"), parse_value("iw1"), parse_value("20s"), parse_value('{ kind = "red" }')
    (8, 'iw1', '20s', {'kind': 'red'})
    """
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _split_top(text: str) -> list[str]:
    """Splits on commas outside brackets, braces and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_values(text: str) -> list[Any]:
    """`v1,v2,…` → values (each a TOML literal or a bare string).

    >>> parse_values('iw1,iw2'), parse_values('8, 16'), parse_values('{ a = 1, b = 2 },"x,y"')
    (['iw1', 'iw2'], [8, 16], [{'a': 1, 'b': 2}, 'x,y'])
    """
    return [parse_value(p) for p in _split_top(text) if p.strip()]


def parse_assignment(text: str, many: bool = False) -> tuple[str, Any]:
    """`key=value` (or `key=v1,v2` with `many`) → (key, value or list of values)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise ValueError(f"{text!r} is not allowed; expected KEY=VALUE" + (",VALUE…" if many else ""))
    key = key.strip()
    _split_path(key)
    return key, parse_values(value) if many else parse_value(value)


_SEGMENT = re.compile(r"^([A-Za-z_][\w-]*)((?:\[\d+\])*)$")


def _split_path(path: str) -> list[str | int]:
    """`apps[0].count` → ["apps", 0, "count"]."""
    parts: list[str | int] = []
    for seg in path.split("."):
        m = _SEGMENT.match(seg)
        if not m:
            raise ValueError(f"{path!r} is not a field path; expected e.g. 'iw.default' or 'apps[0].count'")
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    parts = _split_path(path)
    node: Any = data
    where = ""  # the path walked so far, for messages
    for i, part in enumerate(parts):
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ValueError(f"{path}: {where} is not a list, so [{part}] is not allowed")
            if not -len(node) <= part < len(node):
                raise ValueError(f"{path}: index {part} is out of range; {where} has {len(node)} entries")
        elif not isinstance(node, dict):
            raise ValueError(f"{path}: {where} is not a table, so .{part} is not allowed")
        if i == len(parts) - 1:
            node[part] = copy.deepcopy(value)
            return
        if isinstance(part, str) and part not in node:
            node[part] = [] if isinstance(parts[i + 1], int) else {}
        node = node[part]
        where = f"{where}[{part}]" if isinstance(part, int) else f"{where}.{part}" if where else part


def with_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """`scenario` with dotted-path overrides, validated again by the core."""
    if not overrides:
        return scenario
    method = getattr(scenario, "with_overrides", None)
    if method is not None:
        return method(dict(overrides))
    data = copy.deepcopy(scenario.data)
    for path, value in overrides.items():
        _set_path(data, path, value)
    return Scenario.from_data(data, scenario.source)


# ---------------------------------------------------------------------------------------------
# The plan


def _seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds = {seeds} is not allowed; expected >= 1 (seeds 1…N) or a list of seeds")
        return list(range(1, seeds + 1))
    out = [int(s) for s in seeds]
    if not out or len(set(out)) != len(out):
        raise ValueError(f"seeds = {list(seeds)} is not allowed; expected distinct seeds, at least one")
    return out


def _points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    for key, values in grid.items():
        _split_path(key)
        if key == "seed":
            raise ValueError("grid key 'seed' is not allowed; use seeds=N (or --seeds N)")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
            raise ValueError(f"grid[{key!r}] = {values!r} is not allowed; expected a non-empty list of values")
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def plan(base: Scenario, grid: Mapping[str, Sequence[Any]], seeds: int | Sequence[int]) -> list[Task]:
    """The runs of a sweep, in grid × seed order (`seeds` = N: seeds 1…N)."""
    seed_list = _seeds(seeds)
    tasks = []
    for point in _points(grid):
        sc = with_overrides(base, point)
        tasks.extend(Task.of(sc, s, point) for s in seed_list)
    return tasks


# ---------------------------------------------------------------------------------------------
# Progress


def progress_line(total: int, stored: int, label: str, enabled: bool = True) -> tqdm:
    """One labelled progress line (`label` names the study and phase, e.g. "rfc6928 · Low"):
    on a terminal a bar counting runs, which starts at the runs already stored; elsewhere (a
    pipe, a log file, CI) the plain line `LABEL: N run(s)` once, since a bar's carriage returns
    turn into garbage there; when every run is stored, the line `LABEL: N run(s) already stored,
    skipping` instead (and a bar that shows nothing)."""
    import sys

    if enabled and total and stored >= total:
        print(f"{label}: {total} run(s) already stored, skipping", file=sys.stderr, flush=True)
        return tqdm(total=total, disable=True)
    if enabled and not sys.stderr.isatty():
        kept = f", {stored} already stored" if stored else ""
        print(f"{label}: {total - stored} run(s){kept}", file=sys.stderr, flush=True)
        return tqdm(total=total, disable=True)
    desc = f"{label} ({stored} already stored)" if stored else label
    return tqdm(total=total, initial=stored, desc=desc, unit="run", disable=not enabled, dynamic_ncols=True)


# ---------------------------------------------------------------------------------------------
# The API


def sweep(scenario: Scenario | str | Path, grid: Mapping[str, Sequence[Any]] | None = None,
          seeds: int | Sequence[int] = 1, jobs: int | None = None, dask: Any = None,
          out: str | Path | None = None, progress: bool | str = True) -> pd.DataFrame:
    """Runs `scenario` at every point of `grid` (dotted field path → values) for each seed.

    `seeds` = N runs seeds 1…N (or give a list). Runs go to a pool of `jobs` spawned processes
    (default: all cores; 1 = in this process), or to a Dask cluster with `dask="tcp://host:port"`
    (or a `distributed.Client`; its workers need iwlab installed; they return the records and
    this process writes them, so no shared file system is needed). `progress`: a progress line
    on stderr (a string labels it; `progress_line`), or none with False. With `out`, each run is
    stored as it finishes, and runs already stored (same scenario after overrides, same seed)
    are not run again unless another engine build stored them (`iwlab.engine_id()` differs);
    the manifest is rewritten with this sweep's plan. Returns one row per run, in grid × seed
    order: the grid values, `seed`, `scenario_hash`, `run_id`, `iwlab_version`,
    `core_version`, `engine_id` and the metrics of `iwlab.stats.run_metrics`.
    """
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs} is not allowed; expected >= 1")
    base = scenario if isinstance(scenario, Scenario) else load(scenario)
    grid = dict(grid or {})
    seed_list = _seeds(seeds)
    tasks = plan(base, grid, seed_list)

    metas: dict[str, dict[str, Any]] = {}
    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        store.write_manifest(out_dir, base, grid, seed_list, tasks)
        store.clean_stale(out_dir)
        for t in tasks:
            # A run stored by another engine build may differ: it is run again and replaced.
            meta = store.reusable(out_dir, t.run_id)
            if meta is not None:
                metas[t.run_id] = meta
    todo = list({t.run_id: t for t in tasks if t.run_id not in metas}.values())

    bar = progress_line(len({t.run_id for t in tasks}), len(metas),
                        progress if isinstance(progress, str) else "sweep", bool(progress))
    try:
        for rec in run_many(todo, jobs=jobs or os.cpu_count() or 1, dask=dask) if todo else ():
            if out_dir is not None:
                store.write_run(out_dir, rec)
            metas[rec.run_id] = rec.meta
            bar.update(1)
    finally:
        bar.close()

    rows = []
    for t in tasks:
        row = store.row(metas[t.run_id])
        row.update(t.point)  # two points may share a scenario (and so a stored run)
        rows.append(row)
    return pd.DataFrame(rows)


def sweep_records(out: str | Path, table: str = "flows", columns: Sequence[str] | None = None) -> pd.DataFrame:
    """All stored records of one table (`flows`, `pages`, `links`, `queues`) of a sweep
    directory, concatenated, with the grid values, `seed`, `scenario_hash` and `run_id` first
    (then only `columns` of the records, if given).

    `table="runs"` gives the per-run metrics (the rows `sweep` returned). Runs of the manifest
    not yet on disk are left out.
    """
    out = Path(out)
    if table not in (*TABLES, "runs"):
        raise ValueError(f"table = {table!r} is not allowed; expected one of {[*TABLES, 'runs']}")
    manifest = read_manifest(out)
    keys = list(manifest["grid"])
    if table == "runs":
        rows = []
        for entry in manifest["runs"]:
            meta = store.load_meta(out, entry["run_id"])
            if meta is not None:
                rows.append({**store.row(meta), **entry["point"]})
        return pd.DataFrame(rows)
    frames, empty = [], None
    for entry in manifest["runs"]:
        path = store.run_dir(out, entry["run_id"])
        if not (path / store.RUN_META).exists():
            continue
        df = pd.read_parquet(path / f"{table}.parquet", columns=None if columns is None else list(columns),
                             dtype_backend="pyarrow")
        ident = {**entry["point"], "seed": entry["seed"], "scenario_hash": entry["scenario_hash"],
                 "run_id": entry["run_id"]}
        for i, (k, v) in enumerate(ident.items()):
            df.insert(i, k, pd.Series([v] * len(df), index=df.index, dtype=None if _scalar(v) else object))
        if len(df):
            frames.append(df)
        elif empty is None:
            empty = df
    if not frames:
        return empty if empty is not None else pd.DataFrame(columns=[*keys, "seed", "scenario_hash", "run_id"])
    return pd.concat(frames, ignore_index=True)


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool))
