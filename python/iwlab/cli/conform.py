"""`iwlab conform SCRIPT.pkt…`: run packetdrill scripts against the engine's linux profile."""

from __future__ import annotations

from pathlib import Path
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
    report: Annotated[
        Optional[Path],
        typer.Option("--report", metavar="FILE.html|FILE.md",
                     help="Also write a report (HTML for .html/.htm, else markdown): verdicts, first "
                          "differing lines, the engine rules the failures touch."),
    ] = None,
) -> None:
    """Run packetdrill scripts against one engine endpoint with tcp.profile = "linux".

    Prints PASS, FAIL, UNSUPPORTED or ERROR per script (the line, what it expected, what the engine
    did, the engine rule it touches). Exit status 0 when all pass, 1 when the engine differs in
    one, 3 when the others need something not modelled, 2 on bad usage or a script that cannot be
    parsed (FILE:LINE: why).
    """
    from iwlab.conform import render_report, run

    report_fmt = "html" if report is not None and report.suffix.lower() in (".html", ".htm") else "md"
    report_data = run(scripts, tolerance_usecs)
    if as_json:
        import json

        typer.echo(json.dumps(report_data.data, indent=2))
    else:
        typer.echo(report_data.text, nl=False)
    if report is not None:
        try:
            report.write_text(render_report(report_data.data, report_fmt))
        except OSError as e:
            typer.echo(f"error: --report {report}: {e.strerror}", err=True)
            raise typer.Exit(2)
    raise typer.Exit(report_data.exit_code)
