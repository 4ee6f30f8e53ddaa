"""Every notebook in examples/ executes without error (at its small default size)."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("notebook", sorted(EXAMPLES.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs(notebook, tmp_path):
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    figures = [out for out in outputs if "image/png" in out.get("data", {})]
    assert figures, "the notebook should end with its maps"
