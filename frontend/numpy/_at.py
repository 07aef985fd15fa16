"""x.at[index]: JAX's functional updates and reads, over _indexing's getitem and
_update."""

from __future__ import annotations

from ..errors import at_user_line
from ..tensor import Tensor
from ._elementwise import negative
from ._indexing import GET_MODES, _update, getitem
from ._operands import values_in


class IndexUpdateHelper:
    """`x.at[index]`: returns an IndexUpdateRef with set/add/multiply/min/max/get."""

    __slots__ = ("x",)

    def __init__(self, x: Tensor):
        self.x = x

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.x, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.x!r})"


class IndexUpdateRef:
    """x.at[index].op(values): a new tensor equal to x with x[index] updated.

    Repeated indices accumulate for add/multiply/min/max; for set, which of the repeated
    updates wins is unspecified (as in XLA). Out-of-range indices are dropped (mode="drop",
    "fill" or "promise_in_bounds") or clamped (mode="clip"); without a mode, tensor ones
    are dropped and static ones raise IndexError (as NumPy's x[i] = v)."""

    __slots__ = ("x", "index")

    def __init__(self, x: Tensor, index):
        self.x = x
        self.index = index

    def get(self, *, mode: str | None = None, fill_value=None, indices_are_sorted=False,
            unique_indices=False) -> Tensor:
        if mode not in GET_MODES:
            raise ValueError(at_user_line(
                f"get: unknown mode {mode!r}; use 'clip', 'fill', 'drop' or "
                f"'promise_in_bounds'"))
        return getitem(self.x, self.index, mode=mode, fill_value=fill_value)

    def set(self, values, **kw) -> Tensor:
        return _update(self.x, self.index, values, "set", **kw)

    def add(self, values, **kw) -> Tensor:
        return _update(self.x, self.index, values, "add", **kw)

    def subtract(self, values, **kw) -> Tensor:
        return _update(self.x, self.index, negative(values_in(self.x, values)), "add",
                       **kw)

    def multiply(self, values, **kw) -> Tensor:
        return _update(self.x, self.index, values, "mul", **kw)

    mul = multiply

    def min(self, values, **kw) -> Tensor:  # noqa: A003
        return _update(self.x, self.index, values, "min", **kw)

    def max(self, values, **kw) -> Tensor:  # noqa: A003
        return _update(self.x, self.index, values, "max", **kw)
