"""Project text cites what a reader of the repository can open: RFC sections, kernel functions,
files in the repository. Never files outside it (team notes, a shared folder, another checkout's
paths), the history of the work (a session, a branch, the issue it started from or one by number,
a round of the work, who did what), or a commit hash called "current" (it is current for a day). Checked over every tracked file of docs/, bench/,
python/, crates/, tests/, scenarios/ and the Makefile (README.md is written from the reports)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("docs", "python", "crates", "tests", "scenarios", "bench", "Makefile", "pyproject.toml")

# (name, pattern): each names a kind of reference a reader cannot follow.
FORBIDDEN = [
    ("the team's specification", r"\bSPEC(?:\.md)?\s*(?:S\d|§)"),
    ("the team's notes", r"MACHINE-NOTES|\bARCHITECTURE\.md|\bSTYLE\.md"),
    ("a folder outside the repository", r"\.\./shared\b|/work/(?:shared|wt)\b|\bshared/[A-Z]"),
    ("the founding documents' folder", r"\bseeds/0\d\d\b"),
    ("a session of the work", r"\b[Ss]ession[ -]\d+\b|\b[Tt]his session\b|\b[Ss]ession's\b|\b[Ll]ast session\b"
                              r"|\bother sessions\b|\ball session\b|\bbefore the session\b"),
    ("the team at work", r"\bother helpers\b|\bhelpers' builds\b|\bthe lead's\b|\bthe coordinator's\b"),
    ("a branch of the work", r"\bthis branch\b|\bevery branch merged\b"),
    ("a round of the work", r"\b(?:earlier|previous|last|first|second) round of (?:the )?work\b"
                            r"|\bmeasured in an earlier round\b|\bin an earlier round\b"),
    ("an issue of the work by number", r"\b[Ii]ssue[ -]#?\d+\b"),
    ("the issue the work started from", r"\b[Tt]he issue(?:'s)?(?![\w-])(?! (?:is|was|here)\b)"),
    ("a commit hash as the current state", r"\b(?:main|master|HEAD)`? (?:at|is) `?[0-9a-f]{7,40}\b"
                                           r"|\bcurrent(?:ly)?(?: at)?(?: commit)? [0-9a-f]{7,40}\b"),
]


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *CHECKED], cwd=ROOT, capture_output=True, check=True).stdout
    files = [ROOT / p for p in out.decode().split("\0") if p]
    return [f for f in files if f.is_file() and f.name != Path(__file__).name]


def offending_lines(text: str) -> list[tuple[int, str, str]]:
    hits = []
    for n, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN:
            if re.search(pattern, line):
                hits.append((n, what, line.strip()))
    return hits


@pytest.mark.parametrize("line, what", [
    ("# ns-2 defaults (SPEC S1.1 \"Default preset\")", "the team's specification"),
    ("that remounts /sys (MACHINE-NOTES)", "the team's notes"),
    ("see ../shared/notes.md", "a folder outside the repository"),
    ("`/work/wt/tools/pd-kernel.sh`", "a folder outside the repository"),
    ("transcribed from RFC 2415 (seeds/000)", "the founding documents' folder"),
    ("measured in session 2 on the EPYC machine", "a session of the work"),
    ("after this session's engine changes", "a session of the work"),
    ("Two numbers measured in an earlier round", "a round of the work"),
    ("the tolerance of issue 6", "an issue of the work by number"),
    ("before = main at 43fcf57", "a commit hash as the current state"),
    ("on a quiet machine (`main` at e3999dc)", "a commit hash as the current state"),
    ("the issue-12 table through `iwlab run`", "an issue of the work by number"),
    ("the issue's figures, in the last column", "the issue the work started from"),
    ("Under load, the session-3 figures", "a session of the work"),
    ("shared with seven other sessions", "a session of the work"),
    ("with another helper and the coordinator's ns-3 runs", "the team at work"),
    ("after = this branch (32-byte entry)", "a branch of the work"),
    ("measured on the current commit 1ad5896", "a commit hash as the current state"),
])
def test_each_kind_of_reference_is_caught(line, what):
    assert [w for _, w, _ in offending_lines(line)] == [what]


@pytest.mark.parametrize("line", [
    "RFC 6928 §2: an IW of 10 segments", "class Session:", "start_new_session=True",
    "tcp_cwnd_restart() in net/ipv4/tcp_output.c", "docs/studies.md, \"Claims ledger\"",
    "the round-trip table of RFC 6928 §5.1", "git rev-parse HEAD",
    "| picoquic | commit d199d45 |",
    "after = the 32-byte entry build, before = 43fcf57",  # a build named by its commit
    "the issue is that the queue is full", "a session key", "iwlab.deploy.examples.sized",  # another project's source, pinned: a reader can open it
])
def test_what_a_reader_can_open_passes(line):
    assert offending_lines(line) == []


def test_project_text_cites_only_what_a_reader_can_open():
    bad = []
    for f in tracked_files():
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue  # binary
        bad += [f"{f.relative_to(ROOT)}:{n}: {what}: {line[:120]}" for n, what, line in offending_lines(text)]
    assert not bad, f"{len(bad)} reference(s) a reader cannot open:\n" + "\n".join(bad)
