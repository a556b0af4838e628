"""Every notebook in notebooks/ runs headless, top to bottom, in a real Jupyter kernel.

The kernel is the ``python3`` kernel spec; jupyter_client starts a spec whose command is
``python`` with this interpreter (``sys.executable``), so the notebooks see the same virtual
environment as the tests. Notebooks run from the ``notebooks/`` folder, as Jupyter would start
them, and must be committed without outputs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="needs the notebooks extra (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="needs the notebooks extra (nbclient)")
pytest.importorskip("ipykernel", reason="needs the notebooks extra (ipykernel)")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
# seconds for one notebook; the four together take about 5 minutes on 2 CPU cores
# (the optimization notebook's local-LM run is most of it)
TIMEOUT_S = {"optimization": 480}
DEFAULT_TIMEOUT_S = 240


def test_the_four_notebooks_are_there() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "optimization", "validation", "statistics"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    assert book.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert code, "a notebook without code"
    for cell in code:
        assert cell.outputs == [], cell.source[:80]
        assert cell.execution_count is None, cell.source[:80]
    first = book.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith("# ")
    assert "own" in first.source  # says how to use it on one's own program


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    timeout_s = TIMEOUT_S.get(path.stem, DEFAULT_TIMEOUT_S)
    client = nbclient.NotebookClient(
        book,
        kernel_name="python3",
        timeout=timeout_s,  # per cell
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    env = {"HF_HUB_OFFLINE": "1", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    started = time.perf_counter()
    try:
        client.execute()  # raises CellExecutionError naming the cell on any error
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    elapsed = time.perf_counter() - started
    assert elapsed < timeout_s, f"{path.name} took {elapsed:.0f} s"
    outputs = [out for cell in book.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert images, f"{path.name} drew no inline plot"
