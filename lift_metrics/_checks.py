"""Argument validation shared by the whole package.

Every public function validates its arguments at the door with these helpers, so that an
error always names the parameter, what was allowed, and what arrived. They raise the input
errors of :mod:`lift_metrics.errors` (``InputTypeError``, ``InputValueError``; docs/errors.md).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics.errors import InputTypeError, InputValueError


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_real(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float; reject bools, non-numbers and NaN (and inf unless allowed)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputTypeError(
            f"{name} must be a real number, got {type(value).__name__} {_show(value)}"
        )
    try:
        result = float(value)
    except OverflowError:  # an int beyond float's range (10**400)
        raise InputValueError(
            f"{name} must be finite, got an integer too large for a float"
        ) from None
    if math.isnan(result):
        raise InputValueError(f"{name} must not be NaN")
    if math.isinf(result) and not allow_inf:
        raise InputValueError(f"{name} must be finite, got {result}")
    return result


def check_bool(name: str, value: Any) -> bool:
    """Return ``value``, requiring ``True`` or ``False`` (not 0, 1 or None)."""
    if not isinstance(value, bool):
        raise InputTypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_non_negative(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, requiring ``value >= 0``."""
    result = check_real(name, value, allow_inf=allow_inf)
    if result < 0:
        raise InputValueError(f"{name} must be >= 0, got {_show(value)}")
    return result


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, requiring ``value > 0``."""
    result = check_real(name, value, allow_inf=allow_inf)
    if result <= 0:
        raise InputValueError(f"{name} must be > 0, got {_show(value)}")
    return result


def check_timeout(timeout_s: Any) -> float | None:
    """Validate a per-execution timeout in seconds (``None`` means the sandbox default)."""
    return None if timeout_s is None else check_positive("timeout_s", timeout_s)


def check_unit_interval(name: str, value: Any) -> float:
    """Return ``value`` as a float, requiring ``0 <= value <= 1``."""
    result = check_real(name, value)
    if not 0.0 <= result <= 1.0:
        raise InputValueError(f"{name} must be in [0, 1], got {_show(value)}")
    return result


def check_int(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Return ``value`` as an int (bools rejected), optionally within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputTypeError(
            f"{name} must be an integer, got {type(value).__name__} {_show(value)}"
        )
    result = int(value)
    if minimum is not None and result < minimum:
        raise InputValueError(f"{name} must be >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise InputValueError(f"{name} must be <= {maximum:,}, got {result:,}")
    return result


def check_choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``."""
    options = tuple(allowed)
    if value not in options:
        raise InputValueError(f"{name} must be one of {options}, got {_show(value)}")
    return str(value)


def check_confidence_level(confidence_level: Any) -> float:
    """Validate a confidence level: a real number strictly between 0 and 1.

    Parameters
    ----------
    confidence_level : Any
        The value to check.

    Returns
    -------
    float
        The level as a float.

    Raises
    ------
    TypeError
        If it is not a real number.
    ValueError
        If it is not strictly between 0 and 1.

    Examples
    --------
    >>> check_confidence_level(0.95)
    0.95
    >>> check_confidence_level(1)
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: confidence_level must be in (0, 1), got 1
    """
    level = check_real("confidence_level", confidence_level)
    if not 0.0 < level < 1.0:
        raise InputValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    return level


def check_similarity_floor(value: object) -> float:
    """Validate a ``similarity_floor`` option: a real number in [0, 1).

    Parameters
    ----------
    value : object
        The option as given.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is outside [0, 1).

    Examples
    --------
    >>> check_similarity_floor(0.44)
    0.44
    """
    floor = check_real("similarity_floor", value)
    if not 0.0 <= floor < 1.0:
        raise InputValueError(f"similarity_floor must be in [0, 1), got {floor!r}")
    return floor


