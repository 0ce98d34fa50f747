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
