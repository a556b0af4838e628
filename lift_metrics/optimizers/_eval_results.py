"""What :func:`~lift_metrics.optimizers.evaluate_program` returns: per-example results over runs.

:class:`ExampleResult` is one example in one run, :class:`ExampleSummary` one example over all
runs and :class:`Evaluation` the whole evaluation, with its Markdown and JSON forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lift_metrics._io import format_number
from lift_metrics._records import PlainRecord, format_scores, record_dict
from lift_metrics._usage import UsageTotals

__all__ = ["Evaluation", "ExampleResult", "ExampleSummary"]

# the billed-usage fields that an example result and a pipeline prediction carry
USAGE_FIELDS = ("lm_calls", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd")


def usage_fields(usage: UsageTotals) -> dict[str, Any]:
    """Return the :data:`USAGE_FIELDS` of ``usage`` as keyword arguments.

    Examples
    --------
    >>> fields = usage_fields(UsageTotals(lm_calls=2, total_tokens=30))
    >>> fields["lm_calls"], fields["total_tokens"], tuple(fields) == USAGE_FIELDS
    (2, 30, True)
    """
    return {name: getattr(usage, name) for name in USAGE_FIELDS}


@dataclass(frozen=True, repr=False)
class ExampleResult:
    """One example in one run.

    ``scores`` maps each metric name to its score (0 for a timed-out or failed example);
    ``error`` is the one-line reason a program or metric failed; usage is billed usage
    (cache hits count zero).
    """

    index: int
    task_id: str
    run: int
    scores: Mapping[str, float]
    timed_out: bool
    error: str | None
    latency_ms: float
    lm_calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float
    outputs: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        scores = format_scores(self.scores)
        flag = ", timed_out" if self.timed_out else ""
        return f"ExampleResult({self.task_id!r}, run={self.run}, {scores}{flag})"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(self, outputs=dict(self.outputs))


@dataclass(frozen=True, repr=False)
class ExampleSummary(PlainRecord):
    """One example over all runs: mean and std (ddof=0) of each score, summed usage."""

    index: int
    task_id: str
    mean_scores: Mapping[str, float]
    std_scores: Mapping[str, float]
    timed_out_runs: int
    mean_latency_ms: float
    total_tokens: int
    cost_usd: float

    def __repr__(self) -> str:
        return f"ExampleSummary({self.task_id!r}, mean_scores={dict(self.mean_scores)})"


@dataclass(frozen=True, repr=False)
class Evaluation:
    """Result of :func:`evaluate_program`.

    Attributes
    ----------
    metric_names : tuple of str
        The metrics, the primary one first.
    runs : tuple of tuple of ExampleResult
        ``runs[r][i]``: example ``i`` in run ``r``.
    examples : tuple of ExampleSummary
        Per-example mean/std over runs.
    statistics : dict
        Per metric, :class:`lift_metrics.stats.Statistics` of the per-example mean scores.
    complete : bool
        False when a budget stop cut the evaluation short (missing examples are absent).
    """

    metric_names: tuple[str, ...]
    runs: tuple[tuple[ExampleResult, ...], ...]
    examples: tuple[ExampleSummary, ...]
    statistics: Mapping[str, Any]
    timeout_s: float
    wall_time_s: float
    complete: bool = True
    stop_reason: str | None = None

    def __repr__(self) -> str:
        return (
            f"Evaluation(n={len(self.examples)}, runs={len(self.runs)}, "
            f"{self.primary_metric}={self.mean_score:.4f}, timed_out={self.timed_out_count})"
        )

    @property
    def primary_metric(self) -> str:
        """The metric the optimizer uses (the first name)."""
        return self.metric_names[0]

    @property
    def scores(self) -> list[float]:
        """Per-example mean of the primary metric, in example order."""
        return [e.mean_scores[self.primary_metric] for e in self.examples]

    def scores_of(self, metric: str) -> list[float]:
        """Per-example mean of ``metric``, in example order."""
        return [e.mean_scores[metric] for e in self.examples]

    @property
    def mean_score(self) -> float:
        """Mean over examples of the primary metric (nan when nothing was evaluated)."""
        stats = self.statistics.get(self.primary_metric)
        return float("nan") if stats is None else float(stats.mean)

    @property
    def timed_out_count(self) -> int:
        """Example runs that hit the timeout."""
        return sum(r.timed_out for run in self.runs for r in run)

    @property
    def total_tokens(self) -> int:
        """Billed tokens over all runs."""
        return sum(r.total_tokens for run in self.runs for r in run)

    @property
    def cost_usd(self) -> float:
        """Dollars over all runs."""
        return sum(r.cost_usd for run in self.runs for r in run)

    def to_dict(self) -> dict[str, Any]:
        """Aggregate (all runs) as a plain dict; per-run details are in :meth:`run_dict`."""
        return record_dict(
            self,
            "metric_names primary_metric n_examples n_runs complete stop_reason timeout_s"
            " wall_time_s timed_out total_tokens cost_usd statistics examples",
            n_examples=len(self.examples),
            n_runs=len(self.runs),
            timed_out=self.timed_out_count,
        )

    def run_dict(self, run: int) -> dict[str, Any]:
        """One run as a plain dict."""
        return {
            "run": run,
            "metric_names": list(self.metric_names),
            "examples": [r.to_dict() for r in self.runs[run]],
        }

    def to_markdown(self, *, title: str = "Evaluation") -> str:
        """Return a Markdown report: summary per metric, then one row per example."""
        lines = [f"## {title}", ""]
        lines.append(
            f"- {len(self.examples)} examples x {len(self.runs)} run(s); "
            f"timeout {format_number(self.timeout_s)} s per example; "
            f"{self.timed_out_count} timed out; wall time {self.wall_time_s:.1f} s"
        )
        lines.append(
            f"- billed tokens {self.total_tokens}; cost ${format_number(self.cost_usd)} "
            "(cache hits are free)"
        )
        if not self.complete:
            lines.append(f"- **stopped early**: {self.stop_reason}")
        lines += ["", "| metric | mean | std | median | min | max |", "|---|---|---|---|---|---|"]
        for name, st in self.statistics.items():
            lines.append(
                f"| {name} | {format_number(st.mean)} | {format_number(st.std_dev)} | "
                f"{format_number(st.median)} | {format_number(st.min)} | {format_number(st.max)} |"
            )
        header = " | ".join(self.metric_names)
        lines += ["", f"| task | {header} | latency ms | tokens | timed out |"]
        lines.append("|---|" + "---|" * (len(self.metric_names) + 3))
        for e in self.examples:
            cells = []
            for name in self.metric_names:
                mean = format_number(e.mean_scores[name], digits=3)
                std = e.std_scores[name]
                cells.append(mean if len(self.runs) == 1 else f"{mean} ± {std:.3f}")
            lines.append(
                f"| {e.task_id} | {' | '.join(cells)} | {e.mean_latency_ms:.0f} | "
                f"{e.total_tokens} | {e.timed_out_runs} |"
            )
        return "\n".join(lines) + "\n"
