"""to_batched: split a tensor along its first axis into fixed-size batches (as Nx)."""

from __future__ import annotations

from . import numpy as snp
from .tensor import Tensor


class Batches:
    """`to_batched`'s result: iterate to get the batches one at a time."""

    def __init__(self, t: Tensor, batch_size: int, leftover: str):
        if leftover not in ("repeat", "discard"):
            raise ValueError(f"leftover must be 'repeat' or 'discard', not {leftover!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
        t = t if isinstance(t, Tensor) else snp.asarray(t)
        if t.ndim == 0:
            raise ValueError("to_batched needs a tensor with at least one axis to split")
        n = t.shape[0]
        full, rest = divmod(n, batch_size)
        if leftover == "repeat" and rest:
            if batch_size - rest > n:
                raise ValueError(f"cannot fill the last batch of {batch_size} by repeating "
                                 f"a tensor of only {n} rows")
            t = snp.concatenate([t, t[:batch_size - rest]])
            full += 1
        elif rest:
            t = t[:full * batch_size]
        self.count = full
        self.batch_size = batch_size
        # one reshape, then each batch is a dynamic slice (compiled once, not per index)
        self._stacked = snp.reshape(t, (full, batch_size) + tuple(t.shape[1:]))

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        for i in range(self.count):
            yield self._stacked[snp.asarray(i, dtype="int32")]


def to_batched(t: Tensor, batch_size: int, *, leftover: str = "repeat") -> Batches:
    """Split t along its first axis into batches of `batch_size` rows (as Nx.to_batched).

    When the rows do not divide evenly, leftover="repeat" completes the last batch with
    rows from the start of t; leftover="discard" drops the incomplete batch."""
    return Batches(t, batch_size, leftover)
