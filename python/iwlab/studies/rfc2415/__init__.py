"""RFC 2415 (Poduri & Nichols, 1998): "Simulation Studies of Increased Initial TCP Window Size".

Re-runs the RFC's grid on the packaged `rfc2415` preset (the RFC 2415 study, docs/studies.md) and lays the results out as
the RFC's tables:

* T1 / T4 — median web page delay (s at IW=1, % decrease at IW 2, 3, 4), HTTP/1.0 / HTTP/1.1;
* T2 — bottleneck utilisation % and packet drop rate % (servers → clients) per IW, HTTP/1.0;
* T3 / T5 — FTP network power (FTP goodput / median 1 MB transfer delay) per IW;
* T6 — half-and-half: 16, 32, 64 HTTP/1.0 clients all IW=1, all IW=3, and split IW=1 / IW=3;
* RED — RED on the bottleneck against drop-tail, IW 1…4 (the comparison the RFC only mentions).

Scenarios: webs {8, 16, 32} × FTPs {0, 1, 2, 3} × IW {1, 2, 3, 4} × HTTP {1.0, 1.1}, 360 s,
10 seeds (`--quick`: `QUICK_SEEDS` seeds of `QUICK_DURATION`). Every cell is the mean across
seeds with a 95 % bootstrap interval; % decreases and normalised powers are computed per seed
against the same seed's IW=1 run (the same seed gives the same arrivals, object sizes and think
times at every IW — common random numbers) and then averaged. Raw runs are kept (resumably) under
`opts.out/raw/<part>/`.

Test hook: `run(opts, _tiny=True)`, or the environment variable `IWLAB_STUDY_TINY=1` (what the
CLI tests set), runs a tiny configuration — 2 seeds (or `opts.seeds`), 20 s runs, webs {8, 16},
FTPs {0, 1}, half-and-half with 16 clients — so the whole pipeline runs in seconds. It is not a
result.
"""


from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


from iwlab.scenario import Scenario, load
from iwlab.studies.base import Options, StudyResult, Table, cell
from iwlab.studies.rfc2415.scenarios import (RFC2415_VARIANTS, NAME, Plan, TINY_ENV, TITLE, _Runner, _data_direction,
                                             _grid, _half_runs, plan)
from iwlab.studies.rfc2415.tables import (_conclusions, _delay_table, _ftp_power_table, _half_table, _label,
                                          _link_table, _notes, _power_figures, _red_table, _tidy_keys)
from iwlab.studies.rfc2415.ledger import (FTP_ROWS, RFC_ROWS, RFC_SECONDS, RFC_T1, RFC_T2, RFC_T3, RFC_T4, RFC_T5,
                                          RFC_T6, errata, evidence, ledger)
from iwlab.studies.rfc2415.scenarios import (FULL_DURATION, FULL_SEEDS, QUICK_DURATION, QUICK_SEEDS, TINY_DURATION,
                                             TINY_SEEDS)


# ---------------------------------------------------------------------------------------------


def run(opts: Options, _tiny: bool | None = None) -> StudyResult:
    """Runs the study (resumable under `opts.out/raw/`) and returns its tables, figures and conclusions."""
    tiny = _tiny if _tiny is not None else os.environ.get(TINY_ENV, "") not in ("", "0")
    p = plan(opts, tiny)
    t0 = time.perf_counter()
    base = load("rfc2415")
    direction = _data_direction(base)
    runner = _Runner(opts, p)

    runs = _grid(runner, base, direction)
    tables: dict[str, Table] = {}
    tables["T1"] = _delay_table("T1", runs, p, "1.0")
    tables["T2"] = _link_table("T2", runs, p, "1.0")
    tables["T3"] = _ftp_power_table("T3", runs, p, "1.0")
    if "1.1" in p.https:
        tables["T4"] = _delay_table("T4", runs, p, "1.1")
        tables["T5"] = _ftp_power_table("T5", runs, p, "1.1")
    halves = {n: _half_runs(runner, base, direction, n) for n in p.half}
    tables["T6"] = _half_table(halves)
    tables["RED"], red = _red_table(runner, base, direction, p)
    figures = _power_figures(runs, p)
    en, ja = _conclusions(tables, p)
    _tidy_keys(tables)
    from iwlab.studies.claims import Evidence, japanese_summary, judge, where_it_holds

    book = ledger()
    judged = judge(book, Evidence(tables, evidence(runs, halves, p), seeds=p.seeds))
    if p.mode != "tiny" and opts.where:
        where_it_holds(judged, book, _variants(opts, p, base, direction, runner),
                       "delayed ACKs and access-link delay (both left open by the RFC)")
    claims_ja = japanese_summary(judged, "RFC 2415 の主張の検証結果")

    setup: dict[str, Any] = {
        "mode": p.mode,
        "seeds": f"1…{p.seeds}",
        "duration": p.duration,
        "webs × ftps × IW × HTTP": f"{list(p.webs)} × {list(p.ftps)} × {list(p.iws)} × {list(p.https)}",
        "half-and-half web clients": list(p.half),
        "RED at webs/ftps": _label(*p.red_at),
        "preset": f"rfc2415 ({base.source}, hash {base.hash()})",
        "data direction": f"{direction} (router-right → router-left)" if direction == "reverse" else direction,
        "runs": sum(x["runs"] for x in runner.parts.values()),
    }
    for part, x in runner.parts.items():
        setup[f"raw/{part}"] = f"{x['runs']} runs in {x['wall_s']} s; grid " + \
            "; ".join(f"{k} = {', '.join(v)}" for k, v in x["grid"].items())
    setup["raw runs"] = str(Path(opts.out) / "raw")
    setup["wall seconds"] = round(time.perf_counter() - t0, 1)
    return StudyResult(NAME, TITLE, tables=list(tables.values()), figures=figures, conclusions=en,
                       conclusions_ja=ja, setup=setup, notes=_notes(base, p, red, direction), claims=judged,
                       claims_ja=claims_ja, errata=errata())




def _variants(opts: Options, p: Plan, base: Scenario, direction: str, main: _Runner) -> dict[str, Any]:
    """Each variant's tables and claims evidence (T1–T3 and the claims reading them)."""
    from dataclasses import replace

    from iwlab.studies.claims import Evidence

    vp = replace(p, ftps=tuple(f for f in p.ftps if f in (0, 1, 3)), https=("1.0",))
    out = {}
    for i, (label, overrides) in enumerate(RFC2415_VARIANTS.items()):
        run = _Runner(opts, vp, prefix=f"where{i}-")
        runs = _grid(run, base.with_overrides(overrides), direction)
        tabs = {"T1": _delay_table("T1", runs, vp, "1.0"), "T2": _link_table("T2", runs, vp, "1.0"),
                "T3": _ftp_power_table("T3", runs, vp, "1.0")}
        out[label] = Evidence(tabs, evidence(runs, {}, vp), seeds=vp.seeds)
        for part, x in run.parts.items():
            main.parts[part] = x
    return out
