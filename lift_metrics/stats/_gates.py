"""The three-gate decision rule of an A/B comparison (docs/decisions.md#ab-decision-rule)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lift_metrics.errors import InputTypeError
from lift_metrics.stats._arm_statistics import ArmStatistics

Decision = Literal["prefer_treatment", "prefer_control", "no_difference", "mixed"]

# the three gates: (name, arm statistic, paired delta, +1 if higher is better)
_GATES: tuple[tuple[str, str, str, int], ...] = (
    ("success_rate", "success_rate", "pass_delta", +1),
    ("runtime", "median_duration_seconds", "duration_delta_seconds", -1),
    ("tokens", "median_non_cache_tokens", "non_cache_token_delta", -1),
)


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


@dataclass(frozen=True)
class Gate:
    """One gate of the decision rule.

    ``favours`` compares the arm statistics ("treatment", "control" or "tie");
    ``ci_favours`` reads the paired bootstrap interval of ``delta`` ("treatment", "control"
    or "inconclusive" when the interval contains 0); empty when no interval was computed.
    """

    name: str
    statistic: str
    treatment_value: float
    control_value: float
    favours: str
    delta: str
    ci_favours: str = ""


def ab_decision(
    treatment: ArmStatistics, control: ArmStatistics
) -> tuple[Decision, tuple[Gate, ...]]:
    """Return the three-gate decision rule on two arms' statistics.

    Parameters
    ----------
    treatment, control : ArmStatistics

    Returns
    -------
    decision : {"prefer_treatment", "prefer_control", "no_difference", "mixed"}
    gates : tuple of Gate

    Notes
    -----
    Gates: success rate (higher is better), median duration and median non-cache tokens
    (lower is better). "prefer_treatment" when every gate holds for the treatment
    (``>=``/``<=``), "prefer_control" when every gate holds in the opposite direction,
    "no_difference" when all three tie exactly (both would hold), otherwise "mixed"
    ("mixed results - inspect paired deltas";
    docs/decisions.md#ab-decision-rule).

    Examples
    --------
    >>> from lift_metrics.stats import arm_statistics
    >>> base = {"task_id": "t", "repeat": 0, "success": True, "duration_seconds": 2.0,
    ...         "total_cost_usd": 0.5, "input_tokens": 100, "output_tokens": 20,
    ...         "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> a = arm_statistics([{**base, "arm": "new", "duration_seconds": 1.0}])
    >>> b = arm_statistics([{**base, "arm": "old"}])
    >>> ab_decision(a, b)[0], ab_decision(b, a)[0], ab_decision(b, b)[0]
    ('prefer_treatment', 'prefer_control', 'no_difference')
    """
    for label, arm in (("treatment", treatment), ("control", control)):
        if not isinstance(arm, ArmStatistics):
            raise InputTypeError(
                f"{label} must be ArmStatistics (from arm_statistics), got {type(arm).__name__}"
            )
    gates = []
    for name, statistic, delta, direction in _GATES:
        t_value = float(getattr(treatment, statistic))
        c_value = float(getattr(control, statistic))
        sign = direction * _sign(t_value - c_value)
        favours = {1: "treatment", -1: "control", 0: "tie"}[sign]
        gates.append(Gate(name, statistic, t_value, c_value, favours, delta))
    signs = {g.favours for g in gates}
    decision: Decision
    if signs == {"tie"}:
        decision = "no_difference"
    elif "control" not in signs:
        decision = "prefer_treatment"
    elif "treatment" not in signs:
        decision = "prefer_control"
    else:
        decision = "mixed"
    return decision, tuple(gates)
