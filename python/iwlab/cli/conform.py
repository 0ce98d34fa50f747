"""`iwlab conform SCRIPT.pkt…`: run packetdrill scripts against the engine's linux profile."""

from __future__ import annotations

from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    app.command("conform")(conform)


def conform(
    scripts: Annotated[list[str], typer.Argument(metavar="SCRIPT.pkt...", help="packetdrill scripts.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    tolerance_usecs: Annotated[
        Optional[int],
        typer.Option("--tolerance-usecs", "--tolerance_usecs", min=0,
                     help="Timing tolerance of outbound packets, µs (default: the script's, else 4000)."),
    ] = None,
) -> None:
    """Run packetdrill scripts against one engine endpoint with tcp.profile = "linux".

    Prints PASS or FAIL per script (on FAIL: the line, what it expected, what the engine did).
    Exit status 0 when all pass, 1 when some fail, 2 when a script cannot be parsed (FILE:LINE: why).
    """
    from iwlab.conform import run

    report = run(scripts, tolerance_usecs)
    if as_json:
        import json

        typer.echo(json.dumps(report.data, indent=2))
    else:
        typer.echo(report.text, nl=False)
    raise typer.Exit(report.exit_code)
