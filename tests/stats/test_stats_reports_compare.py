"""forge_score, eval reports and regression detection (docs/statistics.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lift_metrics._io import dumps_json
from lift_metrics.stats import (
    EvalReport,
    EvalResult,
    RecordError,
    compare_reports,
    forge_score,
    pass_at_k,
)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((True, 10, 0, 0), 1.0),  # seed: perfect score
        ((True, 0, 0, 0), 0.5),  # no tests -> test score 0 (docs/statistics.md)
        ((False, 10, 0, 0), 0.0),  # compilation failure zeroes everything
        ((True, 1, 1, 3), 0.4 + 0.25 + 0.07),
        ((True, 2, 0, 25), 0.9),  # lint score floors at 0
    ],
)
def test_forge_score_formula(args: tuple[bool, int, int, int], expected: float) -> None:
    assert forge_score(*args) == pytest.approx(expected)


def test_forge_score_bad_input() -> None:
    with pytest.raises(TypeError, match="compiled must be a bool"):
        forge_score(1, 1, 0, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lint_warnings must be >= 0"):
        forge_score(True, 1, 0, -1)


def _result(case: str, model: str = "m", **overrides: Any) -> dict[str, Any]:
    base = {"case": case, "model": model, "compiled": True, "tests_passed": 4, "tests_failed": 0}
    return {**base, **overrides}


def test_model_and_case_stats() -> None:
    report = EvalReport.from_dict(
        {
            "results": [
                _result("a", cost_usd=0.5, latency_ms=100.0),
                _result("a", tests_passed=2, tests_failed=2, cost_usd=0.5, latency_ms=300.0),
                _result("a", compiled=False, tests_passed=0, tests_failed=4),
                _result("b", lint_warnings=1),
                _result("b"),
                _result("b", tests_passed=0, tests_failed=0),
            ]
        }
    )
    cases = {cs.case: cs for cs in report.case_stats(ks=(1, 2))}
    assert (cases["a"].samples, cases["a"].correct) == (3, 1)
    assert cases["a"].pass_at_k == {1: pytest.approx(1 / 3), 2: pytest.approx(pass_at_k(3, 1, 2))}
    assert cases["b"].correct == 2  # a sample without tests does not pass
    (model,) = report.model_stats(ks=[1])
    assert model.compile_rate == pytest.approx(5 / 6)
    # test rate per case: a = (1 + 0.5 + 0) / 3, b = (1 + 1 + 0) / 3; mean over cases
    assert model.test_rate == pytest.approx(((1.5 / 3) + (2 / 3)) / 2)
    assert model.pass_at_k[1] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert model.total_cost_usd == 1.0
    assert model.mean_latency_ms == pytest.approx(400.0 / 6)
    with pytest.raises(ValueError, match="pass@4 needs at least 4 samples"):
        report.case_stats(ks=(1, 4))


def test_eval_report_errors_name_record_and_field(tmp_path: Any) -> None:
    with pytest.raises(RecordError, match="record 1: missing required field 'compiled'"):
        EvalReport.from_dict({"results": [_result("a"), {"case": "b", "model": "m"}]})
    with pytest.raises(RecordError, match="record 0: field 'tests_passed' must be >= 0"):
        EvalReport.from_dict({"results": [_result("a", tests_passed=-3)]})
    path = tmp_path / "r.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        EvalReport.load(path)


def test_threshold_is_absolute_and_strict() -> None:
    # 0.90 -> 0.85 drops by exactly the threshold: not a regression (strict, noise-free)
    result = compare_reports({"a": 0.90, "b": 0.90, "c": 0.50}, {"a": 0.85, "b": 0.849, "c": 0.55})
    assert [c.case for c in result.unchanged] == ["a", "c"]
    assert [c.case for c in result.regressions] == ["b"]
    assert result.regressions[0].delta == pytest.approx(-0.051)
    assert not compare_reports({"a": 0.5}, {"a": 0.4}, threshold=0.1).has_regressions


def test_new_removed_and_ordering() -> None:
    result = compare_reports(
        {"x": 0.9, "y": 0.9, "gone": 0.3, "up1": 0.1, "up2": 0.1},
        {"x": 0.1, "y": 0.7, "fresh": 1.0, "up1": 0.5, "up2": 0.9},
    )
    assert [c.case for c in result.regressions] == ["x", "y"]  # worst first
    assert [c.case for c in result.improvements] == ["up2", "up1"]  # best first
    assert result.new == {"fresh": 1.0}
    assert result.removed == {"gone": 0.3}


def test_renders_and_json() -> None:
    result = compare_reports({"a": 0.9, "b": 0.2}, {"a": 0.5, "c": 0.7})
    data = json.loads(dumps_json(result))
    assert data["has_regressions"] is True
    assert data["regressions"][0] == {
        "case": "a",
        "baseline_score": 0.9,
        "current_score": 0.5,
        "delta": -0.4,
    }
    assert data["new"] == {"c": 0.7}
    assert data["removed"] == {"b": 0.2}
    md = result.to_markdown()
    assert "| regression | a | 0.9 | 0.5 | -0.4000 |" in md
    text = result.to_text()
    assert "1 regression(s)" in text
    assert "removed" in text


def test_compare_accepts_reports_and_result_lists() -> None:
    base = EvalReport.from_dict({"results": [_result("a"), _result("b")]})
    cur = [EvalResult("a", "m", True, 1, 3), EvalResult("b", "m", True, 4, 0)]
    result = compare_reports(base, cur)
    assert [c.case for c in result.regressions] == ["m/a"]
    with pytest.raises(TypeError, match="baseline must be an EvalReport"):
        compare_reports("a.json", cur)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        compare_reports(base, cur, threshold=-0.1)
    with pytest.raises(ValueError, match=r"current\['a'\] must not be NaN"):
        compare_reports({"a": 0.1}, {"a": float("nan")})
