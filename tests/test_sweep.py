"""Sweeps: grid × seeds in tidy rows, the same on 1 or 2 processes and on Dask, resumable after
`kill -9`, and the `iwlab sweep` command."""

import doctest
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

import iwlab
from iwlab.sweep import _set_path, parse_assignment, parse_value, parse_values, with_overrides

IWLAB = str(Path(sys.executable).parent / "iwlab")
GRID = {"apps[0].count": [8, 16], "iw.default": ["iw1", "iw3"]}


@pytest.fixture(scope="module")
def short():
    return with_overrides(iwlab.load("rfc2415"), {"duration": "20s"})


def _stored(out: Path) -> dict[str, tuple[int, int]]:
    """run id -> (inode, mtime) of each finished run's run.json."""
    return {p.parent.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "runs").glob("*/run.json")
            if not p.parent.name.startswith(".")}


def test_the_doc_examples_run():
    assert doctest.testmod(sys.modules["iwlab.sweep"]).failed == 0


@pytest.mark.parametrize(("text", "value"), [
    ("8", 8), ("0.5", 0.5), ("true", True), ("iw1", "iw1"), ("20s", "20s"), ('"a b"', "a b"),
    ('{ kind = "red", limit = "25pkt" }', {"kind": "red", "limit": "25pkt"}), ("[1, 2]", [1, 2]),
])
def test_values_are_toml_literals_or_bare_strings(text, value):
    assert parse_value(text) == value


def test_grid_values_split_on_top_level_commas_only():
    assert parse_values('8,16, 32') == [8, 16, 32]
    assert parse_values('{ a = 1, b = [2, 3] },"x,y",bare') == [{"a": 1, "b": [2, 3]}, "x,y", "bare"]
    assert parse_assignment("iw.default=iw1,iw2", many=True) == ("iw.default", ["iw1", "iw2"])
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_assignment("iw.default")


@pytest.mark.parametrize(("path", "value", "expect"), [
    ("apps[0].count", 8, lambda d: d["apps"][0]["count"] == 8),
    ("iw.default", "iw3", lambda d: d["iw"]["default"] == "iw3"),
    ("sample_interval", "100ms", lambda d: d["sample_interval"] == "100ms"),
    ("topology.bottleneck.queue", {"kind": "red"}, lambda d: d["topology"]["bottleneck"]["queue"] == {"kind": "red"}),
])
def test_the_fallback_override_sets_a_field_by_path(short, path, value, expect):
    data = json.loads(short.to_json())
    _set_path(data, path, value)
    assert expect(data)


@pytest.mark.parametrize(("path", "message"), [
    ("apps[7].count", "index 7 is out of range; apps has 2 entries"),
    ("name[0]", "name is not a list"),
    ("apps..count", "not a field path"),
])
def test_bad_override_paths_say_where_they_fail(short, path, message):
    with pytest.raises(ValueError, match=message):
        _set_path(json.loads(short.to_json()), path, 1)


def test_overridden_scenarios_are_validated_again(short):
    with pytest.raises(iwlab.ScenarioError, match="iw9"):
        with_overrides(short, {"iw.default": "iw9"})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"grid": {"seed": [1, 2]}}, "use seeds=N"),
    ({"grid": {"iw.default": []}}, "non-empty list"),
    ({"grid": {"iw.default": "iw1"}}, "non-empty list"),
    ({"seeds": 0}, "seeds = 0"),
    ({"jobs": 0}, "jobs = 0"),
])
def test_bad_sweep_arguments_are_refused(short, kwargs, message):
    with pytest.raises(ValueError, match=message):
        iwlab.sweep(short, **{"progress": False, **kwargs})


