"""Importing a metric by its path: ``"package.module:attribute"``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from lift_metrics.errors import InputTypeError, InputValueError


def import_metric(spec: str) -> Callable[..., Any]:
    """Import a metric named ``"package.module:attribute"`` (dotted attributes allowed).

    Raises
    ------
    ValueError
        If ``spec`` has no ``:``, names no callable, or its module cannot be imported (it
        is missing, or importing it raises).

    Examples
    --------
    >>> import_metric("lift_metrics.ir:ir_quality").__name__
    'ir_quality'
    """
    if not isinstance(spec, str):
        raise InputTypeError(
            f"spec must be a str 'package.module:attribute', got {type(spec).__name__}"
        )
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise InputValueError(
            f"a metric import path must look like 'package.module:attribute', got {spec!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # not found, or the module itself fails on import
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputValueError(
            f"cannot import module {module_name!r} of metric {spec!r} "
            f"({type(exc).__name__}: {detail})"
        ) from exc
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise InputValueError(f"{module_name!r} has no attribute {attribute!r}") from None
    if not callable(value):
        raise InputValueError(f"{spec!r} is not callable (got {type(value).__name__})")
    return value
