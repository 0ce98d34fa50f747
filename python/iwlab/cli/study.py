"""`iwlab sweep | report`: parameter sweeps and HTML reports from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from iwlab.scenario_io import ScenarioError

# Columns printed after a sweep (when present), after the grid values and the seed.
_SHOWN = ("median_page_delay", "fct_median", "goodput_bps", "util_forward", "util_reverse",
          "drop_rate_forward", "drop_rate_reverse", "retransmit_rate")


def _fail(error: Exception) -> typer.Exit:
    message = error.args[0] if error.args and isinstance(error.args[0], str) else str(error)
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def sweep(
    scenario: Annotated[str, typer.Argument(help="Scenario file or preset name (see `iwlab presets`).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the results (resumable).")],
    grid: Annotated[Optional[list[str]], typer.Option(
        "--grid", "-g", help="KEY=V1,V2,… (repeatable): a field path and its values, e.g. "
        "apps[0].count=8,16,32 or iw.default=iw1,iw2. Values are TOML literals; bare strings allowed.")] = None,
    seeds: Annotated[int, typer.Option("--seeds", "-n", help="Run seeds 1…N at every grid point.", min=1)] = 1,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Local worker processes [all cores].",
                                                min=1)] = None,
    dask: Annotated[Optional[str], typer.Option("--dask", help="Run on a Dask cluster: tcp://host:port.")] = None,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", "-s", help="KEY=VALUE (repeatable): override a field before the grid, e.g. duration=60s.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
) -> None:
    """Run SCENARIO at every point of the grid for each seed; store every run under OUT.

    Started again with the same OUT, a sweep skips the runs already stored.
    """
    from iwlab import sweep as run_sweep
    from iwlab.scenario import load
    from iwlab.sweep import parse_assignment, with_overrides

    try:
        overrides = dict(parse_assignment(s) for s in set_ or [])
        grid_map = dict(parse_assignment(g, many=True) for g in grid or [])
        base = with_overrides(load(scenario), overrides)
        df = run_sweep(base, grid=grid_map, seeds=seeds, jobs=jobs, dask=dask, out=out, progress=progress)
    except (ScenarioError, OSError, ValueError, KeyError) as e:  # OSError: files, or a Dask address
        raise _fail(e) from None
    shown = [*grid_map, "seed", *(c for c in _SHOWN if c in df.columns)]
    typer.echo(df[shown].to_string(index=False))
    typer.echo(f"{len(df)} runs in {out} (report: iwlab report {out})")


def report(
    path: Annotated[Path, typer.Argument(help="A sweep directory (iwlab sweep --out) or a run directory "
                                               "(iwlab run --out).")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="HTML file [PATH/report.html].")] = None,
) -> None:
    """Write a self-contained HTML report (figures, tables, scenario, versions) of PATH."""
    from iwlab.report import build_report

    try:
        written = build_report(path, output)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(e) from None
    typer.echo(str(written))


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
    app.command("report")(report)
