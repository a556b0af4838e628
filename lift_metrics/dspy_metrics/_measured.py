"""Latency and cost measured around a program, kept outside the prediction's fields.

A prediction's fields are written by the program and, through its output fields, by the LM:
a ``latency_ms`` or ``cost_usd`` field is a claim. A :class:`Measurement` is recorded by the
code that ran the program (its clock, the LM calls' usage and prices) in a table keyed by the
prediction object, which nothing in the prediction can write; :class:`EndToEnd` and
:class:`Aggregate` read latency and cost from here unless told to trust a field.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import threading
import time
import weakref
from typing import Any

from lift_metrics._checks import check_int, check_non_negative
from lift_metrics.errors import InputValueError

#: predictions that cannot be weakly referenced (dicts) are held, most recent first, up to this
_STRONG_LIMIT = 4096

_lock = threading.RLock()  # a weakref callback may run while the lock is held
_weak: dict[int, tuple[weakref.ref[Any], Measurement]] = {}
_strong: collections.OrderedDict[int, tuple[Any, Measurement]] = collections.OrderedDict()


@dataclasses.dataclass(frozen=True)
class Measurement:
    """How long a program took to produce one prediction and what its LM calls cost.

    Attributes
    ----------
    latency_ms : float
        Wall time of the program call in milliseconds.
    cost_usd : float
        Billed cost of the LM calls made during it (cache hits cost 0); NaN when a call had
        no known price.
    lm_calls : int
        Billed LM calls made during it.
    """

    latency_ms: float
    cost_usd: float = 0.0
    lm_calls: int = 0


def record_measurement(
    prediction: Any, *, latency_ms: float, cost_usd: float = 0.0, lm_calls: int = 0
) -> Measurement:
    """Record the measured latency and cost of ``prediction`` (the object a program returned).

    The project's runner and :func:`measured` call this; call it from your own runner when
    you time the program yourself. A later record for the same object replaces the earlier
    one. The record lives as long as the prediction (predictions that cannot be weakly
    referenced, such as dicts, are kept for the 4096 most recent records).

    Parameters
    ----------
    prediction : object
        The prediction, as it will be passed to the metric (the same object).
    latency_ms : float
        Measured wall time in ms, >= 0.
    cost_usd : float, default 0.0
        Measured cost in USD, >= 0, or NaN when some LM call had no known price.
    lm_calls : int, default 0

    Returns
    -------
    Measurement

    Examples
    --------
    >>> import dspy
    >>> prediction = dspy.Prediction(code="...", latency_ms=0.0)  # a claim, not read
    >>> record_measurement(prediction, latency_ms=1250.0, cost_usd=0.002)
    Measurement(latency_ms=1250.0, cost_usd=0.002, lm_calls=0)
    >>> measurement_of(prediction).latency_ms
    1250.0
    """
    if prediction is None:
        raise InputValueError("prediction must be the object the program returned, got None")
    cost = float(cost_usd) if isinstance(cost_usd, int | float) else cost_usd
    if not (isinstance(cost, float) and math.isnan(cost)):
        cost = check_non_negative("cost_usd", cost_usd)
    measurement = Measurement(
        latency_ms=check_non_negative("latency_ms", latency_ms),
        cost_usd=cost,
        lm_calls=check_int("lm_calls", lm_calls, minimum=0),
    )
    key = id(prediction)
    try:
        ref = weakref.ref(prediction, functools.partial(_forget, key))
    except TypeError:  # a dict or another object without weak references
        with _lock:
            _weak.pop(key, None)
            _strong[key] = (prediction, measurement)
            _strong.move_to_end(key)
            while len(_strong) > _STRONG_LIMIT:
                _strong.popitem(last=False)
        return measurement
    with _lock:
        _strong.pop(key, None)
        _weak[key] = (ref, measurement)
    return measurement


def _forget(key: int, _: object = None) -> None:
    with _lock:
        entry = _weak.get(key)
        if entry is not None and entry[0]() is None:
            del _weak[key]


def measurement_of(prediction: Any) -> Measurement | None:
    """Return the :class:`Measurement` recorded for ``prediction`` (None when there is none).

    Only the object itself matches: a copy of the prediction, or another prediction with
    equal fields, has no measurement.
    """
    key = id(prediction)
    with _lock:
        weak = _weak.get(key)
        if weak is not None and weak[0]() is prediction:
            return weak[1]
        strong = _strong.get(key)
        if strong is not None and strong[0] is prediction:
            return strong[1]
    return None


_wrapper: list[type] = []


def measured(program: Any) -> Any:
    """Return ``program`` wrapped so that each call records a :class:`Measurement`.

    The wrapper is a ``dspy.Module`` whose ``forward`` calls ``program`` with the same
    arguments, times the call and adds up the billed usage of its LM calls (DSPy's usage
    tracker: tokens priced with litellm's offline price table, or the provider's reported
    cost; cache hits cost nothing), then records both for the prediction it returns
    (:func:`record_measurement`). Evaluate and optimize the wrapper: its predictors are the
    program's (named ``program.<name>``), and ``wrapper.program`` is the program itself.

    Parameters
    ----------
    program : dspy.Module
        Any DSPy program.

    Returns
    -------
    dspy.Module

    Examples
    --------
    >>> import dspy
    >>> from dspy.utils import DummyLM
    >>> program = measured(dspy.Predict("question -> answer"))
    >>> with dspy.context(lm=DummyLM([{"answer": "4"}])):
    ...     out = program(question="2+2?")
    >>> out.answer, measurement_of(out).latency_ms >= 0
    ('4', True)
    """
    return _wrapper_class()(program)


def _wrapper_class() -> type:
    with _lock:
        if _wrapper:
            return _wrapper[0]
        import dspy
        from dspy.dsp.utils.settings import settings

        class Measured(dspy.Module):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
            """A program whose calls record their latency and cost (:func:`measured`)."""

            def __init__(self, program: Any) -> None:
                super().__init__()
                self.program = program

            def forward(self, *args: Any, **kwargs: Any) -> Any:
                from lift_metrics._usage import UsageRecorder

                recorder = UsageRecorder(parent=settings.usage_tracker)
                started = time.perf_counter()
                with settings.context(usage_tracker=recorder):
                    prediction = self.program(*args, **kwargs)
                latency_ms = (time.perf_counter() - started) * 1000.0
                usage = recorder.totals()
                if prediction is not None:
                    record_measurement(
                        prediction,
                        latency_ms=latency_ms,
                        cost_usd=usage.cost_usd,
                        lm_calls=usage.lm_calls,
                    )
                return prediction

        _wrapper.append(Measured)
        return Measured