def test_a_2x2_grid_over_2_seeds_gives_8_tidy_reproducible_rows(short):
    df = iwlab.sweep(short, grid=GRID, seeds=2, jobs=1, progress=False)
    assert len(df) == 8
    assert list(df.columns[:8]) == ["apps[0].count", "iw.default", "seed", "scenario_hash", "run_id",
                                    "iwlab_version", "core_version", "engine_id"]
    assert set(df["engine_id"]) == {iwlab.engine_id()}
    for metric in ("median_page_delay", "fct_median", "fct_mean", "fct_p99", "util_forward", "util_reverse",
                   "drop_rate_forward", "drop_rate_reverse", "goodput_bps", "web_power", "flows_completed",
                   "pages_completed", "retransmit_rate", "timeouts"):
        assert metric in df.columns
    assert df[["apps[0].count", "iw.default", "seed"]].values.tolist() == [
        [c, iw, s] for c in (8, 16) for iw in ("iw1", "iw3") for s in (1, 2)]
    assert df["scenario_hash"].nunique() == 4 and df["run_id"].nunique() == 8
    assert (df["iwlab_version"] == iwlab.__version__).all()
    assert (df["retransmit_rate"] == df["retransmits"] / df["data_segments"]).all()
    pd.testing.assert_frame_equal(df, iwlab.sweep(short, grid=GRID, seeds=2, jobs=1, progress=False))


def test_two_processes_give_the_rows_of_one(short):
    one = iwlab.sweep(short, grid=GRID, seeds=2, jobs=1, progress=False)
    two = iwlab.sweep(short, grid=GRID, seeds=2, jobs=2, progress=False)
    pd.testing.assert_frame_equal(one, two)


