"""Every checkable claim of each founding document is in a ledger or listed, with the reason, as not
checked (python/iwlab/studies/inventory.toml, written from the documents)."""

from __future__ import annotations

from collections import Counter

import pytest

from iwlab.studies import congested_links, iw_function, quic_iw, rfc2415, rfc6928
from iwlab.studies.inventory import STUDY_SOURCE, load, not_checked, not_checked_html

LEDGERS = {"rfc2415": rfc2415, "congested-links": congested_links, "rfc6928": rfc6928, "iw-function": iw_function,
          "quic-iw": quic_iw}

#: Checkable claims per document, counted from the documents (see inventory.toml's entries).
CLAIMS_PER_SOURCE = {"RFC 2415": 35, "Nathan & Rai": 35, "RFC 6928": 23, "draft-you": 15,
                    "RFC 9000 / RFC 9002": 12}


def test_the_inventory_counts_every_documents_checkable_claims():
    assert Counter(e.source for e in load()) == CLAIMS_PER_SOURCE


@pytest.mark.parametrize("study", sorted(LEDGERS))
def test_every_ledger_claim_is_an_inventory_claim_of_its_document_and_back(study):
    ids = [c.id for c in LEDGERS[study].ledger()]
    listed = [e.detail for e in load() if e.source == STUDY_SOURCE[study] and e.status == "ledger"]
    assert len(ids) == len(set(ids))
    # A claim judged under two readings of its original ("NR-4/iperf", "NR-4/load") is one claim of it.
    assert sorted({i.split("/")[0] for i in ids}) == sorted(listed), "a ledger claim missing from the " \
                                                                      "inventory, or an inventory id naming no ledger claim"


def test_claims_not_in_a_ledger_say_why_and_none_is_pending():
    for e in load():
        if e.status != "ledger":
            assert len(e.detail) > 20, e
    assert not [e for e in load() if e.status == "pending"]


def test_a_malformed_entry_is_refused_with_its_place(tmp_path):
    p = tmp_path / "inv.toml"
    p.write_text('[[claim]]\nsource = "X"\nat = "§1"\nsays = "s"\nledger = "A"\nout_of_scope = "both"\n')
    with pytest.raises(ValueError, match=r"claim\[0\] \(X, §1\).*exactly one"):
        load(p)


def test_the_report_lists_the_claims_not_checked():
    rows = not_checked("congested-links")
    assert rows and all(r.source == "Nathan & Rai" for r in rows)
    page = not_checked_html("congested-links")
    assert "id=not-checked" in page and all(r.says.split("(")[0][:30] in page for r in rows)


def test_a_quick_run_says_so_in_the_report_and_in_every_claims_csv_row(tmp_path):
    import pandas as pd

    from iwlab.studies import claims as cl
    from iwlab.studies import write_result
    from iwlab.studies.model import StudyResult, Table

    t1 = Table.from_cells("T1", "delay", {"8/0": {"IW=1 (s)": cl.Cell(0.5, 0.4, 0.6, 3)}})
    judged = cl.judge(rfc2415.ledger()[:1], cl.Evidence({"T1": t1}, seeds=3))
    res = StudyResult("rfc2415", "RFC 2415", tables=[t1], claims=judged, setup={"mode": "quick", "seeds": 3})
    report = write_result(res, tmp_path)
    assert set(pd.read_csv(tmp_path / "claims.csv")["mode"]) == {"quick"}
    html = report.read_text()
    assert "class=banner" in html and html.index("class=banner") < html.index("id=claims")
    full = StudyResult("rfc2415", "RFC 2415", tables=[t1], claims=judged, setup={"mode": "full", "seeds": 10})
    assert "class=banner" not in write_result(full, tmp_path / "full").read_text()


@pytest.mark.parametrize("module,n", [(rfc2415, 5), (congested_links, 3)])
def test_each_erratum_says_where_what_and_the_evidence(module, n):
    errata = module.errata()
    assert len(errata) == n
    for x in errata:
        assert x.source and x.at and len(x.what) > 30 and len(x.evidence) > 30
