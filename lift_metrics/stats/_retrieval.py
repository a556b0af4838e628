"""Retrieval quality and multi-run aggregation (docs/statistics.md#retrieval)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lift_metrics._checks import check_real
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.stats._summary import check_ddof, variance_of

#: Metrics that :func:`aggregate_runs` sums across runs instead of averaging.
DEFAULT_SUMMED_METRICS: tuple[str, ...] = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
)


def _as_id_set(name: str, items: Iterable[Hashable]) -> set[Hashable]:
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise InputTypeError(
            f"{name} must be a collection of document ids (a list or set), "
            f"got {type(items).__name__} {items!r:.60}"
        )
    try:
        return set(items)
    except TypeError as exc:
        raise InputTypeError(f"{name} must contain hashable document ids: {exc}") from exc


def _overlap(retrieved: Iterable[Hashable], relevant: Iterable[Hashable]) -> tuple[int, int, int]:
    """Return ``|retrieved ∩ relevant|``, ``|retrieved|`` and ``|relevant|`` of the distinct ids."""
    got = _as_id_set("retrieved", retrieved)
    want = _as_id_set("relevant", relevant)
    return len(got & want), len(got), len(want)


def retrieval_precision(retrieved: Iterable[Hashable], relevant: Iterable[Hashable]) -> float:
    """Fraction of the retrieved documents that are relevant.

    Parameters
    ----------
    retrieved : collection of hashable
        Ids of the documents retrieved (duplicates count once).
    relevant : collection of hashable
        Ids of the expected (relevant) documents.

    Returns
    -------
    float
        In [0, 1]; 0.0 when nothing was retrieved (no relevant document was found).

    Raises
    ------
    TypeError
        If an argument is a string or mapping rather than a collection of ids.

    Notes
    -----
    ``|retrieved ∩ relevant| / |retrieved|``.

    Examples
    --------
    >>> retrieval_precision(["a", "b", "c", "d"], ["a", "c", "x"])
    0.5
    >>> retrieval_precision([], ["a"])
    0.0
    """
    found, n_retrieved, _ = _overlap(retrieved, relevant)
    return found / n_retrieved if n_retrieved else 0.0


def retrieval_recall(retrieved: Iterable[Hashable], relevant: Iterable[Hashable]) -> float:
    """Fraction of the relevant documents that were retrieved.

    Parameters
    ----------
    retrieved, relevant : collection of hashable
        As in :func:`retrieval_precision`.

    Returns
    -------
    float
        In [0, 1]; 1.0 when nothing is relevant (nothing was missed).

    Raises
    ------
    TypeError
        As in :func:`retrieval_precision`.

    Notes
    -----
    ``|retrieved ∩ relevant| / |relevant|``.

    Examples
    --------
    >>> round(retrieval_recall(["a", "b", "c", "d"], ["a", "c", "x"]), 4)
    0.6667
    >>> retrieval_recall(["a"], [])
    1.0
    """
    found, _, n_relevant = _overlap(retrieved, relevant)
    return found / n_relevant if n_relevant else 1.0


@dataclass(frozen=True)
class QuestionAggregate:
    """One question across N runs: mean and std of averaged metrics, sums of summed ones."""

    question: str
    mean: dict[str, float]
    std: dict[str, float]
    total: dict[str, float]


@dataclass(frozen=True, repr=False)
class MultiRunAggregate:
    """Result of :func:`aggregate_runs`.

    ``run_std`` is the standard deviation across runs of each averaged metric's per-run mean
    over questions (the harness's ``*_run_stddev``).
    """

    run_count: int
    questions: dict[str, QuestionAggregate]
    run_std: dict[str, float]

    def __repr__(self) -> str:
        return f"MultiRunAggregate(run_count={self.run_count}, questions={len(self.questions)})"


def aggregate_runs(
    runs: Sequence[Mapping[str, Mapping[str, float]]],
    *,
    summed: Iterable[str] = DEFAULT_SUMMED_METRICS,
    ddof: int = 0,
) -> MultiRunAggregate:
    """Aggregate per-question metrics over N runs: mean and std, or sums for tokens and cost.

    Parameters
    ----------
    runs : sequence of mapping
        One mapping per run: question id -> {metric name -> value}. Every run must have the
        same questions and each question the same metrics in every run.
    summed : iterable of str, default DEFAULT_SUMMED_METRICS
        Metrics summed across runs (token counts and cost) instead of averaged.
    ddof : int, default 0
        Delta degrees of freedom of the standard deviations (population by default).

    Returns
    -------
    MultiRunAggregate

    Raises
    ------
    ValueError
        For no runs, runs with different questions or metrics, or NaN/infinite values.
    TypeError
        For non-numeric values.

    Notes
    -----
    For question q and averaged metric m: ``mean = sum_r x[r,q,m] / N`` and
    ``std = sqrt(sum_r (x - mean)^2 / (N - ddof))``; summed metrics get
    ``total = sum_r x[r,q,m]``. With one run the std is 0 (ddof=0).

    Examples
    --------
    >>> runs = [
    ...     {"q1": {"correctness": 4.0, "cost_usd": 0.01}},
    ...     {"q1": {"correctness": 2.0, "cost_usd": 0.02}},
    ... ]
    >>> agg = aggregate_runs(runs)
    >>> q = agg.questions["q1"]
    >>> q.mean, q.std, round(q.total["cost_usd"], 6)
    ({'correctness': 3.0}, {'correctness': 1.0}, 0.03)
    """
    if isinstance(runs, Mapping) or not isinstance(runs, Sequence) or not runs:
        raise InputValueError(
            f"runs must be a non-empty list of per-run mappings, got {runs!r:.80}"
        )
    summed_set = set(summed) if not isinstance(summed, str) else {summed}
    ddof = check_ddof(ddof)
    first = runs[0]
    if not isinstance(first, Mapping) or not first:
        raise InputValueError("runs[0] must be a non-empty mapping of question -> metrics")
    questions = list(first)
    layout = {q: sorted(first[q]) for q in questions}
    values: dict[str, dict[str, list[float]]] = {q: {m: [] for m in layout[q]} for q in questions}
    for r, run in enumerate(runs):
        if not isinstance(run, Mapping) or set(run) != set(questions):
            got = sorted(run) if isinstance(run, Mapping) else run
            raise InputValueError(
                f"runs[{r}] must have the questions {sorted(questions)}, got {got!r}"
            )
        for q in questions:
            metrics = run[q]
            if not isinstance(metrics, Mapping) or sorted(metrics) != layout[q]:
                raise InputValueError(
                    f"runs[{r}][{q!r}] must have the metrics {layout[q]}, got {metrics!r:.80}"
                )
            for m in layout[q]:
                values[q][m].append(check_real(f"runs[{r}][{q!r}][{m!r}]", metrics[m]))
    aggregates = {}
    for q in questions:
        mean, std, total = {}, {}, {}
        for m, xs in values[q].items():
            array = np.asarray(xs)
            if m in summed_set:
                total[m] = float(array.sum())
            else:
                mean[m] = float(array.mean())
                std[m] = float(np.sqrt(variance_of(array, ddof)))
        aggregates[str(q)] = QuestionAggregate(str(q), mean, std, total)
    averaged = sorted({m for q in questions for m in layout[q] if m not in summed_set})
    run_std = {}
    for m in averaged:
        per_run = np.array(
            [
                np.mean([values[q][m][r] for q in questions if m in values[q]])
                for r in range(len(runs))
            ]
        )
        run_std[m] = float(np.sqrt(variance_of(per_run, ddof)))
    return MultiRunAggregate(run_count=len(runs), questions=aggregates, run_std=run_std)
