"""Route-aware metrics: cost and quality per provider route, and route migration.

Formulas and defaults: docs/composite.md#routes.

A *route* is where a request is served:

* :attr:`ProviderRoute.BEST_AVAILABLE` - the best hosted API model, paid per token;
* :attr:`ProviderRoute.MODAL_INFERENCE` - a self-hosted model on rented GPUs (e.g. Modal),
  paid per second of GPU time, and the only route that offers schema-constrained decoding
  (XGrammar).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from lift_metrics._checks import (
    check_int,
    check_non_negative,
    check_unit_interval,
    normalize_weights,
)
from lift_metrics.errors import InputTypeError, InputValueError

__all__ = [
    "DEFAULT_GPU_PRICES_PER_SECOND",
    "DEFAULT_TASK_WEIGHTS",
    "ProviderRoute",
    "RouteSuggestion",
    "route_cost",
    "route_quality",
    "suggest_route_migration",
]


class ProviderRoute(enum.StrEnum):
    """Where a request is served.

    ``BEST_AVAILABLE``: hosted API providers (pay per token, strongest models).
    ``MODAL_INFERENCE``: self-hosted inference on rented GPUs (pay per second; supports
    schema-constrained decoding such as XGrammar).
    """

    BEST_AVAILABLE = "best_available"
    MODAL_INFERENCE = "modal_inference"


#: Default GPU prices in USD per second.
DEFAULT_GPU_PRICES_PER_SECOND: Mapping[str, float] = {"L40S": 0.001, "A100": 0.002, "H100": 0.003}

_METRIC_KEYS = ("ir_quality", "code_quality", "test_pass_rate")
#: Default task-type weights over ir_quality, code_quality and test_pass_rate.
DEFAULT_TASK_WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "reasoning": {"ir_quality": 0.5, "code_quality": 0.3, "test_pass_rate": 0.2},
    "constrained_gen": {"ir_quality": 0.3, "code_quality": 0.2, "test_pass_rate": 0.5},
    "classification": {"ir_quality": 0.4, "code_quality": 0.4, "test_pass_rate": 0.2},
}
_FALLBACK_WEIGHTS: Mapping[str, float] = {
    "ir_quality": 0.4,
    "code_quality": 0.4,
    "test_pass_rate": 0.2,
}


def _check_route(name: str, route: Any) -> ProviderRoute:
    try:
        return ProviderRoute(route)
    except ValueError:
        allowed = tuple(r.value for r in ProviderRoute)
        raise InputValueError(f"{name} must be one of {allowed}, got {route!r}") from None


def route_cost(
    route: ProviderRoute | str,
    tokens: int,
    duration_ms: float,
    *,
    input_price_per_m: float = 3.0,
    output_price_per_m: float = 15.0,
    input_share: float = 0.5,
    gpu_type: str = "L40S",
    gpu_prices_per_second: Mapping[str, float] | None = None,
) -> float:
    r"""Cost in USD of one request on a route (docs/composite.md#route_cost).

    Parameters
    ----------
    route : ProviderRoute or str
        ``"best_available"`` (per token) or ``"modal_inference"`` (per GPU second).
    tokens : int
        Total tokens of the request (used by the per-token route), ``>= 0``.
    duration_ms : float
        Duration of the request in milliseconds (used by the per-second route), ``>= 0``.
    input_price_per_m, output_price_per_m : float, default 3.0 and 15.0
        API prices in USD per million tokens (default: Claude 3.5 Sonnet's). For a named model use
        :func:`lift_metrics.pricing.cost_usd_for_model` instead.
    input_share : float, default 0.5
        Fraction of ``tokens`` that are input tokens (default: a 50/50 split).
    gpu_type : str, default "L40S"
        Key into ``gpu_prices_per_second``.
    gpu_prices_per_second : mapping, optional
        GPU type -> USD per second; default L40S 0.001, A100 0.002, H100 0.003.

    Returns
    -------
    float
        Cost in USD.

    Raises
    ------
    ValueError
        For an unknown route or GPU type (never priced silently as another GPU),
        negative tokens, durations or prices.

    Notes
    -----
    Per token: :math:`\text{tokens} \cdot (s\,p_{in} + (1 - s)\,p_{out}) / 10^6`.
    Per second: :math:`\text{duration\_ms} / 1000 \cdot p_{gpu}`.

    Examples
    --------
    >>> route_cost("best_available", 1_000, 0.0)  # 1000 * (3 + 15) / 2 / 1e6
    0.009
    >>> route_cost(ProviderRoute.MODAL_INFERENCE, 0, 2_500.0, gpu_type="H100")
    0.0075
    """
    chosen = _check_route("route", route)
    n_tokens = check_int("tokens", tokens, minimum=0)
    duration = check_non_negative("duration_ms", duration_ms)
    if chosen is ProviderRoute.BEST_AVAILABLE:
        p_in = check_non_negative("input_price_per_m", input_price_per_m)
        p_out = check_non_negative("output_price_per_m", output_price_per_m)
        share = check_unit_interval("input_share", input_share)
        from lift_metrics.stats import cost_usd  # numpy: only when a route is priced

        return cost_usd(
            n_tokens,
            n_tokens,
            input_price_per_m=share * p_in,
            output_price_per_m=(1.0 - share) * p_out,
        )
    prices = (
        DEFAULT_GPU_PRICES_PER_SECOND if gpu_prices_per_second is None else gpu_prices_per_second
    )
    if gpu_type not in prices:
        raise InputValueError(f"gpu_type must be one of {sorted(prices)}, got {gpu_type!r}")
    per_second = check_non_negative(f"gpu_prices_per_second[{gpu_type!r}]", prices[gpu_type])
    return duration / 1000.0 * per_second


def route_quality(
    route: ProviderRoute | str,
    task_type: str,
    metrics: Mapping[str, float],
    *,
    task_weights: Mapping[str, Mapping[str, float]] | None = None,
) -> float:
    """Quality of a route on a task type: a task-specific weighted sum (docs/composite.md).

    Parameters
    ----------
    route : ProviderRoute or str
        The route that produced ``metrics`` (validated; the weights depend on the task only,
        as specified).
    task_type : str
        ``"reasoning"``, ``"constrained_gen"``, ``"classification"``, or any other type,
        which gets the default weights 0.4 / 0.4 / 0.2.
    metrics : mapping
        Exactly the keys ``ir_quality``, ``code_quality``, ``test_pass_rate``, each in [0, 1].
    task_weights : mapping, optional
        Task type -> weights over those three keys; replaces the default table.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        For a missing or unknown metric key (never counted as 0),
        values outside [0, 1], or bad weights.

    Notes
    -----
    ======================  ==========  ============  ==============
    task type               ir_quality  code_quality  test_pass_rate
    ======================  ==========  ============  ==============
    reasoning               0.5         0.3           0.2
    constrained_gen         0.3         0.2           0.5
    classification          0.4         0.4           0.2
    (any other)             0.4         0.4           0.2
    ======================  ==========  ============  ==============

    Examples
    --------
    >>> m = {"ir_quality": 1.0, "code_quality": 0.5, "test_pass_rate": 0.0}
    >>> route_quality("best_available", "reasoning", m)  # 0.5 + 0.15 + 0
    0.65
    """
    _check_route("route", route)
    if not isinstance(task_type, str):
        raise InputTypeError(f"task_type must be a str, got {type(task_type).__name__}")
    if not isinstance(metrics, Mapping):
        raise InputTypeError(f"metrics must be a mapping, got {type(metrics).__name__}")
    if set(metrics) != set(_METRIC_KEYS):
        raise InputValueError(
            f"metrics must have exactly the keys {list(_METRIC_KEYS)}, "
            f"got {sorted(map(str, metrics))}"
        )
    values = {key: check_unit_interval(f"metrics[{key!r}]", metrics[key]) for key in _METRIC_KEYS}
    table = DEFAULT_TASK_WEIGHTS if task_weights is None else task_weights
    raw = table.get(task_type, _FALLBACK_WEIGHTS)
    w = normalize_weights(f"task_weights[{task_type!r}]", raw, _FALLBACK_WEIGHTS)
    return min(sum(w[key] * values[key] for key in _METRIC_KEYS), 1.0)


@dataclasses.dataclass(frozen=True)
class RouteSuggestion:
    """Result of :func:`suggest_route_migration`.

    Attributes
    ----------
    route : ProviderRoute or None
        The route to move to; ``None`` when the current route should stay.
    rule : int or None
        The rule number that decided (1-4); ``None`` when no rule fired.
    reason : str
        One sentence with the observed value and the threshold.
    """

    route: ProviderRoute | None
    rule: int | None
    reason: str

    @property
    def migrate(self) -> bool:
        """True when a move to another route is suggested."""
        return self.route is not None


_TASK_METRIC_KEYS = ("quality", "cost_usd", "latency_ms", "requires_schema")


def suggest_route_migration(
    current_route: ProviderRoute | str,
    task_metrics: Mapping[str, Any],
    *,
    quality_floor: float = 0.6,
    cost_ceiling_usd: float = 0.05,
    latency_ceiling_ms: float = 30_000.0,
) -> RouteSuggestion:
    """Suggest a route change from observed quality, cost and latency (docs/composite.md).

    Parameters
    ----------
    current_route : ProviderRoute or str
    task_metrics : mapping
        ``quality`` (in [0, 1]), ``cost_usd`` (per request) and ``latency_ms`` are required;
        ``requires_schema`` (bool, default False) says the task needs schema-constrained
        decoding (XGrammar). Unknown keys are an error (a typo would silently disable a rule).
    quality_floor : float, default 0.6
    cost_ceiling_usd : float, default 0.05
    latency_ceiling_ms : float, default 30000

    Returns
    -------
    RouteSuggestion
        ``route`` (None = stay), the ``rule`` that decided, and the ``reason``.

    Raises
    ------
    ValueError, TypeError
        For an unknown route, missing or unknown keys, or out-of-range values.

    Notes
    -----
    Rules, checked in this order (numbered as specified):

    4. ``requires_schema``: only the self-hosted route offers XGrammar, so the answer is
       ``MODAL_INFERENCE`` (``route=None`` with rule 4 when already there: stay);
    1. on ``MODAL_INFERENCE`` with ``quality < quality_floor``: try ``BEST_AVAILABLE``;
    3. on ``MODAL_INFERENCE`` with ``latency_ms > latency_ceiling_ms``: try ``BEST_AVAILABLE``;
    2. on ``BEST_AVAILABLE`` with ``cost_usd > cost_ceiling_usd``: try ``MODAL_INFERENCE``;
    5. otherwise no change.

    Comparisons are strict, as specified (quality exactly 0.6 stays).

    Examples
    --------
    >>> s = suggest_route_migration("best_available",
    ...     {"quality": 0.9, "cost_usd": 0.08, "latency_ms": 2_000})
    >>> s.route, s.rule
    (<ProviderRoute.MODAL_INFERENCE: 'modal_inference'>, 2)
    >>> s.reason
    'cost $0.0800 per request is above $0.0500 on best_available: try the cheaper self-hosted route'
    """
    current = _check_route("current_route", current_route)
    if not isinstance(task_metrics, Mapping):
        raise InputTypeError(f"task_metrics must be a mapping, got {type(task_metrics).__name__}")
    unknown = set(task_metrics) - set(_TASK_METRIC_KEYS)
    missing = {"quality", "cost_usd", "latency_ms"} - set(task_metrics)
    if unknown or missing:
        raise InputValueError(
            "task_metrics must have the keys ['cost_usd', 'latency_ms', 'quality'] "
            f"and optionally 'requires_schema', got {sorted(map(str, task_metrics))}"
        )
    quality = check_unit_interval("task_metrics['quality']", task_metrics["quality"])
    cost = check_non_negative("task_metrics['cost_usd']", task_metrics["cost_usd"], allow_inf=True)
    latency = check_non_negative(
        "task_metrics['latency_ms']", task_metrics["latency_ms"], allow_inf=True
    )
    requires_schema = task_metrics.get("requires_schema", False)
    if not isinstance(requires_schema, bool):
        raise InputTypeError(
            f"task_metrics['requires_schema'] must be a bool, got {requires_schema!r}"
        )
    floor = check_unit_interval("quality_floor", quality_floor)
    cost_ceiling = check_non_negative("cost_ceiling_usd", cost_ceiling_usd)
    latency_ceiling = check_non_negative("latency_ceiling_ms", latency_ceiling_ms)

    modal, best = ProviderRoute.MODAL_INFERENCE, ProviderRoute.BEST_AVAILABLE
    if requires_schema:
        if current is modal:
            return RouteSuggestion(
                None, 4, "the task requires schema-constrained decoding: stay on modal_inference"
            )
        return RouteSuggestion(
            modal, 4, "the task requires schema-constrained decoding, only modal_inference has it"
        )
    if current is modal:
        if quality < floor:
            return RouteSuggestion(
                best,
                1,
                f"quality {quality:.3f} is below {floor:.3f} on modal_inference: "
                "try the stronger API models",
            )
        if latency > latency_ceiling:
            return RouteSuggestion(
                best,
                3,
                f"latency {latency:.0f} ms is above {latency_ceiling:.0f} ms on modal_inference: "
                "try the faster API route",
            )
    elif cost > cost_ceiling:
        return RouteSuggestion(
            modal,
            2,
            f"cost ${cost:.4f} per request is above ${cost_ceiling:.4f} on best_available: "
            "try the cheaper self-hosted route",
        )
    return RouteSuggestion(None, None, f"no rule fired: stay on {current.value}")
