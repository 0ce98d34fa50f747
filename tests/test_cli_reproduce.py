"""`iwlab reproduce STUDY|all`: through the real entry point on the RFC 2415 study's tiny test
configuration (IWLAB_STUDY_TINY=1), `all` on stand-in studies, and one-line errors (exit 2)."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import iwlab.studies
from iwlab.cli import reproduce as cli_reproduce

IWLAB = str(Path(sys.executable).parent / "iwlab")
TABLES = ("T1", "T2", "T3", "T4", "T5", "T6", "RED")


def _iwlab(*args: str, tiny: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, IWLAB_STUDY_TINY="1" if tiny else "0")
    return subprocess.run([IWLAB, *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def rfc2415_in_all(tmp_path_factory):
    """`reproduce rfc2415` into ALL/rfc2415, where `reproduce all --out ALL` (same options) finds
    its raw runs and resumes instead of simulating them a second time."""
    out = tmp_path_factory.mktemp("reproduce") / "all" / "rfc2415"
    return _iwlab("reproduce", "rfc2415", "--quick", "--seeds", "1", "--jobs", "2", "--out", str(out)), out


def test_reproduce_rfc2415_prints_its_tables_and_writes_csvs_and_the_report(rfc2415_in_all):
    r, out = rfc2415_in_all
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in TABLES:
        assert any(line.startswith(f"{name}: ") for line in lines), name
        assert (out / "tables" / f"{name}.csv").is_file()
    assert "webs/ftps" in r.stdout and "8/0" in r.stdout and "IW=4 (% decrease)" in r.stdout
    assert lines[-1] == f"report: {out / 'report.html'}"
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 4
    meta = json.loads((out / "result.json").read_text())
    assert meta["study"] == "rfc2415" and meta["setup"]["mode"] == "tiny" and meta["setup"]["seeds"] == "1…1"
    assert len(meta["conclusions"]) == len(meta["conclusions_ja"]) >= 3
    header = (out / "tables" / "T1.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["webs/ftps", "IW=1 (s)", "IW=2 (% decrease)"] and "IW=1 (s)_lo" in header


def test_off_a_terminal_each_phase_is_one_plain_line_and_brief_prints_the_counts_and_the_report(rfc2415_in_all):
    """Progress in a pipe or a log (make run's, CI's) is one labelled line per phase, no bar's
    carriage returns; `--brief` (make run) prints the verdict counts and the report's path, and a
    resumed run says per phase that its runs are stored."""
    first, out = rfc2415_in_all
    assert "\r" not in first.stderr
    phases = [line for line in first.stderr.splitlines() if line.startswith("rfc2415 · ")]
    assert phases and all(line.endswith("run(s)") for line in phases), first.stderr
    r = _iwlab("reproduce", "rfc2415", "--quick", "--seeds", "1", "--jobs", "2", "--out", str(out), "--brief")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and lines[0] == cli_reproduce.QUICK_NOTE, r.stdout
    assert " claims (" in lines[1] and " reproduced, " in lines[1] and lines[-1] == f"report: {out / 'report.html'}"
    assert [line.split(":")[0] for line in r.stderr.splitlines()] == [line.split(":")[0] for line in phases]
    assert all(line.endswith("already stored, skipping") for line in r.stderr.splitlines()), r.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["reproduce", "rfc2416"], "STUDY = 'rfc2416' is not known; expected one of rfc2415, congested-links, "
                                "rfc6928, iw-function, quic-iw or 'all'"),
    (["reproduce", "rfc2415", "--seeds", "0"], "--seeds 0 is not allowed; expected >= 1"),
    (["reproduce", "rfc2415", "--jobs", "0"], "--jobs 0 is not allowed; expected >= 1"),
    (["reproduce", "rfc2415", "--decide-up-to", "-1"], "--decide-up-to -1 is not allowed; expected >= 0"),
    (["reproduce", "rfc2415", "--dask", "localhost"], "--dask 'localhost' is not a scheduler address"),
])
def test_bad_input_exits_2_with_one_line(args, message, tmp_path):
    r = _iwlab(*args, "--out", str(tmp_path / "x"))
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], r.stderr
    assert not (tmp_path / "x").exists()


def test_an_unwritable_output_folder_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    r = _iwlab("reproduce", "rfc2415", "--seeds", "1", "--out", str(blocker / "out"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "error: " in r.stderr


# ---------------------------------------------------------------------------------------------
# `all` on stand-in studies (fast, whatever studies are installed)

FAKE = """
from iwlab.studies.base import StudyResult, Table, cell

NAME = {name!r}
TITLE = "Stand-in study " + {name!r}

def run(opts):
    t = Table.from_cells("T1", "a table", {{"row": {{"IW=1": cell([1.0, 2.0]), "IW=2": cell([3.0])}}}})
    return StudyResult(NAME, TITLE, tables=[t], conclusions=[NAME + " concludes 1.5"],
                       setup={{"seeds": opts.seeds, "quick": opts.quick}})
"""


@pytest.fixture
def fake_studies(tmp_path, monkeypatch):
    pkg = tmp_path / "fakes"
    pkg.mkdir()
    for name in ("alpha", "beta"):
        (pkg / f"fake_{name}.py").write_text(textwrap.dedent(FAKE.format(name=name)))
    monkeypatch.syspath_prepend(str(pkg))
    studies = {"alpha": "fake_alpha", "beta": "fake_beta"}
    monkeypatch.setattr(iwlab.studies, "STUDIES", studies)
    return studies


def _app() -> typer.Typer:
    app = typer.Typer()
    app.callback()(lambda: None)
    cli_reproduce.register(app)
    return app


def test_reproduce_all_runs_every_study_and_writes_the_summary(fake_studies, tmp_path):
    out = tmp_path / "all"
    r = CliRunner().invoke(_app(), ["reproduce", "all", "--quick", "--seeds", "2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("--quick: ") and "indicative" in r.output.splitlines()[0]
    for name in fake_studies:
        assert f"== {name}: Stand-in study {name}" in r.output
        assert f"report: {out / name / 'report.html'}" in r.output
        assert (out / name / "tables" / "T1.csv").is_file()
        assert json.loads((out / name / "result.json").read_text())["setup"] == {"seeds": 2, "quick": True}
    assert r.output.rstrip().splitlines()[-1] == f"summary report: {out / 'report.html'}"
    summary = (out / "report.html").read_text()
    assert "href='alpha/report.html'" in summary and "beta concludes 1.5" in summary


def test_reproduce_all_names_a_missing_study_before_running_any(fake_studies, tmp_path, monkeypatch):
    monkeypatch.setitem(fake_studies, "gamma", "no_such_module_for_iwlab_tests")
    r = CliRunner().invoke(_app(), ["reproduce", "all", "--out", str(tmp_path / "all")])
    assert r.exit_code == 2
    assert "study gamma: not available" in r.output and "no_such_module_for_iwlab_tests" in r.output
    assert not (tmp_path / "all").exists()


def _all_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in iwlab.studies.STUDIES.values())


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(not _all_installed(), reason="not every study module is written yet")
def test_reproduce_all_with_the_real_studies(rfc2415_in_all):
    out = rfc2415_in_all[1].parent
    r = _iwlab("reproduce", "all", "--quick", "--seeds", "1", "--out", str(out), timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    for name in iwlab.studies.STUDIES:
        assert (out / name / "report.html").is_file() and (out / name / "result.json").is_file()
    assert (out / "report.html").is_file()
    assert r.stdout.rstrip().splitlines()[-1] == f"summary report: {out / 'report.html'}"
