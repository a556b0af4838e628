"""Every notebook in notebooks/ runs headless, top to bottom, in a real Jupyter kernel.

The kernel is the ``python3`` kernel spec; jupyter_client starts a spec whose command is
``python`` with this interpreter (``sys.executable``), so the notebooks see the same virtual
environment as the tests. Notebooks run from the ``notebooks/`` folder, as Jupyter would start
them, and must be committed without outputs.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="needs the notebooks extra (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="needs the notebooks extra (nbclient)")
pytest.importorskip("ipykernel", reason="needs the notebooks extra (ipykernel)")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
#: where the optimization notebook's run writes (its config's ``output_dir``)
RUN_DIR = NOTEBOOKS_DIR.parent / "runs" / "notebook-optimization"
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
    if path.stem == "optimization":  # no earlier run, LM cache included: a real run
        shutil.rmtree(RUN_DIR, ignore_errors=True)
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
    if path.stem == "optimization":
        check_the_real_run(RUN_DIR)


def check_the_real_run(out: Path) -> None:
    """The main job in miniature, as the optimization notebook runs it: the bundled GGUF model,
    MIPROv2 with labelled demonstrations and one trial, baseline -> compile -> optimized ->
    comparison, finished under its budget, every file written."""
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["stop_reason"] is None, result["stop_reason"]
    assert [d["metric"] for d in result["deltas"]] == [
        "end_to_end",
        "ir_quality",
        "code_quality",
        "tests_passed",
        "tasks_solved",
    ]
    for arm in ("baseline", "optimized"):  # the generated programs are kept, one per task
        assert len(list((out / "code" / arm).glob("t*.py"))) == 2
        assert result["code"][arm]["degenerate"]["placeholder"] == 0
        # each arm ran its own LM calls: none replayed the other arm's cached answers, which
        # would time the optimized program at a few ms and call it faster
        evaluation = json.loads((out / arm / f"{arm}.json").read_text(encoding="utf-8"))
        for example in evaluation["examples"]:
            assert example["total_tokens"] > 0, (arm, example["task_id"])
            assert example["mean_latency_ms"] > 100.0, (arm, example["task_id"])
    usage = result["usage"]
    assert 0 < usage["lm_calls"] <= 32  # a real run: the run folder was emptied first
    assert usage["total_tokens"] > 0
    assert usage["cost_usd"] == 0.0
    trials = json.loads((out / "trials.json").read_text(encoding="utf-8"))
    assert len(trials["trial_logs"]) >= 2  # the unoptimized program + the trial
    for name in ("program.json", "comparison.json", "config.json", "report.md"):
        assert (out / name).is_file(), name
    assert result["metric_time_s"] < result["wall_time_s"]
