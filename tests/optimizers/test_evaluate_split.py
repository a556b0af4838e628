"""evaluate_split (the library side of ``lift-metrics evaluate``) with DummyLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from optimizers_testkit import dummy_lm

import lift_metrics.lm as lm_package
from lift_metrics._tasks import task_records
from lift_metrics.optimizers._config import EvaluationSpec, MetricSpec
from lift_metrics.optimizers._eval_results import Evaluation
from lift_metrics.optimizers._evaluate_split import evaluate_split


@pytest.fixture(autouse=True)
def _dummy_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    task = task_records("train")[0]  # t001, add(a, b)
    monkeypatch.setattr(lm_package, "resolve_lm", lambda spec: dummy_lm(task))


def evaluate(output_dir: Path, **changes: Any) -> Evaluation:
    """Two dev tasks, one run, the ir_quality metric, into ``output_dir``."""
    options: dict[str, Any] = {
        "lm_table": {"model": "local"},
        "program_path": None,
        "dataset_path": None,
        "split": "dev",
        "limit": 2,
        "metric_spec": MetricSpec(name="ir_quality"),
        "evaluation": EvaluationSpec(),
        "output_dir": output_dir,
        "seed": 3,
        "progress": False,
    }
    return evaluate_split(**{**options, **changes})


def provenance(output_dir: Path) -> dict[str, Any]:
    aggregate = json.loads((output_dir / "evaluation.json").read_text(encoding="utf-8"))
    return dict(aggregate["provenance"])


def test_the_results_are_written_in_the_output_dir(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    result = evaluate(out, evaluation=EvaluationSpec(runs=2), config_hash="c0ffee")
    assert isinstance(result, Evaluation)
    assert [e.task_id for e in result.examples] == [r["id"] for r in task_records("dev")[:2]]
    assert sorted(p.name for p in out.iterdir()) == [
        ".lift-metrics-output.json",
        "cache",
        "evaluation.json",
        "evaluation.md",
        "evaluation_run1.json",
        "evaluation_run2.json",
        "usage.json",
    ]
    record = provenance(out)
    assert (record["split"], record["limit"], record["seed"]) == ("dev", 2, 3)
    assert record["config_hash"] == "c0ffee"  # recorded as given
    assert record["metric"]["name"] == "ir_quality"
    assert record["evaluation"]["runs"] == 2
    assert record["program"] is None
    assert len(record["dataset_hash"]) == 64
    assert json.loads((out / "usage.json").read_text())["lm_calls"] == 8  # 2 tasks x 2 steps x 2


def test_an_earlier_evaluation_is_cleared_and_other_files_stay(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    out.mkdir()
    stale = ["evaluation_run3.json", ".evaluation.json.abc123.tmp", ".usage.json.x1.tmp"]
    for name in [*stale, "notes.txt"]:
        (out / name).write_text("{}", encoding="utf-8")
    evaluate(out)
    names = {p.name for p in out.iterdir()}
    assert not names & set(stale)  # a third run's file is not left beside this one-run result
    assert {"notes.txt", "evaluation.json", "evaluation_run1.json"} <= names


def test_the_settings_hash_is_equal_for_equal_settings_and_differs_for_another_limit(
    tmp_path: Path,
) -> None:
    evaluate(tmp_path / "a")
    evaluate(tmp_path / "b", config_hash="another config, same settings")
    evaluate(tmp_path / "c", limit=1)
    hashes = [provenance(tmp_path / name)["settings_hash"] for name in "abc"]
    assert len(hashes[0]) == 64
    assert hashes[0] == hashes[1]
    assert hashes[2] != hashes[0]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"program_path": Path("nope/program.json")}, r"^program file not found: nope/program"),
        ({"dataset_path": Path("nope/tasks.jsonl")}, r"^dataset file not found: nope/tasks"),
    ],
)
def test_a_missing_file_is_named_before_any_output(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    out = tmp_path / "ev"
    with pytest.raises(FileNotFoundError, match=message):
        evaluate(out, **changes)
    assert not out.exists()


def test_a_limit_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="limit must be >= 1, got 0"):
        evaluate(tmp_path / "ev", limit=0)
    assert not (tmp_path / "ev").exists()
