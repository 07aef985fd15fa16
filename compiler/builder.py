"""Building IR: append ops to a function under construction, inferring result types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .ir import EMPTY_ATTRS, UNKNOWN, Attrs, Function, Location, Op, TensorType, Value
from .primitive import Primitive


class Builder:
    def __init__(self, name: str = "main"):
        self.name = name
        self.params: list[Value] = []
        self.ops: list[Op] = []

    def param(self, t: TensorType) -> Value:
        v = Value(t)
        self.params.append(v)
        return v

    def bind(self, prim: Primitive, operands: Sequence[Value], attrs: Mapping | Attrs = EMPTY_ATTRS,
             loc: Location = UNKNOWN, regions: Sequence[Function] = (),
             out_types: Sequence[TensorType] | None = None) -> tuple[Value, ...]:
        """Append one op; result types come from the shape rule unless given."""
        if type(attrs) is not Attrs:
            attrs = Attrs(attrs)
        operands = tuple(operands)
        if out_types is None:
            out_types = prim.infer(tuple([v.type for v in operands]), attrs, regions)
        # (list comprehensions, not generators: every traced op comes through here)
        results = tuple([Value(t) for t in out_types])
        self.ops.append(Op(prim, operands, attrs, results, loc, regions))
        return results

    def build(self, results: Sequence[Value]) -> Function:
        return Function(self.name, self.params, self.ops, results)
