"""The outcome of :func:`~lift_metrics.optimizers.run_optimizer`: per-metric deltas and the run."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lift_metrics._records import record_dict
from lift_metrics._usage import (
    UsageTotals,
)
from lift_metrics.optimizers._config import (
    RunConfig,
)
from lift_metrics.optimizers._eval_results import Evaluation

__all__ = ["MetricDelta", "OptimizationResult"]


@dataclass(frozen=True, repr=False)
class MetricDelta:
    """Paired difference ``optimized - baseline`` of one metric over the test examples."""

    metric: str
    baseline_mean: float
    optimized_mean: float
    mean_delta: float
    ci_low: float
    ci_high: float
    p_value: float
    confidence_level: float

    def __repr__(self) -> str:
        return (
            f"MetricDelta({self.metric!r}, delta={self.mean_delta:+.4f} "
            f"[{self.ci_low:+.4f}, {self.ci_high:+.4f}], p={self.p_value:.3g})"
        )

    @property
    def verdict(self) -> str:
        """Return ``improved`` / ``regressed`` when the interval excludes 0, else ``inconclusive``.

        It is ``no difference`` when every pair is equal.
        """
        if self.ci_low == self.ci_high == 0.0:
            return "no difference"
        if self.ci_low > 0:
            return "improved"
        if self.ci_high < 0:
            return "regressed"
        return "inconclusive"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(self, verdict=self.verdict)


@dataclass(frozen=True, repr=False)
class OptimizationResult:
    """What :func:`run_optimizer` produced.

    Attributes
    ----------
    config : RunConfig
    output_dir : Path
        The run's folder (see the module docstring for its files).
    baseline, optimized : Evaluation or None
        Test-split evaluations (``None`` when a budget stop came first).
    program : dspy.Module or None
        The optimized program.
    deltas : tuple of MetricDelta
        Per-metric paired deltas with bootstrap intervals (empty without both evaluations).
    comparison : lift_metrics.stats.PairedComparison or None
        The A/B analysis of ``lift_metrics.stats.paired_comparison`` (success = primary
        score >= the metric's threshold).
    trials : dict
        The optimizer's trial history.
    usage : UsageTotals
        Billed LM usage of the whole run.
    stop_reason : str or None
        Why the run stopped early (a budget), else ``None``.
    wall_time_s : float
        Wall-clock seconds of the whole run.
    metric_time_s : float
        Seconds spent inside the metric calls, summed over threads: with several evaluation
        threads it can exceed ``wall_time_s``, so ``metric_time_fraction`` is an upper bound
        on the metrics' share of the run.
    code : dict
        Per arm (``baseline``, ``optimized``), :func:`~lift_metrics.optimizers._code_report.
        code_summary`: tasks whose tests all pass, mean share of tests passed, degenerate
        outputs.
    predictors : dict
        Per predictor of the optimized program, its instruction and demonstrations
        (:func:`~lift_metrics.optimizers._code_report.predictor_summary`).
    """

    config: RunConfig
    output_dir: Path
    baseline: Evaluation | None
    optimized: Evaluation | None
    program: Any
    deltas: tuple[MetricDelta, ...]
    comparison: Any
    trials: Mapping[str, Any]
    usage: UsageTotals
    stop_reason: str | None
    wall_time_s: float
    metric_time_s: float = 0.0
    code: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    predictors: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        def score(ev: Evaluation | None) -> str:
            return "n/a" if ev is None else f"{ev.mean_score:.4f}"

        head = self.deltas[0] if self.deltas else None
        verdict = head.verdict if head is not None else "n/a"
        stop = f", stopped={self.stop_reason!r}" if self.stop_reason else ""
        return (
            f"OptimizationResult({self.config.optimizer.class_name}, "
            f"baseline={score(self.baseline)}, optimized={score(self.optimized)}, "
            f"verdict={verdict!r}, output_dir='{self.output_dir}'{stop})"
        )

    @property
    def verdict(self) -> str:
        """The primary metric's verdict (``improved``/``regressed``/``inconclusive``/...)."""
        return self.deltas[0].verdict if self.deltas else "not compared"

    def to_dict(self) -> dict[str, Any]:
        """Summary as a plain dict (evaluations are in their own files)."""
        return {
            "name": self.config.name,
            "optimizer": self.config.optimizer.class_name,
            "output_dir": str(self.output_dir),
            "baseline_score": None if self.baseline is None else self.baseline.mean_score,
            "optimized_score": None if self.optimized is None else self.optimized.mean_score,
            "primary_metric": self.config.metric.name,
            "verdict": self.verdict,
            "deltas": [d.to_dict() for d in self.deltas],
            "ab_verdict": None if self.comparison is None else self.comparison.verdict,
            "code": dict(self.code),
            "predictors": dict(self.predictors),
            "usage": self.usage.to_dict(),
            "stop_reason": self.stop_reason,
            "wall_time_s": self.wall_time_s,
            "metric_time_s": self.metric_time_s,
            "metric_time_fraction": self.metric_time_s / self.wall_time_s
            if self.wall_time_s > 0
            else None,
        }
