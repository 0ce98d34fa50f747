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
