"""calibrate_metric: the library side of ``validate --calibrate`` (checks before any scoring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.validation import (
    CalibrationProfile,
    CalibrationResult,
    LabelledItem,
    MetricCalibration,
    calibrate_metric,
    load_profile,
    resolve_profile,
    shipped_profile_path,
)
from lift_metrics.validation._report import json_report

ITEMS = [LabelledItem(str(i), {}, 0.5) for i in range(10)]


@pytest.mark.parametrize(
    ("metric", "options", "message"),
    [
        ("bleu", {}, "metric must be one of"),
        ("reference_score", {}, "ships fitted"),
        ("aggregate", {}, "cost and latency, a choice of the user's"),
        ("end_to_end", {"similarity_floor": 0.4}, "ir_quality and code_quality only"),
        ("ir_quality", {"wrong_answer_gate": True}, "code_quality profiles only"),
        ("ir_quality", {"stub_cap": 0.1}, "code_quality profiles only"),
    ],
)
def test_misused_options_fail_before_scoring(metric: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        calibrate_metric(metric, ITEMS, **options)


def _calibration() -> MetricCalibration:
    fit = CalibrationResult(
        metric="code_quality",
        weights={"syntax": 0.2, "tests": 0.4, "semantic": 0.4, "style": 0.0},
        default_weights=None,
        objective="pearson",
        n=10,
        folds=5,
        in_sample_pearson=0.9,
        cv_pearson=0.85,
    )
    profile = CalibrationProfile(
        "code_quality", dict(fit.weights), similarity_floor=0.44, wrong_answer_gate=True
    )
    return MetricCalibration(fit=fit, profile=profile)


def test_save_writes_a_profile_with_the_fit(tmp_path: Path) -> None:
    path = _calibration().save(tmp_path / "p.json", fitted_on="x.jsonl split=calibration")
    profile = load_profile(path, metric="code_quality")
    assert profile == _calibration().profile
    table = json.loads(path.read_text())["calibration"]
    assert table["cv_pearson"] == 0.85
    assert table["fitted_on"] == "x.jsonl split=calibration"
    assert resolve_profile("code_quality", "profile", path) == profile


def test_resolve_profile_is_public_and_reads_the_shipped_file() -> None:
    shipped = resolve_profile("ir_quality", "profile", "shipped")
    assert shipped == load_profile(shipped_profile_path("ir_quality"))
    with pytest.raises(ValueError, match="profile must be a profile for 'code_quality'"):
        resolve_profile("code_quality", "profile", shipped)


def test_json_report_without_results() -> None:
    fit = _calibration().fit
    document = json_report([], split="heldout", calibrations={"code_quality": (fit, None)})
    assert document["split"] == "heldout"
    assert document["unscored"] == []
    assert document["calibration"]["code_quality"]["reported"] is None
