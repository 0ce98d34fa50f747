"""Shared by the study tests: run a study module once in its tiny mode (IWLAB_STUDY_TINY)."""

from __future__ import annotations

import pytest

from iwlab.studies import Options, write_result
from iwlab.studies.base import TINY_ENV


def run_tiny(module, out):
    """(result, out dir, report path) of `module.run` in tiny mode, written under `out`."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(TINY_ENV, "1")
        res = module.run(Options(out=out, jobs=1, progress=False))
        report = write_result(res, out)
    return res, out, report


def tables(res):
    return {t.name: t for t in res.tables}


def check_claims(res, out, report):
    """Every claim gets a verdict computed from this run, its links name the report's
    tables/figures; claims.csv and the long tables are written; the report opens with the ledger."""
    import pandas as pd

    from iwlab.studies.claims import VERDICTS

    assert res.claims and all(j.verdict in VERDICTS for j in res.claims)
    assert any(j.verdict != "not testable" for j in res.claims)
    anchors = {t.name for t in res.tables} | {f.name for f in res.figures}
    assert all(link in anchors for j in res.claims for link in j.claim.links)
    df = pd.read_csv(out / "claims.csv")
    assert len(df) == sum(len(j.rows) for j in res.claims) and set(df["verdict"]) <= set(VERDICTS)
    html = report.read_text()
    assert html.index("id=claims") < html.index("<h2>Tables</h2>")
    for t in res.tables:
        long = pd.read_csv(out / "tables" / f"{t.name}_long.csv")
        assert len(long) == t.frame.size and {"metric", "value", "ci_lo", "ci_hi"} <= set(long.columns)


def check_tables_and_report(res, out, report) -> str:
    """Every table is written as CSV with each column's interval (`_lo`, `_hi`); the report holds
    one image per figure and 3 to 6 conclusions are drawn. Returns the report's text."""
    from pathlib import Path

    import pandas as pd

    for t in res.tables:
        csv = pd.read_csv(out / "tables" / f"{t.name}.csv", index_col=0)
        for c in t.frame.columns:
            assert f"{c}_lo" in csv.columns and f"{c}_hi" in csv.columns
    text = Path(report).read_text()
    assert text.count("<img") == len(res.figures)
    assert 3 <= len(res.conclusions) <= 6
    return text
