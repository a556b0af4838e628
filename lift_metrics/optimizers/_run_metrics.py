"""The numbers a run logs to MLflow: per-trial optimizer scores, evaluations, comparisons."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

_STAT_FIELDS = ("mean", "median", "std_dev", "min", "max")


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of nested mappings as ``("a.b.c", value)``; lists stay leaves."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def metric_number(value: Any) -> float | None:
    """Return a finite float for a metric, or None for what MLflow should not get."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _mipro_trial_metrics(logs: Any) -> list[tuple[str, float, int]]:
    """MIPROv2's full and minibatch evaluation scores per trial number (``trial_logs``)."""
    out: list[tuple[str, float, int]] = []
    if not isinstance(logs, Mapping):
        return out
    for key, entry in logs.items():
        if not isinstance(entry, Mapping) or not str(key).lstrip("-").isdigit():
            continue
        for field, name in (
            ("full_eval_score", "trial_score"),
            ("mb_score", "trial_minibatch_score"),
        ):
            number = metric_number(entry.get(field))
            if number is not None:
                out.append((name, number, int(key)))
    return out


def _copro_depth_metrics(best: Any) -> list[tuple[str, float, int]]:
    """COPRO's best and average score per depth, best over predictors (``results_best``)."""
    out: list[tuple[str, float, int]] = []
    if not isinstance(best, Mapping) or not best:
        return out
    by_depth: dict[int, dict[str, float]] = {}
    for stats in best.values():
        if not isinstance(stats, Mapping):
            continue
        for depth, high, mean in zip(
            stats.get("depth", []), stats.get("max", []), stats.get("average", []), strict=False
        ):
            slot = by_depth.setdefault(int(depth), {"best": -math.inf, "average": -math.inf})
            slot["best"] = max(slot["best"], float(high))
            slot["average"] = max(slot["average"], float(mean))
    for depth, slot in sorted(by_depth.items()):
        out.append(("copro.best_score", slot["best"], depth))
        out.append(("copro.average_score", slot["average"], depth))
    return out


def _gepa_metrics(gepa: Any) -> list[tuple[str, float, int]]:
    """GEPA's validation aggregate per candidate and its run counters."""
    out: list[tuple[str, float, int]] = []
    if not isinstance(gepa, Mapping):
        return out
    for step, score in enumerate(gepa.get("val_aggregate_scores") or []):
        number = metric_number(score)
        if number is not None:
            out.append(("trial_score", number, step))
    for key in ("best_idx", "total_metric_calls", "num_full_val_evals"):
        number = metric_number(gepa.get(key))
        if number is not None:
            out.append((f"gepa.{key}", number, 0))
    return out


def trial_metrics(trials: Mapping[str, Any]) -> list[tuple[str, float, int]]:
    """Per-trial scores of MIPROv2, COPRO and GEPA as ``(name, value, step)``.

    MIPROv2: ``trial_score`` (full evaluation, DSPy's 0-100 scale) and
    ``trial_minibatch_score`` per trial number; COPRO: ``copro.best_score`` /
    ``copro.average_score`` per depth (best over predictors) and ``candidate_score`` per
    candidate; GEPA: ``trial_score`` per candidate (its validation aggregate, 0-1).
    """
    out = _mipro_trial_metrics(trials.get("trial_logs"))
    out += _copro_depth_metrics(trials.get("results_best"))
    if trials.get("optimizer") != "mipro":
        for step, candidate in enumerate(trials.get("candidate_programs") or []):
            number = (
                metric_number(candidate.get("score")) if isinstance(candidate, Mapping) else None
            )
            if number is not None:
                out.append(("candidate_score", number, step))
    out += _gepa_metrics(trials.get("gepa"))
    score = metric_number(trials.get("score"))
    if score is not None:
        out.append(("best_trial_score", score, 0))
    return out


def evaluation_metrics(arm: str, evaluation: Mapping[str, Any]) -> list[tuple[str, float, int]]:
    out: list[tuple[str, float, int]] = []
    for metric, stats in (evaluation.get("statistics") or {}).items():
        for field in _STAT_FIELDS:
            number = metric_number(stats.get(field)) if isinstance(stats, Mapping) else None
            if number is not None:
                out.append((f"{arm}.{metric}.{field}", number, 0))
    for field in ("n_examples", "n_runs", "timed_out", "total_tokens", "cost_usd", "wall_time_s"):
        number = metric_number(evaluation.get(field))
        if number is not None:
            out.append((f"{arm}.{field}", number, 0))
    for example in evaluation.get("examples") or []:
        step = int(example.get("index", 0))
        for metric, score in (example.get("mean_scores") or {}).items():
            number = metric_number(score)
            if number is not None:
                out.append((f"{arm}.{metric}", number, step))
        latency = metric_number(example.get("mean_latency_ms"))
        if latency is not None:
            out.append((f"{arm}.latency_ms", latency, step))
    return out


def comparison_metrics(
    comparison: Mapping[str, Any],
) -> tuple[list[tuple[str, float, int]], dict[str, str]]:
    metrics: list[tuple[str, float, int]] = []
    tags: dict[str, str] = {}
    if comparison.get("verdict") is not None:
        tags["verdict"] = str(comparison["verdict"])
    if comparison.get("primary_metric") is not None:
        tags["primary_metric"] = str(comparison["primary_metric"])
    for delta in comparison.get("deltas") or []:
        name = delta["metric"]
        tags[f"verdict.{name}"] = str(delta.get("verdict"))
        for field, suffix in (
            ("mean_delta", ""),
            ("ci_low", ".ci_low"),
            ("ci_high", ".ci_high"),
            ("p_value", ".p_value"),
        ):
            number = metric_number(delta.get(field))
            if number is not None:
                metrics.append((f"delta.{name}{suffix}", number, 0))
    ab = comparison.get("ab")
    if isinstance(ab, Mapping):
        for key, value in flatten(ab, "ab"):
            number = metric_number(value)
            if number is not None:
                metrics.append((key, number, 0))
            elif isinstance(value, str) and key.endswith(("verdict", "decision")):
                tags[key] = value
    return metrics, tags
