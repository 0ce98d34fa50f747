"""The RFC 6928 study (docs/studies.md): the §5.1 round-trip table by simulation equals the RFC's
exactly; the population experiment and the fallback comparison in tiny mode
(IWLAB_STUDY_TINY=1: 2 seeds × 40 s, 60 clients)."""

import numpy as np
import pytest

from iwlab.studies import rfc6928 as st
from studies_common import check_claims, check_tables_and_report, run_tiny, tables

RFC_TABLE = {  # RFC 6928 §5.1, verbatim
    "segments": [3, 6, 10, 12, 21, 25, 33, 46, 51, 78, 79, 120, 127],
    3: [1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8, 9],
    10: [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5],
}


def test_the_section_5_1_table_equals_the_rfc_exactly():
    df = st.section_5_1()
    for iw in (3, 10):
        g = df[df["iw"] == iw]
        assert g["segments"].tolist() == RFC_TABLE["segments"]
        assert g["rounds"].tolist() == RFC_TABLE[iw], f"IW={iw}"
    # Whole round trips, not a rounding accident: each delivery ends within 1 ms of k × RTT.
    assert np.allclose(df["seconds"], df["rounds"] * st.TABLE_RTT, atol=1e-3)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return run_tiny(st, tmp_path_factory.mktemp("rfc6928"))


def test_the_report_table_5_1_is_the_rfcs(study):
    t = tables(study[0])["section_5_1"]
    for iw in (3, 10):
        assert t.frame.loc[f"IW={iw} iwlab"].tolist() == RFC_TABLE[iw]
        assert t.frame.loc[f"IW={iw} RFC 6928"].tolist() == RFC_TABLE[iw]
    assert "Identical" in t.note


@pytest.mark.parametrize(("name", "labels"), [("latency_by_bandwidth", st.BW_LABELS),
                                              ("latency_by_rtt", st.RTT_LABELS),
                                              ("latency_by_bdp", st.BDP_LABELS)])
def test_latencytables(study, name, labels):
    t = tables(study[0])[name]
    assert list(t.frame.index) == [st.ALL, *labels]
    assert list(t.frame.columns) == [f"{p} {c}" for p in st.POPULATIONS
                                     for c in ("flows %", "IW3 (ms)", "IW10 (ms)", "improvement %")]
    for pop in st.POPULATIONS:
        share = t.frame[f"{pop} flows %"]
        assert share[st.ALL] == pytest.approx(100)
        assert share.drop(st.ALL).sum() == pytest.approx(100, abs=1e-6)  # the buckets partition the flows
        imp = t.frame[f"{pop} improvement %"].dropna()
        assert ((imp > -100) & (imp < 100)).all()
        assert (t.frame[[f"{pop} IW3 (ms)", f"{pop} IW10 (ms)"]].dropna() > 0).all().all()
    v, lo, hi = (df.to_numpy(dtype=float) for df in (t.frame, t.low, t.high))
    ok = np.isfinite(v)
    assert (lo[ok] <= v[ok] + 1e-9).all() and (v[ok] <= hi[ok] + 1e-9).all()


def test_retransmission_rates_and_their_change(study):
    t = tables(study[0])["retransmissions"]
    assert t.frame.shape == (2 * (1 + len(st.BW_LABELS)), 3)
    rates = t.frame[["IW3 %", "IW10 %"]].dropna()
    assert ((rates >= 0) & (rates <= 100)).all().all()
    # The mean of per-seed differences is the difference of the means (same seeds).
    diff = t.frame["IW10 − IW3 (pp)"]
    assert np.allclose(diff, t.frame["IW10 %"] - t.frame["IW3 %"], equal_nan=True)


def test_fallback_table(study):
    t = tables(study[0])["fallback"]
    red = t.frame["responses with a reduced IW %"].dropna()
    assert ((red >= 0) & (red <= 100)).all()
    assert t.frame.loc["AvgDC all", "IW10 latency (ms)"] == pytest.approx(
        tables(study[0])["latency_by_bandwidth"].frame.loc[st.ALL, "AvgDC IW10 (ms)"])


def test_the_populations_differ_as_documented(study, tmp_path):
    res, out, _ = study
    import iwlab

    medians = {}
    for pop in st.POPULATIONS:
        links = iwlab.sweep_records(out / "raw" / pop.lower(), "links")
        one = links[(links["seed"] == 1) & (links["iw.default"] == "iw3")]
        h = st.hosts(one)
        assert len(h) == 60 and (h["rate"] > 0).all() and (h["rtt"] > 0.014).all()
        medians[pop] = h["rate"].median()
        assert set(h["client"]) == set(range(2, 62))
    assert medians["SlowDC"] < medians["AvgDC"]


def test_csvs_report_and_conclusions(study):
    res, out, report = study
    check_tables_and_report(res, out, report)
    assert len(res.figures) == 3
    assert "exactly as in the RFC" in res.conclusions[0]
    bw = tables(res)["latency_by_bandwidth"]
    assert f"{bw.frame.loc[st.ALL, 'AvgDC improvement %']:.1f} %" in res.conclusions[1]
    rt = tables(res)["retransmissions"]
    assert f"{rt.frame.loc['AvgDC all', 'IW3 %']:.2f} %" in " ".join(res.conclusions)



def test_the_claims_ledger_is_judged_on_the_run_and_written_first(study):
    check_claims(*study)


def _flows(rows):
    import pandas as pd

    cols = ["seed", "iw", "client", "response_bytes", "latency", "retransmits", "timeouts", "fast_retransmits"]
    return pd.DataFrame(rows, columns=cols)


def test_evidence_of_the_claims_read_from_the_flow_records():
    # Two seeds; seed by seed: client 2 retransmitted with IW3 and rises by 4 with IW10, client 3 did
    # not and rises by 1 (80 % of the rise from traffic that already retransmitted, §10.2). Recoveries:
    # IW3 1 fast retransmit of 4, IW10 3 of 4 (+50 points, §5.3). Small responses: 1.0 s → 0.9 s.
    rows = []
    for seed in (1, 2):
        rows += [(seed, "iw3", 2, 2000, 1.0, 2, 3, 1), (seed, "iw3", 3, 50_000, 3.0, 0, 0, 0),
                 (seed, "iw10", 2, 2000, 0.9, 6, 1, 3), (seed, "iw10", 3, 50_000, 2.0, 1, 0, 0)]
    ev = st.evidence({"AvgDC": _flows(rows)})
    assert ev["retx rise from baseline retx AvgDC"].value == pytest.approx(80.0)
    assert ev["fast recovery share IW10-IW3 AvgDC"].value == pytest.approx(50.0)
    assert ev["small responses improvement AvgDC"].value == pytest.approx(10.0)
    # Responses above 3 segments are not "small": the 50 kB ones do not enter.
    assert st.SMALL_RESPONSE == 3 * 1448


def test_the_three_claims_judged_from_the_runs_are_in_the_ledger_not_pending():
    from iwlab.studies.inventory import load

    ids = {c.id for c in st.ledger()}
    assert {"5.3-fast-recovery", "10-small-responses", "10-retx-baseline"} <= ids
    listed = {e.detail for e in load() if e.source == "RFC 6928" and e.status == "ledger"}
    assert {"5.3-fast-recovery", "10-small-responses", "10-retx-baseline"} <= listed
