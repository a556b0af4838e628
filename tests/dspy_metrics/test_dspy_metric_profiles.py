"""Calibrated profiles on the DSPy metric objects: ``profile=``, ``ir_profile=``, ``code_profile=``.

Reference values come from the pure functions (:func:`ir_quality`, :func:`code_quality`)
called with ``**profile.metric_options()``, the documented way to use a profile, and the
shipped files ``datasets/labels/calibrated_*.json`` (floor 0.44 for both; the code profile
sets ``wrong_answer_gate`` and ``stub_cap=0.1``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy_testkit import make_task
from testkit import HashEmbedder

from lift_metrics.code import code_quality
from lift_metrics.composite import aggregate_metric, latency_penalty
from lift_metrics.dspy_metrics import (
    Aggregate,
    CodeQuality,
    EndToEnd,
    IRQuality,
    record_measurement,
)
from lift_metrics.ir import DEFAULT_IR_WEIGHTS, ir_quality
from lift_metrics.validation import (
    CalibrationProfile,
    load_profile,
    save_weights,
    shipped_profile_path,
)

TASK = make_task(1)
EXAMPLE = dspy.Example(**TASK).with_inputs("prompt")
TESTS = [(t["inputs"], t["expected"]) for t in TASK["tests"]]
GOOD_CODE = TASK["expected_code"]
BAD_CODE = GOOD_CODE.replace("a + b", "a - b")  # runs and returns wrong values
STUB_CODE = "def add1(a: int, b: int) -> int:\n    pass\n"  # a placeholder (is_stub)
OTHER_INTENT = {**TASK["expected_ir"], "intent": {"description": "Add two numbers a and b."}}
IR_PROFILE = load_profile(shipped_profile_path("ir_quality"), metric="ir_quality")
CODE_PROFILE = load_profile(shipped_profile_path("code_quality"), metric="code_quality")
DEFAULT_CODE_WEIGHTS = {"syntax": 0.2, "tests": 0.4, "semantic": 0.3, "style": 0.1}
EQUAL_IR = {"intent": 1, "signature": 1, "structure": 1, "constraints": 1}
EQUAL_CODE = {"syntax": 1, "tests": 1, "semantic": 1, "style": 1}


def pred(**fields: Any) -> Any:
    base = {"ir": json.dumps(TASK["expected_ir"]), "code": GOOD_CODE}
    prediction = dspy.Prediction(**{**base, **fields})
    record_measurement(prediction, latency_ms=24_000.0, cost_usd=0.02)
    return prediction


def _pure_ir(prediction: Any, embedder: HashEmbedder, **options: Any) -> float:
    return ir_quality(prediction.ir, TASK["expected_ir"], embedder=embedder, **options)


def _pure_code(prediction: Any, embedder: HashEmbedder, **options: Any) -> float:
    return code_quality(
        prediction.code,
        TASK["expected_code"],
        TESTS,
        embedder=embedder,
        entry_point=TASK["entry_point"],
        **options,
    )


# ------------------------------------------------------------------ accepted forms


def _profile_forms(metric: str, tmp_path: Path) -> list[Any]:
    """Every accepted form of the shipped profile for ``metric``."""
    shipped = shipped_profile_path(metric)
    copy = tmp_path / f"copy_{metric}.json"
    copy.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    return ["shipped", str(shipped), shipped, copy, load_profile(shipped, metric=metric)]


@pytest.mark.parametrize("form", range(5), ids=["shipped", "str", "Path", "copy", "object"])
def test_ir_profile_forms_resolve_to_the_shipped_profile(form: int, tmp_path: Path) -> None:
    metric = IRQuality(profile=_profile_forms("ir_quality", tmp_path)[form])
    assert metric.ir_profile is not None
    assert metric.ir_profile.to_dict() == IR_PROFILE.to_dict()
    assert dict(metric.ir_options) == {"similarity_floor": 0.44}
    assert metric.ir_weights == pytest.approx(IR_PROFILE.weights)  # already sums to 1


@pytest.mark.parametrize("form", range(5), ids=["shipped", "str", "Path", "copy", "object"])
def test_code_profile_forms_resolve_to_the_shipped_profile(form: int, tmp_path: Path) -> None:
    metric = CodeQuality(profile=_profile_forms("code_quality", tmp_path)[form])
    assert metric.code_profile is not None
    assert metric.code_profile.to_dict() == CODE_PROFILE.to_dict()
    assert dict(metric.code_options) == {
        "similarity_floor": 0.44,
        "wrong_answer_gate": True,
        "stub_cap": 0.1,
    }
    assert metric.code_weights == pytest.approx(CODE_PROFILE.weights)


def test_a_toml_profile_file_and_a_profile_without_metric_are_accepted(tmp_path: Path) -> None:
    path = save_weights(
        tmp_path / "mine.toml", EQUAL_CODE, metric="code_quality", similarity_floor=0.2
    )
    metric = CodeQuality(profile=os.fspath(path))
    assert dict(metric.code_options) == {"similarity_floor": 0.2}  # no gate, no cap
    assert metric.code_weights == dict.fromkeys(EQUAL_CODE, 0.25)  # normalised
    anonymous = CalibrationProfile(None, dict(DEFAULT_IR_WEIGHTS), similarity_floor=0.3)
    assert dict(IRQuality(profile=anonymous).ir_options) == {"similarity_floor": 0.3}


def test_options_are_read_only() -> None:
    metric = EndToEnd(ir_profile="shipped", code_profile="shipped")
    with pytest.raises(TypeError):
        metric.code_options["stub_cap"] = 0.5  # type: ignore[index]
    with pytest.raises(AttributeError):
        metric.ir_options = {}  # type: ignore[misc]
    assert dict(metric.code_options)["stub_cap"] == 0.1


# ------------------------------------------------------------------ the options reach the score


def test_the_shipped_code_profile_caps_a_stub(hash_embedder: HashEmbedder) -> None:
    prediction = pred(code=STUB_CODE)
    calibrated = CodeQuality(profile="shipped", embedder=hash_embedder)
    seed = CodeQuality(embedder=hash_embedder, profile="seed")
    score = calibrated(EXAMPLE, prediction)
    assert score == 0.1  # syntax alone (0.212) would be above the cap
    assert seed(EXAMPLE, prediction) > 0.2  # profile="seed" does not cap
    assert CodeQuality(embedder=hash_embedder)(EXAMPLE, prediction) == 0.0  # validated: no body
    assert score == _pure_code(prediction, hash_embedder, **CODE_PROFILE.metric_options())
    assert any("capped at 0.1" in r for r in calibrated.history[-1].reasons)


def test_the_wrong_answer_gate_reaches_the_score(hash_embedder: HashEmbedder) -> None:
    # same weights and floor, only the gate differs: wrong answers take the semantic credit
    plain = CalibrationProfile("code_quality", dict(DEFAULT_CODE_WEIGHTS))
    gated = CalibrationProfile("code_quality", dict(DEFAULT_CODE_WEIGHTS), wrong_answer_gate=True)
    prediction = pred(code=BAD_CODE)
    without_gate = CodeQuality(profile=plain, embedder=hash_embedder)(EXAMPLE, prediction)
    with_gate = CodeQuality(profile=gated, embedder=hash_embedder)(EXAMPLE, prediction)
    assert without_gate == CodeQuality(embedder=hash_embedder, profile="seed")(EXAMPLE, prediction)
    assert with_gate < without_gate
    assert with_gate == pytest.approx(_pure_code(prediction, hash_embedder, wrong_answer_gate=True))


def test_the_similarity_floor_changes_the_ir_score(hash_embedder: HashEmbedder) -> None:
    prediction = pred(ir=OTHER_INTENT)
    floored = CalibrationProfile("ir_quality", dict(DEFAULT_IR_WEIGHTS), similarity_floor=0.5)
    default_score = IRQuality(embedder=hash_embedder)(EXAMPLE, prediction)
    floored_score = IRQuality(profile=floored, embedder=hash_embedder)(EXAMPLE, prediction)
    assert floored_score < default_score < 1.0  # the intents differ: the floor lowers it
    assert floored_score == pytest.approx(_pure_ir(prediction, hash_embedder, similarity_floor=0.5))
    shipped = IRQuality(profile="shipped", embedder=hash_embedder)(EXAMPLE, prediction)
    assert shipped == pytest.approx(
        _pure_ir(prediction, hash_embedder, **IR_PROFILE.metric_options())
    )


def test_end_to_end_and_aggregate_use_both_profiles(hash_embedder: HashEmbedder) -> None:
    prediction = pred(ir=OTHER_INTENT, code=STUB_CODE)
    ir = _pure_ir(prediction, hash_embedder, **IR_PROFILE.metric_options())
    code = _pure_code(prediction, hash_embedder, **CODE_PROFILE.metric_options())
    assert code == 0.1
    profiles = {"ir_profile": "shipped", "code_profile": "shipped", "embedder": hash_embedder}
    e2e_metric = EndToEnd(**profiles)
    breakdown = e2e_metric.breakdown(EXAMPLE, prediction)
    assert breakdown.components["ir"] == pytest.approx(ir)
    assert breakdown.components["code"] == code
    e2e = e2e_metric(EXAMPLE, prediction)
    assert e2e == pytest.approx(0.4 * ir + 0.5 * code + 0.1 * latency_penalty(24_000))
    agg_metric = Aggregate(**profiles)
    assert dict(agg_metric.ir_options) == dict(e2e_metric.ir_options)
    assert dict(agg_metric.code_options) == dict(e2e_metric.code_options)
    agg = agg_metric(EXAMPLE, prediction)
    assert agg == pytest.approx(aggregate_metric(ir, code, e2e, 0.02, 24_000, gated=True))
    assert agg != pytest.approx(Aggregate(embedder=hash_embedder)(EXAMPLE, prediction))


def test_one_profile_leaves_the_other_part_a_plain_weighted_sum(
    hash_embedder: HashEmbedder,
) -> None:
    prediction = pred(ir=OTHER_INTENT, code=STUB_CODE)
    metric = EndToEnd(code_profile="shipped", embedder=hash_embedder)
    assert dict(metric.ir_options) == {}
    assert metric.ir_profile is None
    breakdown = metric.breakdown(EXAMPLE, prediction)
    # exactly the plain weighted sum: the object's weights, no options
    assert breakdown.components["ir"] == _pure_ir(
        prediction, hash_embedder, weights=metric.ir_weights
    )
    assert breakdown.components["code"] == 0.1


# ------------------------------------------------------ profile="seed": the plain weighted sums


@pytest.mark.parametrize("code", [GOOD_CODE, BAD_CODE, STUB_CODE])
def test_the_seed_profile_gives_exactly_the_plain_weighted_sums(
    code: str, hash_embedder: HashEmbedder
) -> None:
    prediction = pred(ir=OTHER_INTENT, code=code)
    ir_metric = IRQuality(embedder=hash_embedder, profile=None)
    code_metric = CodeQuality(embedder=hash_embedder, profile="seed")
    # the plain weighted sums: the objects' normalised weights, no options
    ir = _pure_ir(prediction, hash_embedder, weights=ir_metric.ir_weights)
    code_score = _pure_code(prediction, hash_embedder, profile="seed")
    assert ir_metric(EXAMPLE, prediction) == ir
    assert code_metric(EXAMPLE, prediction) == code_score
    assert ir == pytest.approx(_pure_ir(prediction, hash_embedder))  # profile="seed" defaults
    assert code_metric.code_weights == pytest.approx(dict(DEFAULT_CODE_WEIGHTS))
    e2e_metric = EndToEnd(embedder=hash_embedder, ir_profile=None, code_profile="seed")
    e2e = e2e_metric(EXAMPLE, prediction)
    assert e2e == pytest.approx(0.4 * ir + 0.5 * code_score + 0.1 * latency_penalty(24_000))
    assert dict(e2e_metric.ir_options) == {}
    assert dict(e2e_metric.code_options) == {}
    assert e2e_metric.ir_profile is None
    assert e2e_metric.code_profile is None


@pytest.mark.parametrize("code", [GOOD_CODE, BAD_CODE, STUB_CODE])
def test_the_default_object_scores_as_the_default_pure_function(
    code: str, hash_embedder: HashEmbedder
) -> None:
    prediction = pred(code=code)
    expected = _pure_code(prediction, hash_embedder)
    assert CodeQuality(embedder=hash_embedder)(EXAMPLE, prediction) == expected
    e2e = EndToEnd(embedder=hash_embedder).breakdown(EXAMPLE, prediction)
    assert e2e.components["code"] == expected


def test_the_objects_hand_the_core_one_options_object(
    monkeypatch: pytest.MonkeyPatch, hash_embedder: HashEmbedder
) -> None:
    calls: list[dict[str, Any]] = []

    def fake(code: str, expected: str, tests: Any, options: Any, **kwargs: Any) -> Any:
        calls.append({"options": options, **kwargs})
        return types.SimpleNamespace(score=0.5, reasons=())

    monkeypatch.setattr("lift_metrics.code._quality.score_code", fake)
    CodeQuality(embedder=hash_embedder)(EXAMPLE, pred())
    CodeQuality(profile="shipped", embedder=hash_embedder)(EXAMPLE, pred())
    assert set(calls[0]) == {"options", "embedder", "sandbox", "entry_point", "prompt"}
    assert calls[0]["options"].profile == "validated"
    assert calls[0]["options"].validated
    assert calls[1]["options"].profile == "shipped"
    assert calls[1]["options"].metric_options() == {
        "similarity_floor": 0.44,
        "wrong_answer_gate": True,
        "stub_cap": 0.1,
    }


def test_the_result_cache_is_not_shared_between_objects(hash_embedder: HashEmbedder) -> None:
    prediction = pred(code=STUB_CODE)
    default = CodeQuality(embedder=hash_embedder)
    calibrated = CodeQuality(profile="shipped", embedder=hash_embedder)
    first = default(EXAMPLE, prediction)
    assert calibrated(EXAMPLE, prediction) == 0.1 != first
    assert default(EXAMPLE, prediction) == first  # still its own (cached) result
    assert calibrated(EXAMPLE, prediction) == 0.1


# ------------------------------------------------------------------ errors at construction


@pytest.mark.parametrize(
    ("cls", "kwargs", "names"),
    [
        (IRQuality, {"weights": EQUAL_IR, "profile": "shipped"}, ("weights", "profile")),
        (CodeQuality, {"weights": EQUAL_CODE, "profile": CODE_PROFILE}, ("weights", "profile")),
        (EndToEnd, {"ir_weights": EQUAL_IR, "ir_profile": "shipped"}, ("ir_weights", "ir_profile")),
        (
            EndToEnd,
            {"code_weights": EQUAL_CODE, "code_profile": "shipped"},
            ("code_weights", "code_profile"),
        ),
        (
            Aggregate,
            {"ir_weights": EQUAL_IR, "ir_profile": "shipped"},
            ("ir_weights", "ir_profile"),
        ),
        (
            Aggregate,
            {"code_weights": EQUAL_CODE, "code_profile": "shipped"},
            ("code_weights", "code_profile"),
        ),
    ],
)
def test_weights_and_a_profile_together_raise(
    cls: type, kwargs: dict[str, Any], names: tuple[str, str]
) -> None:
    weights_name, profile_name = names
    with pytest.raises(ValueError, match=f"give {weights_name} or {profile_name}, not both"):
        cls(**kwargs)


@pytest.mark.parametrize(
    ("cls", "name", "metric"),
    [
        (IRQuality, "profile", "code_quality"),
        (CodeQuality, "profile", "ir_quality"),
        (EndToEnd, "ir_profile", "code_quality"),
        (EndToEnd, "code_profile", "ir_quality"),
        (Aggregate, "code_profile", "ir_quality"),
    ],
)
def test_a_profile_for_the_other_metric_raises(
    cls: type, name: str, metric: str, tmp_path: Path
) -> None:
    expected = "ir_quality" if metric == "code_quality" else "code_quality"
    weights = EQUAL_CODE if metric == "code_quality" else EQUAL_IR
    path = save_weights(tmp_path / "other.json", weights, metric=metric)
    wrong_file = f"^{name}: .*holds weights for '{metric}', not for '{expected}'"
    with pytest.raises(ValueError, match=wrong_file):
        cls(**{name: path})
    with pytest.raises(ValueError, match=wrong_file):
        cls(**{name: str(shipped_profile_path(metric))})
    wrong_object = f"^{name} must be a profile for '{expected}', got one for '{metric}'"
    with pytest.raises(ValueError, match=wrong_object):
        cls(**{name: CalibrationProfile(metric, dict(weights))})


def test_a_profile_with_code_options_is_not_an_ir_profile() -> None:
    profile = CalibrationProfile(None, dict(DEFAULT_IR_WEIGHTS), stub_cap=0.1)
    with pytest.raises(ValueError, match=r"profile .*sets \['stub_cap'\]"):
        IRQuality(profile=profile)
    with pytest.raises(ValueError, match="profile weights must have exactly the keys"):
        CodeQuality(profile=profile)  # the IR weights are not code weights


@pytest.mark.parametrize("value", [3, {"weights": EQUAL_IR}, b"shipped", ["shipped"]])
def test_a_profile_of_another_type_raises(value: Any) -> None:
    message = "must be a CalibrationProfile, a path to a profile file or 'shipped', got "
    with pytest.raises(TypeError, match=f"^profile {message}{type(value).__name__}"):
        IRQuality(profile=value)
    with pytest.raises(TypeError, match=f"^code_profile {message}"):
        EndToEnd(code_profile=value)


def test_a_missing_or_malformed_profile_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"^profile: weights file not found: .*Shipped"):
        CodeQuality(profile="Shipped")  # only the exact string "shipped" means the shipped file
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^ir_profile: .*not valid JSON"):
        Aggregate(ir_profile=bad)


# ------------------------------------------------------------------ imports stay light


def test_profiles_do_not_load_heavy_modules() -> None:
    code = (
        "import sys, json\n"
        "from lift_metrics.dspy_metrics import Aggregate, CodeQuality, IRQuality\n"
        "IRQuality(profile='shipped'); CodeQuality(profile='shipped')\n"
        "Aggregate(ir_profile='shipped', code_profile='shipped')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    heavy = ("torch", "sentence_transformers", "dspy", "litellm", "transformers", "onnxruntime")
    loaded = set(json.loads(out))
    assert "lift_metrics._profiles" in loaded  # the profiles were loaded
    assert sorted(name for name in (*heavy, "onnx") if name in loaded) == []
