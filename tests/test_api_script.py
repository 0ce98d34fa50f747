"""The Python API from a plain script: the README's example, saved as a .py file with no
`if __name__ == "__main__":` guard and run with `python FILE`, works — its sweep's spawned
workers never run the script again (iwlab.workers). Without that, every worker re-ran the
script's top-level sweep while bootstrapping and the pool broke (BrokenProcessPool, the
`freeze_support()` message)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_python_example() -> str:
    """The README's ```python block that imports iwlab."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    [code] = [b for b in blocks if "import iwlab" in b]
    return code


def run_script(tmp_path: Path, code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    script = tmp_path / "example.py"
    script.write_text(code)
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout)


def test_the_readme_example_runs_as_a_plain_script(tmp_path):
    code = readme_python_example()
    assert "iwlab.sweep(" in code and "__main__" not in code
    r = run_script(tmp_path, code + "\nprint('rows', len(df), 'seeds', sorted(int(s) for s in df['seed'].unique()))\n")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "BrokenProcessPool" not in r.stderr and "freeze_support" not in r.stderr
    assert "rows 10 seeds [1, 2, 3, 4, 5]" in r.stdout, r.stdout
    assert len(list((tmp_path / "out" / "s" / "runs").iterdir())) == 10


@pytest.mark.parametrize("entry", [
    "iwlab.sweep('rfc2415', grid={'iw.default': ['iw1', 'iw4']}, seeds=1, jobs=2, progress=False)",
    "type(iwlab.advise(rate='10Mbps', rtt='50ms', candidates=['fixed:3,10'], budget='8runs', seeds=2, jobs=2)).__name__",
])
def test_a_two_worker_sweep_from_a_script_runs_the_script_once(tmp_path, entry):
    """The script's top level runs in this process only: a worker that ran it again would print
    a second 'top level' line (and, with a sweep in it, break the pool)."""
    r = run_script(tmp_path, f"import iwlab\nprint('top level', flush=True)\ndf = {entry}\nprint('rows', len(df))\n")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("top level") == 1 and "rows " in r.stdout, r.stdout
