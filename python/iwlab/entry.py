"""The `iwlab` command's entry point (pyproject's script): `iwlab conform` with well-formed
arguments runs here, parsed by the standard library's argparse, so a conformance run does not
import typer and the CLI package (about 0.2 s, most of the command's start-up;
docs/conformance.md, "Speed"). Everything else — other commands, `--help`, a bad option or
value, no script — goes to the typer CLI (`iwlab.cli.console_main`), which owns the help
text and the one-line usage errors. The options are those of `iwlab/cli/conform.py`."""

from __future__ import annotations

import argparse
import sys


class _Unparsed(Exception):
    """The arguments are not a well-formed call: typer's command will say why."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print its own usage and exit
        raise _Unparsed(message)


def _parser() -> _Parser:
    p = _Parser(prog="iwlab conform", add_help=False, allow_abbrev=False)
    p.add_argument("scripts", nargs="+")
    p.add_argument("--json", dest="as_json", action="store_true")
    p.add_argument("--tolerance-usecs", "--tolerance_usecs", dest="tolerance_usecs", type=int)
    p.add_argument("--report")
    return p


def conform(argv: list[str]) -> int | None:
    """Runs `iwlab conform ARGV…` and returns its exit status, or None if ARGV is not a
    well-formed call (then nothing was printed)."""
    if any(a in ("--help", "-h") for a in argv):
        return None
    try:
        ns = _parser().parse_args(argv)
    except _Unparsed:
        return None
    if ns.tolerance_usecs is not None and ns.tolerance_usecs < 0:
        return None
    from iwlab.conform import render_report
    from iwlab.conform import run as run_scripts

    report = run_scripts(ns.scripts, ns.tolerance_usecs)
    if ns.as_json:
        import json

        sys.stdout.write(json.dumps(report.data, indent=2) + "\n")
    else:
        sys.stdout.write(report.text)
    if ns.report is not None:
        from pathlib import Path

        path = Path(ns.report)
        fmt = "html" if path.suffix.lower() in (".html", ".htm") else "md"
        try:
            path.write_text(render_report(report.data, fmt))
        except OSError as e:
            sys.stdout.flush()
            print(f"error: --report {path}: {e.strerror}", file=sys.stderr)
            return 2
    return report.exit_code


def console_main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "conform":
        code = conform(sys.argv[2:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
    from iwlab.cli import console_main as typer_main

    typer_main()
