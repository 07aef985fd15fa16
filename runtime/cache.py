"""The in-memory executable cache, single-flight under threads.

Two threads asking for the same key at once compile once: the first computes, the
others wait for its result (or its error).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any


class _Pending:
    __slots__ = ("event", "value", "error")

    def __init__(self):
        self.event = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class SingleFlightCache:
    def __init__(self):
        self._done: dict[Hashable, Any] = {}
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable):
        return self._done.get(key)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._done

    def __len__(self) -> int:
        return len(self._done)

    def get_or_create(self, key: Hashable, create: Callable[[], Any]):
        value = self._done.get(key)
        if value is not None:
            self.hits += 1
            return value
        with self._lock:
            value = self._done.get(key)
            if value is not None:
                self.hits += 1
                return value
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = self._pending[key] = _Pending()
                self.misses += 1
        if not owner:
            pending.event.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            pending.value = create()
            with self._lock:
                self._done[key] = pending.value
            return pending.value
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._lock:
                self._pending.pop(key, None)
            pending.event.set()

    def clear(self) -> None:
        with self._lock:
            self._done.clear()
