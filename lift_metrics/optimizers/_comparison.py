"""The baseline-vs-optimized comparison of a run: trials, metric deltas, run records, verdict."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lift_metrics.optimizers._config import (
    RunConfig,
)
from lift_metrics.optimizers._eval_results import Evaluation
from lift_metrics.optimizers._provenance import to_jsonable_safe
from lift_metrics.optimizers._result import MetricDelta


def _trials(optimizer_name: str, optimizer: Any, program: Any) -> dict[str, Any]:
    """Return the optimizer's own history, made JSON-friendly."""
    out: dict[str, Any] = {"optimizer": optimizer_name}
    if program is None:
        return out
    for attr in ("score", "trial_logs", "candidate_programs", "results_best", "results_latest"):
        for owner in (program, optimizer):
            if hasattr(owner, attr) and attr not in out:
                out[attr] = to_jsonable_safe(getattr(owner, attr))
    details = getattr(program, "detailed_results", None)
    if details is not None:
        out["gepa"] = {
            key: to_jsonable_safe(getattr(details, key))
            for key in (
                "val_aggregate_scores",
                "best_idx",
                "parents",
                "total_metric_calls",
                "num_full_val_evals",
                "candidates",
            )
            if hasattr(details, key)
        }
    return out


def _deltas(
    baseline: Evaluation, optimized: Evaluation, *, n_resamples: int, level: float, seed: int
) -> tuple[MetricDelta, ...]:
    """Return per-metric paired deltas (optimized - baseline) over the test examples both evaluated.

    They come from :func:`lift_metrics.stats.paired_bootstrap` (one seed for every metric: the same
    resampled rows).
    """
    from lift_metrics.stats import paired_bootstrap

    base = {e.index: e for e in baseline.examples}
    pairs = [(base[e.index], e) for e in optimized.examples if e.index in base]
    if not pairs:
        return ()
    out = []
    for name in baseline.metric_names:
        result = paired_bootstrap(
            [o.mean_scores[name] for _, o in pairs],
            [b.mean_scores[name] for b, _ in pairs],
            n_resamples=n_resamples,
            confidence_level=level,
            seed=seed,
        )
        out.append(
            MetricDelta(
                metric=name,
                baseline_mean=result.mean_b,
                optimized_mean=result.mean_a,
                mean_delta=result.mean_delta,
                ci_low=result.interval.low,
                ci_high=result.interval.high,
                p_value=result.p_value,
                confidence_level=level,
            )
        )
    return tuple(out)


def _success(evaluation: Evaluation, scores: Mapping[str, float], threshold: float) -> bool:
    """A/B success: every test passes (``tasks_solved``), else primary score >= threshold."""
    if "tasks_solved" in evaluation.metric_names:
        return scores["tasks_solved"] >= 1.0
    return scores[evaluation.primary_metric] >= threshold


def _run_records(evaluation: Evaluation, arm: str, threshold: float) -> list[dict[str, Any]]:
    records = []
    for run in evaluation.runs:
        for r in run:
            seconds = r.latency_ms / 1000.0 if math.isfinite(r.latency_ms) else evaluation.timeout_s
            records.append(
                {
                    "task_id": r.task_id,
                    "arm": arm,
                    "repeat": r.run,
                    "success": _success(evaluation, r.scores, threshold),
                    "duration_seconds": seconds,
                    "total_cost_usd": r.cost_usd,
                    "input_tokens": r.prompt_tokens,
                    "output_tokens": r.completion_tokens,
                    "cache_read_tokens": 0,
                    "cache_write_tokens": 0,
                }
            )
    return records


def _comparison(
    baseline: Evaluation, optimized: Evaluation, threshold: float, config: RunConfig
) -> Any:
    from lift_metrics.stats import paired_comparison

    base_records = _run_records(baseline, "baseline", threshold)
    keys = {(r["task_id"], r["repeat"]) for r in base_records}
    opt_records = [
        r
        for r in _run_records(optimized, "optimized", threshold)
        if (r["task_id"], r["repeat"]) in keys
    ]
    opt_keys = {(r["task_id"], r["repeat"]) for r in opt_records}
    base_records = [r for r in base_records if (r["task_id"], r["repeat"]) in opt_keys]
    if not opt_records or any(
        math.isnan(r["total_cost_usd"]) for r in (*opt_records, *base_records)
    ):  # no runs, or an LM without a known price: the A/B needs every run's cost
        return None
    return paired_comparison(
        opt_records,
        base_records,
        n_resamples=config.evaluation.n_resamples,
        confidence_level=config.evaluation.confidence_level,
        seed=config.seed,
    )


def validation_choice(
    baseline: Evaluation, chosen: Evaluation, *, n_resamples: int, level: float, seed: int
) -> dict[str, Any] | None:
    """Say whether the validation set could tell the chosen program from the unoptimized one.

    The optimizer chose its program by its score on the validation split. The paired delta
    of the optimizer's metric there (chosen - unoptimized, per validation task), with its
    interval: when the interval contains 0, the choice rests on noise, and ``warning`` says
    so. None when neither evaluation has an example in common.
    """
    deltas = _deltas(baseline, chosen, n_resamples=n_resamples, level=level, seed=seed)
    if not deltas:
        return None
    delta = deltas[0]
    separable = delta.ci_low > 0 or delta.ci_high < 0
    record: dict[str, Any] = {**delta.to_dict(), "n": len(chosen.examples)}
    record["separable"] = separable
    record["warning"] = (
        None
        if separable
        else (
            f"the validation set ({record['n']} tasks) cannot tell the chosen program from the "
            f"unoptimized one: {delta.metric!r} {delta.optimized_mean:.3f} against "
            f"{delta.baseline_mean:.3f}, paired {level:.0%} interval "
            f"[{delta.ci_low:+.3f}, {delta.ci_high:+.3f}] contains 0; the optimizer's choice "
            "may be noise (add validation tasks)"
        )
    )
    return record
