"""Fault injection: integers too large for a float, given to the scoring functions.

Python ints have no size limit and JSON integers neither (``10**400`` parses); ``float()`` of
such a value raises a bare OverflowError. Every public function that takes a number must
instead raise a ValueError that names the parameter (the value is a caller's mistake).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from lift_metrics._paths import datasets_dir
from lift_metrics.composite import aggregate_metric, latency_penalty
from lift_metrics.stats import compare_reports, paired_bootstrap, pass_at_k

HUGE = 10**400


def _report() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (datasets_dir() / "examples" / "baseline_report.json").read_text(encoding="utf-8")
    )
    return data


CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "latency_penalty latency_ms": (lambda: latency_penalty(HUGE), "latency_ms"),
    "latency_penalty target_ms": (lambda: latency_penalty(5.0, target_ms=HUGE), "target_ms"),
    "aggregate_metric ir_score": (
        lambda: aggregate_metric(HUGE, 0.5, 0.5, cost_usd=0.1, latency_ms=1.0),
        "ir_score",
    ),
    "aggregate_metric cost_usd": (
        lambda: aggregate_metric(0.5, 0.5, 0.5, cost_usd=HUGE, latency_ms=1.0),
        "cost_usd",
    ),
    "aggregate_metric weights": (
        lambda: aggregate_metric(
            0.5,
            0.5,
            0.5,
            cost_usd=0.1,
            latency_ms=1.0,
            weights={"quality": HUGE, "cost": 1, "latency": 1},
        ),
        "weights['quality']",
    ),
    "compare_reports a case score": (
        lambda: compare_reports({"m/a": 0.5}, {"m/a": HUGE}),
        "current['m/a']",
    ),
    "compare_reports threshold": (
        lambda: compare_reports({"m/a": 0.5}, {"m/a": 0.4}, threshold=HUGE),
        "threshold",
    ),
    "pass_at_k n": (lambda: pass_at_k(HUGE, 3, 1), "n holds an integer too large"),
    "pass_at_k k": (lambda: pass_at_k(10, 3, HUGE), "k holds an integer too large"),
    "paired_bootstrap a": (
        lambda: paired_bootstrap([0.5, HUGE], [0.0, 1.0]),
        "a must be finite, got an integer too large for a float at index 1",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_integer_is_a_value_error_naming_the_parameter(case: str) -> None:
    call, named = CASES[case]
    with pytest.raises(ValueError, match=re.escape(named)) as caught:
        call()
    assert named in str(caught.value), str(caught.value)


def test_a_huge_integer_in_a_report_names_the_record_and_field() -> None:
    from lift_metrics.stats import EvalReport

    report = _report()
    report["results"][1]["cost_usd"] = HUGE
    with pytest.raises(ValueError, match=r"record 1: field 'cost_usd' must be finite"):
        EvalReport.from_dict(report)
