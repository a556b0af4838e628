"""A/B analysis (docs/statistics.md): records, arms, pairs, gates, bootstrap."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest

from lift_metrics._io import dumps_json
from lift_metrics.stats import (
    DELTA_NAMES,
    RecordError,
    RunRecord,
    ab_decision,
    arm_statistics,
    paired_comparison,
    paired_deltas,
    split_arms,
    validate_run_records,
)


def rec(arm: str, task: str, repeat: int = 0, **overrides: Any) -> dict[str, Any]:
    base = {
        "task_id": task,
        "arm": arm,
        "repeat": repeat,
        "success": True,
        "duration_seconds": 10.0,
        "total_cost_usd": 0.5,
        "input_tokens": 1000,
        "output_tokens": 200,
        "cache_read_tokens": 300,
        "cache_write_tokens": 50,
    }
    return {**base, **overrides}


def test_derived_tokens() -> None:
    (r,) = validate_run_records([rec("a", "t")])
    assert r.total_tokens == 1550
    assert r.non_cache_tokens == 1200


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("success", "true", "record 2: field 'success' must be true or false"),
        ("repeat", 1.5, "record 2: field 'repeat' must be an integer"),
        ("output_tokens", -4, "record 2: field 'output_tokens' must be >= 0"),
        ("total_cost_usd", -0.1, "record 2: field 'total_cost_usd' must be >= 0"),
        ("duration_seconds", float("nan"), "record 2: field 'duration_seconds' must be finite"),
        ("arm", "", "record 2: field 'arm' must be a non-empty string"),
    ],
)
def test_record_validation_names_index_and_field(field: str, value: Any, match: str) -> None:
    records = [rec("a", "t1"), rec("a", "t2"), {**rec("a", "t3"), field: value}]
    with pytest.raises(RecordError, match=match):
        validate_run_records(records)


def test_missing_field_and_int_task_id() -> None:
    bad = rec("a", "t")
    del bad["cache_write_tokens"]
    with pytest.raises(RecordError, match="record 0: missing required field 'cache_write_tokens'"):
        validate_run_records([bad])
    assert validate_run_records([rec("a", 7)])[0].task_id == "7"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="records must not be empty"):
        validate_run_records([])


def test_arm_statistics_and_zero_cost() -> None:
    runs = [
        rec("a", "t1", success=True, total_cost_usd=0.0, duration_seconds=3.0),
        rec("a", "t2", success=False, total_cost_usd=0.0, duration_seconds=5.0),
        rec("a", "t3", success=True, total_cost_usd=0.0, duration_seconds=100.0),
    ]
    stats = arm_statistics(runs)
    assert stats.success_rate == pytest.approx(2 / 3)
    assert stats.median_duration_seconds == 5.0
    assert stats.solved_per_dollar is None
    data = json.loads(dumps_json(stats))
    assert data["solved_per_dollar"] is None
    paid = arm_statistics([rec("a", "t1", total_cost_usd=0.25), rec("a", "t2", success=False)])
    assert paid.solved_per_dollar == pytest.approx(1 / 0.75)
    assert paid.avg_cost_usd == pytest.approx(0.375)
    with pytest.raises(ValueError, match="one arm"):
        arm_statistics([rec("a", "t"), rec("b", "t")])


def test_paired_deltas_treatment_minus_control() -> None:
    t = [rec("new", "x", success=True, duration_seconds=4.0, input_tokens=900)]
    c = [rec("old", "x", success=False, duration_seconds=10.0)]
    d = paired_deltas(t, c)
    assert d.values["pass_delta"].tolist() == [1.0]
    assert d.values["duration_delta_seconds"].tolist() == [-6.0]
    assert d.values["token_delta"].tolist() == [-100.0]
    assert d.values["non_cache_token_delta"].tolist() == [-100.0]
    assert d.values["cost_delta_usd"].tolist() == [0.0]


def test_unpaired_and_duplicate_records_are_errors() -> None:
    with pytest.raises(
        ValueError, match=r"unpaired records: 1 .* only in treatment \[\('y', 0\)\]"
    ):
        paired_deltas([rec("a", "x"), rec("a", "y")], [rec("b", "x")])
    with pytest.raises(ValueError, match="control has two runs for task_id='x' repeat=0"):
        paired_deltas([rec("a", "x")], [rec("b", "x"), rec("b", "x")])


def _arm(arm: str, success_rate: float, duration: float, tokens: int) -> Any:
    n = 4
    runs = [
        rec(
            arm,
            f"t{i}",
            success=i < success_rate * n,
            duration_seconds=duration,
            input_tokens=tokens,
            output_tokens=0,
        )
        for i in range(n)
    ]
    return arm_statistics(runs)


@pytest.mark.parametrize(
    ("t", "c", "decision"),
    [
        ((0.75, 10.0, 100), (0.5, 12.0, 120), "prefer_treatment"),
        ((0.75, 12.0, 100), (0.75, 12.0, 100), "no_difference"),  # all gates tie exactly
        ((0.75, 12.0, 100), (0.75, 12.0, 120), "prefer_treatment"),  # ties + one better
        ((0.5, 12.0, 120), (0.75, 10.0, 100), "prefer_control"),
        ((0.5, 12.0, 120), (0.5, 12.0, 100), "prefer_control"),
        ((1.0, 15.0, 100), (0.5, 10.0, 100), "mixed"),
    ],
)
def test_three_gate_decision(
    t: tuple[float, float, int], c: tuple[float, float, int], decision: str
) -> None:
    got, gates = ab_decision(_arm("new", *t), _arm("old", *c))
    assert got == decision
    assert [g.name for g in gates] == ["success_rate", "runtime", "tokens"]


def _experiment(n: int, *, seed: int, effect: float) -> tuple[list[RunRecord], list[RunRecord]]:
    rng = np.random.default_rng(seed)
    treatment, control = [], []
    for i in range(n):
        base_duration = rng.uniform(50, 150)
        base_tokens = int(rng.integers(5_000, 50_000))
        for arm, shift, out in ((treatment, effect, "new"), (control, 0.0, "old")):
            arm.append(
                RunRecord(
                    task_id=f"t{i // 5}",
                    arm=out,
                    repeat=i % 5,
                    success=bool(rng.random() < 0.5 + shift),
                    duration_seconds=float(base_duration * (1 - shift) * rng.uniform(0.9, 1.1)),
                    total_cost_usd=float(rng.uniform(0.01, 0.2)),
                    input_tokens=int(base_tokens * (1 - shift) * rng.uniform(0.9, 1.1)),
                    output_tokens=int(rng.integers(100, 1000)),
                    cache_read_tokens=0,
                    cache_write_tokens=int(rng.integers(0, 100)),
                )
            )
    return treatment, control


def test_paired_comparison_is_bit_identical_for_a_fixed_seed() -> None:
    t, c = _experiment(200, seed=1, effect=0.1)
    first = paired_comparison(t, c, n_resamples=2000, seed=42)
    second = paired_comparison(t, c, n_resamples=2000, seed=42)
    assert dumps_json(first) == dumps_json(second)
    other = paired_comparison(t, c, n_resamples=2000, seed=43)
    assert dumps_json(other) != dumps_json(first)


def test_clear_effect_is_preferred_both_ways() -> None:
    t, c = _experiment(300, seed=2, effect=0.3)
    result = paired_comparison(t, c, n_resamples=2000)
    assert (result.decision, result.verdict) == ("prefer_treatment", "prefer_treatment")
    assert result.decision_text == "prefer new"
    assert all(g.ci_favours == "treatment" for g in result.gates)
    assert result.deltas["pass_delta"].p_value < 0.01
    swapped = paired_comparison(c, t, n_resamples=2000)
    assert (swapped.decision, swapped.verdict) == ("prefer_control", "prefer_control")
    assert swapped.deltas["duration_delta_seconds"].mean == pytest.approx(
        -result.deltas["duration_delta_seconds"].mean
    )


def test_gating_interval_containing_zero_is_inconclusive() -> None:
    t = [rec("new", f"t{i}", success=i % 2 == 0, duration_seconds=5.0) for i in range(20)]
    c = [rec("old", f"t{i}", success=i % 3 == 0, duration_seconds=9.0) for i in range(20)]
    result = paired_comparison(t, c, n_resamples=1000)
    tokens = result.deltas["non_cache_token_delta"]
    assert (tokens.interval.low, tokens.interval.high) == (0.0, 0.0)  # constant delta
    assert tokens.p_value == 1.0
    assert result.decision == "prefer_treatment"  # point rule: tokens tie, others better
    assert result.verdict == "inconclusive"
    assert [g.ci_favours for g in result.gates][1:] == ["treatment", "inconclusive"]


def test_bootstrap_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    from scipy import stats

    t, c = _experiment(150, seed=5, effect=0.05)
    result = paired_comparison(t, c, n_resamples=20_000, seed=0)
    d = paired_deltas(t, c)
    for name in ("duration_delta_seconds", "cost_delta_usd"):
        ref = stats.bootstrap(
            (d.values[name],),
            np.mean,
            n_resamples=20_000,
            method="percentile",
            random_state=np.random.default_rng(9),
            vectorized=True,
        ).confidence_interval
        got = result.deltas[name].interval
        width = ref.high - ref.low
        assert got.low == pytest.approx(ref.low, abs=0.03 * width)
        assert got.high == pytest.approx(ref.high, abs=0.03 * width)


def test_sign_flip_p_value_matches_exact_enumeration() -> None:
    deltas = np.array([1.5, -0.5, 2.0, 0.7, 1.1, -0.2, 0.9, 1.3, 0.4, -1.0])
    t = [rec("new", f"t{i}", duration_seconds=10.0 + x) for i, x in enumerate(deltas)]
    c = [rec("old", f"t{i}") for i in range(len(deltas))]
    observed = abs(deltas.mean())
    signs = np.array(list(itertools.product((-1, 1), repeat=len(deltas))))
    exact = float(np.mean(np.abs((signs * deltas).mean(axis=1)) >= observed - 1e-12))
    result = paired_comparison(t, c, n_resamples=40_000, seed=3)
    assert result.deltas["duration_delta_seconds"].p_value == pytest.approx(exact, abs=0.01)


def test_bad_options() -> None:
    t, c = [rec("a", "x")], [rec("b", "x")]
    with pytest.raises(ValueError, match="n_resamples must be >= 100"):
        paired_comparison(t, c, n_resamples=10)
    with pytest.raises(ValueError, match="confidence_level must be in"):
        paired_comparison(t, c, confidence_level=95)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        paired_comparison(t, c, seed=-1)
    with pytest.raises(ValueError, match="one arm"):
        paired_comparison([rec("a", "x"), rec("z", "y")], c)


def test_json_has_every_delta_and_markdown_renders() -> None:
    t, c = _experiment(30, seed=7, effect=0.1)
    result = paired_comparison(t, c, n_resamples=500)
    data = json.loads(dumps_json(result))
    assert list(data["deltas"]) == list(DELTA_NAMES)
    assert set(data["arms"]) == {"new", "old"}
    assert data["bootstrap"] == {
        "n_resamples": 500,
        "confidence_level": 0.95,
        "seed": 0,
        "method": "percentile",
    }
    md = result.to_markdown()
    assert "### Paired deltas" in md
    assert "| pass_delta |" in md


def test_split_arms() -> None:
    # arms named "treatment" and "control" are what they say, in either order
    records = [rec("treatment", "x"), rec("control", "x")]
    t, c = split_arms(records)
    assert (t[0].arm, c[0].arm) == ("treatment", "control")
    t, c = split_arms(records[::-1])
    assert (t[0].arm, c[0].arm) == ("treatment", "control")
    # other names: the first arm in record order is the control
    t, c = split_arms([rec("b", "x"), rec("a", "x")])
    assert (t[0].arm, c[0].arm) == ("a", "b")
    t, c = split_arms([rec("b", "x"), rec("a", "x")], treatment="b")
    assert (t[0].arm, c[0].arm) == ("b", "a")
    with pytest.raises(ValueError, match="exactly two arms"):
        split_arms([rec("a", "x"), rec("b", "x"), rec("c", "x")])
    with pytest.raises(ValueError, match="treatment arm 'q' not found"):
        split_arms(records, treatment="q", control="treatment")


def test_swapping_arms_mirrors_every_delta_interval_and_keeps_p_values() -> None:
    t, c = _experiment(120, seed=11, effect=0.05)
    forward = paired_comparison(t, c, n_resamples=3000, seed=4)
    backward = paired_comparison(c, t, n_resamples=3000, seed=4)
    for name in DELTA_NAMES:
        f, b = forward.deltas[name], backward.deltas[name]
        assert b.mean == pytest.approx(-f.mean)
        assert b.interval.low == pytest.approx(-f.interval.high, rel=1e-9, abs=1e-12)
        assert b.interval.high == pytest.approx(-f.interval.low, rel=1e-9, abs=1e-12)
        assert b.p_value == f.p_value
    mirror = {"prefer_treatment": "prefer_control", "prefer_control": "prefer_treatment"}
    assert backward.decision == mirror.get(forward.decision, forward.decision)
    assert backward.verdict == mirror.get(forward.verdict, forward.verdict)


def test_paired_comparison_of_the_same_runs_is_an_error_naming_a_and_b() -> None:
    runs = [rec("new", f"t{i}", duration_seconds=5.0 + i) for i in range(5)]
    with pytest.raises(ValueError, match=r"a and b hold the same 5 runs \(arm 'new'\)"):
        paired_comparison(runs, list(reversed(runs)), n_resamples=100)
    # the same arm name with other results is a comparison (a rerun), not the same runs
    rerun = [rec("new", f"t{i}", duration_seconds=6.0 + i) for i in range(5)]
    result = paired_comparison(runs, rerun, n_resamples=100)
    assert result.deltas["duration_delta_seconds"].mean == -1.0
