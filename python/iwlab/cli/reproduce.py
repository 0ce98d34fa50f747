"""`iwlab reproduce STUDY|all`: re-run a founding IW study (docs/studies.md) and print its tables.

    iwlab reproduce rfc2415 --quick --out out/rfc2415
    iwlab reproduce all --seeds 5 --dask tcp://scheduler:8786

Prints the claims ledger first (claim · published · ours [CI] · verdict), then each table in the layout of the original document (every cell `mean [95 % interval]`
across seeds), the conclusions computed from them, and the path of the HTML report. In full mode
(no `--quick`, no `--seeds`) a study whose Near/Between claims are left inconclusive is re-run with
the seeds their intervals need, up to `--decide-up-to` (200). Writes
`claims.csv`, `tables/*.csv` (+ `*_long.csv`), `result.json`, `report.html` and the raw runs (`raw/`, resumable) under `--out`.
Bad input (an unknown study, `--seeds 0`, an unreachable Dask scheduler) prints one line and
exits with status 2.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated, Optional

import typer

from iwlab.cli.common import fail, user_errors


def _check_studies(names: list[str]) -> None:
    from iwlab.studies import STUDIES

    missing = [n for n in names if importlib.util.find_spec(STUDIES[n]) is None]
    if missing:
        fail(f"study {', '.join(missing)}: not available in this installation "
             f"(module {', '.join(STUDIES[n] for n in missing)} is missing)")


#: Seeds a full run may grow to so that its Near/Between claims decide (docs/studies.md, "Full mode").
DECIDE_UP_TO = 200

#: Quick mode's few seeds leave wide intervals: its verdicts point the way, the full mode decides.
QUICK_NOTE = ("--quick: few seeds and short runs, so the verdicts below are indicative (many Near/Direction checks "
              "come out inconclusive); run without --quick for the ledgers of record (docs/studies.md).")


def _print(result, path: Path, brief: bool = False) -> None:
    from iwlab.studies.claims import claims_text, errata_text, summary_line

    if brief:
        if result.claims:
            typer.echo(summary_line(result.claims, result.title))
        typer.echo(f"report: {path}")
        return
    if result.claims:
        typer.echo(claims_text(result.claims))
        typer.echo("")
    if getattr(result, "errata", None):
        typer.echo(errata_text(result.errata))
        typer.echo("")
    for table in result.tables:
        typer.echo(table.text())
        typer.echo("")
    for sentence in result.conclusions:
        typer.echo(f"* {sentence}")
    if result.conclusions:
        typer.echo("")
    typer.echo(f"report: {path}")


def reproduce(
    study: Annotated[str, typer.Argument(metavar="STUDY", help="rfc2415, congested-links, rfc6928, iw-function, "
                                                               "quic-iw, or all.")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer seeds and shorter runs (each study's report "
                                                        "says which).")] = False,
    seeds: Annotated[Optional[int], typer.Option("--seeds", "-n", help="Seeds 1…N per scenario [default: the "
                                                                      "study's; fewer with --quick].")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Output folder (resumable) "
                                                "[default: out/STUDY].")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Local worker processes [default: all "
                                                                     "cores].")] = None,
    dask: Annotated[Optional[str], typer.Option("--dask", metavar="ADDR", help="Run on a Dask cluster: "
                                                "tcp://host:port.")] = None,
    where: Annotated[bool, typer.Option("--where/--no-where", help="Run the variants that show where claims not "
                                                                  "reproduced would hold.")] = True,
    decide_up_to: Annotated[int, typer.Option("--decide-up-to", metavar="N", help="Full mode at the study's own "
                                              "seeds: re-run with up to N seeds while magnitude claims (Near, "
                                              "Between) are left inconclusive that more seeds would decide; 0 = "
                                              "never.")] = DECIDE_UP_TO,
    brief: Annotated[bool, typer.Option("--brief", help="Print only the claims' verdict counts and the report's "
                                                        "path (the ledger and tables are in the report and "
                                                        "claims.csv).")] = False,
) -> None:
    """Re-run a founding IW study (or all of them): tables, figures, conclusions, HTML report."""
    from iwlab.studies import STUDIES, Options
    from iwlab.studies import reproduce as run_study
    from iwlab.studies import reproduce_all

    if study != "all" and study not in STUDIES:
        fail(f"STUDY = {study!r} is not known; expected one of {', '.join(STUDIES)} or 'all'")
    if seeds is not None and seeds < 1:
        fail(f"--seeds {seeds} is not allowed; expected >= 1")
    if decide_up_to < 0:
        fail(f"--decide-up-to {decide_up_to} is not allowed; expected >= 0 (0 = never add seeds)")
    if jobs is not None and jobs < 1:
        fail(f"--jobs {jobs} is not allowed; expected >= 1")
    if dask is not None and "://" not in dask:
        fail(f"--dask {dask!r} is not a scheduler address; expected e.g. tcp://host:8786")
    _check_studies(list(STUDIES) if study == "all" else [study])
    folder = out if out is not None else Path("out") / study
    opts = Options(folder, quick=quick, seeds=seeds, jobs=jobs, dask=dask, progress=True, where=where,
                   decide_up_to=decide_up_to)
    if quick:
        typer.echo(QUICK_NOTE)
    with user_errors():
        try:
            if study == "all":
                def show(name: str, result, path: Path) -> None:
                    if not brief:
                        typer.echo(f"== {name}: {result.title}")
                    _print(result, path, brief)
                    if not brief:
                        typer.echo("")

                import time

                judged: list = []
                clock = [time.monotonic()]

                def show_and_keep(name: str, result, path: Path) -> None:
                    now = time.monotonic()
                    judged.append((name, result.claims, now - clock[-1]))
                    clock.append(now)
                    show(name, result, path)

                summary = reproduce_all(opts, on_result=show_and_keep)
                typer.echo(summary_table(judged))
                typer.echo(f"summary report: {summary}")
            else:
                result, path = run_study(study, opts)
                _print(result, path, brief)
        except OSError as e:  # a Dask scheduler that does not answer (files: handled by user_errors)
            if dask is None or e.filename is not None:
                raise
            fail(f"--dask {dask}: {e}")


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def summary_table(judged: list) -> str:
    """The end of `reproduce all`: per study (name, its claims, seconds it took) and for all,
    the time and the claims by verdict."""
    from iwlab.studies.claims import VERDICTS, counts

    head = ["study", "time", "claims", *VERDICTS]
    rows = [[name, _minutes(secs), str(len(claims)), *(str(v) for v in counts(claims).values())]
            for name, claims, secs in judged]
    every = [j for _, claims, _ in judged for j in claims]
    rows.append(["all studies", _minutes(sum(s for *_, s in judged)), str(len(every)),
                 *(str(v) for v in counts(every).values())])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join(["Summary (claims.csv in each study's folder):", line(head), *map(line, rows)])


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
