"""The per-metric result cache: content-based keys for IR, code and test values, an LRU map."""

from __future__ import annotations

import collections
import json
import threading
from typing import Any

from lift_metrics.dspy_metrics._fields import _MISSING

_UNCACHEABLE = object()


def _uncacheable(key: Any) -> bool:
    return key is _UNCACHEABLE or (
        isinstance(key, tuple) and any(part is _UNCACHEABLE for part in key)
    )


class _ResultCache:
    """A small thread-safe LRU map from a key to a computed part breakdown."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        if not self.size or _uncacheable(key):
            return _MISSING
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is not _MISSING:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        if not self.size or _uncacheable(key):
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


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
