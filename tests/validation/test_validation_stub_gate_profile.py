"""Profile keys, fitting and CLI plumbing for code_quality's wrong-answer gate and stub cap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import lift_metrics.validation._calibrate_metric as calibrate_module
from lift_metrics.code import gate_by_wrong_answers
from lift_metrics.validation import (
    CalibrationProfile,
    LabelledItem,
    builtin_scorer,
    calibrate_weights,
    load_profile,
    save_weights,
    shipped_labels_path,
    shipped_profile_path,
)

# --- calibrate_weights: per-item upper bounds ---------------------------------------------


def _data(seed: int = 3) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.random(40), rng.random(40)
    return {"a": a, "b": b}, 0.6 * a + 0.4 * b + 0.05 * rng.standard_normal(40)


def test_infinite_upper_bounds_change_nothing() -> None:
    components, labels = _data()
    plain = calibrate_weights(components, labels, folds=4)
    unbounded = calibrate_weights(components, labels, folds=4, upper_bounds=[math.inf] * 40)
    assert unbounded.weights == plain.weights
    assert unbounded.cv_pearson == plain.cv_pearson


def test_upper_bounds_enter_every_figure() -> None:
    components, labels = _data()
    labels = labels.copy()
    labels[:5] = 0.0  # five "stubs" labelled 0 whose components look good
    for name in components:
        components[name] = components[name].copy()
        components[name][:5] = 0.9
    bounds = np.full(40, math.inf)
    bounds[:5] = 0.0
    fit = calibrate_weights(components, labels, folds=4, upper_bounds=bounds)
    plain = calibrate_weights(components, labels, folds=4)
    w = np.array([fit.weights["a"], fit.weights["b"]])
    capped = np.minimum(np.column_stack([components["a"], components["b"]]) @ w, bounds)
    # independent reference: numpy's Pearson of the capped weighted score
    assert fit.in_sample_pearson == pytest.approx(np.corrcoef(capped, labels)[0, 1])
    assert fit.cv_pearson > plain.cv_pearson + 0.1  # the cap explains the five items


@pytest.mark.parametrize("bounds", [[1.0] * 39, [1.0] * 39 + [math.nan]])
def test_bad_upper_bounds_raise_naming_them(bounds: list[float]) -> None:
    components, labels = _data()
    with pytest.raises(ValueError, match="upper_bounds"):
        calibrate_weights(components, labels, folds=4, upper_bounds=bounds)


# --- profile files ------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_profile_round_trip_with_gate_and_cap(tmp_path: Path, suffix: str) -> None:
    path = save_weights(
        tmp_path / f"p{suffix}",
        {"tests": 0.6, "semantic": 0.4},
        metric="code_quality",
        similarity_floor=0.44,
        wrong_answer_gate=True,
        stub_cap=0.1,
    )
    profile = load_profile(path, metric="code_quality")
    assert profile.wrong_answer_gate is True
    assert profile.stub_cap == 0.1
    assert profile.metric_options() == {
        "weights": {"tests": 0.6, "semantic": 0.4},
        "similarity_floor": 0.44,
        "wrong_answer_gate": True,
        "stub_cap": 0.1,
    }
    assert profile.to_dict()["stub_cap"] == 0.1
    assert "stub_cap=0.1" in repr(profile)


def test_profile_without_the_options_keeps_the_seed_behaviour(tmp_path: Path) -> None:
    path = save_weights(tmp_path / "w.json", {"tests": 1.0}, metric="code_quality")
    document = json.loads(path.read_text())
    assert "wrong_answer_gate" not in document
    assert "stub_cap" not in document
    profile = load_profile(path)
    assert profile.wrong_answer_gate is False
    assert profile.stub_cap is None
    assert set(profile.metric_options()) == {"weights", "similarity_floor"}


def test_ir_profiles_reject_the_code_options(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stub_cap applies to code_quality"):
        save_weights(tmp_path / "ir.json", {"intent": 1.0}, metric="ir_quality", stub_cap=0.1)
    with pytest.raises(ValueError, match="wrong_answer_gate applies to code_quality"):
        CalibrationProfile("ir_quality", {"intent": 1.0}, wrong_answer_gate=True)
    bad = tmp_path / "bad_ir.json"
    bad.write_text(json.dumps({"metric": "ir_quality", "weights": {"intent": 1}, "stub_cap": 0}))
    with pytest.raises(ValueError, match="stub_cap"):
        load_profile(bad)


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("stub_cap", 1.5, ValueError),
        ("stub_cap", "0.1", TypeError),
        ("wrong_answer_gate", "yes", TypeError),
        ("wrong_answer_gate", 1, TypeError),
    ],
)
def test_bad_profile_values_raise_naming_the_key(
    tmp_path: Path, key: str, value: object, error: type[Exception]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"metric": "code_quality", "weights": {"tests": 1}, key: value}))
    with pytest.raises(error, match=key):
        load_profile(path)


def test_builtin_scorer_takes_the_options_for_code_quality_only() -> None:
    scorer = builtin_scorer("code_quality", wrong_answer_gate=True, stub_cap=0.1)
    assert scorer.wrong_answer_gate is True
    assert scorer.stub_cap == 0.1
    assert "stub_cap=0.1" in repr(scorer)
    with pytest.raises(ValueError, match="stub_cap applies to code_quality only"):
        builtin_scorer("ir_quality", stub_cap=0.1)
    with pytest.raises(ValueError, match="wrong_answer_gate applies to code_quality only"):
        builtin_scorer("end_to_end", wrong_answer_gate=True)
    with pytest.raises(ValueError, match="stub_cap"):
        builtin_scorer("code_quality", stub_cap=2.0)


def test_shipped_code_profile_sets_gate_and_cap_and_ir_profile_does_not() -> None:
    code = load_profile(shipped_profile_path("code_quality"), metric="code_quality")
    assert code.wrong_answer_gate is True
    assert code.stub_cap == 0.1  # RUBRIC.md: "a stub that only has the right signature" 0.1
    scorer = builtin_scorer("code_quality", **code.metric_options())
    assert scorer.wrong_answer_gate is True
    assert scorer.stub_cap == 0.1
    ir = load_profile(shipped_profile_path("ir_quality"), metric="ir_quality")
    assert set(ir.metric_options()) == {"weights", "similarity_floor"}


# --- the CLI ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        ["code_quality", "--stub-cap", "0.1"],  # without --calibrate
        ["code_quality", "--wrong-answer-gate"],  # without --calibrate
        ["ir_quality", "--calibrate", "--wrong-answer-gate"],  # code_quality not validated
        ["code_quality", "--calibrate", "--stub-cap", "2"],  # outside [0, 1]
    ],
)
def test_cli_rejects_misused_gate_and_cap_flags(cli_main, tmp_path: Path, extra: list[str]) -> None:
    try:
        code = cli_main(["validate", *extra, "--out", str(tmp_path)])
    except SystemExit as exc:  # a value out of range is refused while the options are parsed
        code = exc.code
    assert code == 2


def test_gate_columns_apply_the_metric_rule_item_by_item() -> None:
    columns = {"syntax": [1.0, 1.0], "tests": [0.5, 0.0], "semantic": [0.8, 0.9], "style": [1, 1]}
    gated = calibrate_module.gate_columns(columns, [0.5, 0.0])
    first = gate_by_wrong_answers(
        {"syntax": 1.0, "tests": 0.5, "semantic": 0.8, "style": 1.0, "tests.wrong_answers": 0.5}
    )
    assert gated["semantic"] == [first["semantic"], 0.9] == [pytest.approx(0.4), 0.9]
    assert gated["style"] == [0.5, 1]
    assert gated["syntax"] == [1.0, 1.0]
    assert gated["tests"] == [0.5, 0.0]


@pytest.mark.slow
def test_calibrate_with_gate_and_cap_fits_calibration_items_and_saves_the_options(
    cli_main, tmp_path: Path, write_jsonl, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(x) for x in shipped_labels_path("code_quality").read_text().splitlines()]
    picked = [r for r in rows if r["split"] == "calibration"][:24]
    picked += [r for r in rows if r["split"] == "heldout"][:6]
    data = write_jsonl(tmp_path / "code.jsonl", picked)
    seen: list[str] = []
    original = calibrate_module.metric_components

    def recording(scorer: object, items: list[LabelledItem]) -> object:
        seen.extend(item.id for item in items)
        columns = original(scorer, items)
        assert set(columns) == {"syntax", "tests", "semantic", "style"} | {
            "tests.wrong_answers",
            "stub",
        }
        return columns

    monkeypatch.setattr(calibrate_module, "metric_components", recording)
    out = tmp_path / "r"
    args = ["validate", "code_quality", "--data", str(data), "--calibrate", "--folds", "3"]
    args += ["--similarity-floor", "0.44", "--wrong-answer-gate", "--stub-cap", "0.1"]
    args += ["--split", "calibration"]  # report on the fit items: no heldout item is scored
    assert cli_main([*args, "--target", "-1", "--out", str(out)]) == 0
    assert set(seen) == {r["id"] for r in picked if r["split"] == "calibration"}
    profile = load_profile(out / "weights_code_quality.json", metric="code_quality")
    assert profile.wrong_answer_gate is True
    assert profile.stub_cap == 0.1
    assert profile.similarity_floor == 0.44
