"""An in-memory cache that is single-flight under threads and optionally bounded.

Two threads asking for the same key at once create the value once: the first computes,
the others wait for its result (or its error). With `max_entries` / `max_bytes` the
cache keeps the most recently used entries and hands each evicted value to `on_evict`
(the executable cache uses that to release the compiled program).

`get` is the lock-free lookup for hot paths; it does not refresh recency, so an entry
that is only ever read through `get` ages out first under pressure (callers that hold
such an entry must cope with its eviction).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class _Pending:
    __slots__ = ("event", "value", "error")

    def __init__(self):
        self.event = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class SingleFlightCache:
    def __init__(self, *, max_entries: int | None = None, max_bytes: int | None = None,
                 size: Callable[[Any], int] | None = None,
                 on_evict: Callable[[Any], None] | None = None):
        self._done: OrderedDict[Hashable, Any] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self._on_evict = on_evict
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable):
        return self._done.get(key)

    @property
    def entries(self) -> dict:
        """The finished entries, as `get` reads them (lock-free; read, never write): for a
        lookup made outside Python (the native composite call)."""
        return self._done

    def __contains__(self, key: Hashable) -> bool:
        return key in self._done

    def __len__(self) -> int:
        return len(self._done)

    def keys(self) -> list:
        return list(self._done)

    def get_or_create(self, key: Hashable, create: Callable[[], Any]):
        with self._lock:
            value = self._done.get(key)
            if value is not None:
                self.hits += 1
                self._done.move_to_end(key)
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
            self._insert(key, pending.value)
            return pending.value
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._lock:
                self._pending.pop(key, None)
            pending.event.set()

    def _insert(self, key: Hashable, value) -> None:
        n = self._size(value) if self._size is not None else 0
        evicted = []
        with self._lock:
            self.bytes += n - self._sizes.get(key, 0)
            self._done[key] = value
            self._sizes[key] = n
            while len(self._done) > 1 and (
                    (self.max_entries is not None and len(self._done) > self.max_entries)
                    or (self.max_bytes is not None and self.bytes > self.max_bytes)):
                k, v = self._done.popitem(last=False)
                self.bytes -= self._sizes.pop(k)
                self.evictions += 1
                evicted.append(v)
        if self._on_evict is not None:
            for v in evicted:  # outside the lock: releasing a program may take a while
                self._on_evict(v)

    def clear(self) -> None:
        with self._lock:
            values = list(self._done.values())
            self._done.clear()
            self._sizes.clear()
            self.bytes = 0
        if self._on_evict is not None:
            for v in values:
                self._on_evict(v)
