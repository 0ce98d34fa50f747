"""One-command reproductions of the founding initial-window studies (docs/studies.md):
`rfc2415`, `congested-links`, `rfc6928`, `iw-function`, and the QUIC study `quic-iw`.

Each study module exposes `NAME`, `TITLE` and `run(opts: Options) -> StudyResult`; it builds
its scenarios from the packaged presets, runs them with `iwlab.sweep` (resumable under
`opts.out/raw/`), and computes its tables from the records. Results are what the simulator
produces — never adjusted toward published numbers.

Test hook: with the environment variable `IWLAB_STUDY_TINY=1`, a study that honours it (see its
module docstring) runs a tiny configuration — a few seeds of short runs on a reduced grid — so
`iwlab reproduce` can be tested end to end in seconds. Such output is not a result.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Callable, Optional

from iwlab.studies.base import Options, StudyResult, write_result
from iwlab.studies.model import tiny

STUDIES = {
    "rfc2415": "iwlab.studies.rfc2415",
    "congested-links": "iwlab.studies.congested_links",
    "rfc6928": "iwlab.studies.rfc6928",
    "iw-function": "iwlab.studies.iw_function",
    "quic-iw": "iwlab.studies.quic_iw",
}

__all__ = ["STUDIES", "Options", "StudyResult", "reproduce", "reproduce_all"]


def reproduce(name: str, opts: Options) -> tuple[StudyResult, Path]:
    """Runs one study; writes its tables, result and report under `opts.out`."""
    if name not in STUDIES:
        raise ValueError(f"study = {name!r} is not known; expected one of {', '.join(STUDIES)} or 'all'")
    module = importlib.import_module(STUDIES[name])
    res = module.run(opts)
    if opts.decide_up_to and not opts.quick and opts.seeds is None and not tiny():
        res = _decide(module, opts, res)
    return res, write_result(res, opts.out)


def _seeds(res: StudyResult) -> int:
    return max((j.seeds for j in res.claims), default=0)


def _decide(module, opts: Options, first: StudyResult) -> StudyResult:
    """Re-runs a study with the seeds its inconclusive claims need (`claims.seeds_to_decide`, at most
    `opts.decide_up_to`), reusing the runs already made (sweeps are resumable), until none is left that
    more seeds would decide. The "where it would hold" variants are not re-run: their regions are
    carried over from the first pass, at its seed count."""
    from iwlab.studies.claims import seeds_to_decide

    res, passes = first, [_seeds(first)]
    while len(passes) < 4:
        need = seeds_to_decide(res.claims, opts.decide_up_to)
        n = min(max([*need.values(), passes[-1] + 1]), opts.decide_up_to) if need else 0
        if not need or n in passes:
            break
        res = module.run(dataclasses.replace(opts, seeds=n, where=False))
        passes.append(_seeds(res))
        res.setup["seeds decided by"] = {"passes": list(passes), "inconclusive before this pass": dict(need)}
    if len(passes) == 1:
        return first
    regions = {j.claim.id: j.where for j in first.claims if j.where}
    for j in res.claims:
        if j.claim.id in regions and j.verdict in ("not reproduced", "partly"):
            j.where = f"{regions[j.claim.id]} (variants at {passes[0]} seeds)"
    if "where-it-holds variants" in first.setup:
        res.setup["where-it-holds variants"] = first.setup["where-it-holds variants"]
    res.notes.append(f"Seeds: the study ran at {passes[0]} seeds, then at {' and '.join(map(str, passes[1:]))} "
                     f"so that magnitude claims left inconclusive would decide (at most {opts.decide_up_to}); the "
                     f"tables and verdicts are from the last pass.")
    return res


def reproduce_all(opts: Options,
                  on_result: Optional[Callable[[str, StudyResult, Path], None]] = None) -> Path:
    """Runs every study into `opts.out/<study>/` and writes the one-page summary report.

    `on_result(name, result, report_path)` is called as each study finishes (the CLI prints
    its tables)."""
    from iwlab.studies.report import summary_html

    done = []
    for name in STUDIES:
        sub = dataclasses.replace(opts, out=opts.out / name)
        res, path = reproduce(name, sub)
        if on_result is not None:
            on_result(name, res, path)
        done.append((res, f"{name}/{path.name}"))
    out = opts.out / "report.html"
    out.write_text(summary_html(done))
    return out
