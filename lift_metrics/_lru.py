"""A thread-safe LRU map: ``cachetools.LRUCache`` under a lock.

Shared by the metric result cache and the embedding cache.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from typing import Any, Generic, TypeVar

import cachetools

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
        self.lock = threading.RLock()
        self._size = size
        self._data: Any = cachetools.LRUCache(maxsize=max(size, 1))

    @property
    def size(self) -> int:
        """The most entries kept; setting it keeps the most recently used ones that fit."""
        return self._size

    @size.setter
    def size(self, size: int) -> None:
        with self.lock:
            data: Any = cachetools.LRUCache(maxsize=max(size, 1))
            entries = []
            while self._data:
                entries.append(self._data.popitem())  # the least recently used first
            for key, value in entries[-size:] if size else []:
                data[key] = value
            self._size = size
            self._data = data

    def get(self, key: K, default: V | None = None) -> V | None:
        """Return the value stored under ``key`` (now the most recently used), else ``default``."""
        with self.lock:
            if key not in self._data:
                return default
            value: V = self._data[key]  # a look-up makes it the most recently used
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, dropping the least recently used entries over size."""
        if not self.size:
            return
        with self.lock:
            self._data[key] = value  # evicts the least recently used entry when full

    def keys(self) -> list[K]:
        """Return the keys (a copy)."""
        with self.lock:
            return list(self._data)

    def __iter__(self) -> Iterator[K]:
        """Return the keys (a copy: the cache may change meanwhile)."""
        return iter(self.keys())

    def clear(self) -> None:
        """Forget every entry."""
        with self.lock:
            self._data.clear()

    def __len__(self) -> int:
        with self.lock:
            return len(self._data)
