"""python/iwlab/binaries.py: where the helper programs are found — `$ENV_VAR`, then the newest of
the workspace's builds (target/tools, target/release, target/debug), then PATH."""

from __future__ import annotations

import os

import pytest

from iwlab import binaries


def _exe(path, mtime):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setattr(binaries, "REPO", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("IWLAB_X", raising=False)
    return tmp_path


def test_the_newest_workspace_build_wins_whatever_its_profile(repo):
    _exe(repo / "target" / "release" / "x", 1_000)
    tools = _exe(repo / "target" / "tools" / "x", 2_000)
    assert binaries.find_binary("x", "IWLAB_X") == tools
    release = _exe(repo / "target" / "release" / "x", 3_000)
    assert binaries.find_binary("x", "IWLAB_X") == release


def test_the_environment_variable_comes_first(repo, monkeypatch):
    _exe(repo / "target" / "tools" / "x", 2_000)
    mine = _exe(repo / "elsewhere" / "x", 1_000)
    monkeypatch.setenv("IWLAB_X", str(mine))
    assert binaries.find_binary("x", "IWLAB_X") == mine


def test_a_non_executable_file_is_passed_over_and_path_is_last(repo, monkeypatch):
    (repo / "target" / "tools").mkdir(parents=True)
    (repo / "target" / "tools" / "x").write_text("not a program")
    monkeypatch.setenv("IWLAB_X", str(repo / "missing"))
    on_path = _exe(repo / "bin" / "x", 1_000)
    assert binaries.find_binary("x", "IWLAB_X") == on_path
    on_path.unlink()
    assert binaries.find_binary("x", "IWLAB_X") is None
