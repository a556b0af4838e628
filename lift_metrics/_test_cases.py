"""Tests as data files write them, read as the ``(kwargs, expected)`` pairs the sandbox runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lift_metrics.errors import InputTypeError, InputValueError


def as_test_cases(
    value: Any, *, exact_keys: bool = False
) -> list[tuple[dict[str, Any], Any]] | str:
    """Return data-file tests as ``(kwargs, expected)`` pairs, or a check script as it is.

    Parameters
    ----------
    value : list, str or None
        Cases ``{"inputs": {...}, "expected": v}`` or ``(inputs, expected)`` pairs, a
        ``check(candidate)`` script, or None (no tests).
    exact_keys : bool, default False
        Refuse a case mapping that has keys besides ``inputs`` and ``expected``.

    Returns
    -------
    list of (dict, object) pairs, or str
        The pairs (``[]`` for None), or the script.

    Raises
    ------
    TypeError
        If ``value`` is neither a list of cases, a str nor None.
    ValueError
        If a case has another shape; the message names its index.

    Examples
    --------
    >>> as_test_cases([{"inputs": {"a": 1}, "expected": 2}, ({"a": 2}, 3)])
    [({'a': 1}, 2), ({'a': 2}, 3)]
    >>> as_test_cases(None), as_test_cases("def check(candidate): ...")
    ([], 'def check(candidate): ...')
    """
    if value is None:
        return []
    if isinstance(value, str):
        return value
    if not isinstance(value, Sequence):
        raise InputTypeError(f"tests must be a list of cases or a check script, got {type(value)}")
    cases: list[tuple[dict[str, Any], Any]] = []
    for index, case in enumerate(value):
        if isinstance(case, Mapping) and (
            set(case) == {"inputs", "expected"}
            if exact_keys
            else "inputs" in case and "expected" in case
        ):
            cases.append((dict(case["inputs"]), case["expected"]))
        elif isinstance(case, Sequence) and not isinstance(case, str) and len(case) == 2:
            cases.append((dict(case[0]), case[1]))
        else:
            raise InputValueError(
                f"tests[{index}] must be {{'inputs': ..., 'expected': ...}} or an "
                f"(inputs, expected) pair, got {case!r:.80}"
            )
    return cases
