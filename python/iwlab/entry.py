"""The `iwlab` command's entry point (pyproject's script): `iwlab conform` and `iwlab run` with
well-formed arguments run here, parsed by the standard library's argparse, so they do not import
typer and the CLI package (0.06-0.2 s, most of a command's start-up; docs/conformance.md, "Speed";
bench/README.md, "Sixth pass"). Everything else — other commands, `--help`, a bad option or value,
`run --policy` — goes to the typer CLI (`iwlab.cli.console_main`), which owns the help text and the
one-line usage errors. Each parser takes exactly its typer command's options
(tests/test_cli_dispatch.py compares them)."""

from __future__ import annotations

import argparse
import sys


class _Unparsed(Exception):
    """The arguments are not a well-formed call: typer's command will say why."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print its own usage and exit
        raise _Unparsed(message)


def conform_parser() -> _Parser:
    """`iwlab conform`'s options (iwlab/cli/conform.py)."""
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
        ns = conform_parser().parse_args(argv)
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


def run_parser() -> _Parser:
    """`iwlab run`'s options (iwlab/cli/run.py) less `--policy`/`--map`, which the typer command runs."""
    p = _Parser(prog="iwlab run", add_help=False, allow_abbrev=False)
    p.add_argument("scenario")
    p.add_argument("--seed", type=int)
    p.add_argument("--out", "-o")
    p.add_argument("--set", dest="sets", action="append")
    return p


def run(argv: list[str]) -> int | None:
    """Runs `iwlab run ARGV…` and returns its exit status, or None if ARGV is not a well-formed
    call the fast path takes (then nothing was printed)."""
    if any(a in ("--help", "-h") for a in argv):
        return None
    try:
        ns = run_parser().parse_args(argv)
    except _Unparsed:
        return None
    if ns.seed is not None and ns.seed < 0:
        return None
    from pathlib import Path

    from iwlab.cli_base import BadInput, error_line, run_command

    try:
        text = run_command(ns.scenario, ns.seed, None if ns.out is None else Path(ns.out), ns.sets)
    except BadInput as e:
        print(error_line(e), file=sys.stderr)
        return 2
    print(text)
    return 0


def console_main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else None
    if command == "conform":
        code = conform(sys.argv[2:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
    elif command == "run":
        code = run(sys.argv[2:])
        if code is not None:  # as the typer path ends `run`: without the interpreter's teardown
            from iwlab.cli_base import end_without_teardown

            end_without_teardown(code)
    from iwlab.cli import console_main as typer_main

    typer_main()
