"""A small thread-safe LRU map, shared by the metric result cache and the embedding cache."""

from __future__ import annotations

import collections
import threading
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """At most ``size`` entries; the least recently used one goes first. ``size=0`` stores none.

    Every method takes :attr:`lock` (re-entrant), so a caller can hold it around several calls
    that must see one state (a batch of look-ups and the counters that go with them).

    Examples
    --------
    >>> cache: LRUCache[str, int] = LRUCache(2)
    >>> cache.put("a", 1); cache.put("b", 2); _ = cache.get("a"); cache.put("c", 3)
    >>> sorted(cache.keys()), cache.get("b")
    (['a', 'c'], None)
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.RLock()
        self._data: collections.OrderedDict[K, V] = collections.OrderedDict()

    def get(self, key: K, default: V | None = None) -> V | None:
        """Return the value stored under ``key`` (now the most recently used), else ``default``."""
        with self.lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, dropping the least recently used entries over size."""
        if not self.size:
            return
        with self.lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def keys(self) -> list[K]:
        """Return the keys, least recently used first."""
        with self.lock:
            return list(self._data)

    def __iter__(self) -> Iterator[K]:
        """Return the keys, least recently used first (a copy: the cache may change meanwhile)."""
        return iter(self.keys())

    def clear(self) -> None:
        """Forget every entry."""
        with self.lock:
            self._data.clear()

    def __len__(self) -> int:
        with self.lock:
            return len(self._data)
