"""`iwlab run` and its siblings are served by an app of their own module alone (no other
command module imported, no other signature read by typer), and that app answers exactly as
the whole command tree does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iwlab import cli
from iwlab.cli import run as run_module

ROOT = Path(__file__).resolve().parent.parent
BULK = str(ROOT / "bench" / "scenarios" / "bulk.toml")


def test_the_run_module_registers_exactly_its_listed_commands():
    one = cli.build_one("run")
    assert tuple(c.name for c in one.registered_commands) == run_module.COMMANDS


@pytest.mark.parametrize("argv", [["run", "--help"], ["validate", BULK], ["show", "rfc2415"],
                                  ["run", BULK, "--bogus"], ["validate", BULK, "--set", "duration=-1s"]])
def test_the_one_module_app_answers_as_the_whole_tree(argv):
    runner = CliRunner()
    whole = runner.invoke(cli.build(), argv, prog_name="iwlab")
    one = runner.invoke(cli.build_one("run"), argv, prog_name="iwlab")
    assert (one.exit_code, one.output) == (whole.exit_code, whole.output)


def test_iwlab_validate_imports_no_other_command_module():
    probe = ("import sys, json\nsys.argv = ['iwlab', 'validate', %r]\nfrom iwlab.cli import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('iwlab.cli.'))), file=sys.stderr)" % BULK)
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stderr.strip().splitlines()[-1]) == ["iwlab.cli.common", "iwlab.cli.run"]


def _script(entry: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`entry` is `main` or `console_main` of iwlab.cli, or `entry` (the installed script's, iwlab.entry)."""
    where = "from iwlab.entry import console_main as entry" if entry == "entry" else f"from iwlab.cli import {entry}"
    code = f"import sys; sys.argv[0] = 'iwlab'; {where}; sys.exit({entry}())"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_the_iwlab_script_is_console_main():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["iwlab"] == "iwlab.entry:console_main"


def _files(out: Path) -> dict:
    """What a run wrote; of summary.json, what does not vary from run to run (the engine's
    own wall and CPU time and the speeds taken from them do)."""
    files = {f.name: f.read_bytes() for f in sorted(out.glob("*"))} if out.exists() else {}
    if "summary.json" in files:
        summary = json.loads(files["summary.json"])
        files["summary.json"] = {k: v for k, v in summary.items()
                                 if k not in ("wall_seconds", "cpu_seconds", "events_per_second", "link_tx_per_wall_s")}
    return files


@pytest.mark.parametrize("argv, status", [(["validate", BULK], 0), (["validate", "no-such-file.toml"], 2),
                                          (["run", BULK, "--bogus"], 2),
                                          (["run", "rfc2415", "--set", "duration=3s", "--out", "OUT"], 0),
                                          (["run", "rfc2415", "--set=duration=3s", "--seed=4", "-o", "OUT"], 0),
                                          (["run", "no-such-file.toml", "--out", "OUT"], 2),
                                          (["run", "rfc2415", "--set", "duration=-1s", "--out", "OUT"], 2),
                                          (["run", "rfc2415", "--seed", "-1", "--out", "OUT"], 2),
                                          (["run", "rfc2415", "--policy", "no-such-policy.toml", "--out", "OUT"], 2),
                                          (["run", "--seed", "2", "--out", "OUT", "--set", "duration=2s", "rfc2415"], 0)])
def test_the_script_ends_a_run_command_as_main_does(argv, status, tmp_path):
    """`console_main` skips the interpreter's teardown after the run module's commands, and the
    installed script's entry point runs `iwlab run` without typer: the same exit status, output
    and files as `main`, which exits the usual way."""
    results = []
    for entry in ("main", "console_main", "entry"):
        out = tmp_path / entry
        p = _script(entry, [str(out) if a == "OUT" else a for a in argv], ROOT)
        # the engine's speed and wall time in the printed summary vary from run to run
        text = "\n".join(line for line in p.stdout.replace(str(out), "OUT").splitlines()
                         if not any(k in line for k in ("events", "link transmissions", "wall time")))
        results.append((p.returncode, text, p.stderr, _files(out)))
    assert results[0] == results[1] == results[2]
    assert results[1][0] == status, results[1][2]
    if "OUT" in argv and status == 0:
        assert {"flows.parquet", "summary.json", "scenario.toml"} <= set(results[1][3])


@pytest.mark.parametrize("argv, teardown", [(["validate", BULK], False), (["sweep", "--help"], True)])
def test_the_script_skips_the_teardown_after_run_commands_only(argv, teardown):
    """After `iwlab validate` (the run module) the process ends at once, exit handlers unrun;
    other command groups (deploy and emulate clean up at exit) exit the usual way."""
    code = ("import atexit, sys; atexit.register(print, 'teardown'); sys.argv[0] = 'iwlab'\n"
            "from iwlab.cli import console_main; sys.exit(console_main())")
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert ("teardown" in p.stdout.splitlines()) == teardown


def _typer_options(command: str) -> set[str]:
    import typer.main

    cmd = typer.main.get_command(cli.build()).commands[command]
    return {o for p in cmd.params for o in p.opts if o.startswith("-")}


def _argparse_options(parser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


@pytest.mark.parametrize("command, parser, left_to_typer", [("run", "run_parser", {"--policy", "--map"}),
                                                            ("conform", "conform_parser", set())])
def test_the_entry_points_fast_parsers_take_exactly_their_typer_commands_options(command, parser, left_to_typer):
    """A fast path that took an option typer does not (or lacked one typer has, other than those
    it leaves to typer) would answer a command line differently from `iwlab --help`'s command."""
    from iwlab import entry

    assert _argparse_options(getattr(entry, parser)()) == _typer_options(command) - left_to_typer - {"--help"}


def test_iwlab_run_from_the_installed_script_imports_no_typer(tmp_path):
    probe = ("import atexit, sys, json\nsys.argv = ['iwlab', 'run', %r, '--out', %r]\n"
             "import os\n_exit = os._exit\n"
             "os._exit = lambda code: (print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('typer', 'click', 'rich', 'pandas') or m.startswith('iwlab.cli.') or m == 'iwlab.cli')), file=sys.stderr), _exit(code))\n"
             "from iwlab.entry import console_main\nconsole_main()" % (BULK, str(tmp_path / "o")))
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stderr.strip().splitlines()[-1]) == []
