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
