"""The item scorers on shipped items, DSPy metric objects under validate_metric, weight files."""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from lift_metrics.validation import (
    CodePairScorer,
    EndToEndScorer,
    IRPairScorer,
    builtin_scorer,
    import_metric,
    load_labels,
    save_weights,
    shipped_labels_path,
    validate_metric,
)

NO_MODEL_IR = {"intent": 0, "signature": 0.4, "structure": 0.3, "constraints": 0.3}
NO_MODEL_CODE = {"syntax": 0.2, "tests": 0.5, "semantic": 0, "style": 0.1, "structural": 0.2}


class CountingEmbedder:
    """Bag-of-tokens hashed into 32 buckets; records every batch it is asked to embed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.batches.append(list(texts))
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in text.split():
                out[row, zlib.crc32(token.encode()) % 32] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def _shipped(metric: str, count: int) -> list[dict[str, object]]:
    lines = shipped_labels_path(metric).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:count]]


def test_ir_scorer_matches_ir_quality_on_shipped_items() -> None:
    from lift_metrics.ir import IR, ir_quality

    scorer = IRPairScorer(weights=NO_MODEL_IR)
    for row in _shipped("ir_quality", 6):
        expected = ir_quality(
            IR.model_validate(row["predicted"]),
            IR.model_validate(row["expected"]),
            weights=NO_MODEL_IR,
        )
        assert scorer(row) == expected
    assert scorer.group(row) == row["expected"]["signature"]["name"]  # type: ignore[index]


def test_ir_scorer_prefetch_embeds_all_intents_in_one_batch() -> None:
    embedder = CountingEmbedder()
    scorer = IRPairScorer(embedder=embedder)
    rows = _shipped("ir_quality", 8)
    scorer.prefetch(rows)
    assert len(embedder.batches) == 1
    intents = {r[side]["intent"]["description"] for r in rows for side in ("predicted", "expected")}
    assert set(embedder.batches[0]) == intents


@pytest.fixture
def sandbox_available() -> None:
    """The code scorer runs the real sandbox (milliseconds per item)."""
    pytest.importorskip("lift_metrics.sandbox")


def test_code_scorer_converts_data_file_tests(sandbox_available: None) -> None:
    from lift_metrics.code import code_quality

    scorer = CodePairScorer(weights=NO_MODEL_CODE)
    for row in _shipped("code_quality", 4):
        tests = [(t["inputs"], t["expected"]) for t in row["tests"]]  # type: ignore[union-attr]
        expected = code_quality(
            row["predicted_code"],
            row["expected_code"],
            tests,  # type: ignore[arg-type]
            entry_point=row["entry_point"],
            weights=NO_MODEL_CODE,
        )  # type: ignore[arg-type]
        assert scorer(row) == pytest.approx(expected)
    assert scorer.group(row) == row["entry_point"]


def test_end_to_end_scorer(sandbox_available: None) -> None:
    ir_row = _shipped("ir_quality", 1)[0]
    code_row = _shipped("code_quality", 1)[0]
    item = {
        "predicted_ir": ir_row["predicted"],
        "expected_ir": ir_row["expected"],
        "predicted_code": code_row["predicted_code"],
        "expected_code": code_row["expected_code"],
        "tests": code_row["tests"],
        "entry_point": code_row["entry_point"],
    }
    scorer = EndToEndScorer(ir_weights=NO_MODEL_IR, code_weights=NO_MODEL_CODE)
    assert scorer(item) == pytest.approx(1.0)  # both shipped first pairs are exact matches
    with pytest.raises(ValueError, match="no field 'predicted_ir'"):
        scorer({"expected_ir": {}})


def test_dspy_metric_object_under_validate_metric() -> None:
    from lift_metrics import IRQuality

    rows = _shipped("ir_quality", 12)
    items = load_labels(
        shipped_labels_path("ir_quality"),
        fields={"expected_ir": "expected", "ir": "predicted"},
    )[:12]
    metric = IRQuality(weights=NO_MODEL_IR)
    result = validate_metric(metric, items, call="dspy", prediction_fields=["ir"])
    direct = [IRPairScorer(weights=NO_MODEL_IR)(row) for row in rows]
    assert result.scores == pytest.approx(direct)
    assert result.metric == "IRQuality"


def test_calibrated_weights_file_loads_into_metric_objects(tmp_path: Path) -> None:
    from lift_metrics import CodeQuality
    from lift_metrics.validation import load_weights

    path = save_weights(
        tmp_path / "w.json",
        {"syntax": 0.03, "tests": 0.61, "semantic": 0.36, "style": 0.0},
        metric="code_quality",
    )
    metric = CodeQuality(weights=load_weights(path, metric="code_quality"))
    assert metric.code_weights["tests"] == pytest.approx(0.61)
    assert builtin_scorer("code_quality", weights=load_weights(path)).weights["style"] == 0.0


def test_builtin_and_import_errors() -> None:
    with pytest.raises(ValueError, match="metric must be one of"):
        builtin_scorer("bleu")
    with pytest.raises(ValueError, match=r"package\.module:attribute"):
        import_metric("lift_metrics.ir.ir_quality")
    with pytest.raises(ValueError, match="no attribute"):
        import_metric("lift_metrics.ir:nothing")
    with pytest.raises(ValueError, match="not callable"):
        import_metric("lift_metrics.ir:DEFAULT_IR_WEIGHTS")
