"""A small thread-safe LRU map for the per-process caches of trained classifiers, router
heads and loaded router members (pure: the stdlib only).

Values are built outside the lock (training may take a while): two threads that miss the
same key may both build it, and the last one stored wins. That costs a little work once and
never blocks a turn behind another's training.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """Keeps the ``size`` most recently used entries; the oldest go first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The cached value (now the most recent), or None."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The cached value, else ``build()`` (called outside the lock) stored and returned."""
        hit = self.get(key)
        if hit is not None:
            return hit
        value = build()
        self.put(key, value)
        return value

    def snapshot(self) -> dict[K, V]:
        with self._lock:
            return dict(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
