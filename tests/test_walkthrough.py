"""docs/walkthrough.ipynb runs headless from top to bottom (nbclient, the python3 kernel of
this interpreter) and every figure cell shows a figure: the notebook stays in step with the API."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "walkthrough.ipynb"


def test_the_walkthrough_notebook_runs_headless(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "stored outputs: clear them"
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    figures = [c for c in nb.cells if c.cell_type == "code" and "iwlab.plot." in c.source.splitlines()[-1]]
    assert len(figures) == 4
    for cell in figures:
        assert any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source
