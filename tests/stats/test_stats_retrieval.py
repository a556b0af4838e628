"""Retrieval precision/recall and multi-run aggregation (docs/statistics.md)."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.stats import aggregate_runs, retrieval_precision, retrieval_recall

ids = st.sets(st.integers(0, 20), max_size=15)


def test_edge_cases_from_design() -> None:
    assert retrieval_precision([], ["a"]) == 0.0  # nothing retrieved -> precision 0
    assert retrieval_recall(["a"], []) == 1.0  # nothing relevant -> recall 1
    assert retrieval_recall([], []) == 1.0
    assert retrieval_precision([], []) == 0.0


def test_duplicates_count_once_and_strings_rejected() -> None:
    assert retrieval_precision(["a", "a", "b"], ["a"]) == 0.5
    with pytest.raises(TypeError, match="retrieved must be a collection"):
        retrieval_precision("abc", ["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="relevant must be a collection"):
        retrieval_recall(["a"], {"a": 1})  # type: ignore[arg-type]


@settings(deadline=None)  # timing-independent: the machine may be busy
@given(ids, ids)
def test_against_set_definition(retrieved: set[int], relevant: set[int]) -> None:
    hit = len(retrieved & relevant)
    assert retrieval_precision(list(retrieved), relevant) == (
        hit / len(retrieved) if retrieved else 0.0
    )
    assert retrieval_recall(retrieved, list(relevant)) == (hit / len(relevant) if relevant else 1.0)


def test_aggregate_runs_means_stds_and_sums() -> None:
    runs = [
        {
            "q1": {"correctness": 5.0, "latency": 1.0, "cost_usd": 0.1, "total_tokens": 100},
            "q2": {"correctness": 3.0, "latency": 2.0, "cost_usd": 0.2, "total_tokens": 300},
        },
        {
            "q1": {"correctness": 3.0, "latency": 3.0, "cost_usd": 0.3, "total_tokens": 200},
            "q2": {"correctness": 3.0, "latency": 2.0, "cost_usd": 0.2, "total_tokens": 300},
        },
        {
            "q1": {"correctness": 4.0, "latency": 2.0, "cost_usd": 0.2, "total_tokens": 150},
            "q2": {"correctness": 2.0, "latency": 5.0, "cost_usd": 0.1, "total_tokens": 100},
        },
    ]
    agg = aggregate_runs(runs)
    q1 = agg.questions["q1"]
    assert agg.run_count == 3
    assert q1.mean == {"correctness": 4.0, "latency": 2.0}
    assert q1.std["correctness"] == pytest.approx(statistics.pstdev([5.0, 3.0, 4.0]))
    assert q1.total == {"cost_usd": pytest.approx(0.6), "total_tokens": 450.0}
    per_run = [(5 + 3) / 2, (3 + 3) / 2, (4 + 2) / 2]
    assert agg.run_std["correctness"] == pytest.approx(statistics.pstdev(per_run))
    sample = aggregate_runs(runs, ddof=1)
    assert sample.questions["q2"].std["latency"] == pytest.approx(statistics.stdev([2, 2, 5]))


def test_aggregate_runs_bad_input() -> None:
    with pytest.raises(ValueError, match="runs must be a non-empty list"):
        aggregate_runs([])
    with pytest.raises(ValueError, match=r"runs\[1\] must have the questions"):
        aggregate_runs([{"q1": {"x": 1.0}}, {"q2": {"x": 1.0}}])
    with pytest.raises(ValueError, match=r"runs\[1\]\['q1'\] must have the metrics"):
        aggregate_runs([{"q1": {"x": 1.0}}, {"q1": {"y": 1.0}}])
    with pytest.raises(ValueError, match="must not be NaN"):
        aggregate_runs([{"q1": {"x": float("nan")}}])
