"""`iwlab --help` lists the commands by purpose (simulate, study, emulate, advise, deploy,
conform, probe) with their names unchanged and every description whole; every command (and
subcommand) is in docs/cli.md; help text shows no markup escapes; errors have one prefix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from iwlab.cli import PANELS, build

ROOT = Path(__file__).resolve().parent.parent
IWLAB = Path(sys.executable).with_name("iwlab")


def iwlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(IWLAB), *args], capture_output=True, text=True, timeout=60)


def commands() -> list[tuple[list[str], object]]:
    def walk(group, prefix):
        for name in group.list_commands(None):
            cmd = group.get_command(None, name)
            yield prefix + [name], cmd
            if hasattr(cmd, "list_commands"):
                yield from walk(cmd, prefix + [name])

    return list(walk(typer.main.get_command(build()), []))


def test_help_groups_every_command_under_its_purpose_in_order():
    out = iwlab("--help").stdout
    titles = [title for title, _ in PANELS]
    assert [t.split()[0] for t in titles] == ["Simulate", "Study", "Emulate", "Advise", "Deploy", "Conform", "Probe"]
    where = [out.index(f"\n{t}:\n") for t in titles]
    assert where == sorted(where), "panels out of order"
    top = {p[0] for p, _ in commands() if len(p) == 1}
    assert top == {n for _, names in PANELS for n in names}, "a command without a panel, or a panel naming none"
    for i, (title, names) in enumerate(PANELS):
        section = out[where[i]:where[i + 1] if i + 1 < len(where) else len(out)]
        for name in names:
            assert f"\n  {name} " in section, (name, title)


@pytest.mark.parametrize("args", [["--help"], ["watch", "--help"], ["flow-iw", "--help"], ["flow-iw", "marks", "--help"]])
def test_descriptions_are_whole_and_free_of_markup_escapes(args):
    out = iwlab(*args).stdout.split("\n", 1)[1]  # after "Usage: … [ARGS]..."
    assert "..." not in out and "\\" not in out, out


def test_options_show_brackets_without_escapes():
    for args in (["run", "--help"], ["reproduce", "--help"], ["trace", "--help"]):
        out = iwlab(*args).stdout
        assert "\\" not in out, (args, out)
    assert "[default: out/NAME-seedN]" in iwlab("run", "--help").stdout.replace("\n", " ").replace("  ", " ")


def test_every_command_is_documented_in_docs_cli_md():
    text = (ROOT / "docs" / "cli.md").read_text()
    missing = [" ".join(p) for p, _ in commands() if f"`iwlab {' '.join(p)}`" not in text]
    assert not missing, f"commands not in docs/cli.md: {missing}"


@pytest.mark.parametrize("args", [
    ["nope"],  # click's usage error
    ["run", "no-such-scenario"],  # a command's bad input
    ["plan", "/nonexistent/policy.toml", "--state", "/nonexistent/s.sqlite"],  # deploy
    ["flow-iw", "attach", "--cgroup", "../x", "--max-iw", "10"],  # flow-iw
    ["report", "/nonexistent/folder"],  # click's file check
])
def test_every_error_is_one_line_with_one_prefix(args):
    r = iwlab(*args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode in (1, 2) and len(lines) == 1 and lines[0].startswith("error: "), (r.returncode, r.stderr)
