"""Reading fields of DSPy examples and predictions; the errors that say why one is unusable."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from lift_metrics._checks import check_method
from lift_metrics._test_cases import as_test_cases
from lift_metrics.errors import InputValueError

logger = logging.getLogger(__name__)

_MISSING = object()

_T = TypeVar("_T")


class _ExampleError(InputValueError):
    """A caller's mistake, raised, never scored 0.

    An example (the reference side) that cannot be used, or a metric whose core gives no
    score in [0, 1].
    """


def _safe_str(value: Any, show: Callable[[Any], str] = str, limit: int = 200) -> str:
    """``show(value)`` (``str`` or ``repr``) shortened, or a placeholder when it fails."""
    try:
        text = show(value)
    except Exception:
        return f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _PartFailedError(Exception):
    """A part of the prediction could not be scored; the message is the reason."""


def _score_part(
    part: str, compute: Callable[[], _T], *, core: str | None, log: str
) -> tuple[_T | None, str | None]:
    """Return ``(compute(), None)``, or ``(None, reason)`` when the part scores 0.

    A :class:`_PartFailedError` is a bad prediction: its message is the reason. Any other
    exception is logged as ``log`` and named in the reason, after ``core`` (the scoring
    function that raised) where given. A sandbox that cannot run at all
    (:class:`lift_metrics.sandbox.SandboxUnavailableError`) raises: the score cannot be
    computed, and a 0 would hide a broken machine.
    """
    try:
        return compute(), None
    except _PartFailedError as exc:
        return None, f"{part}: scored 0 because {exc}"
    except Exception as exc:
        from lift_metrics.errors import SandboxUnavailableError

        if isinstance(exc, SandboxUnavailableError):
            raise
        logger.warning(log, exc_info=True)
        raised = f"{core} raised " if core else ""
        return None, f"{part}: scored 0 because {raised}{type(exc).__name__}: {exc}"


def _check_field(name: str, value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.isidentifier():
        allowed = "a Python identifier" + (" or None" if optional else "")
        raise InputValueError(f"{name} must be {allowed} naming a field, got {value!r}")
    return value


def _check_embedder(embedder: _T) -> _T:
    if embedder is not None:
        check_method("embedder", embedder, "embed", wanted="have an embed(texts) method")
    return embedder


def _check_sandbox(sandbox: _T) -> _T:
    if sandbox is not None:
        check_method("sandbox", sandbox, "run_tests", wanted="have a run_tests method")
    return sandbox


def _fields_of(obj: Any) -> list[str]:
    try:
        if isinstance(obj, Mapping):
            return sorted(map(str, obj))
        keys = getattr(obj, "keys", None)
        if callable(keys):
            return sorted(map(str, keys()))
        if hasattr(obj, "__dict__"):
            return sorted(k for k in vars(obj) if not k.startswith("_"))
    except Exception:  # an odd object; the field list is only for the message
        pass
    return []


def _inputs_of(example: Any) -> dict[str, Any]:
    """Return a ``dspy.Example``'s input fields (all without ``with_inputs``) as a dict."""
    if isinstance(example, Mapping):
        return {str(k): v for k, v in example.items()}
    if getattr(example, "_input_keys", None):
        example = example.inputs()
    to_dict = getattr(example, "toDict", None)
    if callable(to_dict):
        return dict(to_dict())
    return {k: v for k, v in vars(example).items() if not k.startswith("_")}


def _read(obj: Any, field: str) -> Any:
    """Value of ``field`` in a dspy.Example/Prediction, a mapping or an object; else _MISSING.

    Containers (``dspy.Example`` supports ``in`` and ``[]``) are read by key first, so that a
    field called ``keys`` or ``copy`` is not confused with the method of that name.
    """
    if obj is None:
        return _MISSING
    try:
        if isinstance(obj, Mapping):
            return obj.get(field, _MISSING)
        if hasattr(obj, "__contains__") and hasattr(obj, "__getitem__"):
            return obj[field] if field in obj else _MISSING  # noqa: SIM401 (no .get on Example)
        return getattr(obj, field)
    except Exception:  # a prediction whose field access raises is a bad prediction
        return _MISSING


def _example_field(metric: str, example: Any, field: str) -> Any:
    value = _read(example, field)
    if value is _MISSING:
        raise _ExampleError(
            f"{metric}: the example has no field {field!r} (its fields: {_fields_of(example)}); "
            f"pass the right field name to {metric}(...)"
        )
    return value


def _prediction_field(prediction: Any, field: str) -> Any:
    if prediction is None:
        raise _PartFailedError("the prediction is None")
    value = _read(prediction, field)
    if value is _MISSING:
        raise _PartFailedError(
            f"the prediction has no field {field!r} (its fields: {_fields_of(prediction)})"
        )
    if value is None:
        raise _PartFailedError(f"prediction.{field} is None")
    return value


def _counted(result: Any, passed: str, total: str) -> bool | None:
    """Return whether ``result.<passed>`` reaches ``result.<total>`` (None: a total of none)."""
    count = getattr(result, total, None)
    if not isinstance(count, int) or isinstance(count, bool) or count == 0:
        return None
    return bool(getattr(result, passed, 0) >= count)


def _both(*verdicts: bool | None) -> bool | None:
    """Return False when a verdict is False, True when one is True, else None."""
    if False in verdicts:
        return False
    return True if True in verdicts else None


def _agreed_everywhere(result: Any) -> bool | None:
    """Return whether the code returned what the reference returns on every generated input.

    None when nothing was compared (no runnable reference, or a profile without the check).
    """
    return _counted(result, "behaviour_agreed", "behaviour_total")


def _all_tests_passed(result: Any) -> bool | None:
    """Return whether a result passed every test and agreed on every generated input.

    The generated inputs on which the code was compared with the reference
    (``behaviour_agreed``/``behaviour_total``) count as tests: code that returns another
    value than the reference on one of them is wrong there, whatever the given tests say (a
    table of the given tests' answers passes them all). None when the result counts neither.
    """
    return _both(_counted(result, "tests_passed", "tests_total"), _agreed_everywhere(result))


def _as_tests(metric: str, value: Any) -> list[tuple[dict[str, Any], Any]] | str:
    """Convert data-file tests ``{"inputs": ..., "expected": ...}`` to ``(kwargs, expected)``."""
    if value is not None and not isinstance(value, str | Sequence):
        raise _ExampleError(
            f"{metric}: tests must be a list or a check script, got {type(value).__name__}"
        )
    try:
        return as_test_cases(value, exact_keys=True)
    except InputValueError as exc:  # a case of another shape: the example's fault
        raise _ExampleError(f"{metric}: {exc}") from None


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number_field(prediction: Any, field: str, unit: str) -> tuple[float, str | None]:
    """Return a non-negative number from the prediction, or (inf, reason) when it is not one."""
    try:
        value = _prediction_field(prediction, field)
    except _PartFailedError as exc:
        return math.inf, str(exc)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return (
            math.inf,
            f"prediction.{field} is {_short(_safe_str(value, repr), 40)}, not a number of {unit}",
        )
    try:
        number = float(value)
    except OverflowError:
        return (
            math.inf,
            f"prediction.{field} is an int too large for a float, not a number of {unit}",
        )
    if math.isinf(number):
        return math.inf, f"prediction.{field} is {number}, not a finite number of {unit}"
    if math.isnan(number) or number < 0:
        return (
            math.inf,
            f"prediction.{field} is {number}, not a non-negative number of {unit}",
        )
    return number, None
