"""What every command module shares: one-line errors (`fail`, `user_errors`) and the scenario options.

SCENARIO is a TOML (or `.json`) file or the name of a packaged preset (`iwlab presets`).
`--set PATH=VALUE` overrides a field on every command that takes a scenario. Bad input — a
file that cannot be read, an unknown key, a wrong type, a value out of range, a bad `--set` —
prints one line naming the file (or the `--set`), the line, the field, the value and what is
allowed, and exits with status 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, NoReturn, Optional

import typer
import typer.core

from iwlab.cli_base import bad_input, boxed, error_line, load_scenario

__all__ = ["user_errors", "fail", "error", "HelpGroup", "one_line", "load_scenario", "SetOption", "ScenarioArg", "SeedOption", "boxed"]

SetOption = Annotated[
    Optional[list[str]],
    typer.Option("--set", metavar="PATH=VALUE",
                 help="Override a field, repeatable: --set apps[0].count=32 --set topology.bottleneck.rate=2Mbps "
                      "(values are TOML literals; bare text is a string)."),
]
ScenarioArg = Annotated[str, typer.Argument(metavar="SCENARIO", help="A scenario file (TOML) or a preset name.")]
SeedOption = Annotated[Optional[int], typer.Option("--seed", min=0, help="Seed of every random stream "
                                                                          "(default: the scenario's).")]


# One-line descriptions for the list where a command's first paragraph is longer than a line.
SHORT_HELP = {
    "advise": "Recommend an initial window (or IW policy) for a network and a workload, with evidence.",
    "probe": "Measure the initial window of servers from the outside (withholding every ACK).",
}


def one_line(cmd) -> str:
    """A command's description for the list: its first paragraph, whole, on one line."""
    text = cmd.short_help or (cmd.help or "").strip().split("\n\n")[0]
    return " ".join(text.split())


class HelpGroup(typer.core.TyperGroup):
    """Plain-text help (rich's formatter would double the start-up time) that lists commands by
    their typer `rich_help_panel`, each with its whole first paragraph, never cut with "..."."""

    def format_commands(self, ctx, formatter) -> None:
        panels: dict[str, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            panel = getattr(cmd, "rich_help_panel", None)
            panels.setdefault(panel if isinstance(panel, str) else "Commands", []).append((name, one_line(cmd)))
        for panel, rows in panels.items():
            with formatter.section(panel):
                formatter.write_dl(rows, col_max=12)



def error(message: object) -> None:
    """Prints `error: message` on stderr, on one line: the one form of every command's errors."""
    typer.echo(error_line(message), err=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Prints `error: message` on stderr (one line) and exits with status `code` (2: bad input)."""
    error(message)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turns bad input (scenario errors, unreadable files) into `fail`."""
    try:
        yield
    except (OSError, ValueError) as e:
        message = bad_input(e)
        if message is None:
            raise
        fail(message)
