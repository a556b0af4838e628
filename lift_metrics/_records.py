"""The plain-JSON dict and the short ``repr`` of the package's result objects.

A result dataclass lists the keys of its ``to_dict`` once, as a string of attribute names in
key order, and :func:`record_dict` reads them. :func:`short_repr` writes the short ``repr``
of such an object from the same kind of list, and :func:`format_scores` the ``name=value``
list that the ``repr`` of a breakdown shows for its components (:func:`breakdown_repr`).
A result whose dict is all its fields in order inherits ``to_dict`` from :class:`PlainRecord`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


def plain(value: Any) -> Any:
    """Return ``value`` in the form that a result's ``to_dict`` gives it.

    An object with a ``to_dict`` method gives its dict, a mapping a new ``dict`` and a tuple or
    list a new ``list``. The items of a mapping or a sequence (one level down) give their
    ``to_dict`` or, for a mapping, a new ``dict``. Anything else comes back as it is.

    Examples
    --------
    >>> plain((1, {"b": 2})), plain({"a": 1}), plain("text")
    ([1, {'b': 2}], {'a': 1}, 'text')
    """
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {key: _item(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_item(item) for item in value]
    return value


def _item(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return dict(value)
    return value


def record_dict(obj: Any, names: str | None = None, /, **values: Any) -> dict[str, Any]:
    """Return the plain-JSON dict of ``obj``'s attributes, keys in the order of ``names``.

    Parameters
    ----------
    obj
        The result object (a dataclass when ``names`` is left out).
    names
        The attribute names, separated by white space, in key order; ``None`` lists the
        dataclass's fields in their declared order.
    **values
        A key's value given outright instead of read from ``obj``: a key named in ``names`` keeps
        its place, any other key comes after them, in the order given.

    Returns
    -------
    dict
        Key -> :func:`plain` of the attribute (a value from ``values`` stays as given).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Row:
    ...     name: str
    ...     scores: tuple[float, ...]
    ...     note: str | None = None
    >>> record_dict(Row("a", (0.5, 1.0)))
    {'name': 'a', 'scores': [0.5, 1.0], 'note': None}
    >>> record_dict(Row("a", (0.5,)), "scores name", name="A", best=0.5)
    {'scores': [0.5], 'name': 'A', 'best': 0.5}
    """
    keys = [field.name for field in dataclasses.fields(obj)] if names is None else names.split()
    out = {key: values[key] if key in values else plain(getattr(obj, key)) for key in keys}
    out.update((key, value) for key, value in values.items() if key not in out)
    return out


class PlainRecord:
    """A result dataclass whose ``to_dict`` is all its fields, in declared order.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Row(PlainRecord):
    ...     name: str
    ...     scores: tuple[float, ...]
    >>> Row("a", (0.5, 1.0)).to_dict()
    {'name': 'a', 'scores': [0.5, 1.0]}
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return record_dict(self)


def format_scores(scores: Mapping[str, float], spec: str = ".3f") -> str:
    """Return ``"name=value, ..."`` for the scores, each value written with ``spec``.

    Examples
    --------
    >>> format_scores({"syntax": 1.0, "tests": 0.25})
    'syntax=1.000, tests=0.250'
    >>> format_scores({"pass@1": 0.5}, ".4f")
    'pass@1=0.5000'
    """
    return ", ".join(f"{key}={value:{spec}}" for key, value in scores.items())


def short_repr(obj: object, names: str, /, **shown: object) -> str:
    """Return ``"ClassName(name=value, ...)"`` for the attributes named in ``names``.

    Parameters
    ----------
    obj
        The object (its class's name starts the text).
    names
        The names in order, separated by white space; each may end like a replacement field
        of an f-string, with ``!r`` for the value's ``repr`` and ``:spec`` for a format spec
        (``"tier!r runs cost_usd:.4g"``).
    **shown
        A name's value given outright instead of read from ``obj`` (written by the name's
        conversion and spec like a value read from ``obj``).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     tier: str
    ...     runs: int
    ...     cost_usd: float
    >>> short_repr(Run("T0", 3, 0.123456), "tier!r runs cost_usd:.4g")
    "Run(tier='T0', runs=3, cost_usd=0.1235)"
    >>> short_repr(Run("T0", 3, 0.5), "tier runs", runs="3/4")
    'Run(tier=T0, runs=3/4)'
    """
    parts = []
    for token in names.split():
        field, _, spec = token.partition(":")
        name, _, conversion = field.partition("!")
        value = shown[name] if name in shown else getattr(obj, name)
        parts.append(f"{name}={format(repr(value) if conversion == 'r' else value, spec)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def breakdown_repr(breakdown: Any) -> str:
    """Return ``"ClassName(score=..., name=value, ...)"`` for a score and its ``components``.

    The score and the components are written with 3 decimals.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Parts:
    ...     score: float
    ...     components: dict[str, float]
    >>> breakdown_repr(Parts(0.5, {"ir": 1.0, "code": 0.0}))
    'Parts(score=0.500, ir=1.000, code=0.000)'
    """
    parts = format_scores(breakdown.components)
    return f"{type(breakdown).__name__}(score={breakdown.score:.3f}, {parts})"
