"""forgetest-style scoring of generated code and per-model / per-case aggregates."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lift_metrics._checks import check_int, check_real
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.stats._passk import pass_at_k
from lift_metrics.stats._records import (
    RecordError,
    check_text,
    get_bool,
    get_float,
    get_int,
    get_str,
    in_file,
    read_json,
)


def forge_score(compiled: bool, passed: int, failed: int, lint_warnings: int) -> float:
    """Forgetest score of one generated program: compilation, tests and lint in [0, 1].

    Parameters
    ----------
    compiled : bool
        Whether the code compiles (for Python: parses and byte-compiles).
    passed, failed : int
        Test cases passed and failed, non-negative.
    lint_warnings : int
        Lint findings (clippy in forgetest; ruff/pyflakes for Python), non-negative.

    Returns
    -------
    float
        In [0, 1]; 1.0 is compiled, all tests passing, no warnings.

    Raises
    ------
    TypeError
        If ``compiled`` is not a bool or a count is not an integer.
    ValueError
        For negative counts.

    Notes
    -----
    ``0`` if not compiled, else
    ``0.4 + 0.5 * passed / (passed + failed) + 0.1 * max(0, 1 - 0.1 * lint_warnings)``,
    with a test score of 0 when there are no tests (docs/code.md#forge_score).

    Examples
    --------
    >>> forge_score(True, 3, 1, 2)
    0.855
    >>> forge_score(True, 0, 0, 0)
    0.5
    >>> forge_score(False, 10, 0, 0)
    0.0
    """
    if not isinstance(compiled, bool | np.bool_):
        raise InputTypeError(f"compiled must be a bool, got {type(compiled).__name__} {compiled!r}")
    n_pass = check_int("passed", passed, minimum=0)
    n_fail = check_int("failed", failed, minimum=0)
    warnings_count = check_int("lint_warnings", lint_warnings, minimum=0)
    if not compiled:
        return 0.0
    total = n_pass + n_fail
    test_score = n_pass / total if total else 0.0
    lint_score = max(0.0, 1.0 - 0.1 * warnings_count)
    return 0.4 + 0.5 * test_score + 0.1 * lint_score


@dataclass(frozen=True)
class EvalResult:
    """One generated sample of one case by one model, as stored in an eval report.

    A sample *passes* when it compiled, had at least one test and failed none.
    """

    case: str
    model: str
    compiled: bool
    tests_passed: int
    tests_failed: int
    lint_warnings: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0

    @property
    def score(self) -> float:
        """The sample's :func:`forge_score`."""
        return forge_score(self.compiled, self.tests_passed, self.tests_failed, self.lint_warnings)

    @property
    def passed(self) -> bool:
        """Compiled, at least one test, no failing test."""
        return self.compiled and self.tests_passed > 0 and self.tests_failed == 0

    @property
    def test_rate(self) -> float:
        """``tests_passed / (tests_passed + tests_failed)``; 0 without tests (as the score)."""
        total = self.tests_passed + self.tests_failed
        return self.tests_passed / total if total else 0.0

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, index: int | str = 0) -> EvalResult:
        """Validate one JSON record; errors name the record index and the field."""
        return cls(
            case=get_str(record, index, "case"),
            model=get_str(record, index, "model"),
            compiled=get_bool(record, index, "compiled"),
            tests_passed=get_int(record, index, "tests_passed"),
            tests_failed=get_int(record, index, "tests_failed"),
            lint_warnings=get_int(record, index, "lint_warnings", default=0),
            cost_usd=get_float(record, index, "cost_usd", default=0.0),
            latency_ms=get_float(record, index, "latency_ms", default=0.0),
        )


@dataclass(frozen=True)
class ModelStats:
    """Aggregates of one model over all its cases and samples."""

    model: str
    cases: int
    samples: int
    pass_at_k: dict[int, float]
    compile_rate: float
    test_rate: float
    mean_score: float
    total_cost_usd: float
    mean_latency_ms: float

    def __repr__(self) -> str:
        return (
            f"ModelStats(model={self.model!r}, cases={self.cases}, samples={self.samples}, "
            f"compile_rate={self.compile_rate:.4g}, test_rate={self.test_rate:.4g})"
        )


@dataclass(frozen=True)
class CaseStats:
    """Aggregates of one (model, case) over its samples."""

    model: str
    case: str
    samples: int
    correct: int
    pass_at_k: dict[int, float]
    mean_score: float

    def __repr__(self) -> str:
        return (
            f"CaseStats(model={self.model!r}, case={self.case!r}, samples={self.samples}, "
            f"correct={self.correct}, mean_score={self.mean_score:.4g})"
        )


def _check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    if isinstance(ks, int):
        ks = (ks,)
    values = tuple(sorted({check_int("ks[]", k, minimum=1) for k in ks}))
    if not values:
        raise InputValueError("ks must name at least one k")
    return values


