"""The text of GEPA feedback: the score, the reasons it is below 1 and the failing tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from lift_metrics.dspy_metrics._fields import _short


class _Explained(Protocol):
    """What feedback is made from: a metric's breakdown (``MetricBreakdown``)."""

    @property
    def score(self) -> float: ...

    @property
    def reasons(self) -> Sequence[str]: ...

    @property
    def hints(self) -> Sequence[str] | None: ...

    @property
    def components(self) -> Mapping[str, float]: ...

    @property
    def weights(self) -> Mapping[str, float]: ...


_MAX_FAILED_TESTS_SHOWN = 5


def _io_cases(code: Any) -> bool:
    """Return True when the code ran on I/O cases (a check script's outcomes lack inputs)."""
    execution = getattr(code, "execution", None)
    outcomes = getattr(execution, "outcomes", ()) or ()
    return bool(outcomes) and all(o.inputs is not None for o in outcomes)


def _tests_line(code: Any, reason: str, *, reveal_expected: bool) -> str:
    """Return the code part's ``tests: ...`` reason, cut where it would quote a check script.

    The summary of I/O cases names what the code returned, never the expected value; a check
    script's failure quotes the failing assertion, whose values include the expected one.
    """
    if reveal_expected or _io_cases(code):
        return reason
    execution = getattr(code, "execution", None)
    status = getattr(execution, "status", "failed")
    passed, total = getattr(code, "tests_passed", 0), getattr(code, "tests_total", 0)
    return f"tests: {passed}/{total} passed ({status})"


def _failed_tests(code: Any, entry_point: str | None, *, reveal_expected: bool) -> list[str]:
    """Return one line per failing test (at most five): the call, what came back and why.

    Without ``reveal_expected`` no line holds an expected value: a check script's failure is
    shown as the exception and line, not as the assertion and its values.
    """
    execution = getattr(code, "execution", None)
    if execution is None:
        return []
    lines: list[str] = []
    outcomes = [o for o in getattr(execution, "outcomes", ()) if not o.passed]
    for outcome in outcomes[:_MAX_FAILED_TESTS_SHOWN]:
        if outcome.inputs is None:  # the error names the failing assertion and its values
            failure = outcome.error or f"{execution.status}: {execution.reason}"
            if not reveal_expected:
                head = (outcome.error or execution.status).split(":", 1)[0]
                lines.append(_short(f"test {outcome.index}: the check script failed: {head}", 400))
                continue
            lines.append(_short(f"test {outcome.index}: the check script failed: {failure}", 400))
            continue
        args = ", ".join(f"{k}={v!r}" for k, v in outcome.inputs.items())
        call = f"{entry_point or 'the function'}({args})"
        got = f"raised {outcome.error}" if outcome.error else f"returned {outcome.actual_repr}"
        expected = f" expected {outcome.expected!r}," if reveal_expected else ""
        lines.append(_short(f"test {outcome.index}: {call}{expected} {got}", 300))
    if len(outcomes) > _MAX_FAILED_TESTS_SHOWN:
        lines.append(f"... and {len(outcomes) - _MAX_FAILED_TESTS_SHOWN} more failing tests")
    if not outcomes and getattr(execution, "status", "passed") != "passed":
        if reveal_expected or execution.status == "timeout":
            lines.append(f"execution {execution.status}: {_short(execution.reason, 300)}")
        else:
            lines.append(f"execution {execution.status}")
    return lines


def _feedback_text(
    metric: str,
    threshold: float,
    result: _Explained,
    *,
    pred_name: str | None,
    relevant_parts: Callable[[], set[str] | None],
    reveal_expected: bool,
) -> str:
    """Return the feedback of ``metric`` on ``result`` (see :meth:`_Metric.feedback`).

    ``relevant_parts`` gives the parts whose fields the traced predictor produced (None: unknown);
    it is only called when some reason lost points. The lines are ``result.hints`` (no
    expected value, no expected IR text) unless ``reveal_expected``: then ``result.reasons``.
    """
    reasons = result.reasons if reveal_expected or result.hints is None else result.hints
    who = f"predictor `{pred_name}`" if pred_name else "the program"
    head = (
        f"Feedback for {who}: {metric} score {result.score:.3f} of 1.0 "
        f"(a score >= {threshold:.2f} counts as good)."
    )
    if not reasons:
        return head + " Nothing lost points: keep this behaviour."
    relevant = relevant_parts()
    own: list[str] = []
    other: list[str] = []
    for reason in reasons:
        part = reason.split("/", 1)[0].split(":", 1)[0]
        (own if relevant is None or part in relevant else other).append(reason)
    lines = [head]
    weights = ", ".join(
        f"{k} {result.components.get(k, float('nan')):.2f} (weight {w:.2f})"
        for k, w in result.weights.items()
    )
    lines.append(f"Parts: {weights}.")
    if own:
        target = "your outputs" if relevant is not None else "the outputs"
        lines.append(f"What lost points in {target}:")
        lines.extend(f"- {reason}" for reason in own)
    if other:
        lines.append("Also lost points (in outputs of other steps; for context):")
        lines.extend(f"- {reason}" for reason in other)
    return "\n".join(lines)