def test_a_dask_cluster_gives_the_rows_of_local_processes(short):
    distributed = pytest.importorskip("distributed")
    local = iwlab.sweep(short, grid=GRID, seeds=2, jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        remote = iwlab.sweep(short, grid=GRID, seeds=2, dask=cluster.scheduler_address, progress=False)
    pd.testing.assert_frame_equal(local, remote)


def test_runs_are_stored_with_a_manifest_and_their_records_load_with_grid_columns(short, tmp_path):
    df = iwlab.sweep(short, grid=GRID, seeds=2, jobs=2, out=tmp_path, progress=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["grid"] == GRID and manifest["seeds"] == [1, 2] and len(manifest["runs"]) == 8
    assert sorted(_stored(tmp_path)) == sorted(df["run_id"])
    assert not list((tmp_path / "runs").glob(".tmp-*"))
    one = tmp_path / "runs" / df["run_id"][0]
    assert {p.name for p in one.iterdir()} == {"flows.parquet", "pages.parquet", "links.parquet",
                                              "queues.parquet", "summary.json", "scenario.toml", "run.json"}
    flows = iwlab.sweep_records(tmp_path, "flows")
    assert list(flows.columns[:5]) == ["apps[0].count", "iw.default", "seed", "scenario_hash", "run_id"]
    assert len(flows) == df["flows"].sum()
    assert flows.groupby("run_id").size().to_dict() == df.set_index("run_id")["flows"].to_dict()
    pd.testing.assert_frame_equal(iwlab.sweep_records(tmp_path, "runs"), df)


def test_a_second_sweep_runs_only_what_is_missing(short, tmp_path):
    first = iwlab.sweep(short, grid=GRID, seeds=1, jobs=1, out=tmp_path, progress=False)
    before = _stored(tmp_path)
    again = iwlab.sweep(short, grid=GRID, seeds=2, jobs=1, out=tmp_path, progress=False)
    after = _stored(tmp_path)
    assert len(before) == 4 and len(after) == 8
    assert {k: after[k] for k in before} == before  # the seed-1 runs were not run again
    pd.testing.assert_frame_equal(again[again["seed"] == 1].reset_index(drop=True), first)


def test_runs_stored_by_another_engine_build_are_run_again_not_reused(short, tmp_path):
    iwlab.sweep(short, grid=GRID, seeds=1, jobs=1, out=tmp_path, progress=False)
    before = _stored(tmp_path)
    stale = sorted(before)[0]
    meta_path = tmp_path / "runs" / stale / "run.json"
    meta = json.loads(meta_path.read_text())
    meta["engine_id"] = "an-older-build"
    meta["metrics"]["median_page_delay"] = -1.0  # what the older build "found"
    meta_path.write_text(json.dumps(meta))
    df = iwlab.sweep(short, grid=GRID, seeds=1, jobs=1, out=tmp_path, progress=False)
    after = _stored(tmp_path)
    assert {k: after[k] for k in before if k != stale} == {k: v for k, v in before.items() if k != stale}
    assert after[stale] != before[stale]  # run again and replaced
    assert json.loads(meta_path.read_text())["engine_id"] == iwlab.engine_id()
    assert (df["median_page_delay"] >= 0).all() and set(df["engine_id"]) == {iwlab.engine_id()}


@pytest.mark.timeout(240)
def test_a_sweep_killed_with_sigkill_resumes_without_rerunning_or_losing_runs(tmp_path):
    out = tmp_path / "sweep"
    cmd = [IWLAB, "sweep", "rfc2415", "--set", "duration=600s", "--grid", "iw.default=iw1,iw2,iw3",
           "--seeds", "3", "--jobs", "2", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(_stored(out)) < 2:
            assert proc.poll() is None, f"the sweep ended before it was killed: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, "no run finished within 120 s"
            time.sleep(0.02)
        children = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    _, alive = psutil.wait_procs(children, timeout=10)  # the pool's workers exit once their parent is gone
    for p in alive:
        p.kill()
    assert not alive, f"worker processes outlived the killed sweep: {alive}"
    assert proc.returncode == -signal.SIGKILL
    before = _stored(out)
    assert 2 <= len(before) < 9, f"{len(before)} of 9 runs were stored before the kill"
    (out / "runs" / f".tmp-interrupted-{proc.pid}").mkdir(exist_ok=True)  # what a kill mid-write leaves

    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stderr
    after = _stored(out)
    assert len(after) == 9
    assert {k: after[k] for k in before} == before  # finished runs were not run again
    assert not list((out / "runs").glob(".tmp-*"))
    base = with_overrides(iwlab.load("rfc2415"), {"duration": "600s"})
    fresh = iwlab.sweep(base, grid={"iw.default": ["iw1", "iw2", "iw3"]}, seeds=3, jobs=2, progress=False)
    pd.testing.assert_frame_equal(iwlab.sweep_records(out, "runs"), fresh)  # nothing lost, nothing changed


def test_the_cli_sweeps_a_grid_over_seeds(tmp_path):
    out = tmp_path / "cli"
    r = subprocess.run([IWLAB, "sweep", "rfc2415", "--grid", "apps[0].count=8,16", "--grid", "iw.default=iw1,iw2",
                        "--seeds", "2", "--set", "duration=20s", "--jobs", "2", "--out", str(out)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "8 runs in" in r.stdout and "median_page_delay" in r.stdout
    # Off a terminal the progress is one plain line (no bar's carriage returns).
    assert "sweep: 8 run(s)" in r.stderr and "\r" not in r.stderr
    runs = iwlab.sweep_records(out, "runs")
    assert len(runs) == 8 and sorted(runs["apps[0].count"].unique()) == [8, 16]
    assert 'duration = "20s"' in (out / "scenario.toml").read_text()


@pytest.mark.parametrize(("args", "message"), [
    (["nope"], "no such scenario file or preset"),
    (["rfc2415", "--grid", "iw.default=iw9"], 'iw.default = "iw9" is not allowed'),
    (["rfc2415", "--grid", "iw.default"], "expected KEY=VALUE"),
])
def test_the_cli_reports_bad_input_in_one_line(tmp_path, args, message):
    r = subprocess.run([IWLAB, "sweep", *args, "--out", str(tmp_path / "x")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()
