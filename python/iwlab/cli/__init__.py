"""The `iwlab` command line: one module per command group, each with a `register(app)`.

`run` (run, trace, presets, show, validate, schema, --version), `study` (sweep, report),
`reproduce`, `emulate` (emulate, compare), `flow_iw` (flow-iw), `deploy` (plan, apply, rollback,
watch), `advise`, `probe` and `conform`. `common` holds what they share. Command modules parse and print; the work
lives in the rooms below (`iwlab.deploy`, `iwlab.advise`, …), callable without the CLI.
"""

from __future__ import annotations

import typer

# Plain (click) help and usage errors: rich's help formatter imports rich.markdown and
# markdown-it, which alone would double the start-up time of `iwlab --help`.
app = typer.Typer(name="iwlab", help="A laboratory for TCP's initial congestion window.", no_args_is_help=True,
                  rich_markup_mode=None)

# The command modules, in the order their commands are listed by `iwlab --help`.
COMMAND_MODULES = ("run", "study", "reproduce", "emulate", "flow_iw", "deploy", "advise", "probe", "conform")


def build() -> typer.Typer:
    """Registers every command module's commands on `app` (once) and returns it."""
    import importlib

    if not getattr(app, "_iwlab_built", False):
        for name in COMMAND_MODULES:
            importlib.import_module(f"iwlab.cli.{name}").register(app)
        app._iwlab_built = True  # type: ignore[attr-defined]
    return app


def build_one(name: str) -> typer.Typer:
    """A new app with the settings of `app` and only command module `name`'s commands."""
    import importlib

    one = typer.Typer(name="iwlab", help=app.info.help, no_args_is_help=True, rich_markup_mode=None)
    importlib.import_module(f"iwlab.cli.{name}").register(one)
    return one


def main() -> None:
    import importlib
    import sys

    run = importlib.import_module("iwlab.cli.run")  # by name, as `build` does: the package stays below its modules
    # `iwlab run` and its siblings need their own module only: the whole tree would import the
    # other eight and have typer read ~60 commands' signatures (0.03-0.05 s of every `iwlab run`,
    # bench/README.md "Whole-process time of bench A").
    if len(sys.argv) > 1 and sys.argv[1] in run.COMMANDS:
        build_one("run")()
        return
    build()()
