"""The congested-links study (docs/studies.md) in its tiny mode (IWLAB_STUDY_TINY=1: 2 seeds × 40 s,
sizes 10 and 22, levels 60 and 90 %): tables, exact loss counting, report, conclusions, and the setup
held to Nathan & Rai's (RTT, TCP background, UDP that congests, levels up to 90 %)."""

import numpy as np
import pandas as pd
import pytest

from iwlab.studies import Options
from iwlab.studies import congested_links as cl
from iwlab.studies.base import TINY_ENV
from studies_common import check_claims, check_tables_and_report, run_tiny, tables

ROWS = [f"{pt} {lv} %" for pt in cl.ROW_PATTERNS for lv in cl.levels_of(pt, (60, 90))]
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
    assert bn["constant 90 %"] > 88
    # The iperf reading: one long-lived flow keeps the link nearly full whatever the level.
    assert bn["varying/iperf 60 %"] > 90 and bn["mixed/iperf 60 %"] > 90


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
    assert f["lost"].sum() > 0


def test_a_ratio_cell_is_the_mean_of_per_seed_ratios(study):
    res, out, _ = study
    f = pd.concat([pd.read_parquet(p) for p in (out / "raw" / "runs").glob("*.parquet")], ignore_index=True)
    f.loc[cl.unreceived(f), "completion"] = np.nan
    g = f[(f["pattern"] == "varying/load") & (f["level"] == 60) & (f["size"] == 22)]
    per_seed = g.groupby(["seed", "iw"])["completion"].mean().unstack()
    expected = (per_seed["iw10"] / per_seed["iw3"]).mean()
    assert tables(res)["ratio_completion"].frame.loc["varying/load 60 %", "22 seg"] == pytest.approx(expected)


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
    assert cl.preset_defaults() == {"bandwidth_mbps": 2.0, "rtt_ms": pytest.approx(100.0)}
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


# ---------------------------------------------------------------------------------------------
# The setup is Nathan & Rai's: these fail if it drifts from the original's.


def test_the_preset_has_the_papers_rtt_of_100_ms():
    # §3, Table 1: the first flight leaves at 0.0845 s and the next one, clocked by its ACKs, at
    # 0.1848 s — a round trip of about 100 ms.
    assert cl.preset_defaults()["rtt_ms"] == pytest.approx(100.0)
    assert cl.scenario("constant", 60, 10, "iw3", 30, 5).data["topology"]["bottleneck"]["delay"] == "48ms"


def test_levels_stop_at_90_percent_as_the_papers_range():
    # §4.1: "higher levels of congestion of about 60% to 90%".
    assert cl.LEVELS == (60, 70, 80, 90)
    assert max(cl.plan(Options(out=".", quick=True)).levels) == 90
    assert max(cl.plan(Options(out=".")).levels) == 90


def test_both_readings_of_the_tcp_background_are_run_iperf_being_a_long_lived_flow():
    from iwlab.studies.congested_links.scenarios import split

    def apps(row, level):
        pattern, tcp = split(row)
        return [a["kind"] for a in cl.scenario(pattern, level, 10, "iw10", 30, 5, tcp_background=tcp).data["apps"]]

    assert apps("varying/iperf", 60) == ["short-flows", "bulk"]  # §3: the iperf pair's long-lived flow
    assert apps("mixed/iperf", 80) == ["short-flows", "udp", "bulk"]
    assert apps("varying/load", 60) == ["short-flows", "poisson-flows"]
    assert apps("mixed/load", 80) == ["short-flows", "udp", "poisson-flows"]
    assert apps("constant", 80) == ["short-flows", "udp"]
    assert set(cl.plan(Options(out=".", quick=True)).patterns) == set(cl.ROW_PATTERNS)
    with pytest.raises(ValueError, match="row pattern"):
        split("constant/iperf")


def test_every_claim_on_a_tcp_pattern_is_judged_under_both_readings():
    ids = [c.id for c in cl.ledger()]
    tcp = [c for c in cl.ledger() if "/" in c.id]
    assert {c.id.split("/")[1] for c in tcp} == set(cl.READINGS)
    for c in tcp:
        base, reading = c.id.split("/")
        assert f"{base}/{'load' if reading == 'iperf' else 'iperf'}" in ids
        assert all(f"/{reading}" in k.condition or k.condition.startswith("constant") for k in c.checks), c.id
        assert "TCP background: the " + ("iperf" if reading == "iperf" else "offered-load") in c.quantity
    # Claims on the constant pattern alone are judged once.
    assert "NR-2a" in ids and "NR-2a/iperf" not in ids and "NR-C80/iperf" in ids
    # No condition above the paper's 90 %.
    assert not any(" 95 %" in k.condition for c in cl.ledger() for k in c.checks)


def test_constant_udp_congests_the_link_at_90_percent(study):
    # The paper's UDP made losses (IW10 can only be slower than IW3 under constant congestion, Fig. 2,
    # if packets are lost); at the top of its range the constant pattern drops packets of the short flows.
    f = pd.concat([pd.read_parquet(p) for p in (study[1] / "raw" / "runs").glob("*.parquet")], ignore_index=True)
    g = f[(f["pattern"] == "constant") & (f["level"] == 90)]
    assert g["drop_rate"].min() > 0 and g["lost"].sum() > 0
