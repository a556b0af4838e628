"""Keyword-only parameters written once, as a TypedDict, for a metric and its breakdown twin.

A metric ``f`` and ``f_breakdown`` take the same keywords. Each is written
``def f(..., **options: Unpack[FKeywords])``, so that mypy checks the callers' keywords
against the one TypedDict; :func:`takes_keywords` gives the function the explicit signature
(``inspect.signature``, ``help()``) and :func:`keyword_arguments` checks a call as Python
checks one and fills in the defaults.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ForwardRef, TypeVar, cast

_Function = TypeVar("_Function", bound=Callable[..., Any])
_Keywords = TypeVar("_Keywords", bound=Mapping[str, Any])


def takes_keywords(
    keywords: type, defaults: Mapping[str, Any] | None = None
) -> Callable[[_Function], _Function]:
    """Return a decorator that lists ``keywords`` in the signature of a ``**options`` function.

    The decorated function's ``**options`` becomes the TypedDict's keys as keyword-only
    parameters, in its order, with its annotations: the required keys without a default,
    the others with their value in ``defaults`` (None when not there). The function object
    itself is returned, with ``__signature__`` set.
    """

    def decorate(function: _Function) -> _Function:
        own = inspect.signature(function)
        params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        required: frozenset[str] = getattr(keywords, "__required_keys__", frozenset())
        for name, annotation in inspect.get_annotations(keywords).items():
            default = inspect.Parameter.empty if name in required else (defaults or {}).get(name)
            if isinstance(annotation, ForwardRef):  # the annotation's text, as def keeps it
                annotation = annotation.__forward_arg__
            kind = inspect.Parameter.KEYWORD_ONLY
            params.append(inspect.Parameter(name, kind, default=default, annotation=annotation))
        target: Any = function
        target.__signature__ = own.replace(parameters=params)
        return function

    return decorate


def keyword_arguments(function: Callable[..., Any], options: _Keywords) -> _Keywords:
    """Return the keywords of a call of ``function``, with the defaults of those not given.

    Raises
    ------
    TypeError
        For a keyword ``function`` does not take or a required one missing, with Python's
        message: ``f() got an unexpected keyword argument 'x'``.
    """
    name = function.__name__
    keyword_only = {
        key: parameter
        for key, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is parameter.KEYWORD_ONLY
    }
    for key in options:
        if key not in keyword_only:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    missing = [
        f"'{key}'" for key, p in keyword_only.items() if p.default is p.empty and key not in options
    ]
    if missing:
        listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1])
        if len(missing) > 1:
            listed += ("," if len(missing) > 2 else "") + f" and {missing[-1]}"
        plural = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{name}() missing {len(missing)} required keyword-only {plural}: {listed}")
    defaults = {key: p.default for key, p in keyword_only.items() if p.default is not p.empty}
    return cast(_Keywords, {**defaults, **options})
