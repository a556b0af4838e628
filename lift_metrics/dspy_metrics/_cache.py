"""The per-metric result cache: content-based keys for IR, code and test values, an LRU map."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lift_metrics._lru import LRUCache
from lift_metrics.dspy_metrics._fields import _MISSING

_UNCACHEABLE = object()


def _uncacheable(key: Any) -> bool:
    return key is _UNCACHEABLE or (
        isinstance(key, tuple) and any(part is _UNCACHEABLE for part in key)
    )


class _ResultCache(LRUCache[Any, Any]):
    """The LRU map from a key to a computed part breakdown; an uncacheable key is never kept.

    :meth:`get` returns :data:`_MISSING` for a key it does not hold.
    """

    def get(self, key: Any, default: Any = _MISSING) -> Any:
        if not self.size or _uncacheable(key):
            return default
        return super().get(key, default)

    def put(self, key: Any, value: Any) -> None:
        """Keep ``value``, unless its key is uncacheable or its code's run crashed.

        A crash (the result's own ``execution`` or its ``code`` part's) may be the machine's
        fault: the next call runs the code again.
        """
        if not _uncacheable(key) and not _crashed(value):
            super().put(key, value)

    def fetch(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Return the value kept for ``key``, or ``compute()``, kept as :meth:`put` keeps it."""
        cached = self.get(key)
        if cached is not _MISSING:
            return cached
        value = compute()
        self.put(key, value)
        return value


def _crashed(value: Any) -> bool:
    code = getattr(value, "code", value)
    return getattr(getattr(code, "execution", None), "status", None) == "crashed"


def _cache_key(value: Any) -> Any:
    """Return a hashable, content-based key for IR/test values (dicts, lists, models, strings).

    :data:`_UNCACHEABLE` for a value with no usable key (nested too deep to encode, or one
    whose ``repr`` raises); a key holding it is never looked up or stored.
    """
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    try:
        if hasattr(value, "model_dump_json"):
            return ("model", value.model_dump_json())
        try:
            return ("json", json.dumps(value, sort_keys=True, default=repr))
        except (TypeError, ValueError):
            return ("repr", repr(value))
    except Exception:  # RecursionError, or a value whose encoding raises
        return _UNCACHEABLE
