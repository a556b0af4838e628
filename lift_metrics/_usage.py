"""Counting LM calls, tokens and dollars across DSPy's threads, and stopping at a budget.

DSPy records the usage of every billed (non-cached) LM call into ``settings.usage_tracker``.
Its own tracker is deep-copied into each worker thread of ``dspy.Evaluate`` and the optimizers
(so counts made in threads are lost to the caller). :class:`UsageMeter` is shared instead: its
``__deepcopy__`` returns itself and a lock guards its totals, so one meter sees every call of a
run, whatever thread makes it. :class:`UsageRecorder` counts one example's calls and forwards
them to the meter above it.

A budget is checked *before* each LM call (a DSPy callback's ``on_lm_start``); when a cap is
reached the call raises :class:`BudgetExceeded`. The check also reserves the call, atomically:
calls that are running count against every cap until they end (a cache hit or a failed call
gives its place back), so no number of threads racing for the last calls can make one call more
than the budget allows. A running call counts as one call and, against the token and dollar
caps, as the largest call billed so far; while no call is billed yet, a run with a token or
dollar cap makes one call at a time. So the calls let through are those a run making one call
at a time would make, however the calls overlap, as long as no call is larger than every call
before it (such a call can take an overlapping run past the cap by the difference; a run making
one call at a time is never stopped later than the first call that reaches a cap).
:class:`BudgetExceeded` derives from ``BaseException`` on purpose:
DSPy catches ``Exception`` in its thread pools, adapters and optimizers (counting it as a
failed example), and a budget stop must cut through all of them to the runner, which then
saves what it has.

Prices: a model that litellm's price table does not list is never priced at 0. Its calls cost
NaN and are counted in ``unpriced_calls``; a dollar budget is refused at start-up for such a
model (:func:`check_budget_prices`) and stops the run at the first unpriced call that slips
through (docs/decisions.md#unknown-prices). Token and call budgets work for every model.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import math
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lift_metrics._checks import check_int, check_positive
from lift_metrics._records import PlainRecord, short_repr
from lift_metrics.errors import BudgetExceeded as BudgetExceeded, InputValueError
from lift_metrics.pricing import offline_litellm

__all__ = [
    "Budget",
    "BudgetExceeded",
    "UsageMeter",
    "UsageRecorder",
    "UsageTotals",
    "budget_callback",
    "call_cost_usd",
    "check_budget_prices",
    "is_priced",
]

_FREE_MODEL_PREFIXES = ("local/", "dummy")

# The LM call this thread (context) reserved and has not yet billed; DSPy bills a call with
# ``add_usage`` on the thread that runs it, between the callback's start and end.
_RESERVED_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lift_metrics_reserved_lm_call", default=None
)


@dataclass(frozen=True)
class Budget(PlainRecord):
    """Caps on a run's billed LM usage; ``None`` means no cap.

    Parameters
    ----------
    max_lm_calls : int or None
        Most billed LM calls (cache hits are free and not counted).
    max_tokens : int or None
        Most billed tokens (prompt + completion).
    max_cost_usd : float or None
        Most dollars, priced by litellm's cost table (the local model costs 0). A model
        without a known price cannot be held to it: see :func:`check_budget_prices`.

    Examples
    --------
    >>> Budget(max_lm_calls=100)
    Budget(max_lm_calls=100)
    >>> Budget().is_unlimited
    True
    """

    max_lm_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_lm_calls is not None:
            check_int("max_lm_calls", self.max_lm_calls, minimum=1)
        if self.max_tokens is not None:
            check_int("max_tokens", self.max_tokens, minimum=1)
        if self.max_cost_usd is not None:
            object.__setattr__(
                self, "max_cost_usd", check_positive("max_cost_usd", self.max_cost_usd)
            )

    def __repr__(self) -> str:
        parts = [f"{name}={value!r}" for name, value in self.to_dict().items() if value is not None]
        return f"Budget({', '.join(parts)})"

    @property
    def is_unlimited(self) -> bool:
        """True when no cap is set."""
        return self.max_lm_calls is None and self.max_tokens is None and self.max_cost_usd is None

    def exceeded_by(self, totals: UsageTotals) -> str | None:
        """Return the first cap ``totals`` has reached, as a sentence; ``None`` when within budget.

        Examples
        --------
        >>> Budget(max_lm_calls=2).exceeded_by(UsageTotals(lm_calls=2))
        'the budget of 2 LM calls is spent (2 calls made)'
        >>> Budget(max_lm_calls=2).exceeded_by(UsageTotals(lm_calls=1)) is None
        True
        >>> Budget(max_cost_usd=1.0).exceeded_by(UsageTotals(lm_calls=1, unpriced_calls=1))
        'the dollar budget cannot be enforced: 1 LM call had no known price'
        """
        if self.max_lm_calls is not None and totals.lm_calls >= self.max_lm_calls:
            return (
                f"the budget of {self.max_lm_calls} LM calls is spent "
                f"({totals.lm_calls} calls made)"
            )
        if self.max_tokens is not None and totals.total_tokens >= self.max_tokens:
            return (
                f"the budget of {self.max_tokens} tokens is spent "
                f"({totals.total_tokens} tokens used)"
            )
        if self.max_cost_usd is not None and totals.unpriced_calls:
            calls = "call" if totals.unpriced_calls == 1 else "calls"
            return (
                f"the dollar budget cannot be enforced: {totals.unpriced_calls} LM {calls} "
                "had no known price"
            )
        if self.max_cost_usd is not None and totals.cost_usd >= self.max_cost_usd:
            return f"the budget of ${self.max_cost_usd:g} is spent (${totals.cost_usd:.4f} used)"
        return None


@dataclass(frozen=True)
class UsageTotals(PlainRecord):
    """Billed LM usage: calls, tokens and dollars (cache hits count zero).

    ``cost_usd`` is NaN when any of the calls (``unpriced_calls`` of them) had no known price.
    """

    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    def __repr__(self) -> str:
        return short_repr(self, "lm_calls total_tokens cost_usd:.4g")


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


@functools.cache
def _listed(model: str) -> bool:
    """Whether litellm's price table prices ``model`` (probed once per model).

    Litellm prints a provider list for an unknown provider, which is kept off the caller's stdout.
    """
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            offline_litellm().cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
        except Exception:  # litellm raises for a model it does not know
            return False
    return True


def call_cost_usd(model: str, usage: Mapping[str, Any]) -> float:
    """Dollar cost of one LM call from its usage entry.

    Parameters
    ----------
    model : str
        The DSPy model string (``"openai/gpt-4o-mini"``).
    usage : mapping
        The call's usage: ``prompt_tokens``, ``completion_tokens`` and, when the provider
        reports it, ``cost``.

    Returns
    -------
    float
        A provider-reported ``cost`` when present; otherwise litellm's price table applied to
        the token counts; 0.0 for the local model, DSPy's ``DummyLM`` and a call without
        tokens; NaN for a model litellm does not know (never 0: the sum of a run's costs then
        shows the gap instead of understating it, docs/decisions.md#unknown-prices).

    Examples
    --------
    >>> call_cost_usd("local/SmolLM2", {"prompt_tokens": 100, "completion_tokens": 20})
    0.0
    >>> call_cost_usd("openai/x", {"prompt_tokens": 1, "cost": 0.25})
    0.25
    >>> call_cost_usd("acme/unlisted-model", {"prompt_tokens": 100, "completion_tokens": 20})
    nan
    """
    reported = usage.get("cost")
    if isinstance(reported, int | float) and not isinstance(reported, bool):
        return float(reported)
    if model.startswith(_FREE_MODEL_PREFIXES):
        return 0.0
    prompt, completion = (
        _as_int(usage.get("prompt_tokens")),
        _as_int(usage.get("completion_tokens")),
    )
    if prompt == 0 and completion == 0:
        return 0.0
    if not _listed(model):
        return math.nan
    try:
        prompt_usd, completion_usd = offline_litellm().cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
    except Exception:  # unknown model: litellm raises; its price is unknown, not 0
        return math.nan
    return float(prompt_usd) + float(completion_usd)


def is_priced(model: str) -> bool:
    """Whether calls of ``model`` can be priced.

    The local model, ``DummyLM`` or a model in litellm's price table.

    Examples
    --------
    >>> is_priced("local/SmolLM2"), is_priced("acme/unlisted-model")
    (True, False)
    """
    return not math.isnan(call_cost_usd(model, {"prompt_tokens": 1, "completion_tokens": 1}))


def check_budget_prices(budget: Budget, models: Iterable[str]) -> None:
    """Refuse a dollar budget that cannot be enforced because a model has no known price.

    Parameters
    ----------
    budget : Budget
        The run's budget; nothing is checked without ``max_cost_usd``.
    models : iterable of str
        The DSPy model strings of the run's LMs.

    Raises
    ------
    ValueError
        When ``max_cost_usd`` is set and one of ``models`` has no known price.

    Examples
    --------
    >>> check_budget_prices(Budget(max_cost_usd=1.0), ["local/SmolLM2"])
    >>> check_budget_prices(Budget(max_tokens=10), ["acme/unlisted-model"])
    >>> check_budget_prices(Budget(max_cost_usd=1.0), ["acme/unlisted-model"])
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: max_cost_usd is set but model 'acme/unlisted-model' ...
    """
    if budget.max_cost_usd is None:
        return
    for model in models:
        if not is_priced(model):
            raise InputValueError(
                f"max_cost_usd is set but model {model!r} has no known price (litellm's price "
                "table does not list it); cap the run with max_tokens or max_lm_calls instead"
            )


class UsageMeter:
    """Thread-safe usage totals of a whole run, installed as DSPy's ``usage_tracker``.

    DSPy calls :meth:`add_usage` once per billed LM call. The meter is shared with every
    thread DSPy starts (``copy.deepcopy`` returns the meter itself).

    Examples
    --------
    >>> meter = UsageMeter()
    >>> meter.add_usage("local/m", {"prompt_tokens": 10, "completion_tokens": 5})
    >>> meter.totals()
    UsageTotals(lm_calls=1, total_tokens=15, cost_usd=0)
    """

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget if budget is not None else Budget()
        self.usage_data: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
        self._lock = threading.Condition()  # notified when a reserved call ends
        self._calls = 0
        self._prompt = 0
        self._completion = 0
        self._total = 0
        self._cost = 0.0
        self._unpriced = 0
        self._running: set[str] = set()  # reserved calls not yet billed or ended
        # the largest billed call so far: what a running call holds of the token/dollar caps
        self._largest_tokens = 0
        self._largest_cost = 0.0
        self.stop_reason: str | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> UsageMeter:
        return self  # shared across DSPy's worker threads on purpose

    def add_usage(self, lm: str, usage_entry: Mapping[str, Any]) -> None:
        """Record one billed call of model ``lm`` (DSPy's tracker protocol)."""
        entry = dict(usage_entry)
        prompt = _as_int(entry.get("prompt_tokens"))
        completion = _as_int(entry.get("completion_tokens"))
        total = _as_int(entry.get("total_tokens")) or prompt + completion
        cost = call_cost_usd(lm, entry)
        call = _RESERVED_CALL.get()
        with self._lock:
            self._running.discard(call)  # a reserved call is now billed: counted once
            self._calls += 1
            self._prompt += prompt
            self._completion += completion
            self._total += total
            self._largest_tokens = max(self._largest_tokens, total)
            if math.isnan(cost):
                self._unpriced += 1
            else:
                self._largest_cost = max(self._largest_cost, cost)
            self._cost += cost
            self._lock.notify_all()
            if entry:
                self.usage_data[lm].append(entry)

    def get_total_tokens(self) -> dict[str, dict[str, Any]]:
        """Usage summed per model (DSPy's tracker protocol)."""
        with self._lock:
            data = {lm: list(entries) for lm, entries in self.usage_data.items()}
        out: dict[str, dict[str, Any]] = {}
        for lm, entries in data.items():
            summed: dict[str, Any] = {}
            for entry in entries:
                for key, value in entry.items():
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        summed[key] = summed.get(key, 0) + value
            out[lm] = summed
        return out

    def totals(self) -> UsageTotals:
        """Return a snapshot of the billed usage so far."""
        with self._lock:
            return UsageTotals(
                lm_calls=self._calls,
                prompt_tokens=self._prompt,
                completion_tokens=self._completion,
                total_tokens=self._total,
                cost_usd=self._cost,
                unpriced_calls=self._unpriced,
            )

    def settle(self, timeout_s: float = 10.0) -> None:
        """Wait, at most ``timeout_s`` seconds, until no reserved call is still running.

        A run reads its totals after this: a call let through before the budget stopped the
        run is billed (or given back) by then, so the totals count the calls the stop counted.
        """
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                if not self._running:
                    return
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` when a cap is reached (and remember why)."""
        with self._lock:
            self._refuse_if_spent(self._calls)

    def reserve(self, call_id: str) -> None:
        """Check the budget for one more LM call and hold its place, atomically.

        Raises :class:`BudgetExceeded` when a cap is reached, counting the calls reserved and
        still running as made: each as one call and, against ``max_tokens`` and
        ``max_cost_usd``, as the largest call billed so far. However many threads ask at once,
        at most ``max_lm_calls`` calls are let through, and as many calls as a run making
        one call at a time would make under the token and dollar caps (when no call is
        larger than those before it). With a token or dollar cap and no call billed yet, a
        call waits here until the running one has ended: the first bill gives a call's size.
        The place is given back by :meth:`release` (the call ended without being billed: a
        cache hit, an error) or taken by :meth:`add_usage` (billed) on the thread (context)
        that reserved it.
        """
        with self._lock:
            sized = self.budget.max_tokens is None and self.budget.max_cost_usd is None
            while not sized and self._running and self._calls == 0 and self.stop_reason is None:
                self._lock.wait()
            self._refuse_if_spent(self._calls + len(self._running), len(self._running))
            self._running.add(call_id)
        _RESERVED_CALL.set(call_id)

    def release(self, call_id: str) -> None:
        """Give back the place of a reserved call that ended (see :meth:`reserve`)."""
        with self._lock:
            self._running.discard(call_id)
            self._lock.notify_all()
        if _RESERVED_CALL.get() == call_id:
            _RESERVED_CALL.set(None)

    def _refuse_if_spent(self, calls: int, running: int = 0) -> None:
        """Raise :class:`BudgetExceeded` if the budget is spent (lock held).

        ``calls`` counts the calls made and running; the ``running`` ones hold the size of the
        largest billed call against the token and dollar caps.
        """
        if self.stop_reason is None:
            totals = UsageTotals(
                lm_calls=calls,
                prompt_tokens=self._prompt,
                completion_tokens=self._completion,
                total_tokens=self._total + running * self._largest_tokens,
                cost_usd=self._cost + running * self._largest_cost,
                unpriced_calls=self._unpriced,
            )
            reason = self.budget.exceeded_by(totals)
            if reason is None:
                return
            self.stop_reason = reason
        raise BudgetExceeded(self.stop_reason)


class UsageRecorder(UsageMeter):
    """Usage of one unit of work (one example), forwarded to the tracker that was active.

    Examples
    --------
    >>> run = UsageMeter()
    >>> one = UsageRecorder(parent=run)
    >>> one.add_usage("local/m", {"prompt_tokens": 3, "completion_tokens": 4})
    >>> one.totals().total_tokens, run.totals().total_tokens
    (7, 7)
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__()
        self.parent = parent

    def add_usage(self, lm: str, usage_entry: Mapping[str, Any]) -> None:
        """Record the call here and in the parent tracker."""
        super().add_usage(lm, usage_entry)
        if self.parent is not None:
            self.parent.add_usage(lm, usage_entry)


def budget_callback(meter: UsageMeter) -> Any:
    """Return a DSPy callback that checks ``meter``'s budget before every LM call.

    Returns
    -------
    dspy.utils.callback.BaseCallback
        Pass it in ``dspy.context(callbacks=[...])``; ``on_lm_start`` reserves the call
        (:meth:`UsageMeter.reserve`) or raises :class:`BudgetExceeded` (which DSPy's callback
        runner does not swallow: it catches ``Exception`` only); ``on_lm_end`` gives back the
        place of a call that was not billed.
    """
    from dspy.utils.callback import BaseCallback

    class _BudgetCallback(BaseCallback):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
        def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            meter.reserve(call_id)

        def on_lm_end(
            self, call_id: str, outputs: Any | None, exception: BaseException | None = None
        ) -> None:
            meter.release(call_id)

    return _BudgetCallback()
