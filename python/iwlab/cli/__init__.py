"""The `iwlab` command line: one module per command group, each with a `register(app)`.

`run` (run, trace, presets, show, validate, schema, --version), `study` (sweep, report),
`reproduce`, `emulate` (emulate, compare), `flow_iw` (flow-iw), `deploy` (plan, apply, rollback,
watch), `lab` (the documents' example namespaces), `advise`, `probe` and `conform`. `common` holds what they share. Command modules parse and print; the work
lives in the rooms below (`iwlab.deploy`, `iwlab.advise`, …), callable without the CLI.
"""

from __future__ import annotations

import typer
import typer.core

from iwlab.cli.common import SHORT_HELP, HelpGroup


# `iwlab --help` lists the commands by purpose, in this order: panel → its commands (the
# commands' names as they are; `build` sets each one's typer `rich_help_panel` from this).
PANELS = (
    ("Simulate", ("run", "trace", "presets", "show", "validate", "schema")),
    ("Study", ("sweep", "report", "reproduce")),
    ("Emulate (root: network namespaces)", ("emulate", "compare")),
    ("Advise", ("advise",)),
    ("Deploy (root: routes, eBPF)", ("plan", "apply", "rollback", "watch", "flow-iw", "lab")),
    ("Conform", ("conform",)),
    ("Probe", ("probe",)),
)


class _OneLineUsageErrors(HelpGroup):
    """click prints a usage error as four lines (usage, hint, blank, error); iwlab's bad input is
    one line naming the option and the value, exit status 2, as every command's own errors.
    The command list is grouped by `rich_help_panel` in plain text (rich's formatter would
    double the start-up time) with every description whole, never cut with "..."."""

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        import sys

        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        # click's classes, wherever this typer takes click from (its own copy since 0.26)
        usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
        click_exception = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except usage_error as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `iwlab` alone: the help, as asked
                e.show()
                sys.exit(e.exit_code)
            where = f" (see {e.ctx.command_path} --help)" if e.ctx is not None else ""
            typer.echo(f"error: {' '.join(e.format_message().split())}{where}", err=True)
            sys.exit(2)
        except click_exception as e:
            typer.echo(f"error: {' '.join(e.format_message().split())}", err=True)
            sys.exit(e.exit_code)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# Plain (click) help and usage errors: rich's help formatter imports rich.markdown and
# markdown-it, which alone would double the start-up time of `iwlab --help`.
app = typer.Typer(name="iwlab", help="A laboratory for TCP's initial congestion window.", no_args_is_help=True,
                  rich_markup_mode=None, cls=_OneLineUsageErrors)

# The command modules, in the order their commands are listed by `iwlab --help`.
COMMAND_MODULES = ("run", "study", "reproduce", "emulate", "flow_iw", "deploy", "lab", "advise", "probe", "conform")


def _panels(one: typer.Typer) -> None:
    """Sets each registered command's and group's help panel from PANELS, in PANELS' order."""
    panel_of = {name: panel for panel, names in PANELS for name in names}
    order = {name: i for i, name in enumerate(n for _, names in PANELS for n in names)}
    for info in (*one.registered_commands, *one.registered_groups):
        name = info.name or (info.typer_instance.info.name if getattr(info, "typer_instance", None) else None)
        info.rich_help_panel = panel_of.get(name, "Other")
        if name in SHORT_HELP and hasattr(info, "short_help"):
            info.short_help = SHORT_HELP[name]
    one.registered_commands.sort(key=lambda c: order.get(c.name, len(order)))
    one.registered_groups.sort(key=lambda g: order.get(g.name or g.typer_instance.info.name, len(order)))


def build() -> typer.Typer:
    """Registers every command module's commands on `app` (once) and returns it."""
    import importlib

    if not getattr(app, "_iwlab_built", False):
        for name in COMMAND_MODULES:
            importlib.import_module(f"iwlab.cli.{name}").register(app)
        _panels(app)
        app._iwlab_built = True  # type: ignore[attr-defined]
    return app


def build_one(name: str) -> typer.Typer:
    """A new app with the settings of `app` and only command module `name`'s commands."""
    import importlib

    one = typer.Typer(name="iwlab", help=app.info.help, no_args_is_help=True, rich_markup_mode=None,
                      cls=_OneLineUsageErrors)
    importlib.import_module(f"iwlab.cli.{name}").register(one)
    _panels(one)
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
    # `iwlab conform` likewise: its start-up is part of every conformance run (docs/conformance.md).
    if len(sys.argv) > 1 and sys.argv[1] == "conform":
        one = build_one("conform")
        # A callback keeps it a group, as `iwlab` is: the command keeps its name and iwlab's
        # one-line usage errors (a one-command app would run the command without its name).
        one.callback()(lambda: None)
        one()
        return
    build()()


def console_main() -> None:
    """The `iwlab` command (pyproject's script entry, through `iwlab.entry`): `main`, and for the
    commands of the run module the process then ends without the interpreter's teardown
    (`iwlab.cli_base.end_without_teardown`). The other commands exit as usual (their atexit clean-ups:
    namespaces, pools)."""
    import importlib
    import sys

    from iwlab.cli_base import end_without_teardown

    run = importlib.import_module("iwlab.cli.run")
    if not (len(sys.argv) > 1 and sys.argv[1] in run.COMMANDS):
        main()
        return
    try:
        main()
        code = 0
    except SystemExit as e:  # what the interpreter would make of it
        code = e.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    end_without_teardown(code)
