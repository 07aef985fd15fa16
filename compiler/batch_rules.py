"""Shared pieces of batching (vmap) rules, used by the primitive definitions.

The batching transform (compiler/batching.py) keeps every batched value with its batch
axis first. A primitive's `batch` rule is called only when at least one operand is
batched:

    batch(ops, operands, batched, **attrs) -> tuple of result Values

`batched[i]` says whether operand i carries the batch axis (at axis 0). A result is
batched when it has one more axis than the unbatched op's result (the transform checks
this), so a rule may leave a result unbatched when it does not depend on the batch
(control flow keeps loop-invariant carries unbatched this way).

Rules move batch axes with plain shape ops; XLA's layout assignment makes those
transposes free or fuses them, so keeping the axis first costs nothing at run time and
keeps every rule short.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ir import Value


class BatchingError(ValueError):
    """A value cannot be batched the way the program asks (e.g. sizes disagree)."""


def batch_size(operands: Sequence[Value], batched: Sequence[bool]) -> int:
    """The batch size: axis 0 of any batched operand."""
    for x, b in zip(operands, batched, strict=True):
        if b:
            return x.type.shape[0]
    raise AssertionError("a batching rule was called with no batched operand")


def bring(ops, x: Value, is_batched: bool, n: int) -> Value:
    """x with a leading batch axis of size n (broadcast when x is not batched)."""
    if is_batched:
        return x
    shape = x.type.shape
    return ops.broadcast(x, (n,) + tuple(shape), tuple(range(1, len(shape) + 1)))


def bring_all(ops, operands: Sequence[Value], batched: Sequence[bool]) -> list[Value]:
    n = batch_size(operands, batched)
    return [bring(ops, x, b, n) for x, b in zip(operands, batched, strict=True)]


def move_axis(ops, x: Value, src: int, dst: int) -> Value:
    """x with axis `src` moved to position `dst` (others keep their order)."""
    nd = x.type.ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return ops.transpose(x, perm)


def shift(axes: Sequence[int], by: int = 1) -> tuple[int, ...]:
    """Axis numbers of the per-example value, as axes of the batched value."""
    return tuple(a + by for a in axes)


def elementwise(prim):
    """The rule of an elementwise primitive: give every operand the batch axis and the
    full per-example shape (a scalar operand such as clamp's bounds or select's
    predicate is broadcast too), then apply the primitive unchanged."""
    def rule(ops, operands, batched, **attrs):
        n = batch_size(operands, batched)
        per_example = max((x.type.shape[1:] if b else x.type.shape
                           for x, b in zip(operands, batched, strict=True)), key=len)
        full = (n,) + tuple(per_example)
        args = []
        for x, b in zip(operands, batched, strict=True):
            nd = x.type.ndim - (1 if b else 0)
            if b:
                dims = (0,) if nd == 0 else tuple(range(x.type.ndim))
            else:
                dims = () if nd == 0 else tuple(range(1, nd + 1))
            args.append(ops.broadcast(x, full, dims))
        return ops.bind_many(prim, *args, **attrs)
    return rule


def leading(prim, *, axis_attrs: Sequence[str] = (), tuple_attrs: Sequence[str] = ()):
    """The rule of a primitive that treats leading axes as independent (or takes axis
    numbers as attributes): batch every operand, shift the axis numbers named in
    `axis_attrs` (ints) and `tuple_attrs` (tuples of ints) by one, and apply it."""
    def rule(ops, operands, batched, **attrs):
        for k in axis_attrs:
            attrs[k] = attrs[k] + 1
        for k in tuple_attrs:
            attrs[k] = shift(attrs[k])
        return ops.bind_many(prim, *bring_all(ops, operands, batched), **attrs)
    return rule
