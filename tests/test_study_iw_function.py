"""The IW-function study (docs/studies.md) in tiny mode (IWLAB_STUDY_TINY=1: 2 seeds × 120 s, RTTs 20
and 200 ms, C ∈ {4, 10, 45}, V ∈ {10, 45}): tables, the size-based IW as the records show it,
report, conclusions."""

import math

import numpy as np
import pytest

import iwlab
from iwlab.studies import iw_function as st
from studies_common import check_claims, check_tables_and_report, run_tiny, tables

POLICIES = ["C = 4", "C = 10", "C = 45", "V = 10", "V = 45"]
COLUMNS = ["RT_s", "RR_s %", "RR_l %", "CT_s (s)", "CT_l (s)", "small flows", "large flows", "large completed %"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return run_tiny(st, tmp_path_factory.mktemp("iw-function"))


@pytest.mark.parametrize("rtt", [20, 200])
def test_metricstables(study, rtt):
    t = tables(study[0])[f"metrics_rtt{rtt}ms"]
    assert list(t.frame.index) == POLICIES and list(t.frame.columns) == COLUMNS
    f = t.frame
    assert (f["RT_s"] >= 0).all()
    assert f[["RR_s %", "RR_l %"]].apply(lambda c: c.between(0, 100)).all().all()
    assert (f["CT_s (s)"] < f["CT_l (s)"]).all()  # small flows finish sooner
    assert (f["CT_s (s)"] > rtt / 1000).all()  # at least a handshake and a round
    # A seed fixes arrivals and sizes: every policy sees the same flows.
    assert f["small flows"].nunique() == 1 and f["large flows"].nunique() == 1
    v, lo, hi = (df.to_numpy(dtype=float) for df in (t.frame, t.low, t.high))
    assert np.isfinite(v).all() and (lo <= v + 1e-9).all() and (v <= hi + 1e-9).all()


def test_improvement_and_powertables(study):
    tabs = tables(study[0])
    imp = tabs["improvement"]
    assert list(imp.frame.index) == [f"RTT {r} ms, V = {v}" for r in (20, 200) for v in (10, 45)]
    assert list(imp.frame.columns) == ["CT_s vs C = V %", "CT_s vs C = 4 %", "CT_l vs C = V %", "CT_l vs C = 4 %"]
    assert ((imp.frame > -100) & (imp.frame < 100)).all().all()
    pw = tabs["power"]
    assert list(pw.frame.columns) == POLICIES and len(pw.frame) == 2 * len(st.SIZE_LABELS)
    assert (pw.frame.dropna() > 0).all().all()


def test_an_improvement_cell_is_the_mean_of_per_seed_improvements(study):
    res, out, _ = study
    rows = []
    for seed in (1, 2):
        ct = {}
        for pol in ("c4", "v45"):
            f = iwlab.sweep_records(out / "raw" / "rtt200ms", "flows")
            f = f[(f["iw.default"] == pol) & (f["seed"] == seed) & ~f["in_warmup"]
                  & (f["start"] <= 120 - st.TAIL) & (f["response_bytes"] <= 200_000)]
            ct[pol] = f["completion"].astype(float).mean()
        rows.append((ct["c4"] - ct["v45"]) / ct["c4"] * 100)
    assert tables(res)["improvement"].frame.loc["RTT 200 ms, V = 45", "CT_s vs C = 4 %"] == pytest.approx(np.mean(rows))


def test_the_records_show_the_size_based_iw(study):
    f = iwlab.sweep_records(study[1] / "raw" / "rtt20ms", "flows")
    f = f[(f["iw.default"] == "v45") & (f["app_kind"] == "poisson") & (f["iw_bytes"] > 0)]
    theta, v, min_iw = 200_000, 45, 4
    for s, iw in zip(f["response_bytes"], f["iw_segments"]):
        expected = v if s <= theta else math.floor(theta / s * v + (1 - theta / s) * min_iw)
        assert iw == pytest.approx(expected), s
    c = iwlab.sweep_records(study[1] / "raw" / "rtt20ms", "flows")
    c = c[(c["iw.default"] == "c10") & (c["iw_bytes"] > 0)]
    assert (c["iw_segments"] == 10).all()


def test_csvs_report_and_conclusions(study):
    res, out, report = study
    check_tables_and_report(res, out, report)
    assert len(res.figures) == 3
    col4 = tables(res)["improvement"].frame["CT_s vs C = 4 %"]
    assert f"{col4.max():.1f} %" in res.conclusions[1]
    assert any("θ = 200 kB" in n for n in res.notes)



def test_the_claims_ledger_is_judged_on_the_run_and_written_first(study):
    check_claims(*study)
