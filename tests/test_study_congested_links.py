"""The congested-links study (docs/studies.md) in its tiny mode (IWLAB_STUDY_TINY=1: 2 seeds × 40 s,
sizes 10 and 22, levels 60 and 95 %): tables, exact loss counting, report, conclusions."""

import numpy as np
import pandas as pd
import pytest

from iwlab.studies import Options
from iwlab.studies import congested_links as cl
from iwlab.studies.base import TINY_ENV
from studies_common import check_claims, check_tables_and_report, run_tiny, tables

ROWS = [f"{pt} {lv} %" for pt in cl.PATTERNS for lv in (60, 95)]
PAIRS = [f"{s} seg {iw}" for s in (10, 22) for iw in ("IW3", "IW10")]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return run_tiny(cl, tmp_path_factory.mktemp("congested-links"))


def test_tables_have_the_tiny_grid_as_rows_and_size_by_iw_as_columns(study):
    tabs = tables(study[0])
    for name in ("completion", "throughput", "losses", "retransmissions", "timeouts", "fast_retransmits"):
        assert list(tabs[name].frame.index) == ROWS, name
        assert list(tabs[name].frame.columns) == PAIRS, name
    for name in ("ratio_completion", "ratio_throughput"):
        assert tabs[name].frame.shape == (len(ROWS), 2)
        assert list(tabs[name].frame.columns) == ["10 seg", "22 seg"]
    assert list(tabs["bottleneck"].frame.columns) == ["utilisation %", "drop rate %", "short flows per run", "completed %"]


def test_every_cell_lies_in_its_interval_and_counts_are_sane(study):
    tabs = tables(study[0])
    for t in tabs.values():
        v, lo, hi = (df.to_numpy(dtype=float) for df in (t.frame, t.low, t.high))
        ok = np.isfinite(v)
        assert ok.all(), t.name  # every (pattern, level, size, IW) ran
        assert (lo[ok] <= v[ok] + 1e-9).all() and (v[ok] <= hi[ok] + 1e-9).all(), t.name
    assert (tabs["ratio_completion"].frame > 0).all().all() and (tabs["ratio_throughput"].frame > 0).all().all()
    for name in ("losses", "retransmissions", "timeouts", "fast_retransmits"):
        assert (tabs[name].frame >= 0).all().all(), name
    bn = tabs["bottleneck"].frame
    assert bn["utilisation %"].between(0, 100).all() and bn["drop rate %"].between(0, 100).all()
    assert bn["completed %"].between(0, 100).all()
    # 40 s runs, 5 s warm-up, the last 20 s not counted, a flow every 2 s from 5 s: 8 flows.
    assert (bn["short flows per run"] == 8).all()


def test_utilisation_follows_the_constant_level(study):
    bn = tables(study[0])["bottleneck"].frame["utilisation %"]
    assert 60 <= bn["constant 60 %"] < 75
    assert bn["constant 95 %"] > 90


def test_losses_are_exact_never_negative_and_never_above_the_retransmissions(study):
    runs = sorted((study[1] / "raw" / "runs").glob("*.parquet"))
    assert len(runs) == len(ROWS) * 2 * 2 * 2  # × sizes × IWs × seeds
    f = pd.concat([pd.read_parquet(p) for p in runs], ignore_index=True)
    assert (f["lost"] >= 0).all()
    # Every lost packet has to be sent again before a flow completes — except in flows hit by the
    # simulator's out-of-order bare-FIN defect, which the study flags, counts and leaves out.
    bad = cl.unreceived(f)
    assert bad.mean() < 0.02
    done = f[f["completed"] & ~bad]
    assert (done["lost"] <= done["retransmits"]).all()
    assert study[0].setup["flows_with_unreceived_data"] == int(bad.sum())
    # UDP at 60 % with 50 packets of buffer: nothing is ever dropped.
    calm = f[(f["pattern"] == "constant") & (f["level"] == 60)]
    assert (calm["lost"] == 0).all() and (calm["drop_rate"] == 0).all()
    assert f["lost"].sum() > 0  # and at 95 % or with TCP background there are losses


