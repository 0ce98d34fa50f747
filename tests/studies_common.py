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
