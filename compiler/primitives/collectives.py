"""Collectives over a named vmapped axis: psum, pmax, pmin, all_gather, axis_index.

Inside `vmap(f, axis_name="i")`, f is traced once for one example; a collective there
is an op naming axis "i". Batching that vmap (compiler/batching.py) turns it into an
ordinary computation over the batch axis: psum becomes a sum over axis 0, axis_index an
iota, all_gather the batched value itself. The frontend only binds a collective for an
axis name some enclosing vmap defines, so none is left when the program is emitted or
interpreted; reaching the emitter or the interpreter means a caller skipped that check.
"""

from __future__ import annotations

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from . import reductions, shape_ops


def _unbound_error(opname: str, axis_name) -> ShapeError:
    return ShapeError(f"{opname}: axis name {axis_name!r} is not bound by an enclosing "
                      f"vmap(..., axis_name={axis_name!r})")


def _unbound(opname: str):
    """The emission and reference rules: a collective left unbatched has no meaning."""
    def emit(ctx, *_):
        raise _unbound_error(opname, ctx.attrs["axis_name"])

    def reference(*_, axis_name, **__):
        raise _unbound_error(opname, axis_name)
    return emit, reference


def _same_rule(x, *, axis_name):
    return x


def _reduce_batch(prim, reducer, kind: str):
    """Over the batched axis: reduce axis 0 (the result is the same for every example,
    so it stays unbatched). Over an outer axis: the op on the batched value as it is."""
    def rule(ops, xs, batched, *, axis_name):
        (x,), (b,) = xs, batched
        if ops.axis[0] != axis_name:
            return (ops.bind(prim, x, axis_name=axis_name),)
        if b:
            return (ops.bind(reducer, x, axes=(0,)),)
        # an unbatched value is the same in every example
        return (ops.scale(x, ops.axis[1]) if kind == "sum" else x,)
    return rule


def _collective(name: str, reducer, kind: str, vjp=None) -> Primitive:
    p = Primitive(name, _same_rule, *_unbound(name), vjp=vjp, family="collective")
    p.batch = _reduce_batch(p, reducer, kind)
    return p


def _psum_vjp(ops, cts, primals, outs, *, axis_name):
    # every example's output is the sum of all inputs: each input's cotangent is the sum
    # of all output cotangents
    return (ops.bind(psum, cts[0], axis_name=axis_name),)


def _extremum_vjp(ops, cts, primals, outs, *, axis_name):
    # the examples holding the extreme share every example's cotangent (ties evenly)
    (ct,), (x,), (out,) = cts, primals, outs
    hit = ops.convert(ops.eq(x, out), x.type.dtype)
    count = ops.bind(psum, hit, axis_name=axis_name)
    total = ops.bind(psum, ct, axis_name=axis_name)
    return (ops.div(ops.mul(total, hit), count),)


psum = _collective("psum", reductions.reduce_sum, "sum", vjp=_psum_vjp)
pmax = _collective("pmax", reductions.reduce_max, "max", vjp=_extremum_vjp)
pmin = _collective("pmin", reductions.reduce_min, "min", vjp=_extremum_vjp)


def _all_gather_rule(x, *, axis_name, axis_size, axis, tiled):
    if not 0 <= axis <= x.ndim - (1 if tiled else 0):
        raise ShapeError(f"all_gather: axis {axis} is out of range for an operand of rank "
                         f"{x.ndim}")
    shape = list(x.shape)
    if tiled:
        shape[axis] *= axis_size
    else:
        shape.insert(axis, axis_size)
    return TensorType(shape, x.dtype)


def _all_gather_batch(ops, xs, batched, *, axis_name, axis_size, axis, tiled):
    (x,), (b,) = xs, batched
    if ops.axis[0] != axis_name:
        return (ops.bind(all_gather, x, axis_name=axis_name, axis_size=axis_size,
                         axis=axis + 1, tiled=tiled),)
    # the gathered value is the whole batch, the same for every example
    x = br.bring(ops, x, b, axis_size)
    stacked = br.move_axis(ops, x, 0, axis)
    if not tiled:
        return (stacked,)
    shape = list(x.type.shape[1:])
    shape[axis] *= axis_size
    return (ops.reshape(stacked, shape),)


def _all_gather_vjp(ops, cts, primals, outs, *, axis_name, axis_size, axis, tiled):
    """Every example's cotangent of the whole gathered value, summed, then this
    example's part of it (JAX's psum_scatter)."""
    (x,) = primals
    total = ops.bind(psum, cts[0], axis_name=axis_name)
    i = ops.bind(axis_index, axis_name=axis_name)
    zero = ops.const(0, dt.int32)
    if tiled:
        starts = [zero] * x.type.ndim
        starts[axis] = ops.mul(i, ops.const(x.type.shape[axis], dt.int32))
        return (ops.bind(shape_ops.dynamic_slice, total, *starts, sizes=x.type.shape),)
    starts = [zero] * (x.type.ndim + 1)
    starts[axis] = i
    sizes = list(x.type.shape)
    sizes.insert(axis, 1)
    part = ops.bind(shape_ops.dynamic_slice, total, *starts, sizes=tuple(sizes))
    return (ops.reshape(part, x.type.shape),)


all_gather = Primitive("all_gather", _all_gather_rule, *_unbound("all_gather"),
                       vjp=_all_gather_vjp, family="collective")
all_gather.batch = _all_gather_batch


def _axis_index_rule(*, axis_name):
    return TensorType((), dt.int32)


def _axis_index_batch(ops, xs, batched, *, axis_name):
    return (ops.iota((ops.axis[1],), dt.int32, 0),)


axis_index = Primitive("axis_index", _axis_index_rule, *_unbound("axis_index"),
                       vjp=NOT_DIFFERENTIABLE, family="collective")
axis_index.batch = _axis_index_batch

PRIMITIVES = [psum, pmax, pmin, all_gather, axis_index]
