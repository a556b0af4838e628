"""The calls of a function a task's prompt shows (``>>> f(2, 3)``, ``f(2, 3) == 5``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from lift_metrics import _pyast as pyast

MAX_CALL_CHARS = 2000
"""A call longer than this in the prompt is not read."""


def prompt_examples(
    prompt: str | None, entry_point: str, names: Sequence[str]
) -> list[dict[str, Any]]:
    """Return the prompt's calls of ``entry_point`` with literal arguments, as kwargs.

    Finds ``entry_point(...)`` anywhere in the text (doctest lines, ``f(2) == 4``,
    ``f(2) ➞ 4``); arguments that are not literals, or more of them than there are
    parameters, skip that call.
    """
    if not prompt:
        return []
    found: list[dict[str, Any]] = []
    for match in re.finditer(rf"\b{re.escape(entry_point)}\(", prompt):
        start = match.end() - 1
        depth, end = 0, None
        for index in range(start, min(len(prompt), start + MAX_CALL_CHARS)):
            char = prompt[index]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    end = index + 1
                    break
        if end is None:
            continue
        try:
            call = pyast.parse("_f" + prompt[start:end], mode="eval").body
            if not isinstance(call, ast.Call):
                continue
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, AttributeError):
            continue
        if len(args) > len(names) or any(k not in names for k in kwargs):
            continue
        found.append({**dict(zip(names, args, strict=False)), **kwargs})
    return [call for call in found if set(call) == set(names)]


_QUOTED = re.compile(r'"([^"\n]{1,24})"')


def quoted_texts(*texts: str | None) -> list[str]:
    """Return the short double-quoted strings of ``texts`` (``such as "1h30m" or "45s"``).

    For a function of one string, they are the values a prompt or a docstring shows it
    taking: a parser's inputs are rarely built by chance.

    Examples
    --------
    >>> quoted_texts('a duration such as "1h30m" or "45s"', None, 'like "1h30m"')
    ['1h30m', '45s']
    """
    found = [match.group(1) for text in texts if text for match in _QUOTED.finditer(text)]
    return list(dict.fromkeys(found))[:8]


#: "in a sorted list", "given sorted items", "of two sorted arrays": a precondition on an
#: argument ("returns the words sorted by length" is what the function does, not one)
_SORTED = re.compile(
    r"\b(?:in|of|from|given|takes?|into|on|searches|merges?|combines?)\s+(?:a|an|the|two|both)?\s*"
    r"(?:(?:non-empty|strictly)\s+)?(?:sorted|ascending)\s+(\w+)(?:\s+of\s+(distinct|unique))?",
    re.IGNORECASE,
)
_SEQUENCE_WORDS = frozenset({"list", "lists", "array", "arrays", "sequence", "sequences"})


def sorted_arguments(
    names: Sequence[str], lists: Sequence[str], *texts: str | None
) -> dict[str, bool]:
    """Return the arguments the texts say come sorted, each with whether they are distinct.

    ``lists`` are the parameters that take a list. A phrase such as "in a sorted list of
    distinct integers" or "in sorted items" names one (by its name, or, for "list",
    "array", "sequence", every list parameter); outside that order the function's result
    is not specified, so generated inputs keep to it.

    Examples
    --------
    >>> sorted_arguments(["items", "target"], ["items"],
    ...                  "the index of target in a sorted list of distinct integers")
    {'items': True}
    >>> sorted_arguments(["words"], ["words"], "returns the words sorted by length")
    {}
    """
    found: dict[str, bool] = {}
    for text in texts:
        for match in _SORTED.finditer(text or ""):
            word, distinct = match.group(1), match.group(2) is not None
            named = (
                [word] if word in names else list(lists) if word.lower() in _SEQUENCE_WORDS else []
            )
            for name in named:
                if name in lists:
                    found[name] = found.get(name, False) or distinct
    return found


def in_order(inputs: dict[str, Any], ordered: dict[str, bool]) -> dict[str, Any]:
    """Sort the arguments the task says come sorted (without repeats where it says distinct).

    A list whose elements do not compare is left as it is.
    """
    if not ordered:
        return inputs
    out = dict(inputs)
    for name, distinct in ordered.items():
        value = out[name]
        if not isinstance(value, list):
            continue
        try:
            items = sorted(value)
        except TypeError:
            continue
        out[name] = (
            [v for i, v in enumerate(items) if not i or v != items[i - 1]] if distinct else items
        )
    return out
