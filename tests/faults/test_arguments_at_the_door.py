"""Fault injection: arguments are checked at the door, before any work.

Unchecked, ``paired_comparison(None, None)`` and ``validate_metric(f, None)`` raise a bare
``TypeError: 'NoneType' object is not iterable`` from deep inside, and
``validate --labels conala --target nan`` scores every item (40 s) before the target is
refused. The contract: a :class:`~lift_metrics.errors.LiftMetricsError` naming the parameter,
raised before the first item is scored; on the command line, one line and exit code 2 while
the options are parsed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lift_metrics.cli import main
from lift_metrics.errors import LiftMetricsError
from lift_metrics.stats import (
    arm_statistics,
    paired_comparison,
    paired_deltas,
    split_arms,
    summarize_tiers,
    validate_run_records,
)
from lift_metrics.validation import validate_field_baselines, validate_metric

RUN = {
    "task_id": "t1",
    "arm": "a",
    "repeat": 0,
    "success": True,
    "duration_seconds": 3.0,
    "total_cost_usd": 0.1,
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
}


def _metric(item: Any) -> float:
    return 0.5


# call -> the parameter its error must name
NOT_ITERABLE: dict[str, tuple[Callable[[Any], Any], str]] = {
    "paired_comparison a": (lambda bad: paired_comparison(bad, [RUN]), "a"),
    "paired_comparison b": (lambda bad: paired_comparison([RUN], bad), "b"),
    "paired_deltas treatment": (lambda bad: paired_deltas(bad, [RUN]), "treatment"),
    "paired_deltas control": (lambda bad: paired_deltas([RUN], bad), "control"),
    "arm_statistics": (arm_statistics, "records"),
    "split_arms": (split_arms, "records"),
    "validate_run_records": (validate_run_records, "records"),
    "summarize_tiers": (summarize_tiers, "runs"),
    "validate_metric": (lambda bad: validate_metric(_metric, bad), "examples"),
    "validate_field_baselines": (validate_field_baselines, "items"),
}


@pytest.mark.parametrize("bad", [None, 3, "text", {"a": 1}], ids=["None", "int", "str", "dict"])
@pytest.mark.parametrize("name", sorted(NOT_ITERABLE))
def test_a_collection_argument_that_is_not_one_is_named(name: str, bad: Any) -> None:
    call, parameter = NOT_ITERABLE[name]
    with pytest.raises(LiftMetricsError, match=rf"^{re.escape(parameter)} must be an iterable"):
        call(bad)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"target": math.nan}, "target must not be NaN"),
        ({"target": 1.5}, "target must be a correlation in [-1, 1]"),
        ({"confidence_level": 1.0}, "confidence_level must be in (0, 1)"),
    ],
)
def test_validate_metric_checks_its_options_before_scoring(
    options: dict[str, float], message: str
) -> None:
    calls: list[Any] = []

    def metric(item: Any) -> float:
        calls.append(item)
        return 0.5

    items = [({"x": i}, i / 4) for i in range(5)]
    with pytest.raises(LiftMetricsError, match=re.escape(message)):
        validate_metric(metric, items, **options)  # type: ignore[arg-type]
    with pytest.raises(LiftMetricsError, match=re.escape(message)):
        validate_field_baselines([], **options)
    assert calls == []


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--target", "nan", "--target must not be NaN"),
        ("--target", "2", "--target must be a correlation in [-1, 1], got 2.0"),
        ("--confidence-level", "1", "--confidence-level must be in (0, 1), got 1.0"),
        ("--threads", "0", "--threads must be >= 1, got 0"),
        ("--folds", "1", "--folds must be >= 2, got 1"),
        ("--stub-cap", "inf", "--stub-cap must be finite"),
    ],
)
def test_validate_refuses_an_option_before_scoring(
    option: str,
    value: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lift_metrics.validation import _cli

    def no_scoring(*args: object, **kwargs: object) -> None:
        raise AssertionError("items were scored before the options were checked")

    monkeypatch.setattr(_cli, "_validate_one", no_scoring)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "--labels", "conala", option, value, "--out", str(out)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"lift-metrics validate: error: {message}"), err
    assert not out.exists()
