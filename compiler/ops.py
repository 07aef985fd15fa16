"""A small lax-like vocabulary over a Builder, for rules that build IR (derivative
rules, expansions). Every helper appends ops to `self.builder` with `self.loc`.

    def vjp(ops, cts, primals, outs, **attrs):
        (ct,) = cts
        x, = primals
        return (ops.mul(ct, ops.bind(ew.cos, x)),)   # ew: primitives.elementwise

Primitives are named as objects (`ops.bind(ew.cos, x)`, or a helper below such as
`ops.add`), never by string, so a misspelt name fails at import (or as a missing
attribute), not in the middle of a transform.

Derivative-rule contract (Primitive.vjp):
    vjp(ops: Ops, cts: tuple[Value | None, ...], primals: tuple[Value, ...],
        outs: tuple[Value, ...], **attrs) -> tuple[Value | None, ...]
    One cotangent per operand (None: no gradient flows to that operand). `cts` has one
    entry per result; an entry is None when that result's cotangent is zero.
Forward mode (Primitive.jvp), when given:
    jvp(ops, tangents, primals, outs, **attrs) -> tuple[Value | None, ...]
    One tangent per result; `tangents` entries are None for zero tangents.
    Without a jvp rule, compiler/autodiff.py derives forward mode by transposing the vjp
    rule, so a vjp rule is enough.
Ops with regions also get `regions=` (their region Functions) in both rules; a rule
can differentiate a body with compiler.autodiff.vjp_function / jvp_function or build
into `ops.builder` with vjp_into / jvp_into / inline. The transforms are driven by
compiler/autodiff.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import dtypes as dt
from .builder import Builder
from .ir import UNKNOWN, Attrs, Literal, Location, TensorType, Value
from .primitives import elementwise as ew
from .primitives import products, reductions, shape_ops


class Ops:
    def __init__(self, builder: Builder, loc: Location = UNKNOWN):
        self.builder = builder
        self.loc = loc

    # ---- generic ---------------------------------------------------------------------
    def bind(self, prim, *operands: Value, regions=(), **attrs) -> Value:
        return self.builder.bind(prim, operands, Attrs(attrs), self.loc, regions)[0]

    def bind_many(self, prim, *operands: Value, regions=(), **attrs) -> tuple[Value, ...]:
        return self.builder.bind(prim, operands, Attrs(attrs), self.loc, regions)

    # ---- constants ---------------------------------------------------------------------
    def const(self, value, dtype: dt.DType, shape: Sequence[int] = ()) -> Value:
        s = self.bind(shape_ops.constant, value=Literal(np.asarray(value, dtype=dtype.np)))
        return self.broadcast(s, tuple(shape), ()) if tuple(shape) else s

    def full_like(self, v: Value, value) -> Value:
        return self.const(value, v.type.dtype, v.type.shape)

    def zeros_like(self, v: Value) -> Value:
        return self.full_like(v, 0)

    def ones_like(self, v: Value) -> Value:
        return self.full_like(v, 1)

    # ---- elementwise -------------------------------------------------------------------
    def add(self, x, y):
        return self.bind(ew.add, x, y)

    def sub(self, x, y):
        return self.bind(ew.subtract, x, y)

    def mul(self, x, y):
        return self.bind(ew.multiply, x, y)

    def div(self, x, y):
        return self.bind(ew.divide, x, y)

    def max(self, x, y):
        return self.bind(ew.maximum, x, y)

    def min(self, x, y):
        return self.bind(ew.minimum, x, y)

    def pow(self, x, y):
        return self.bind(ew.power, x, y)

    def eq(self, x, y):
        return self.bind(ew.eq, x, y)

    def ne(self, x, y):
        return self.bind(ew.ne, x, y)

    def lt(self, x, y):
        return self.bind(ew.lt, x, y)

    def le(self, x, y):
        return self.bind(ew.le, x, y)

    def gt(self, x, y):
        return self.bind(ew.gt, x, y)

    def ge(self, x, y):
        return self.bind(ew.ge, x, y)

    def and_(self, x, y):
        return self.bind(ew.and_, x, y)

    def or_(self, x, y):
        return self.bind(ew.or_, x, y)

    def neg(self, x):
        return self.bind(ew.neg, x)

    def conj(self, x):
        return self.bind(ew.conj, x)

    def real(self, x):
        return self.bind(ew.real, x)

    def imag(self, x):
        return self.bind(ew.imag, x)

    def complex(self, re, im):
        return self.bind(ew.complex_, re, im)

    def select(self, pred, on_true, on_false):
        return self.bind(ew.select, pred, on_true, on_false)

    def convert(self, x, dtype: dt.DType):
        if x.type.dtype is dtype:
            return x
        return self.bind(ew.convert, x, dtype=dtype)

    def scale(self, x, c: float):
        """x * c with c a Python number."""
        return self.mul(x, self.full_like(x, c))

    # ---- shapes ------------------------------------------------------------------------
    def broadcast(self, x, shape: Sequence[int], dims: Sequence[int]) -> Value:
        if tuple(shape) == x.type.shape and tuple(dims) == tuple(range(len(shape))):
            return x
        return self.bind(shape_ops.broadcast_in_dim, x, shape=tuple(shape),
                         broadcast_dimensions=tuple(dims))

    def reshape(self, x, shape: Sequence[int]) -> Value:
        if tuple(shape) == x.type.shape:
            return x
        return self.bind(shape_ops.reshape, x, shape=tuple(shape))

    def transpose(self, x, perm: Sequence[int]) -> Value:
        if tuple(perm) == tuple(range(len(perm))):
            return x
        return self.bind(shape_ops.transpose, x, permutation=tuple(perm))

    def reduce_sum(self, x, axes: Sequence[int]) -> Value:
        if not axes:
            return x
        return self.bind(reductions.reduce_sum, x, axes=tuple(axes))

    def sum_to_shape(self, x: Value, shape: Sequence[int]) -> Value:
        """Undo NumPy-style broadcasting: sum x down to `shape`."""
        shape = tuple(shape)
        if x.type.shape == shape:
            return x
        lead = x.type.ndim - len(shape)
        axes = list(range(lead)) + [lead + i for i, n in enumerate(shape)
                                    if n == 1 and x.type.shape[lead + i] != 1]
        return self.reshape(self.reduce_sum(x, axes), shape)

    def dot_general(self, x, y, contracting, batch=((), ()), preferred_element_type=None,
                    precision=None):
        attrs = {"contracting": tuple(map(tuple, contracting)),
                 "batch": tuple(map(tuple, batch))}
        if preferred_element_type is not None:
            attrs["preferred_element_type"] = preferred_element_type
        if precision is not None:
            attrs["precision"] = tuple(precision)
        return self.bind(products.dot_general, x, y, **attrs)

    def iota(self, shape: Sequence[int], dtype: dt.DType, dimension: int) -> Value:
        return self.bind(shape_ops.iota, shape=tuple(shape), dtype=dtype, dimension=dimension)

    def type_of(self, v: Value) -> TensorType:
        return v.type
