"""Start-up stays light: `import iwlab` and the quick commands import no
pandas, pyarrow, matplotlib, dask or pydantic (typer < 0.29 in pyproject.toml: 0.29 coerces every
parameter through pydantic); `iwlab.run` still gives DataFrames, built
on first access. Timings are in bench/README.md (bench/startup.py), not asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH_A = ROOT / "bench" / "scenarios" / "bulk.toml"
HEAVY = ("pandas", "pyarrow", "matplotlib", "dask", "numpy", "scipy", "pydantic", "iwlab.scenario", "iwlab.api",
         "iwlab.sweep")


def imported_after(code: str, *argv: str) -> dict:
    """Runs `code` in a fresh interpreter; returns which HEAVY modules it imported and what it printed."""
    probe = (f"import sys, json\nsys.argv = ['iwlab', *{list(argv)!r}]\n{code}\n"
             f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
    return {"heavy": json.loads(p.stderr.strip().splitlines()[-1]), "stdout": p.stdout, "stderr": p.stderr}


CLI = "from iwlab.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code"


def test_import_iwlab_imports_nothing_heavy():
    r = imported_after("import iwlab\nassert iwlab.__version__")
    assert r["heavy"] == [], r


@pytest.mark.parametrize("argv", [["--help"], ["presets"], ["validate", str(BENCH_A)], ["run", "--help"]])
def test_quick_commands_import_nothing_heavy(argv):
    r = imported_after(CLI, *argv)
    assert r["heavy"] == [], r


def test_run_writes_parquet_without_pandas(tmp_path):
    r = imported_after(CLI, "run", str(BENCH_A), "--set", "duration=1s", "--out", str(tmp_path))
    assert "pandas" not in r["heavy"] and "iwlab.scenario" in r["heavy"], r  # --set needs the models
    assert (tmp_path / "flows.parquet").exists() and "flows completed" in r["stdout"], r
    r = imported_after(CLI, "run", str(BENCH_A), "--out", str(tmp_path / "b"))
    assert "pandas" not in r["heavy"] and "iwlab.scenario" not in r["heavy"], r


ARRAYS = {"pandas", "pyarrow", "numpy"}


def test_run_with_out_imports_neither_pyarrow_nor_numpy_nor_pandas(tmp_path):
    # The extension writes the Parquet files and computes the headline's medians: importing
    # pyarrow and numpy cost ~0.2 s of CPU per run (bench/README.md, "Fourth pass").
    r = imported_after(CLI, "run", str(BENCH_A), "--out", str(tmp_path / "cli"))
    assert ARRAYS.isdisjoint(r["heavy"]), r
    assert (tmp_path / "cli" / "flows.parquet").exists() and "median flow completion" in r["stdout"], r
    code = ("import iwlab\nr = iwlab.run(iwlab.load('bench/scenarios/bulk.toml', sets=['duration=2s']), "
            f"out={str(tmp_path / 'api')!r}, iw_events=True)\n"
            f"r.save({str(tmp_path / 'api')!r})\nr.save({str(tmp_path / 'copy')!r})\n"
            "assert r.summary['median_flow_completion'] is None and r.summary['bottleneck_reverse_utilisation'] > 0.5")
    r = imported_after(code)
    assert ARRAYS.isdisjoint(r["heavy"]), r
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == [
        "flows.parquet", "iw_events.parquet", "links.parquet", "pages.parquet", "queues.parquet", "scenario.toml",
        "summary.json"]


def test_results_are_dataframes_built_on_first_access(tmp_path):
    code = ("import iwlab\nr = iwlab.run(iwlab.load('bench/scenarios/bulk.toml', sets=['duration=1s']))\n"
            "assert 'pandas' not in sys.modules\nassert r.summary['flows'] == 100\n"
            "import pandas as pd\nassert isinstance(r.flows, pd.DataFrame) and len(r.flows) == 100\n"
            "assert str(r.flows['start'].dtype) == 'double[pyarrow]'\n"
            f"r.save({str(tmp_path)!r})\nback = iwlab.Result.load({str(tmp_path)!r})\n"
            "assert back.flows.equals(r.flows) and back.links.equals(r.links), (back.flows.dtypes, r.flows.dtypes)")
    r = imported_after(code)
    assert "pandas" in r["heavy"], r


def test_sweep_stays_the_function_whatever_imports_the_module():
    code = ("import iwlab\nimport iwlab.sweep\nfrom iwlab.sweep import sweep_records\n"
            "assert callable(iwlab.sweep) and iwlab.sweep.__name__ == 'sweep', iwlab.sweep\n"
            "from iwlab import sweep\nassert sweep is iwlab.sweep")
    r = imported_after(code)
    assert "iwlab.sweep" in r["heavy"], r
