"""Smoke test of the iwlab-vs-ns-3 benchmark (bench/run.py, issue 6): builds the ns-3 programs,
runs each for 1 simulated second and the iwlab side for 1 s, and checks what the harness
records. Skipped only when libns3-dev cannot be installed (bench/install-ns3.sh needs root and
apt); `make test` installs it first (make ns3-deps)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))
import run as bench_run  # noqa: E402  (bench/run.py)


@pytest.fixture(scope="module")
def ns3_programs() -> Path:
    """bench/ns3/build with bulk, short_flows and rfc2415 built against Debian's ns-3."""
    inst = subprocess.run(["bash", str(BENCH / "install-ns3.sh")], capture_output=True, text=True)
    if inst.returncode != 0:
        pytest.skip(f"libns3-dev could not be installed (bench/install-ns3.sh): {inst.stderr.strip()[-300:]}")
    build = subprocess.run(["make", "-C", str(BENCH / "ns3")], capture_output=True, text=True)
    assert build.returncode == 0, f"make -C bench/ns3 failed:\n{build.stderr[-3000:]}"
    out = BENCH / "ns3" / "build"
    for prog in ("bulk", "short_flows", "rfc2415"):
        assert (out / prog).is_file(), prog
    return out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_each_ns3_program_and_the_iwlab_side_run_for_one_second(ns3_programs, tmp_path):
    out = tmp_path / "results.json"
    cmd = [sys.executable, str(BENCH / "run.py"), "--duration", "1", "--reps", "1",
           "--only", "A-default,B,C", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    assert set(res["cases"]) == {"A-default", "B-iw10", "B-iw3", "C"}
    for key, case in res["cases"].items():
        assert case["duration_s"] == 1
        runs = case["runs"]
        for side in ("iwlab", "ns3", "ns3_weakes0"):
            assert len(runs[side]) == 1, (key, side)
            r = runs[side][0]
            assert r["wall_s"] > 0 and r["process_wall_s"] >= r["wall_s"], (key, side, r)
            assert r["events"] > 0 and r["packets"] > 0 and r["peak_rss_kb"] > 0, (key, side, r)
            assert r["goodput_mbps"] > 0, (key, side, r)
            assert 0 < r["bottleneck_utilisation"] <= 1.01, (key, side, r)
            assert r["bottleneck_drops"] >= 0
        assert runs["ns3"][0]["duration_s"] == 1
        # Ipv4::WeakEsModel changes ns-3's speed, never its answers.
        assert case["summary"]["weakes0_same_answers"] is True, key
        assert case["summary"]["ratio_ns3"] > 0
    b = res["cases"]["B-iw10"]["runs"]
    assert b["ns3"][0]["flows_started"] > 0 and b["iwlab"][0]["flows_started"] > 0
    assert "### Agreement" in res["tables_markdown"] and "### Ratios" in res["tables_markdown"]


@pytest.mark.parametrize(
    "values, q, expected",
    [
        ([], 0.5, None),
        ([3.0], 0.99, 3.0),
        ([4.0, 1.0, 3.0, 2.0], 0.5, 2.0),  # nearest rank: ceil(0.5 * 4) = 2nd smallest
        ([float(i) for i in range(1, 101)], 0.99, 99.0),
        ([float(i) for i in range(1, 102)], 0.99, 100.0),  # ceil(99.99) = 100
    ],
)
def test_quantiles_are_nearest_rank_like_the_ns3_programs(values, q, expected):
    assert bench_run.quantile(values, q) == expected


@pytest.mark.parametrize(
    "only, keys",
    [
        ("A", ["A-default", "A-scale"]),
        ("A-scale,C", ["A-scale", "C"]),
        ("B", ["B-iw10", "B-iw3"]),
        (None, ["A-default", "A-scale", "B-iw10", "B-iw3", "C"]),
    ],
)
def test_only_selects_cases_by_key_or_group(only, keys):
    assert [c.key for c in bench_run.select(only)] == keys


def test_an_unknown_case_is_an_error_naming_the_valid_ones():
    with pytest.raises(SystemExit, match="A-scale"):
        bench_run.select("D")