def check_stub_cap(value: Any) -> float | None:
    """Validate a ``stub_cap`` option: ``None`` or a real number in [0, 1].

    Parameters
    ----------
    value : object
        The option as given.

    Returns
    -------
    float or None

    Raises
    ------
    TypeError, ValueError
        If ``value`` is not None or a number in [0, 1].

    Examples
    --------
    >>> check_stub_cap(0.1), check_stub_cap(None)
    (0.1, None)
    """
    if value is None:
        return None
    cap = check_real("stub_cap", value)
    if not 0.0 <= cap <= 1.0:
        raise InputValueError(f"stub_cap must be None or a number in [0, 1], got {value!r}")
    return cap


def check_wrong_answer_gate(value: Any) -> bool:
    """Validate a ``wrong_answer_gate`` option: True or False.

    Parameters
    ----------
    value : object

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``value`` is not a bool.

    Examples
    --------
    >>> check_wrong_answer_gate(True)
    True
    """
    return check_bool("wrong_answer_gate", value)


def check_method(name: str, value: Any, method: str, *, wanted: str) -> Any:
    """Return ``value`` if it has a callable attribute ``method``.

    Otherwise raise an :class:`~lift_metrics.errors.InputTypeError` that reads
    ``"{name} must {wanted}, got {type name}"``: how an object given for a protocol (an
    embedder, a sandbox) is checked at the door.

    Examples
    --------
    >>> check_method("embedder", 3, "embed", wanted="have an embed(texts) method")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputTypeError: embedder must have an embed(texts) method, got int
    """
    if not callable(getattr(value, method, None)):
        raise InputTypeError(f"{name} must {wanted}, got {type(value).__name__}")
    return value


def check_iterable(name: str, value: Any, *, of: str = "values") -> Iterable[Any]:
    """Return ``value`` if it can be iterated as a collection of ``of``.

    ``None``, a number, a string, bytes or a mapping given where a sequence of records,
    items or values belongs raise an :class:`~lift_metrics.errors.InputTypeError` that names
    the parameter (iterating over them would raise a bare ``TypeError``, or walk the
    characters of a string or the keys of a mapping).

    Examples
    --------
    >>> check_iterable("records", None, of="run records")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputTypeError: records must be an iterable of run records, got NoneType
    """
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InputTypeError(f"{name} must be an iterable of {of}, got {type(value).__name__}")
    return value


def check_path(name: str, value: Any) -> Path:
    """Return ``value`` as a :class:`~pathlib.Path` if it is a ``str`` or ``os.PathLike``.

    ``None`` or another type raise an :class:`~lift_metrics.errors.InputTypeError` naming the
    parameter (``open(None)`` would raise a bare ``TypeError``); an empty string is refused
    too (it would mean the current directory).

    Examples
    --------
    >>> check_path("path", None)
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputTypeError: path must be a file path (str or os.PathLike), got NoneType
    """
    if not isinstance(value, str | os.PathLike) or isinstance(os.fspath(value), bytes):
        raise InputTypeError(
            f"{name} must be a file path (str or os.PathLike), got {type(value).__name__}"
        )
    if not os.fspath(value):
        raise InputValueError(f"{name} must be a file path, got ''")
    return Path(value)


