"""Claims ledgers: every entry has a source and a computed verdict; verdicts follow the
data they read (flip the data, the verdict flips); long-form tables round-trip; the summary prints.
Synthetic results only — no simulation runs here."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

from iwlab.studies import STUDIES
from iwlab.studies import claims as cl
from iwlab.studies.base import Cell, StudyResult, Table, iw_col_keys, write_result

MODULES = {name: importlib.import_module(mod) for name, mod in STUDIES.items()}


@pytest.mark.parametrize("study", list(STUDIES))
def test_every_ledger_entry_has_a_source_a_rule_and_a_computed_verdict(study):
    # A ledger whose conditions come from its runs' evidence (quic-iw) is built from empty
    # evidence: each claim then holds a placeholder condition ("no … cell in this run").
    ledger = MODULES[study].ledger
    book = ledger(cells={}) if "cells" in inspect.signature(ledger).parameters else ledger()
    assert len(book) >= 5
    ids = [c.id for c in book]
    assert len(ids) == len(set(ids)), "claim ids are unique within a study"
    for c in book:
        assert c.source.strip() and c.at.strip(), c.id
        assert c.claim.strip() and c.quantity.strip(), c.id
        assert c.rule.text().startswith(("reproduced when", "not testable here")), c.id
        assert c.checks, c.id
    # Judged on no data at all, every claim still gets a verdict from its rule: not testable.
    judged = cl.judge(book, cl.Evidence({}))
    assert [j.verdict for j in judged] == ["not testable"] * len(book)


def test_the_published_numbers_are_the_documents_numbers():
    from iwlab.studies import iw_function, rfc2415, rfc6928

    # Spot checks against RFC 2415, RFC 6928 and the IW-function slides (the whole tables are transcribed in the modules).
    assert rfc2415.RFC_T1[(8, 0)] == (0.56, 14.3, 17.9, 16.1)
    assert rfc2415.RFC_T1[(32, 3)] == (1.56, 19.2, 29.5, 33.3)
    assert rfc2415.RFC_T2[(32, 3)] == ((100, 99, 99, 98), (9.3, 8.4, 7.7, 7.6))
    assert rfc2415.RFC_T4[(16, 0)] == (0.54, 7.4, 14.8, 20.4)
    assert rfc2415.RFC_T5[(32, 3)] == (0.4, 0.3, 0.4, 0.5)
    assert rfc2415.RFC_T6["32/32"]["IW=3 delay (s)"] == 1.20
    assert len(rfc2415.RFC_T1) == len(rfc2415.RFC_T2) == len(rfc2415.RFC_T4) == 12
    assert len(rfc2415.RFC_T3) == len(rfc2415.RFC_T5) == 9
    assert rfc6928.RFC_LATENCY == {"AvgDC": 11.7, "SlowDC": 8.7}
    assert rfc6928.RFC_RETX["SlowDC"] == (3.54, 4.21, 0.7)
    assert iw_function.DRAFT_TABLE["V = 16"] == (665, 0.5, 3.4, 0.309, 12.420)
    # One check per printed cell: Tables 1 and 4 print 12 × 4 cells, Table 2 12 × 8, Tables 3/5 9 × 4.
    book = {c.id: c for c in rfc2415.ledger()}
    assert len(book["T1-base"].checks) + len(book["T1-decrease"].checks) == 48
    assert len(book["T2-util"].checks) + len(book["T2-drops"].checks) == 96
    assert len(book["T3-base"].checks) + len(book["T3-ratio"].checks) == 36
    t6 = sum(len(book[k].checks) for k in ("T6-goodput", "T6-delay", "T6-link"))
    assert t6 == sum(len(v) for v in rfc2415.RFC_T6.values())
    draft = {c.id: c for c in iw_function.ledger()}
    assert sum(len(draft[f"table-{k}"].checks) for k in ("RT_s", "RR_s", "RR_l", "CT_s", "CT_l")) == 45 * 4
    # The condition is fixed before looking: the draft gives no RTT, so each cell at each RTT run.
    draft = {c.id: c for c in iw_function.ledger((20, 100))}
    assert {ch.condition.rsplit(", ", 1)[1] for ch in draft["table-CT_s"].checks} == {"RTT 20 ms", "RTT 100 ms"}
    assert {ch.condition for ch in draft["V16-18pct"].checks} == {"RTT 20 ms", "RTT 100 ms"}
    # A variant that runs one RTT is judged there.
    draft = {c.id: c for c in iw_function.ledger(table_rtt=50)}
    assert sum(len(draft[f"table-{k}"].checks) for k in ("RT_s", "RR_s", "RR_l", "CT_s", "CT_l")) == 45
    assert {ch.condition.rsplit(", ", 1)[1] for ch in draft["table-CT_s"].checks} == {"RTT 50 ms"}


def test_the_rtt_where_our_table_comes_closest_to_the_drafts_is_computed_for_the_notes():
    from iwlab.studies import iw_function as fn

    def table(rtt, scale):
        cells = {pol: {col: Cell(fn._draft(pol, col) * scale, 0, 0, 3) for col in fn.DRAFT_COLUMNS}
                 for pol in fn.DRAFT_TABLE}
        return Table.from_cells(f"metrics_rtt{rtt}ms", "", cells)

    tabs = {t.name: t for t in (table(20, 0.5), table(50, 1.1), table(100, 1.3), table(200, 2.0))}
    rtt, dist = fn.closest_rtt(tabs, (20, 50, 100, 200))
    assert rtt == 50 and dist[50] == pytest.approx(0.1) and dist[200] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# Verdicts follow the data


def _table(name, rows, cols, value, half_width):
    cells = {r: {c: Cell(value, value - half_width, value + half_width, 5) for c in cols} for r in rows}
    return Table.from_cells(name, name, cells)


def test_a_near_rule_flips_when_the_number_it_reads_is_flipped():
    from iwlab.studies import rfc2415

    book = [c for c in rfc2415.ledger() if c.id == "T1-decrease"]
    rows = [f"{w}/{f}" for w, f in rfc2415.RFC_ROWS]
    cols = [f"IW={k} (% decrease)" for k in (2, 3, 4)]
    # A result in which every decrease is 20 % [18, 22]: inside ±5 of some published cells.
    good = cl.judge(book, cl.Evidence({"T1": _table("T1", rows, cols, 20.0, 2.0)}, seeds=10))[0]
    assert good.verdict in ("reproduced", "partly")
    by_cond = {r.check.condition: r.verdict for r in good.rows}
    assert by_cond["webs=8, ftps=0, IW=3"] == "reproduced"  # published 17.9: band [12.9, 22.9]
    # The same result with the sign flipped (IW makes pages slower): nothing reproduced.
    bad = cl.judge(book, cl.Evidence({"T1": _table("T1", rows, cols, -20.0, 5.0)}))[0]
    assert bad.verdict == "not reproduced"
    assert {r.verdict for r in bad.rows} == {"not reproduced"}


def test_a_direction_rule_flips_and_names_the_conditions_where_it_holds():
    from iwlab.studies import congested_links as cgl

    book = [c for c in cgl.ledger() if c.id == "NR-2a"]
    rows = [f"constant {lv} %" for lv in cgl.LEVELS]
    ev_up = cl.Evidence({"ratio_completion": _table("ratio_completion", rows, ["9 seg", "10 seg"], 1.3, 0.1)})
    ev_down = cl.Evidence({"ratio_completion": _table("ratio_completion", rows, ["9 seg", "10 seg"], 0.8, 0.1)})
    assert cl.judge(book, ev_up)[0].verdict == "reproduced"
    assert cl.judge(book, ev_down)[0].verdict == "not reproduced"
    # Mean above 1 but the interval straddles it: inconclusive (a coin flip at few seeds earns nothing).
    ev_weak = cl.Evidence({"ratio_completion": _table("ratio_completion", rows, ["9 seg", "10 seg"], 1.05, 0.2)},
                          seeds=3)
    weak = cl.judge(book, ev_weak)[0]
    assert weak.verdict == "inconclusive" and "seeds needed" in weak.detail and weak.seeds == 3
    # Holding at one of four levels, no effect (CI around 1) at the others: partly, with the subset.
    t = _table("ratio_completion", rows, ["9 seg", "10 seg"], 1.0, 0.0)
    for df, v in ((t.frame, 1.3), (t.low, 1.2), (t.high, 1.4)):
        df.loc["constant 90 %"] = v
    j = cl.judge(book, cl.Evidence({"ratio_completion": t}))[0]
    assert j.verdict == "partly" and j.share == pytest.approx(0.25)
    assert j.detail.startswith("25 % hold") and "constant 90 %, 9 seg" in j.detail
    # The same subset, but the sign is wrong at another level: not reproduced, however many hold.
    for df, v in ((t.frame, 0.8), (t.low, 0.7), (t.high, 0.9)):
        df.loc["constant 60 %"] = v
    j = cl.judge(book, cl.Evidence({"ratio_completion": t}))[0]
    assert j.verdict == "not reproduced" and "wrong sign at 2" in j.detail


def _c(v, lo, hi, n=10):
    return Cell(v, lo, hi, n)


#: For each rule, a case that yields each outcome it can return: (rule, ours, published) per outcome.
OUTCOME_CASES = {
    cl.Near(tol=1.0): {
        "reproduced": (_c(10, 9.5, 10.5), 10.4),
        "not reproduced": (_c(10, 9.5, 10.5), 14.0),
        "inconclusive": (_c(10, 9.5, 10.5), 11.2),
        "not testable": (None, 14.0),
    },
    cl.Direction(">", 1.0): {
        "reproduced": (_c(1.3, 1.2, 1.4), None),
        "not reproduced": (_c(0.8, 0.7, 0.9), None),
        "inconclusive": (_c(1.05, 0.9, 1.2), None),
        "not testable": (None, None),
    },
    cl.Between(0.0, 1.0): {
        "reproduced": (_c(0.5, 0.1, 0.9), None),
        "not reproduced": (_c(2.0, 1.8, 2.2), None),
        "inconclusive": (_c(0.9, 0.5, 1.3), None),
        "not testable": (None, None),
    },
    cl.Exact(): {
        "reproduced": (_c(3, 3, 3), 3.0),
        "not reproduced": (_c(4, 4, 4), 3.0),
        "not testable": (None, 3.0),
    },
    cl.NotTestable("why"): {"not testable": (_c(1, 1, 1), 1.0)},
}


@pytest.mark.parametrize("rule", list(OUTCOME_CASES), ids=lambda r: type(r).__name__)
def test_each_verdict_rule_can_return_each_of_its_outcomes(rule):
    cases = OUTCOME_CASES[rule]
    assert set(cases) == set(type(rule).OUTCOMES), "a case for every outcome the rule declares"
    assert set(type(rule).OUTCOMES) <= set(cl.VERDICTS)
    for outcome, (ours, published) in cases.items():
        assert rule.judge(ours, published)[0] == outcome, (outcome, ours, published)


def test_every_rule_in_the_ledgers_can_both_pass_and_fail():
    """No rule that cannot fail, none that cannot pass (except the declared not-testable ones)."""
    for name, mod in MODULES.items():
        for c in mod.ledger():
            outs = set(type(c.rule).OUTCOMES)
            if isinstance(c.rule, cl.NotTestable):
                assert outs == {"not testable"} and c.rule.reason, c.id
                continue
            assert {"reproduced", "not reproduced"} <= outs, (name, c.id)


def test_a_magnitude_rule_keeps_the_size_and_is_inconclusive_only_across_an_edge():
    near = cl.Near(tol=1.0)
    v, why = near.judge(_c(10, 8.0, 12.0, 6), 10.0)  # the CI [8, 12] spans the band [9, 11]
    assert v == "inconclusive" and "about 24 seeds needed (this run: 6)" in why
    # The same mean with a tight interval decides.
    assert near.judge(_c(10, 9.6, 10.4, 16), 10.0)[0] == "reproduced"
    # A right-direction effect of the wrong size is not reproduced (draft-you's V16: -5.3 vs -17.6 %).
    assert cl.Near(tol=5.0).judge(_c(-5.3, -6.5, -4.1), -17.6)[0] == "not reproduced"
    # A wide interval wholly outside the band decides too: more seeds only narrow it.
    assert near.judge(_c(10, 8.0, 12.0, 6), 20.0)[0] == "not reproduced"
    assert near.judge(_c(10, 8.0, 12.0, 6), 13.0)[0] == "inconclusive"
    # No band in the ledger: ±25 % of the published effect.
    assert cl.Near().width(-17.6) == pytest.approx(4.4)
    assert cl.Near().judge(_c(-14, -15, -13.5), -17.6)[0] == "reproduced"
    assert cl.Near().judge(_c(-12, -12.5, -11.5), -17.6)[0] == "not reproduced"


@pytest.mark.parametrize("rule, published", [(cl.Near(tol=1.0), 10.0), (cl.Between(9.0, 11.0), None),
                                              (cl.Direction(">", 0.0), None)])
def test_no_interval_below_five_seeds(rule, published):
    """An interval from fewer than 5 seeds is neither judged nor printed: inconclusive."""
    tight = (10.0, 9.9, 10.1)
    assert rule.judge(_c(*tight, n=5), published)[0] == "reproduced"
    v, why = rule.judge(_c(*tight, n=4), published)
    assert v == "inconclusive" and "no interval below 5 seeds" in why and "seeds needed (this run: 4)" in why
    assert not cl.has_interval(_c(*tight, n=4)) and cl.has_interval(_c(10, 10, 10, n=2))
    # One seed shows no spread without being deterministic (a condition only one seed had flows for).
    assert not cl.has_interval(_c(10, 10, 10, n=1))
    assert rule.judge(_c(10, 10, 10, n=1), published)[0] == "inconclusive"


def test_a_claim_is_partly_reproduced_only_on_a_stated_subset_with_no_wrong_sign():
    rule = cl.Direction(">", 0.0)
    up, down, flat = _c(1, 0.5, 1.5), _c(-1, -1.5, -0.5), _c(0.1, -1, 1.2)

    def verdict(cells):
        claim = cl.Claim("x", "Doc", "p. 1", "x > 0", "x", rule, tuple(cl.Check(str(i), str(i)) for i in range(len(cells))))
        (j,) = cl.judge([claim], cl.Evidence({}, {str(i): c for i, c in enumerate(cells)}))
        return j.verdict, j.share

    assert verdict([up] * 10) == ("reproduced", pytest.approx(1.0))
    # The decided ones all hold, two are undecided: partly at most (with fewer seeds more conditions
    # are undecided, and that must never make a verdict more favourable).
    assert verdict([up] * 8 + [flat] * 2) == ("partly", pytest.approx(1.0))
    # A wrong sign anywhere: not reproduced, however many conditions hold.
    assert verdict([up] * 9 + [down]) == ("not reproduced", pytest.approx(0.9))
    assert verdict([up] * 2 + [flat] * 3) == ("inconclusive", None)
    # A subset holding, the rest decided without a wrong sign (a magnitude outside its band): partly.
    near = cl.Near(tol=1.0)
    claim = cl.Claim("y", "Doc", "p. 1", "y = 10", "y", near, tuple(cl.Check(str(i), str(i), 10.0) for i in range(4)))
    cells = [_c(10, 9.8, 10.2)] * 3 + [_c(14, 13.5, 14.5)]
    (j,) = cl.judge([claim], cl.Evidence({}, {str(i): c for i, c in enumerate(cells)}))
    assert (j.verdict, j.share) == ("partly", pytest.approx(0.75)) and "holds at: 0; 1; 2" in j.detail
    # The size outside the band with the sign flipped: not reproduced.
    cells[3] = _c(-5, -6, -4)
    (j,) = cl.judge([claim], cl.Evidence({}, {str(i): c for i, c in enumerate(cells)}))
    assert j.verdict == "not reproduced" and "wrong sign at 1" in j.detail


def test_where_it_holds_rejudges_a_claim_on_the_variants():
    from iwlab.studies import congested_links as cgl

    book = [c for c in cgl.ledger() if c.id == "NR-2a"]
    rows = ["constant 90 %"]
    main = cl.Evidence({"ratio_completion": _table("ratio_completion", rows, ["9 seg", "10 seg"], 0.8, 0.1)})
    judged = cl.judge(book, main)
    assert judged[0].verdict == "not reproduced"
    variants = {"buffer 10 pkt": cl.Evidence({"ratio_completion": _table("ratio_completion", rows, ["9 seg", "10 seg"],
                                                                         1.4, 0.1)}),
                "buffer 20 pkt": main}
    wheres = cl.where_it_holds(judged, book, variants, "bottleneck buffer")
    assert [(lab, v) for lab, v, _ in wheres[0].results] == [("buffer 10 pkt", "reproduced"),
                                                             ("buffer 20 pkt", "not reproduced")]
    assert judged[0].where.startswith("holds with buffer 10 pkt")


# ---------------------------------------------------------------------------------------------
# Output: claims.csv, the printed table and summary, the report, the long-form tables


def _result():
    from iwlab.studies import rfc2415

    rows = [f"{w}/{f}" for w, f in rfc2415.RFC_ROWS]
    t1 = _table("T1", rows, ["IW=1 (s)"] + [f"IW={k} (% decrease)" for k in (2, 3, 4)], 20.0, 5.0)
    t1.row_keys = lambda r: dict(zip(("webs", "ftps"), map(int, str(r).split("/"))))
    t1.col_keys = iw_col_keys
    judged = cl.judge(rfc2415.ledger(), cl.Evidence({"T1": t1}))
    ja = cl.japanese_summary(judged, "RFC 2415")
    return StudyResult("rfc2415", "RFC 2415", tables=[t1], claims=judged, claims_ja=ja), judged


def test_claims_csv_has_one_row_per_checked_cell_and_the_required_columns(tmp_path):
    res, judged = _result()
    write_result(res, tmp_path)
    df = pd.read_csv(tmp_path / "claims.csv")
    required = ["study", "claim_id", "source", "claim", "condition", "published", "ours", "ci_lo", "ci_hi", "verdict"]
    assert list(df.columns[: len(required)]) == required
    assert len(df) == sum(len(j.rows) for j in judged)
    assert set(df["verdict"]) <= set(cl.VERDICTS)
    t1 = df[df["claim_id"] == "T1-decrease"]
    assert len(t1) == 36 and t1["source"].str.startswith("RFC 2415 Table 1").all()
    row = t1[t1["condition"] == "webs=8, ftps=0, IW=2"].iloc[0]
    assert row["published"] == 14.3 and row["ours"] == 20.0 and row["ci_lo"] == 15.0
    assert row["diff"] == pytest.approx(20.0 - 14.3)
    html = (tmp_path / "report.html").read_text()
    assert html.index("id=claims") < html.index("<h2>Tables</h2>")
    assert "href='#T1'" in html and "検証結果の要約" in html and "再現" in html


def test_the_claims_table_and_summary_print():
    _, judged = _result()
    text = cl.claims_text(judged)
    assert text.splitlines()[0].startswith("Claims of the original")
    assert "T1-decrease" in text and "RFC 2415 Table 1" in text
    n = cl.counts(judged)
    line = cl.summary_line(judged, "rfc2415")
    assert line == (f"rfc2415: {len(judged)} claims ({sum(len(j.rows) for j in judged)} checked cells/conditions): "
                    f"{n['reproduced']} reproduced, {n['partly']} partly, {n['not reproduced']} not reproduced, "
                    f"{n['inconclusive']} inconclusive, {n['not testable']} not testable")
    assert text.splitlines()[-1] == cl.summary_line(judged)


def test_long_form_tables_round_trip(tmp_path):
    res, _ = _result()
    rng = np.random.default_rng(1)
    t = res.tables[0]
    t.frame.iloc[:, :] = rng.normal(size=t.frame.shape)
    t.low.iloc[:, :] = t.frame - 1
    t.high.iloc[:, :] = t.frame + 1
    t.frame.iloc[2, 1] = np.nan
    write_result(res, tmp_path)
    long = pd.read_csv(tmp_path / "tables" / "T1_long.csv")
    assert list(long.columns) == ["webs", "ftps", "iw", "metric", "value", "ci_lo", "ci_hi", "row_label", "col_label"]
    assert set(long["metric"]) == {"s", "pct_decrease"} and set(long["iw"]) == {1, 2, 3, 4}
    assert len(long) == t.frame.size
    frame, low, high = Table.from_long(long)
    np.testing.assert_allclose(frame.to_numpy(dtype=float), t.frame.to_numpy(dtype=float))
    np.testing.assert_allclose(low.to_numpy(dtype=float), t.low.to_numpy(dtype=float))
    np.testing.assert_allclose(high.to_numpy(dtype=float), t.high.to_numpy(dtype=float))
    wide = pd.read_csv(tmp_path / "tables" / "T1.csv", index_col=0)
    np.testing.assert_allclose(wide[t.frame.columns].to_numpy(dtype=float), frame.to_numpy(dtype=float))
    # Selecting by key columns needs no label parsing.
    sel = long[(long["webs"] == 8) & (long["ftps"] == 0) & (long["iw"] == 2)]
    assert float(sel["value"].iloc[0]) == pytest.approx(float(t.frame.loc["8/0", "IW=2 (% decrease)"]))


def test_congested_links_evidence_takes_the_conditions_a_variant_ran():
    """A variant runs a few (pattern, level) rows only: the evidence covers those, the rest of the
    claims' conditions are not testable (no crash, no invented cells)."""
    from iwlab.studies import congested_links as cgl

    rows = []
    for size in cgl.SIZES:
        for iw, c in (("iw3", 1.0), ("iw10", 1.5)):
            for seed in (1, 2, 3):
                rows.append({"pattern": "constant", "level": 90, "size": size, "iw": iw, "seed": seed, "flows": 50,
                             "completed": 1.0, "completion": c * size / 10,
                             "throughput": 100 / c, "lost": c, "retransmits": c, "timeouts": c - 1,
                             "fast_retransmits": 0.0, "syn_retransmits": 0.0, "util": 0.9, "drop_rate": 0.01})
    runs = pd.DataFrame(rows)
    ev = cgl.evidence(runs)
    assert ev["ratio 10-9 constant 90"].value == pytest.approx(0.0, abs=1e-9)
    assert ev["lost IW10-IW3 constant 90 9"].value == pytest.approx(0.5)
    assert not any("thr ratio change" in k for k in ev)
    tabs = {t.name: t for t in cgl.tables(runs)}
    judged = {j.claim.id: j for j in cl.judge(cgl.ledger(), cl.Evidence(tabs, ev))}
    assert judged["NR-2a"].verdict == "reproduced"  # ratio 1.5 at constant 90 % (the only level run)
    assert {r.verdict for r in judged["NR-2a"].rows if "90 %" not in r.check.condition} == {"not testable"}
    assert judged["NR-4/iperf"].verdict == judged["NR-4/load"].verdict == "not testable"


