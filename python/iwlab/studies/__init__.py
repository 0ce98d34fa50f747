"""One-command reproductions of the founding initial-window studies (SPEC S1):
`rfc2415`, `congested-links`, `rfc6928`, `iw-function`.

Each study module exposes `NAME`, `TITLE` and `run(opts: Options) -> StudyResult`; it builds
its scenarios from the packaged presets, runs them with `iwlab.sweep` (resumable under
`opts.out/raw/`), and computes its tables from the records. Results are what the simulator
produces — never adjusted toward published numbers.

Test hook: with the environment variable `IWLAB_STUDY_TINY=1`, a study that honours it (see its
module docstring) runs a tiny configuration — a few seeds of short runs on a reduced grid — so
`iwlab reproduce` can be tested end to end in seconds. Such output is not a result.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable, Optional

from iwlab.studies.base import Options, StudyResult, write_result

STUDIES = {
    "rfc2415": "iwlab.studies.rfc2415",
    "congested-links": "iwlab.studies.congested_links",
    "rfc6928": "iwlab.studies.rfc6928",
    "iw-function": "iwlab.studies.iw_function",
}

__all__ = ["STUDIES", "Options", "StudyResult", "reproduce", "reproduce_all"]


def reproduce(name: str, opts: Options) -> tuple[StudyResult, Path]:
    """Runs one study; writes its tables, result and report under `opts.out`."""
    if name not in STUDIES:
        raise ValueError(f"study = {name!r} is not known; expected one of {', '.join(STUDIES)} or 'all'")
    module = importlib.import_module(STUDIES[name])
    res = module.run(opts)
    return res, write_result(res, opts.out)


def reproduce_all(opts: Options,
                  on_result: Optional[Callable[[str, StudyResult, Path], None]] = None) -> Path:
    """Runs every study into `opts.out/<study>/` and writes the one-page summary report.

    `on_result(name, result, report_path)` is called as each study finishes (the CLI prints
    its tables)."""
    from iwlab.studies.report import summary_html

    done = []
    for name in STUDIES:
        sub = Options(opts.out / name, opts.quick, opts.seeds, opts.jobs, opts.dask, opts.progress, opts.where)
        res, path = reproduce(name, sub)
        if on_result is not None:
            on_result(name, res, path)
        done.append((res, f"{name}/{path.name}"))
    out = opts.out / "report.html"
    out.write_text(summary_html(done))
    return out