def as_float_array(
    name: str, values: Any, *, allow_empty: bool = False, allow_inf: bool = False
) -> npt.NDArray[np.float64]:
    """Return ``values`` as a 1-D float64 array; reject empty input, NaN and (by default) inf."""
    if isinstance(values, str | bytes | Mapping):
        raise InputTypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    try:
        array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
    except TypeError as exc:
        raise InputTypeError(f"{name} must be a sequence of numbers, got {_show(values)}") from exc
    except ValueError as exc:  # ragged nesting: numpy cannot make an array of it
        raise InputValueError(f"{name} must be a sequence of numbers, got {_show(values)}") from exc
    if array.dtype.kind == "O" and array.ndim == 1:
        for index, value in enumerate(array):  # ints beyond 64 bits make an object array
            if isinstance(value, int) and not isinstance(value, bool):
                try:
                    float(value)
                except OverflowError:
                    raise InputValueError(
                        f"{name} must be finite, got an integer too large for a float at "
                        f"index {index}"
                    ) from None
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise InputTypeError(f"{name} must contain only real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64, copy=False)
    if array.ndim != 1:
        raise InputValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0 and not allow_empty:
        raise InputValueError(f"{name} must not be empty")
    if np.isnan(array).any():
        raise InputValueError(
            f"{name} must not contain NaN (at index {int(np.isnan(array).argmax())})"
        )
    if not allow_inf and np.isinf(array).any():
        raise InputValueError(
            f"{name} must be finite (inf at index {int(np.isinf(array).argmax())})"
        )
    return array


def normalize_weights(
    name: str, weights: Mapping[str, Any] | None, defaults: Mapping[str, float]
) -> dict[str, float]:
    """Validate a weight mapping against the default keys and rescale it to sum to 1.

    ``None`` means the defaults. Missing keys are an error (a partial mapping is ambiguous);
    unknown keys are an error; weights must be finite, non-negative and sum to a positive number.
    """
    if weights is None:
        weights = defaults
    if not isinstance(weights, Mapping):
        raise InputTypeError(
            f"{name} must be a mapping of component -> weight, got {_show(weights)}"
        )
    expected = set(defaults)
    unknown = set(weights) - expected
    missing = expected - set(weights)
    if unknown or missing:
        raise InputValueError(
            f"{name} must have exactly the keys {sorted(expected)}, got {sorted(map(str, weights))}"
        )
    values = {key: check_non_negative(f"{name}[{key!r}]", weights[key]) for key in defaults}
    total = sum(values.values())
    if total <= 0:
        raise InputValueError(f"{name} must sum to a positive number, got {dict(weights)}")
    return {key: value / total for key, value in values.items()}


def check_importable(importable: Any) -> tuple[str, ...]:
    """Return ``importable`` as a tuple of distinct top-level module names.

    Raises
    ------
    TypeError
        ``importable`` is a string, or not a sequence of strings.
    ValueError
        A name is not an identifier (``"numpy"``, not ``"numpy.linalg"``), or is
        ``"lift_metrics"``.
    """
    if isinstance(importable, str | bytes) or not isinstance(importable, Sequence):
        raise InputTypeError(
            "importable must be a sequence of top-level module names such as ['numpy'], "
            f"got {type(importable).__name__} {importable!r:.80}"
        )
    for name in importable:
        if not isinstance(name, str):
            raise InputTypeError(
                f"importable must hold module names (str), got {type(name).__name__} {name!r:.80}"
            )
        if not name.isidentifier():
            raise InputValueError(
                "importable must hold top-level module names (identifiers such as 'numpy', "
                f"no dots), got {name!r:.80}"
            )
        if name == "lift_metrics":
            raise InputValueError(
                "importable must not name lift_metrics (its shipped datasets hold the tasks' "
                "expected values), got 'lift_metrics'"
            )
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise InputValueError(
                f"importable must name modules this interpreter can import; it finds no {name!r}"
            )
    return tuple(dict.fromkeys(importable))


def score_value(result: Any) -> tuple[float | None, str | None]:
    """Turn what a metric returned into ``(score, None)`` or ``(None, why it is missing)``.

    Accepted: a real number, a bool (1.0/0.0), an object with a ``score`` attribute
    (``dspy.Prediction(score=...)``, a breakdown, a judge's prediction) or one that supports
    ``float()``. ``None``, NaN and anything else are missing; an object's ``missing``
    attribute, when it is a str, is used as the reason.

    Examples
    --------
    >>> score_value(0.25), score_value(True), score_value(None)
    ((0.25, None), (1.0, None), (None, 'the metric returned None'))
    """
    value = result
    if value is None:
        return None, "the metric returned None"
    if not isinstance(value, int | float | np.integer | np.floating):
        score = getattr(value, "score", None)
        if score is None:
            reason = getattr(value, "missing", None)
            if isinstance(reason, str) and reason:
                return None, reason
            if hasattr(value, "score"):
                return None, "the metric's score is None"
            if not hasattr(value, "__float__"):
                return None, f"the metric returned {type(value).__name__}, not a score"
            score = value
        value = score
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None, f"the metric returned {type(value).__name__}, not a score"
    if math.isnan(number):
        return None, "the metric returned nan"
    if math.isinf(number):
        return None, "the metric returned an infinite score"
    return number, None