@dataclass(frozen=True)
class EvalReport:
    """A forgetest-style eval report: samples of cases generated by models.

    JSON form: ``{"name": "...", "results": [{"case", "model", "compiled", "tests_passed",
    "tests_failed", "lint_warnings"?, "cost_usd"?, "latency_ms"?}, ...]}``; see
    ``datasets/examples/README.md``.
    """

    results: tuple[EvalResult, ...]
    name: str = ""

    def __repr__(self) -> str:
        return f"EvalReport(name={self.name!r}, results={len(self.results)})"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalReport:
        """Validate a parsed report; errors name the record index and the field."""
        if not isinstance(data, Mapping):
            raise RecordError(f"an eval report must be a JSON object, got {type(data).__name__}")
        if "results" not in data:
            raise RecordError("an eval report needs a 'results' list")
        raw = data["results"]
        if not isinstance(raw, list) or not raw:
            raise RecordError(f"'results' must be a non-empty list, got {raw!r:.80}")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise RecordError(f"'name' must be a string, got {name!r}")
        check_text(name, "'name'")
        results = tuple(EvalResult.from_dict(r, index=i) for i, r in enumerate(raw))
        return cls(results=results, name=name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """Read and validate a report JSON file."""
        try:
            return cls.from_dict(read_json(path))
        except RecordError as exc:
            raise in_file(path, exc) from exc

    def _groups(self) -> dict[tuple[str, str], list[EvalResult]]:
        groups: dict[tuple[str, str], list[EvalResult]] = {}
        for result in self.results:
            groups.setdefault((result.model, result.case), []).append(result)
        return groups

    def case_scores(self) -> dict[str, float]:
        """Mean score per ``"model/case"`` key, the input of :func:`compare_reports`."""
        scores: dict[str, float] = {}
        for (model, case), samples in self._groups().items():
            key = case_key(model, case)
            if key in scores:
                raise InputValueError(f"two (model, case) pairs map to the same key {key!r}")
            scores[key] = float(np.mean([s.score for s in samples]))
        return scores

    def case_stats(self, *, ks: Iterable[int] = (1,)) -> tuple[CaseStats, ...]:
        """Per (model, case): samples, correct samples, pass@k for each k, mean score.

        Raises ``ValueError`` when a case has fewer samples than a requested k.
        """
        k_values = _check_ks(ks)
        out = []
        for (model, case), samples in self._groups().items():
            n = len(samples)
            c = sum(s.passed for s in samples)
            if k_values[-1] > n:
                raise InputValueError(
                    f"pass@{k_values[-1]} needs at least {k_values[-1]} samples, "
                    f"but model {model!r} case {case!r} has {n}"
                )
            out.append(
                CaseStats(
                    model=model,
                    case=case,
                    samples=n,
                    correct=c,
                    pass_at_k={k: float(pass_at_k(n, c, k)) for k in k_values},
                    mean_score=float(np.mean([s.score for s in samples])),
                )
            )
        return tuple(out)

    def model_stats(self, *, ks: Iterable[int] = (1,)) -> tuple[ModelStats, ...]:
        """Per model: mean pass@k over cases, compile rate, test rate, cost and latency.

        Notes
        -----
        ``pass_at_k`` averages the per-case unbiased estimates; ``compile_rate`` is the
        fraction of samples that compiled; ``test_rate`` averages, over cases, the mean
        ``passed / total`` of the case's samples; ``total_cost_usd`` sums and
        ``mean_latency_ms`` averages over samples.
        """
        k_values = _check_ks(ks)
        per_case = self.case_stats(ks=k_values)
        groups = self._groups()
        out = []
        for model in dict.fromkeys(r.model for r in self.results):
            cases = [cs for cs in per_case if cs.model == model]
            samples = [r for r in self.results if r.model == model]
            case_test_rates = [
                np.mean([s.test_rate for s in groups[(model, cs.case)]]) for cs in cases
            ]
            out.append(
                ModelStats(
                    model=model,
                    cases=len(cases),
                    samples=len(samples),
                    pass_at_k={
                        k: float(np.mean([cs.pass_at_k[k] for cs in cases])) for k in k_values
                    },
                    compile_rate=sum(s.compiled for s in samples) / len(samples),
                    test_rate=float(np.mean(case_test_rates)),
                    mean_score=float(np.mean([s.score for s in samples])),
                    total_cost_usd=float(sum(s.cost_usd for s in samples)),
                    mean_latency_ms=float(np.mean([s.latency_ms for s in samples])),
                )
            )
        return tuple(out)


def case_key(model: str, case: str) -> str:
    """Return a (model, case) pair's key in :meth:`EvalReport.case_scores`: ``"model/case"``."""
    return f"{model}/{case}"


def as_case_scores(
    report: EvalReport | Mapping[str, float] | Sequence[EvalResult], name: str
) -> dict[str, float]:
    """Case scores from a report, a mapping of key -> score, or a list of results."""
    if isinstance(report, EvalReport):
        return report.case_scores()
    if isinstance(report, Mapping):
        return {str(k): check_real(f"{name}[{k!r}]", v) for k, v in report.items()}
    if isinstance(report, Sequence) and all(isinstance(r, EvalResult) for r in report):
        return EvalReport(results=tuple(report)).case_scores()
    raise InputTypeError(
        f"{name} must be an EvalReport, a mapping of case -> score or a list of EvalResult, "
        f"got {type(report).__name__}"
    )
