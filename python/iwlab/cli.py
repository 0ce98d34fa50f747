"""The `iwlab` command line. Commands live in modules that register themselves here:
`cli_core` (run, presets, show, validate, trace), `cli_study` (sweep, report),
`cli_reproduce` (reproduce), `cli_emulate` (emulate, compare), `cli_flow_iw` (flow-iw),
`cli_deploy` (plan, apply, rollback, watch) and `cli_advise` (advise)."""

from __future__ import annotations

import typer

# Plain (click) help and usage errors: rich's help formatter imports rich.markdown and
# markdown-it, which alone would double `iwlab --help` (issue 12 item 6: < 0.3 s).
app = typer.Typer(name="iwlab", help="A laboratory for TCP's initial congestion window.", no_args_is_help=True,
                  rich_markup_mode=None)


def main() -> None:
    from iwlab import cli_advise, cli_core, cli_deploy, cli_emulate, cli_flow_iw, cli_reproduce, cli_study

    cli_core.register(app)
    cli_study.register(app)
    cli_reproduce.register(app)
    cli_emulate.register(app)
    cli_flow_iw.register(app)
    cli_deploy.register(app)
    cli_advise.register(app)
    app()
