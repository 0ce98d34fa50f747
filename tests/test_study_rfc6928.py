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


# ---------------------------------------------------------------------------------------------
# §6, §9 and Appendix A: the testbed (rfc6928/testbed*.py) and the IW sizes (rfc6928/iw_sizes.py)

from iwlab.studies.rfc6928 import iw_sizes as sizes  # noqa: E402
from iwlab.studies.rfc6928 import testbed as bed  # noqa: E402
from iwlab.studies.rfc6928 import testbed_tables as bed_tables  # noqa: E402

NEW = ("6-five/latency", "6-five/drops", "9-spurious", "A-drops/modest", "A-drops/extreme", "A-mixed/light-medium",
       "A-mixed/high", "A-bulk", "A-iw10/benefit", "A-iw10/retx")


def test_no_rfc_6928_claim_is_pending_and_the_new_claims_are_in_the_inventory():
    from iwlab.studies.inventory import load

    mine = [e for e in load() if e.source == "RFC 6928"]
    assert not [e for e in mine if e.status == "pending"]
    listed = {e.detail for e in mine if e.status == "ledger"}
    assert {i.split("/")[0] for i in NEW} <= listed
    assert set(NEW) <= {c.id for c in st.ledger()}


def _cell_table(name, cells):
    from iwlab.studies.model import Table

    return Table.from_cells(name, name, cells)


def _evidence_for(claim, value, half=0.5, seeds=10):
    """Every checked cell of `claim` at `value` ± `half` (an interval from `seeds` seeds)."""
    from iwlab.studies import claims as cl

    tables = {}
    for ch in claim.checks:
        tables.setdefault(ch.ours.table, {}).setdefault(ch.ours.row, {})[ch.ours.col] = cl.Cell(
            value, value - half, value + half, seeds)
    return cl.Evidence({k: _cell_table(k, v) for k, v in tables.items()}, seeds=seeds)


# (claim, a value the RFC's sentence calls true, one it calls false) — the rule's side and reference.
RULES = {"6-five/latency": (8.0, -8.0), "6-five/drops": (2.0, -2.0), "9-spurious": (3.0, -3.0),
         "A-drops/modest": (0.3, 2.5), "A-drops/extreme": (12.0, 2.0), "A-mixed/light-medium": (4.0, 25.0),
         "A-mixed/high": (-5.0, 5.0), "A-bulk": (6.0, -6.0), "A-iw10/benefit": (80.0, 30.0), "A-iw10/retx": (0.3, 2.0)}


@pytest.mark.parametrize("cid", NEW)
def test_each_new_claims_rule_reproduces_its_sentence_and_refuses_the_opposite(cid):
    from iwlab.studies import claims as cl

    (claim,) = [c for c in st.ledger() if c.id == cid]
    good, bad = RULES[cid]
    assert {r.verdict for r in cl.judge([claim], _evidence_for(claim, good))[0].rows} == {"reproduced"}
    (j,) = cl.judge([claim], _evidence_for(claim, bad))
    assert j.verdict == "not reproduced" and {r.verdict for r in j.rows} == {"not reproduced"}
    # An interval that holds the reference decides nothing; 3 seeds give no interval at all.
    ref = claim.rule.ref
    assert cl.judge([claim], _evidence_for(claim, ref, half=1.0))[0].verdict == "inconclusive"
    assert cl.judge([claim], _evidence_for(claim, good, seeds=3))[0].verdict == "inconclusive"


def _testbed_records():
    """Two seeds of a §6-like run per IW: one burst of 2 flows at t = 20 s (both complete), one
    at 30 s (one incomplete); a flow in the warm-up and one in the last 10 % are left out; the
    IW10 run drops 5 % at the bottleneck and loses one packet on another link in seed 2."""
    import pandas as pd

    flows, links = [], []
    for seed in (1, 2):
        for iw in (3, 10):
            k = 0.5 if iw == 10 else 1.0
            for start, end, done, to in ((20.0, 20 + 2 * k, True, 0), (20.0, 20 + 3 * k, True, 1),
                                         (30.0, 31.0, True, 0), (30.0, None, False, 0), (5.0, 6.0, True, 0),
                                         (95.0, 96.0, True, 0)):
                flows.append({bed.FIRST: iw, "seed": seed, "app_kind": "short", "start": start, "last_byte": end,
                              "completed": done, "in_warmup": start < 10, "timeouts": to, "iw_segments": iw * 1.0,
                              "delivered_bytes": 1000})
            flows.append({bed.FIRST: iw, "seed": seed, "app_kind": "bulk", "start": 0.0, "last_byte": 99.0,
                          "completed": False, "in_warmup": True, "timeouts": 0, "iw_segments": 10.0,
                          "delivered_bytes": 1_000_000 * (2 if iw == 10 else 1)})
            links.append({bed.FIRST: iw, "seed": seed, "from": "router-right", "to": "router-left",
                          "drop_rate": 0.05 if iw == 10 else 0.0, "queue_drops": 5 if iw == 10 else 0, "loss_drops": 0})
            links.append({bed.FIRST: iw, "seed": seed, "from": "router-left", "to": "router-right", "drop_rate": 0.0,
                          "queue_drops": 1 if (iw, seed) == (3, 2) else 0, "loss_drops": 0})
    return pd.DataFrame(flows), pd.DataFrame(links)


