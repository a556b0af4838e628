"""What :func:`code_quality` computed for one answer: :class:`CodeQualityBreakdown`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lift_metrics._records import record_dict

if TYPE_CHECKING:  # pragma: no cover
    from lift_metrics.sandbox import ExecutionResult


@dataclass(frozen=True, repr=False)
class CodeQualityBreakdown:
    """A code_quality score with the components, test outcomes and reasons behind it.

    Attributes
    ----------
    score : float
        The weighted score in [0, 1] (what :func:`code_quality` returns).
    components : dict of str to float
        Every computed component in [0, 1]: ``syntax``, ``tests``, ``semantic``, ``style``
        (a component whose weight is 0 is not computed, so an embedder or a sandbox is not
        started for nothing) and always ``structural`` when the prediction is scored against
        a parsable reference (cheap, and handy to compare with ``semantic``), plus the three
        parts of ``style``: ``style.imports``, ``style.naming``, ``style.docstrings``, and
        ``tests.wrong_answers`` when the tests ran: the fraction of tests in which the code
        returned a wrong value (what the opt-in ``wrong_answer_gate`` uses). These are the
        values before the gate and the stub cap.
    weights : dict of str to float
        The normalised weights used (they sum to 1).
    execution : ExecutionResult or None
        The sandbox's result with per-test outcomes; ``None`` when no process was started
        (no tests, code that does not parse, or a tests weight of 0).
    tests_passed, tests_total : int
        Tests passed and tests given (an assertion script counts as one).
    reasons : tuple of str
        One line for each component below 1.0 saying why (and one for a gate or cap used).
    stub : bool
        Whether the predicted entry function is a placeholder (:func:`~lift_metrics.code.
        is_stub`); computed whether or not ``stub_cap`` is used.
    profile : str
        The profile that scored it (``"validated"``, ``"seed"``, ``"shipped"``, ``"custom"``
        or a profile file's name).
    degenerate : str or None
        Why the answer is not an attempt at the code asked for
        (:func:`~lift_metrics.code.degenerate_kind`); ``None`` when it is one. The
        validated profile only.
    code : str or None
        The code that was scored and run, after :func:`~lift_metrics.code.extract_code` and
        the prompt for a body-only completion (the validated profile; ``None`` otherwise).
    behaviour_agreed, behaviour_total : int
        On how many generated inputs the code returned what the reference returns, of how
        many were compared (docs/code.md#behaviour-on-generated-inputs); ``0, 0`` when
        nothing was compared. ``tests_passed``/``tests_total`` count the given tests only.

    Notes
    -----
    In the validated profile ``components`` holds ``syntax`` (1 when the scored code
    parses), ``tests`` (the share of tests passed, when there are tests), ``reference`` (the
    no-test reference score), ``tests.wrong_answers`` and ``behaviour`` (the share of
    generated inputs on which the code agrees with the reference, when any were compared);
    ``weights`` is empty (the score is not a weighted sum).
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    execution: ExecutionResult | None
    tests_passed: int
    tests_total: int
    reasons: tuple[str, ...] = field(default=())
    stub: bool = False
    profile: str = "validated"
    degenerate: str | None = None
    code: str | None = None
    behaviour_agreed: int = 0
    behaviour_total: int = 0

    def __float__(self) -> float:
        return self.score

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{key}={value:.3g}" for key, value in self.components.items() if "." not in key
        )
        return f"CodeQualityBreakdown(score={self.score:.4g}, {parts})"

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (the execution with its per-test outcomes included)."""
        return record_dict(
            self,
            "score components weights tests_passed tests_total execution reasons stub profile"
            " degenerate code behaviour_agreed behaviour_total",
        )
