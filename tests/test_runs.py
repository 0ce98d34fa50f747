"""The runs layer (python/iwlab/runs/): one run's records come back as Arrow tables (never as
Parquet bytes in memory), many runs give the same records in this process, in a pool or in
order, and a stored run reads back as it was made."""

from __future__ import annotations

import doctest
import json
import os
import pickle
import sys

import pandas as pd
import pyarrow as pa
import pytest

import iwlab
from iwlab import runs
from iwlab.runs import store


@pytest.fixture(scope="module")
def short():
    return iwlab.load("rfc2415", sets=["duration=10s"])


@pytest.fixture(scope="module")
def tasks(short):
    return [runs.Task.of(short, seed, {"seed_label": f"s{seed}"}) for seed in (1, 2, 3)]


def test_the_doc_example_runs():
    assert doctest.testmod(sys.modules["iwlab.runs"]).failed == 0


def test_a_task_is_named_by_its_scenarios_hash_and_its_seed(short):
    t = runs.Task.of(short, 4, {"iw.default": "iw3"})
    assert (t.run_id, t.scenario_hash, t.seed, t.point) == (f"{short.hash()}-s4", short.hash(), 4, {"iw.default": "iw3"})


def test_one_run_gives_arrow_tables_with_the_records_of_iwlab_run(short, tasks):
    rec = runs.run_one(tasks[0])
    direct = iwlab.run(short, seed=1)
    assert set(rec.tables) == set(runs.TABLES)
    for name in runs.TABLES:
        assert isinstance(rec.tables[name], pa.Table)
        pd.testing.assert_frame_equal(rec.frame(name), getattr(direct, name))
    assert rec.meta["run_id"] == tasks[0].run_id and rec.meta["engine_id"] == iwlab.engine_id()
    assert rec.summary["flows"] == len(direct.flows) and rec.meta["metrics"]["flows"] == len(direct.flows)


def test_records_travel_as_arrow_buffers_not_parquet(tasks):
    blob = pickle.dumps(runs.run_one(tasks[0]))
    assert b"PAR1" not in blob  # Parquet's magic number: no file encoded in memory
    back = pickle.loads(blob)
    assert all(isinstance(t, pa.Table) for t in back.tables.values())


def test_a_pool_an_ordered_pool_and_this_process_give_the_same_records(tasks):
    here = {r.run_id: r for r in runs.run_many(tasks, jobs=1)}
    ordered = list(runs.run_many(tasks, jobs=2, ordered=True))
    assert [r.run_id for r in ordered] == [t.run_id for t in tasks]
    for r in ordered:
        for name in runs.TABLES:
            assert r.tables[name].equals(here[r.run_id].tables[name]), (r.run_id, name)
        assert json.dumps(r.meta["metrics"]) == json.dumps(here[r.run_id].meta["metrics"])  # NaN as NaN


def test_a_pool_keeps_its_processes_across_maps(tasks):
    with runs.Pool(2) as pool:
        first = sorted(r.run_id for r in pool.map(runs.run_one, tasks[:2]))
        executor = pool.executor
        second = sorted(r.run_id for r in pool.map(runs.run_one, tasks[1:]))
        assert pool.executor is executor and executor is not None
    assert pool.executor is None
    assert first == sorted(t.run_id for t in tasks[:2]) and second == sorted(t.run_id for t in tasks[1:])


def test_a_pool_sends_any_importable_function_with_extra_arguments():
    with runs.Pool(2) as pool:
        assert sorted(pool.map(os.path.join, ["a", "b"], "c")) == ["a/c", "b/c"]


@pytest.mark.parametrize("jobs", [0, -1])
def test_jobs_below_one_are_refused_with_the_value(jobs):
    with pytest.raises(ValueError, match=f"jobs = {jobs} is not allowed; expected >= 1"):
        runs.Pool(jobs)


def test_a_stored_run_reads_back_as_it_was_made(tasks, tmp_path):
    rec = runs.run_one(tasks[1])
    store.write_run(tmp_path, rec)
    folder = store.run_dir(tmp_path, rec.run_id)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{n}.parquet" for n in runs.TABLES] + ["summary.json", "scenario.toml", store.RUN_META])
    assert not list((tmp_path / "runs").glob(".tmp-*"))
    for name in runs.TABLES:
        assert store.read_table(tmp_path, rec.run_id, name).equals(rec.tables[name])
    assert store.load_meta(tmp_path, rec.run_id) == json.loads(json.dumps(rec.meta))
    assert store.reusable(tmp_path, rec.run_id) is not None
    # the folder is also what `Result.load` reads
    loaded = iwlab.Result.load(folder)
    pd.testing.assert_frame_equal(loaded.flows, rec.frame("flows"))
    with pytest.raises(ValueError, match="table = 'runs' is not allowed"):
        store.read_table(tmp_path, rec.run_id, "runs")


def test_a_run_stored_by_another_engine_build_is_not_reusable(tasks, tmp_path):
    rec = runs.run_one(tasks[2])
    rec.meta["engine_id"] = "another-build"
    store.write_run(tmp_path, rec)
    assert store.load_meta(tmp_path, rec.run_id) is not None and store.reusable(tmp_path, rec.run_id) is None


def test_temporaries_of_dead_processes_are_removed_and_live_ones_kept(tmp_path):
    (tmp_path / "runs").mkdir()
    dead = tmp_path / "runs" / ".tmp-x-s1-999999999"
    mine = tmp_path / "runs" / f".tmp-x-s2-{os.getpid()}"
    dead.mkdir()
    mine.mkdir()
    store.clean_stale(tmp_path)
    assert not dead.exists() and mine.exists()


def test_a_stored_sweep_holds_the_records_of_its_runs(stored_sweep):
    out, rows = stored_sweep
    manifest = store.read_manifest(out)
    assert [r["run_id"] for r in manifest["runs"]] == list(rows["run_id"])
    entry = manifest["runs"][0]
    task = runs.Task(entry["run_id"], entry["point"], entry["seed"],
                     iwlab.load("rfc2415", sets=["duration=20s", f"iw.default={entry['point']['iw.default']}"]),
                     entry["scenario_hash"])
    again = runs.run_one(task)
    for name in runs.TABLES:
        assert store.read_table(out, entry["run_id"], name).equals(again.tables[name]), name
