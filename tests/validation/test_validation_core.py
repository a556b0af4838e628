"""validate_metric / validate_scores against scipy.stats references."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from lift_metrics.validation import (
    ConstantInputWarning,
    LabelledItem,
    TooFewScoresError,
    ValidationResult,
    score_value,
    validate_metric,
    validate_scores,
)

SCORES = [0.9, 0.2, 0.55, 0.4, 0.75, 0.1, 0.6, 0.3]
LABELS = [1.0, 0.1, 0.5, 0.5, 0.8, 0.0, 0.4, 0.35]


def test_statistics_match_scipy() -> None:
    result = validate_scores(SCORES, LABELS, confidence_level=0.9)
    ref = stats.pearsonr(SCORES, LABELS)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert result.pearson == pytest.approx(ref.statistic, abs=1e-12)
    assert result.pearson_ci == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert result.pearson_pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert result.spearman == pytest.approx(stats.spearmanr(SCORES, LABELS).statistic)
    tau_b = stats.kendalltau(SCORES, LABELS, variant="b").statistic
    assert result.kendall == pytest.approx(tau_b)
    fit = stats.linregress(SCORES, LABELS)  # label regressed on score
    assert (result.slope, result.intercept) == pytest.approx((fit.slope, fit.intercept))
    residuals = np.array(LABELS) - (fit.slope * np.array(SCORES) + fit.intercept)
    assert result.residual_std == pytest.approx(math.sqrt(residuals @ residuals / 6))
    assert result.n == 8


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)),
        min_size=4,
        max_size=30,
    )
)
def test_pearson_and_interval_match_scipy_on_random_data(pairs: list[tuple[float, float]]) -> None:
    x = [round(a, 3) for a, _ in pairs]
    y = [round(b, 3) for _, b in pairs]
    if len(set(x)) < 2 or len(set(y)) < 2:
        return  # constant input is covered by its own test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's near-constant warnings on odd draws
        result = validate_scores(x, y)
        ref = stats.pearsonr(x, y)
        ci = ref.confidence_interval(confidence_level=0.95)
    assert result.pearson == pytest.approx(ref.statistic, abs=1e-9)
    assert result.pearson_low == pytest.approx(ci.low, abs=1e-9)
    assert result.pearson_high == pytest.approx(ci.high, abs=1e-9)
    assert result.pearson_low <= result.pearson <= result.pearson_high


def test_verdicts_point_and_interval() -> None:
    # r = 0.9922 (scipy.stats.pearsonr) but n = 4 gives a wide interval
    result = validate_scores([0.1, 0.4, 0.35, 0.8], [0.0, 0.5, 0.3, 1.0], target=0.9)
    assert result.passed is True
    assert result.passed_ci is False
    assert (
        validate_scores([0.1, 0.4, 0.35, 0.8], [0.0, 0.5, 0.3, 1.0], target=0.995).passed is False
    )


@pytest.mark.parametrize("which", ["scores", "labels"])
def test_constant_input_warns_and_gives_nan(which: str) -> None:
    constant = [0.5] * 5
    varying = [0.1, 0.2, 0.3, 0.4, 0.5]
    scores, labels = (constant, varying) if which == "scores" else (varying, constant)
    with pytest.warns(ConstantInputWarning, match=which):
        result = validate_scores(scores, labels)
    assert math.isnan(result.pearson)
    assert math.isnan(result.spearman)
    assert math.isnan(result.kendall)
    assert math.isnan(result.pearson_low)
    assert result.passed is False
    assert result.passed_ci is False


def test_bad_input_raises_naming_the_problem() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        validate_scores([0.1, 0.2], [0.1, 0.3])
    with pytest.raises(ValueError, match="same length"):
        validate_scores([0.1, 0.2, 0.3], [0.1, 0.3])
    with pytest.raises(ValueError, match="confidence_level"):
        validate_scores(SCORES, LABELS, confidence_level=1.0)
    with pytest.raises(ValueError, match="target"):
        validate_scores(SCORES, LABELS, target=1.5)
    with pytest.raises(ValueError, match="NaN"):
        validate_scores([0.1, math.nan, 0.3], [0.1, 0.2, 0.3])


def test_validate_metric_calls_item_and_matches_validate_scores() -> None:
    items = [({"x": s}, y) for s, y in zip(SCORES, LABELS, strict=True)]
    result = validate_metric(lambda item: item["x"], items)
    direct = validate_scores(SCORES, LABELS)
    assert result.pearson == direct.pearson
    assert result.metric == "<lambda>"
    assert isinstance(result, ValidationResult)


def test_call_styles_kwargs_and_dspy() -> None:
    items = [
        LabelledItem(id=f"i{k}", item={"a": s, "b": 0.0}, label=y)
        for k, (s, y) in enumerate(zip(SCORES, LABELS, strict=True))
    ]

    def pure(a: float, b: float) -> float:
        return a - b

    kw = validate_metric(pure, items, call="kwargs")
    assert kw.pearson == pytest.approx(validate_scores(SCORES, LABELS).pearson)
    assert kw.ids[:2] == ("i0", "i1")

    seen: list[tuple[object, object]] = []

    def dspy_metric(example, prediction, trace=None):  # DSPy's protocol
        seen.append((example.b, prediction.a))
        import dspy

        return dspy.Prediction(score=prediction.a)

    dm = validate_metric(dspy_metric, items, call="dspy", prediction_fields=["a"])
    assert dm.pearson == pytest.approx(kw.pearson)
    assert seen[0] == (0.0, SCORES[0])
    with pytest.raises(ValueError, match="prediction_fields"):
        validate_metric(dspy_metric, items, call="dspy")


def test_missing_scores_are_listed_not_counted() -> None:
    items = [({"x": s}, y) for s, y in zip(SCORES, LABELS, strict=True)]
    items.append(({"x": None}, 0.5))

    class Judged:
        def __init__(self, value: float | None) -> None:
            self.score = value
            self.missing = None if value is not None else "the judge output did not parse"

    result = validate_metric(lambda item: Judged(item["x"]), items)
    assert result.n == len(SCORES)
    assert result.missing == (("8", "the judge output did not parse"),)


def test_errors_raise_or_become_missing() -> None:
    def flaky(item: dict[str, float]) -> float:
        if item["x"] > 0.85:
            raise RuntimeError("boom")
        return item["x"]

    items = [({"x": s}, y) for s, y in zip(SCORES, LABELS, strict=True)]
    with pytest.raises(RuntimeError, match="boom") as info:
        validate_metric(flaky, items)
    assert "while scoring item '0'" in info.value.__notes__[0]
    result = validate_metric(flaky, items, errors="missing")
    assert result.n == 7
    assert result.missing == (("0", "RuntimeError: boom"),)


def test_threads_give_the_same_result_in_order() -> None:
    items = [({"x": s}, y) for s, y in zip(SCORES, LABELS, strict=True)]
    one = validate_metric(lambda item: item["x"], items)
    four = validate_metric(lambda item: item["x"], items, num_threads=4)
    assert one.scores == four.scores
    assert one.ids == four.ids


def test_several_raters_give_alpha_and_rater_mean_correlation() -> None:
    second = [0.9, 0.2, 0.45, 0.5, 0.8, 0.05, 0.5, None]
    items = [
        LabelledItem(id=str(k), item=s, label=y, ratings=(y, y2))
        for k, (s, y, y2) in enumerate(zip(SCORES, LABELS, second, strict=True))
    ]
    result = validate_metric(lambda s: s, items)
    mean = [y if y2 is None else (y + y2) / 2 for y, y2 in zip(LABELS, second, strict=True)]
    assert result.raters == 2
    assert result.rater_mean_pearson == pytest.approx(stats.pearsonr(SCORES, mean).statistic)
    assert result.rater_alpha is not None
    assert 0.8 < result.rater_alpha <= 1.0


def test_result_repr_and_dict() -> None:
    result = validate_scores(SCORES, LABELS, metric="m", ids=[f"a{i}" for i in range(8)])
    text = repr(result)
    assert text.startswith("ValidationResult(metric='m', n=8, pearson=")
    assert len(text) < 200
    data = result.to_dict()
    assert data["pearson_ci"] == [result.pearson_low, result.pearson_high]
    assert data["pairs"][0] == {"id": "a0", "score": 0.9, "label": 1.0}
    assert data["passed"] == result.passed
    with pytest.raises(AttributeError):
        result.pearson = 1.0  # type: ignore[misc]


def test_score_value_accepts_numbers_objects_and_reports_missing() -> None:
    class WithFloat:
        def __float__(self) -> float:
            return 0.25

    assert score_value(np.float32(0.5)) == (0.5, None)
    assert score_value(WithFloat()) == (0.25, None)
    assert score_value(math.nan) == (None, "the metric returned nan")
    assert score_value("0.3")[0] is None
    assert score_value(object())[1] == "the metric returned object, not a score"


def test_examples_must_be_items_or_pairs() -> None:
    with pytest.raises(TypeError, match="examples\\[0\\]"):
        validate_metric(lambda x: x, [0.3, 0.4, 0.5])
    with pytest.raises(TypeError, match="callable"):
        validate_metric(0.5, [(1, 0.1)])  # type: ignore[arg-type]


def _unscorable(item: dict[str, float]) -> float:
    raise RuntimeError(f"judge failed on {item['x']}")


def test_nothing_scored_is_a_named_error_with_the_reasons() -> None:
    items = [({"x": i}, i / 4) for i in range(4)]
    with pytest.raises(TooFewScoresError, match="nothing could be scored") as caught:
        validate_metric(_unscorable, items, errors="missing", name="judge")
    assert str(caught.value).startswith("judge: nothing could be scored: all 4 items are missing")
    assert "'0': RuntimeError: judge failed on 0" in str(caught.value)
    assert caught.value.scored == 0
    assert caught.value.missing[3] == ("3", "RuntimeError: judge failed on 3")
    assert isinstance(caught.value, ValueError)


def test_too_few_scores_counts_them() -> None:
    with pytest.raises(TooFewScoresError, match=r"at least 3 .* got 2 \(1 missing; first") as e:
        validate_scores([0.1, 0.2], [0.0, 1.0], missing=[("z", "timeout")], metric="m")
    assert e.value.scored == 2
    assert e.value.missing == (("z", "timeout"),)


def _exits(item: dict[str, float]) -> float:
    if item["x"] == 2:
        raise SystemExit(3)
    return item["x"] / 4


def test_a_metric_calling_sys_exit_is_missing_or_a_runtime_error() -> None:
    items = [({"x": i}, i / 4) for i in range(5)]
    result = validate_metric(_exits, items, errors="missing")
    assert result.missing == (("2", "the metric called sys.exit(3)"),)
    assert result.n == 4
    with pytest.raises(RuntimeError, match=r"sys.exit\(3\) while scoring item '2'"):
        validate_metric(_exits, items, errors="raise")
    with pytest.raises(RuntimeError, match=r"sys.exit\(3\)"):
        validate_metric(_exits, items, errors="raise", num_threads=2)