def test_a_ratio_cell_is_the_mean_of_per_seed_ratios(study):
    res, out, _ = study
    f = pd.concat([pd.read_parquet(p) for p in (out / "raw" / "runs").glob("*.parquet")], ignore_index=True)
    f.loc[cl.unreceived(f), "completion"] = np.nan
    g = f[(f["pattern"] == "varying") & (f["level"] == 60) & (f["size"] == 22)]
    per_seed = g.groupby(["seed", "iw"])["completion"].mean().unstack()
    expected = (per_seed["iw10"] / per_seed["iw3"]).mean()
    assert tables(res)["ratio_completion"].frame.loc["varying 60 %", "22 seg"] == pytest.approx(expected)


def test_csvs_report_and_conclusions(study):
    res, out, report = study
    text = check_tables_and_report(res, out, report)
    assert len(res.figures) >= 5 and all(c in text for c in res.conclusions[:1])
    # The first sentence quotes the ratio ranges of the table.
    rc = tables(res)["ratio_completion"].frame
    lo60 = rc.loc["constant 60 %"].min()
    assert f"{lo60:.2f}" in res.conclusions[0]
    assert any("Mode tiny" in n for n in res.notes)


def test_a_second_run_reuses_the_stored_runs(study, monkeypatch):
    res, out, _ = study
    before = {p.name: p.stat().st_mtime_ns for p in (out / "raw" / "runs").glob("*.parquet")}
    monkeypatch.setenv(TINY_ENV, "1")
    again = cl.run(Options(out=out, jobs=1, progress=False))
    after = {p.name: p.stat().st_mtime_ns for p in (out / "raw" / "runs").glob("*.parquet")}
    assert before == after
    assert again.tables[0].frame.equals(res.tables[0].frame)


def test_bandwidth_and_rtt_are_parameters():
    sc = cl.scenario("mixed", 80, 9, "iw10", 30, 5, bandwidth_mbps=4, rtt_ms=100)
    bottleneck = sc.data["topology"]["bottleneck"]
    assert bottleneck["rate"] == "4Mbps" and bottleneck["delay"] == "48ms"
    kinds = [a["kind"] for a in sc.data["apps"]]
    assert kinds == ["short-flows", "udp", "poisson-flows"]
    assert sc.data["apps"][1]["rate"] == "40%" and sc.data["apps"][2]["load"] == pytest.approx(0.4)
    assert sc.data["apps"][0]["response"] == "9seg" and sc.data["apps"][0]["server_iw"] == "iw10"
    assert cl.preset_defaults() == {"bandwidth_mbps": 2.0, "rtt_ms": pytest.approx(200.0)}
    with pytest.raises(ValueError, match="pattern"):
        cl.scenario("bursty", 80, 9, "iw10", 30, 5)
    with pytest.raises(ValueError, match="level"):
        cl.scenario("constant", 120, 9, "iw10", 30, 5)


def test_pcap_counting_on_a_lossless_run(tmp_path):
    import iwlab

    sc = cl.scenario("constant", 60, 22, "iw10", 20, 2)
    r = iwlab.run(sc, seed=1)
    short = r.flows[r.flows["app_kind"] == "short"]
    ids = [int(i) for i in short["flow"]]
    iwlab.run(sc, seed=1, pcap=tmp_path / "x.pcap", flows=ids)
    seen = cl.pcap_data_packets(tmp_path / "x.pcap")
    done = short[short["completed"]]
    # No loss: every data segment of each flow (request + 22 response segments) crossed the bottleneck.
    assert {10_000 + int(i) for i in done["flow"]} <= set(seen)
    for i, d in zip(done["flow"], done["data_segments"]):
        assert seen[10_000 + int(i)] == int(d) == 23



def test_the_claims_ledger_is_judged_on_the_run_and_written_first(study):
    check_claims(*study)
