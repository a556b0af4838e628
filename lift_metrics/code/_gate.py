"""The opt-in wrong-answer gate: resemblance components scaled by the share of right answers."""

from __future__ import annotations

from collections.abc import Mapping

GATED_COMPONENTS: tuple[str, ...] = ("semantic", "style", "structural")
"""The resemblance components that ``wrong_answer_gate`` scales (syntax and tests are not)."""


def gate_by_wrong_answers(components: Mapping[str, float]) -> dict[str, float]:
    """Return the components with ``semantic``, ``style`` and ``structural`` scaled by the tests.

    Parameters
    ----------
    components : mapping of str to float
        A :class:`CodeQualityBreakdown`'s ``components``; ``tests.wrong_answers`` (the
        fraction of tests that returned a wrong value) is read, absent meaning 0.

    Returns
    -------
    dict of str to float
        A copy in which each component of :data:`GATED_COMPONENTS` present is multiplied by
        ``1 - tests.wrong_answers``; the others are unchanged. This is the opt-in
        ``wrong_answer_gate`` of :func:`code_quality`, and what ``lift-metrics validate
        --calibrate --wrong-answer-gate`` fits weights on.

    Examples
    --------
    >>> gate_by_wrong_answers({"syntax": 1.0, "tests": 0.5, "semantic": 0.9,
    ...                        "tests.wrong_answers": 0.5})
    {'syntax': 1.0, 'tests': 0.5, 'semantic': 0.45, 'tests.wrong_answers': 0.5}
    """
    keep = 1.0 - float(components.get("tests.wrong_answers", 0.0))
    return {
        key: value * keep if key in GATED_COMPONENTS else value for key, value in components.items()
    }