def test_testbed_records_summarised_per_run():
    flows, links = _testbed_records()
    per = bed.summarise(flows, links, [bed.FIRST, "seed"], duration=100.0, warmup=10.0)
    r3 = per[(per["seed"] == 1) & (per["iw"] == 3)].iloc[0]
    assert r3["population"] == "IW3" and r3["flows"] == 4 and r3["completed"] == 3
    assert r3["latency"] == pytest.approx((2 + 3 + 1) / 3)
    assert r3["rto_pct"] == pytest.approx(25.0)
    assert r3["burst_latency"] == pytest.approx(3.0)  # the 30 s burst did not complete: left out
    assert r3["bulk_bps"] == pytest.approx(1_000_000 * 8 / 100)
    r10 = per[(per["seed"] == 1) & (per["iw"] == 10)].iloc[0]
    assert r10["population"] == "IW10" and r10["drop_pct"] == pytest.approx(5.0) and r10["drops_any"] == 5
    assert per[(per["seed"] == 2) & (per["iw"] == 3)].iloc[0]["drops_any"] == 1


def test_the_testbed_tables_pair_by_seed_and_leave_out_a_seed_that_dropped_in_the_spurious_check():
    flows, links = _testbed_records()
    per = bed.summarise(flows, links, [bed.FIRST, "seed"], duration=100.0, warmup=10.0)
    p = bed.plan(2, "tiny")
    (label,) = p.five
    five = bed_tables.five_table(per.assign(path=label), p)
    assert five.frame.loc[label, "latency improvement %"] == pytest.approx(50.0)
    assert five.frame.loc[label, "drops IW10 − IW3 (pp)"] == pytest.approx(5.0)
    (path,) = p.spurious
    spur = bed_tables.spurious_table(per.assign(path=path), p)
    # every IW10 run dropped at the bottleneck, so no seed is left to say whether an RTO was spurious
    assert np.isnan(spur.frame.loc[path, "IW10 responses with an RTO %"])
    assert spur.frame.loc[path, "seeds with a drop"] == 2


def test_a_mirrored_half_and_half_population_is_mixed_and_weighs_flows():
    import pandas as pd

    rows = [{bed.FIRST: a, bed.SECOND: b, "seed": 1, "iw": iw, "latency": lat, "completed": n}
            for a, b, iw, lat, n in ((3, 10, 3, 2.0, 1), (10, 3, 3, 5.0, 3), (3, 10, 10, 1.0, 2), (10, 3, 10, 1.0, 2))]
    df = pd.DataFrame(rows)
    df["population"] = np.where(df[bed.FIRST] == df[bed.SECOND], "same", "mixed")
    assert bed_tables._by_seed(df, "latency", "mixed", 3).loc[1] == pytest.approx((2.0 + 15.0) / 4)


def test_load_sets_the_poisson_rate_from_the_mean_response():
    # 30 % of 1 Mb/s over 4 sources, mean response 12.4 × 1448 B
    assert bed.flows_per_second(0.3, 1e6, 4) == pytest.approx(0.3 * 1e6 / (8 * 12.4 * 1448) / 4)
    # bursts of 5 such responses at 25 % of 64 kb/s
    assert bed.burst_gap(64e3) == pytest.approx(5 * 12.4 * 1448 * 8 / (0.25 * 64e3), abs=1e-3)


def test_iw_sizes_share_of_the_gain_per_seed():
    import pandas as pd

    lat = {"iw3": 1.0, "iw6": 0.9, "iw10": 0.8, "iw16": 0.76, "iw32": 1.1}
    rows = [{"seed": s, "iw": k, "latency": v, "retransmits": 1 + (k == "iw32"), "data_segments": 100}
            for s in (1, 2) for k, v in lat.items()]
    g = sizes.gains(sizes.per_seed(pd.DataFrame(rows)))
    assert g.loc[1, "gain iw10"] == pytest.approx(20.0)
    assert g.loc[1, "share iw16"] == pytest.approx(20.0 / 24.0 * 100)
    assert np.isnan(g.loc[1, "share iw32"])  # IW32 gained nothing: no share to speak of
    t = sizes.table(pd.DataFrame(rows))
    assert t.frame.loc["IW32", "retx − IW3 (pp)"] == pytest.approx(1.0)


def test_the_tiny_run_has_the_new_tables(study):
    t = tables(study[0])
    assert list(t["iw_sizes"].frame.index) == ["IW3", "IW6", "IW10", "IW16", "IW32"]
    load = t["testbed_load"].frame
    assert [r for r in load.index] == [bed_tables.row("1 Mb/s", x) for x in ("medium", "high", "extreme")]
    assert (load[["IW3 drops %", "IW10 drops %"]] >= 0).all().all()
    assert (t["testbed_bulk"].frame["bulk beside IW3 (kb/s)"] > 0).all()
    assert t["spurious_rtos"].frame["seeds with a drop"].iloc[0] == 0
    assert np.isfinite(t["five_connections"].frame["IW3 total latency (s)"]).all()
    judged = {j.claim.id: j for j in study[0].claims}
    assert set(NEW) <= set(judged)
