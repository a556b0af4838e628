"""Per-tier aggregation (docs/statistics.md) and its serialisation."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from lift_metrics._io import dumps_json
from lift_metrics.stats import RecordError, TierRun, load_tier_runs, summarize_tiers

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "tier_runs.jsonl"


def run(tier: str, passed: bool, impl: float, cost: float = 0.1, dur: float = 1.0) -> TierRun:
    return TierRun(tier, passed, impl, cost, dur)


def test_grade_from_median_composite_with_any_number_of_runs() -> None:
    runs = [run("T0", True, 0.5), run("T0", False, 0.9), run("T0", True, 0.7)]  # composites
    runs += [run("T1", True, 1.0)] * 7  # 0.75, 0.45, 0.85 -> median 0.75 (C); T1: 1.0 (A)
    report = summarize_tiers(runs)
    t0, t1 = report.tiers
    assert (t0.runs, t1.runs) == (3, 7)
    assert t0.composite.median == pytest.approx(0.75)
    assert t0.grade == "C"
    assert t1.grade == "A"
    assert t1.uplift == pytest.approx((1.0 - 0.75) / 0.75)
    assert t0.uplift == 0.0
    assert t0.pass_rate.mean == pytest.approx(2 / 3)
    assert t0.cost_of_pass == pytest.approx(0.1 / (2 / 3))
    assert report.baseline == "T0"


def test_cross_tier_variance_uses_tier_medians() -> None:
    runs = [run("A", True, 1.0, cost=c) for c in (0.1, 0.2, 0.9)]
    runs += [run("B", False, 0.2, cost=c) for c in (0.5, 0.6)]
    report = summarize_tiers(runs)
    # median pass rates 1 and 0 -> population variance 0.25; median costs 0.2 and 0.55
    assert report.pass_rate_variance == pytest.approx(0.25)
    assert report.cost_variance == pytest.approx(((0.55 - 0.2) / 2) ** 2)
    assert report.cost_delta == pytest.approx(0.35)


def test_never_passing_tier_has_infinite_cost_of_pass_in_json_and_markdown() -> None:
    report = summarize_tiers([run("T0", True, 0.8), run("T1", False, 0.3)])
    assert report.tiers[1].cost_of_pass == math.inf
    data = json.loads(dumps_json(report))
    tier = data["tiers"][1]
    assert tier["cost_of_pass"] is None
    assert tier["cost_of_pass_is_infinite"] is True
    assert "cost_of_pass_is_infinite" not in data["tiers"][0]
    assert "∞" in report.to_markdown()


def test_zero_baseline_gives_nan_uplift_without_warning() -> None:
    report = summarize_tiers([run("T0", False, 0.0), run("T1", True, 1.0)])
    assert math.isnan(report.tiers[1].uplift)
    assert "nan" in report.to_markdown()


def test_wilson_interval_and_weights_are_passed_through() -> None:
    runs = [run("T0", i < 8, 0.5) for i in range(10)]
    report = summarize_tiers(runs, confidence_level=0.9, pass_weight=1.0, impl_weight=0.0)
    tier = report.tiers[0]
    assert tier.pass_rate_interval.confidence_level == 0.9
    assert tier.pass_rate_interval.low < 0.8 < tier.pass_rate_interval.high
    assert tier.composite.median == 1.0


@pytest.mark.parametrize(
    ("record", "match"),
    [
        ({"passed": True, "impl_rate": 0.5, "cost_usd": 0.1, "duration_seconds": 1}, "'tier'"),
        (
            {
                "tier": "T",
                "passed": "yes",
                "impl_rate": 0.5,
                "cost_usd": 0.1,
                "duration_seconds": 1,
            },
            "'passed' must be true or false",
        ),
        (
            {"tier": "T", "passed": True, "impl_rate": 1.5, "cost_usd": 0.1, "duration_seconds": 1},
            r"'impl_rate' must be in \[0, 1\]",
        ),
        (
            {
                "tier": "T",
                "passed": True,
                "impl_rate": 0.5,
                "cost_usd": -0.1,
                "duration_seconds": 1,
            },
            "'cost_usd' must be >= 0",
        ),
    ],
)
def test_bad_records_name_index_and_field(record: dict[str, Any], match: str) -> None:
    good = {"tier": "T", "passed": True, "impl_rate": 0.5, "cost_usd": 0.1, "duration_seconds": 1}
    with pytest.raises(RecordError, match="record 1: .*" + match):
        summarize_tiers([good, record])


def test_load_file_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(EXAMPLE.read_text().splitlines()[0] + "\n\n" + '{"tier": "T0"}\n')
    with pytest.raises(RecordError, match=r"runs.jsonl: record 1 \(line 3\): missing .*'passed'"):
        load_tier_runs(path)
    with pytest.raises(FileNotFoundError):
        load_tier_runs(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="no tier runs"):
        load_tier_runs(empty)
    with pytest.raises(ValueError, match="runs must not be empty"):
        summarize_tiers([])


def test_shipped_example_loads() -> None:
    runs = load_tier_runs(EXAMPLE)
    report = summarize_tiers(runs)
    assert [t.tier for t in report.tiers] == ["T0", "T1", "T2", "T3"]
    assert all(t.runs == 10 for t in report.tiers)


def test_composite_interval_is_a_t_interval_and_nan_for_one_run() -> None:
    from scipy import stats

    runs = [run("T0", p, impl) for p, impl in [(True, 0.9), (False, 0.5), (True, 0.7)]]
    runs.append(run("T1", True, 1.0))
    report = summarize_tiers(runs, confidence_level=0.9)
    composites = [0.95, 0.25, 0.85]
    expected = stats.t.interval(0.9, 2, loc=sum(composites) / 3, scale=stats.sem(composites))
    got = report.tiers[0].composite_interval
    assert (got.low, got.high) == pytest.approx(expected)
    single = report.tiers[1].composite_interval
    assert math.isnan(single.low)
    assert math.isnan(single.high)
    data = json.loads(dumps_json(report))
    assert data["tiers"][1]["composite_interval"]["low"] is None
