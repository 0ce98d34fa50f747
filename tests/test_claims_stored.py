"""The stored ledgers of record (data/claims/MODE/STUDY.csv) judged by today's rules: quick mode is
never more favourable than full, and the figures docs/studies.md and docs/claims.md print are the
ones these files give (`python -m iwlab.studies.stored --write` rewrites them)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from iwlab.studies import STUDIES, stored
from iwlab.studies import claims as cl

BOTH = [s for s in STUDIES if stored.frame("full", s) is not None and stored.frame("quick", s) is not None]


def test_two_studies_are_stored_in_both_modes():
    assert len(BOTH) >= 2, BOTH


#: How far a verdict supports its claim; quick may sit lower than full, never higher.
SUPPORT = {"reproduced": 2, "partly": 1, "not reproduced": 0}


def not_wider(quick: dict[str, str], full: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Claims whose quick verdict is neither the full one, nor inconclusive, nor less supportive
    of the claim (a condition left undecided by fewer seeds: *partly* where full is *reproduced*):
    (quick, full)."""
    def allowed(q: str, f: str) -> bool:
        return q in (f, "inconclusive") or (q in SUPPORT and f in SUPPORT and SUPPORT[q] < SUPPORT[f])

    return {c: (quick[c], full[c]) for c in quick if not allowed(quick[c], full[c])}


def test_a_quick_verdict_other_than_full_or_inconclusive_is_caught():
    full = {"a": "partly", "b": "not reproduced", "c": "reproduced"}
    assert not_wider({"a": "partly", "b": "inconclusive", "c": "inconclusive"}, full) == {}
    assert not_wider({"a": "reproduced", "b": "partly", "c": "reproduced"}, full) == {
        "a": ("reproduced", "partly"), "b": ("partly", "not reproduced")}
    assert not_wider({"a": "not reproduced", "b": "not reproduced", "c": "partly"}, full) == {}


@pytest.mark.parametrize("study", BOTH)
def test_quick_mode_is_never_more_favourable_than_full(study):
    """A quick verdict equals the full one, is inconclusive, or supports the claim less (fewer
    seeds, wider intervals, more conditions undecided)."""
    full = {j.claim.id: j.verdict for j in stored.judged("full", study)}
    quick = {j.claim.id: j.verdict for j in stored.judged("quick", study)}
    assert set(quick) == set(full)
    worse = not_wider(quick, full)
    assert not worse, f"{study}: quick verdicts more favourable or different than full (quick, full): {worse}"


def test_the_stored_files_are_claims_csv_of_a_mode():
    for mode in stored.MODES:
        for study in STUDIES:
            df = stored.frame(mode, study)
            if df is None:
                continue
            assert list(df.columns) == cl.CSV_COLUMNS, (mode, study)
            assert set(df["study"]) == {study} and set(df["mode"].dropna()) <= {mode}, (mode, study)
            assert df["seeds"].max() >= cl.MIN_SEEDS, (mode, study)


def test_rejudging_a_stored_ledger_applies_todays_rules():
    df = pd.DataFrame([{"claim_id": "x", "condition": "a", "published": 10.0, "ours": 10.0, "ci_lo": 9.9,
                        "ci_hi": 10.1, "seeds": 10},
                       {"claim_id": "x", "condition": "b", "published": 10.0, "ours": 14.0, "ci_lo": 13.9,
                        "ci_hi": 14.1, "seeds": 10}])
    claim = cl.Claim("x", "Doc", "p. 1", "x = 10", "x", cl.Near(tol=1.0), ())
    (j,) = cl.rejudge([claim], df)
    assert [r.verdict for r in j.rows] == ["reproduced", "not reproduced"] and j.verdict == "partly"
    (j,) = cl.rejudge([claim], df.assign(seeds=3))
    assert {r.verdict for r in j.rows} == {"inconclusive"}


@pytest.mark.parametrize("doc, name", list(stored.BLOCKS.items()))
def test_the_documents_print_the_stored_figures(doc, name):
    text = (stored.ROOT / doc).read_text()
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert m, f"{doc}: no {name} block"
    assert m.group(1).rstrip("\n") == stored.block(name), (
        f"{doc}: the {name} block differs from the stored ledgers: run `python -m iwlab.studies.stored --write`")


@pytest.mark.parametrize("study", [s for s in STUDIES if stored.frame("quick", s) is not None])
def test_a_ledger_written_under_todays_rules_judges_again_to_its_own_verdicts(study):
    """The quick ledgers were written under today's rules: judging the file again (each row's
    mean, interval and seeds) gives the verdicts the run printed — the file keeps what a verdict
    needs, including a condition's own seeds when some seeds had no flow for it."""
    again = {j.claim.id: j.verdict for j in stored.judged("quick", study)}
    assert again == stored.stored_verdicts("quick", study)
