"""The `iwlab` command line. Commands live in modules that register themselves here:
`cli_core` (run, presets, show, validate, trace), `cli_study` (sweep, report),
`cli_reproduce` (reproduce), `cli_emulate` (emulate, compare) and `cli_flow_iw` (flow-iw)."""

from __future__ import annotations

import typer

app = typer.Typer(name="iwlab", help="A laboratory for TCP's initial congestion window.", no_args_is_help=True)


def main() -> None:
    from iwlab import cli_core, cli_emulate, cli_flow_iw, cli_reproduce, cli_study

    cli_core.register(app)
    cli_study.register(app)
    cli_reproduce.register(app)
    cli_emulate.register(app)
    cli_flow_iw.register(app)
    from iwlab import cli_advise; cli_advise.register(app)  # noqa: E702
    app()