FAKE = '''
from iwlab.studies import claims as cl
from iwlab.studies.base import Cell, StudyResult, Table

NAME = {name!r}


def ledger():
    return [cl.Claim("up", "Doc Table 1", "p. 1", "X is above 1.", "x", cl.Direction(">", 1.0),
                     (cl.Check("a", cl.Ref("T", "r", "x")),)),
            cl.Claim("eq", "Doc Table 1", "p. 1", "Y equals 2.", "y", cl.Near(tol=0.1),
                     (cl.Check("b", cl.Ref("T", "r", "y"), 2.0),))]


def run(opts):
    t = Table.from_cells("T", "t", {{"r": {{"x": Cell({x}, {x} - 0.1, {x} + 0.1, 3), "y": Cell(2.0, 1.9, 2.1, 3)}}}})
    return StudyResult(NAME, NAME, tables=[t], claims=cl.judge(ledger(), cl.Evidence({{"T": t}})))
'''


def test_reproduce_prints_the_claims_first_and_all_ends_with_the_claims_summary(tmp_path, monkeypatch):
    import textwrap

    import typer
    from typer.testing import CliRunner

    import iwlab.studies
    from iwlab.cli import reproduce as cli_reproduce

    pkg = tmp_path / "fakes"
    pkg.mkdir()
    for name, x in (("alpha", 1.5), ("beta", 0.5)):
        (pkg / f"claims_fake_{name}.py").write_text(textwrap.dedent(FAKE.format(name=name, x=x)))
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setattr(iwlab.studies, "STUDIES", {"alpha": "claims_fake_alpha", "beta": "claims_fake_beta"})
    app = typer.Typer()
    app.callback()(lambda: None)
    cli_reproduce.register(app)
    r = CliRunner().invoke(app, ["reproduce", "alpha", "--out", str(tmp_path / "one")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("Claims of the original") and lines[1].split()[:2] == ["id", "source"]
    assert "REPRODUCED" in lines[2] and "1 of 1" in lines[2]
    assert r.output.index("Claims of the original") < r.output.index("T: t")
    r = CliRunner().invoke(app, ["reproduce", "all", "--out", str(tmp_path / "all")])
    assert r.exit_code == 0, r.output
    tail = r.output.rstrip().splitlines()[-6:]
    assert tail[0] == "Summary (claims.csv in each study's folder):"
    assert tail[1].split() == ["study", "time", "claims", "reproduced", "partly", "not", "reproduced", "inconclusive",
                               "not", "testable"]
    # study, time (m:ss), claims, then reproduced / partly / not reproduced / inconclusive / not testable
    assert tail[2].split()[0] == "alpha" and tail[2].split()[2:] == ["2", "2", "0", "0", "0", "0"]
    assert tail[3].split()[0] == "beta" and tail[3].split()[2:] == ["2", "1", "0", "1", "0", "0"]
    assert tail[4].startswith("  all studies") and tail[4].split()[3:] == ["4", "3", "0", "1", "0", "0"]
    assert tail[5].startswith("summary report: ")
    assert pd.read_csv(tmp_path / "all" / "beta" / "claims.csv")["verdict"].tolist() == ["not reproduced", "reproduced"]
    assert "All studies: 4 claims" in (tmp_path / "all" / "report.html").read_text()


DECIDING = '''
import math

from iwlab.studies import claims as cl
from iwlab.studies.base import Cell, StudyResult, Table

NAME = "deciding"
RUNS = []


def ledger():
    return [cl.Claim("near", "Doc Table 1", "p. 1", "Y equals 2.", "y", cl.Near(tol=0.1),
                     (cl.Check("b", cl.Ref("T", "r", "y"), 2.0),)),
            cl.Claim("dir", "Doc Table 1", "p. 1", "Z is above 0.", "z", cl.Direction(">", 0.0),
                     (cl.Check("c", cl.Ref("T", "r", "z")),))]


def run(opts):
    n = opts.n_seeds(10, 3)
    RUNS.append((n, opts.where))
    half = 0.95 / math.sqrt(n)  # the interval shrinks as 1/sqrt(n): 91 seeds make it ±0.0996
    t = Table.from_cells("T", "t", {"r": {"y": Cell(2.0, 2.0 - half, 2.0 + half, n), "z": Cell(0.0, -half, half, n)}})
    judged = cl.judge(ledger(), cl.Evidence({"T": t}, seeds=n))
    if opts.where:
        for j in judged:
            j.where = "holds with a bigger buffer"
    return StudyResult(NAME, NAME, tables=[t], claims=judged, setup={"where-it-holds variants": f"at {n} seeds"})
'''


def test_full_mode_adds_the_seeds_a_near_claim_needs_and_no_more(tmp_path, monkeypatch):
    """At 10 seeds the Near claim's CI (±0.30) is wider than its tolerance (±0.1): inconclusive,
    "about 91 seeds needed". Full mode re-runs the study at 91 seeds (variants not re-run), where
    it decides; the Direction claim, whose effect is 0, never earns more seeds; --quick, --seeds and
    --decide-up-to below the need leave the first pass alone."""
    import iwlab.studies
    from iwlab.studies import Options, reproduce

    pkg = tmp_path / "fakes"
    pkg.mkdir()
    (pkg / "claims_fake_deciding.py").write_text(DECIDING)
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setattr(iwlab.studies, "STUDIES", {"deciding": "claims_fake_deciding"})
    import claims_fake_deciding as fake

    first = cl.judge(fake.ledger(), cl.Evidence({}, seeds=10))
    assert cl.seeds_to_decide(first, 200) == {}  # not testable claims need nothing
    res, _ = reproduce("deciding", Options(tmp_path / "a", progress=False, decide_up_to=200))
    assert fake.RUNS == [(10, True), (91, False)]
    near, direction = res.claims
    assert (near.verdict, near.seeds) == ("reproduced", 91)
    assert direction.verdict == "inconclusive" and cl.seeds_to_decide(res.claims, 200) == {}
    assert res.setup["seeds decided by"] == {"passes": [10, 91], "inconclusive before this pass": {"near": 91}}
    assert res.setup["where-it-holds variants"] == "at 10 seeds"
    assert "then at 91" in res.notes[-1]
    for opts in (Options(tmp_path / "b", quick=True, progress=False, decide_up_to=200),
                 Options(tmp_path / "c", seeds=10, progress=False, decide_up_to=200),
                 Options(tmp_path / "d", progress=False, decide_up_to=90),
                 Options(tmp_path / "e", progress=False)):
        fake.RUNS.clear()
        res, _ = reproduce("deciding", opts)
        assert len(fake.RUNS) == 1 and res.claims[0].verdict == "inconclusive", opts



def test_quick_mode_runs_enough_seeds_for_an_interval():
    from iwlab.studies.model import QUICK_SEEDS, Options

    assert QUICK_SEEDS >= cl.MIN_SEEDS
    assert Options(out=None, quick=True).n_seeds() == QUICK_SEEDS
