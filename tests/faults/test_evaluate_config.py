"""Fault injection: ``evaluate --config`` uses every setting it checks.

A setting that is checked and then ignored goes unseen: a pipeline built with its defaults
despite ``[pipeline] code_samples = 3`` makes 2 LM calls per example (one IR, one code answer)
instead of 4 (one IR, three code answers), and the tests count the calls. The LM is
``DummyLM`` (``tests/optimizers/optimizers_testkit.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit import load_module

from lift_metrics._tasks import task_records
from lift_metrics.cli import main

REPO = Path(__file__).resolve().parents[2]
testkit = load_module(REPO / "tests" / "optimizers" / "optimizers_testkit.py")


@pytest.mark.parametrize("samples", [1, 3])
def test_evaluate_builds_the_pipeline_of_its_config(
    samples: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lift_metrics.lm as lm_package

    task = task_records("test")[0]  # the one task --limit 1 evaluates
    lm = testkit.pipeline_lm(task["expected_ir"], task["expected_code"])
    monkeypatch.setattr(lm_package, "resolve_lm", lambda *args, **kwargs: lm)
    config = tmp_path / "run.toml"
    config.write_text(
        'name = "t"\n[optimizer]\nname = "mipro"\n[lm]\nmodel = "local"\n'
        f"[pipeline]\ncode_samples = {samples}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["evaluate", "--config", str(config), "--limit", "1", "--quiet"]
    assert main([*args, "--output-dir", str(out)]) == 0
    assert len(lm.history) == 1 + samples  # the IR step, then each code answer
    provenance: dict[str, Any] = json.loads((out / "evaluation.json").read_text())["provenance"]
    assert provenance["pipeline"]["code_samples"] == samples
