"""Smoke test of the iwlab-vs-ns-3 benchmark (bench/run.py): builds the ns-3 programs,
runs each for 1 simulated second (D: 0.5 s) on both sides, and checks what the harness
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
    # D for 0.5 s only: slow start up to its ~4 000-segment windows, before the loss episode
    # whose SACK recovery costs ns-3 minutes of CPU.
    res: dict = {"cases": {}}
    for only, duration in (("A-default,B,C", "1"), ("D", "0.5")):
        out = tmp_path / f"results-{only[0]}.json"
        cmd = [sys.executable, str(BENCH / "run.py"), "--duration", duration, "--reps", "1",
               "--only", only, "--out", str(out)]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stderr[-3000:]
        part = json.loads(out.read_text())
        res["cases"].update(part["cases"])
        res.setdefault("tables_markdown", part["tables_markdown"])
    assert set(res["cases"]) == {"A-default", "B-iw10", "B-iw3", "C", "D"}
    for key, case in res["cases"].items():
        assert case["duration_s"] == (0.5 if key == "D" else 1)
        runs = case["runs"]
        sides = ("iwlab", "ns3") if key == "D" else ("iwlab", "ns3", "ns3_weakes0")
        assert key != "D" or runs["ns3_weakes0"] == []  # D's ns-3 runs are minutes long: no WeakEs=0 pair
        for side in sides:
            assert len(runs[side]) == 1, (key, side)
            r = runs[side][0]
            assert r["wall_s"] > 0 and r["process_wall_s"] >= r["wall_s"], (key, side, r)
            assert r["events"] > 0 and r["packets"] > 0 and r["peak_rss_kb"] > 0, (key, side, r)
            assert r["goodput_mbps"] > 0, (key, side, r)
            assert 0 < r["bottleneck_utilisation"] <= 1.01, (key, side, r)
            assert r["bottleneck_drops"] >= 0
            # Link transmissions: the per-hop packet count, in both simulators.
            assert r["link_transmissions"] == r["packets"], (key, side, r)
            if side != "iwlab":
                assert r["link_tx_per_wall_s"] == pytest.approx(r["packets"] / r["wall_s"], rel=1e-6), (key, r)
        assert runs["ns3"][0]["duration_s"] == case["duration_s"]
        # Ipv4::WeakEsModel changes ns-3's speed, never its answers.
        assert key == "D" or case["summary"]["weakes0_same_answers"] is True, key
        assert case["summary"]["ratio_ns3"] > 0
        assert case["summary"]["sides"]["iwlab"]["link_tx_per_wall_s"] > 0
    b = res["cases"]["B-iw10"]["runs"]
    assert b["ns3"][0]["flows_started"] > 0 and b["iwlab"][0]["flows_started"] > 0
    assert "### Agreement" in res["tables_markdown"] and "### Ratios" in res["tables_markdown"]
    assert "link tx/s" in res["tables_markdown"]
    # D: CUBIC + SACK + timestamps on both sides, 1500-byte packets (MSS 1448 + 52 B of headers).
    d = res["cases"]["D"]["runs"]
    ns3, iw = d["ns3"][0], d["iwlab"][0]
    assert (ns3["cc"], ns3["mss"], ns3["timestamps"], ns3["sender_stats"]) == ("cubic", 1448, 1, 1)
    assert ns3["data_segments"] > 0 and iw["data_segments"] > 0
    assert ns3["retransmissions"] >= 0 and iw["retransmissions"] >= 0
    assert ns3["max_cwnd_segments"] > 10 and iw["max_cwnd_segments"] > 10  # slow start has begun
    assert ns3["bottleneck_packets"] > 0 and iw["bottleneck_packets"] > 0


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
        ("D", ["D"]),
        ("A-scale,C", ["A-scale", "C"]),
        ("B", ["B-iw10", "B-iw3"]),
        (None, ["A-default", "A-scale", "B-iw10", "B-iw3", "C", "D"]),
    ],
)
def test_only_selects_cases_by_key_or_group(only, keys):
    assert [c.key for c in bench_run.select(only)] == keys


def test_an_unknown_case_is_an_error_naming_the_valid_ones():
    with pytest.raises(SystemExit, match="A-scale"):
        bench_run.select("E")


def test_earlier_ns3_runs_are_found_by_their_command(tmp_path):
    case = next(c for c in bench_run.CASES if c.key == "D")
    cmd = bench_run.display(bench_run.ns3_argv(case, 2, True, case.duration))
    assert "--cc cubic" in cmd and "--run 2" in cmd and "--duration 5" in cmd
    lines = tmp_path / "runs.jsonl"
    lines.write_text(json.dumps({"command": cmd, "rep": 2, "wall_s": 9.0}) + "\n")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"cases": {"A-default": {"runs": {"iwlab": [{"command": "x"}],
                                                                    "ns3": [{"command": "bulk --run 1"}]}}}}))
    runs = bench_run.load_ns3_runs([str(lines), str(results)])
    assert set(runs) == {cmd, "bulk --run 1"}  # iwlab runs are never reused
    assert runs[cmd]["wall_s"] == 9.0 and runs[cmd]["reused_from"] == str(lines)
