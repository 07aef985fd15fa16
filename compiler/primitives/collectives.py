"""Collectives over a named axis: psum, pmax, pmin, all_gather, axis_index, ppermute,
all_to_all, psum_scatter.

The axis is either a vmapped axis or an axis of a device mesh:

- Inside `vmap(f, axis_name="i")`, f is traced once for one example; a collective there
  is an op naming axis "i". Batching that vmap (compiler/batching.py) turns it into an
  ordinary computation over the batch axis: psum becomes a sum over axis 0, axis_index
  an iota, all_gather the batched value itself. Those batching rules are also what the
  collectives mean across devices: the reference rule of shard_map (sharding.py) batches
  its body over the mesh axes.
- Inside shard_map's body they are emitted as StableHLO collectives over the devices
  of the mesh (replica groups of logical device ids, as jax writes them). The emitter
  knows the mesh while it writes that body (`Emitter.mesh`).

Anywhere else a collective has no meaning: emitting or interpreting one raises.
"""

from __future__ import annotations

import math

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..errors import ShapeError
from ..ir import TensorType
from ..primitive import NOT_DIFFERENTIABLE, Primitive
from . import reductions, shape_ops


def _unbound_error(opname: str, axis_name) -> ShapeError:
    return ShapeError(f"{opname}: axis name {axis_name!r} is not bound by an enclosing "
                      f"vmap(..., axis_name={axis_name!r})")


def _unbound_reference(opname: str):
    """A collective left unbatched outside a device program has no meaning."""
    def reference(*_, axis_name, **__):
        raise _unbound_error(opname, axis_name)
    return reference


# ---- emission over a mesh ------------------------------------------------------------

def _mesh(ctx, opname: str):
    mesh = ctx.emitter.mesh
    if mesh is None or ctx.attrs["axis_name"] not in mesh.axis_names:
        raise _unbound_error(opname, ctx.attrs["axis_name"])
    return mesh


def replica_groups(mesh, axis_name) -> np.ndarray:
    """The groups of logical device ids (row-major over the mesh) that differ only in
    their position along `axis_name`: one row per group, in axis order."""
    sizes = tuple(mesh.axis_sizes)
    a = list(mesh.axis_names).index(axis_name)
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    return np.moveaxis(ids, a, -1).reshape(-1, sizes[a])


def _dense_i64(a: np.ndarray) -> str:
    return (f"dense<{np.asarray(a).tolist()}> : "
            f"tensor<{'x'.join(map(str, a.shape))}xi64>")


_CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def _groups(ctx, opname: str) -> str:
    groups = replica_groups(_mesh(ctx, opname), ctx.attrs["axis_name"])
    return f"replica_groups = {_dense_i64(groups)}"


def _combiner(ctx, name: str) -> str:
    scalar = TensorType((), ctx.in_types[0].dtype)
    return ctx.region([scalar, scalar], lambda a, b: ctx.op(name, [a, b], [scalar]))


def _all_reduce_emit(opname: str, combine: str):
    def emit(ctx, x):
        return ctx.op("stablehlo.all_reduce", [x], ctx.out_types,
                      f"{_CHANNEL}, {_groups(ctx, opname)}, use_global_device_ids",
                      regions=[_combiner(ctx, combine)])
    return emit


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


def _collective(name: str, reducer, kind: str, combine: str, vjp=None) -> Primitive:
    p = Primitive(name, _same_rule, _all_reduce_emit(name, combine), _unbound_reference(name),
                  vjp=vjp, family="collective")
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


psum = _collective("psum", reductions.reduce_sum, "sum", "stablehlo.add", vjp=_psum_vjp)
pmax = _collective("pmax", reductions.reduce_max, "max", "stablehlo.maximum",
                   vjp=_extremum_vjp)
pmin = _collective("pmin", reductions.reduce_min, "min", "stablehlo.minimum",
                   vjp=_extremum_vjp)


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


def _all_gather_emit(ctx, x):
    axis = ctx.attrs["axis"]
    if not ctx.attrs["tiled"]:  # gather blocks of one along a new axis
        shape = list(ctx.in_types[0].shape)
        shape.insert(axis, 1)
        x = ctx.op("stablehlo.reshape", [x], [TensorType(shape, ctx.in_types[0].dtype)])[0]
    return ctx.op("stablehlo.all_gather", [x], ctx.out_types,
                  f"all_gather_dim = {axis} : i64, {_CHANNEL}, "
                  f"{_groups(ctx, 'all_gather')}, use_global_device_ids")


all_gather = Primitive("all_gather", _all_gather_rule, _all_gather_emit,
                       _unbound_reference("all_gather"), vjp=_all_gather_vjp,
                       family="collective")
all_gather.batch = _all_gather_batch


def _axis_index_rule(*, axis_name):
    return TensorType((), dt.int32)


def _axis_index_batch(ops, xs, batched, *, axis_name):
    return (ops.iota((ops.axis[1],), dt.int32, 0),)


def _axis_index_emit(ctx):
    """The device's position along the axis: (partition id / stride) mod size."""
    mesh = _mesh(ctx, "axis_index")
    a = list(mesh.axis_names).index(ctx.attrs["axis_name"])
    stride = math.prod(mesh.axis_sizes[a + 1:])
    u32 = TensorType((), dt.uint32)
    pid = ctx.op("stablehlo.partition_id", [], [u32])[0]
    q = ctx.op("stablehlo.divide", [pid, ctx.constant(stride, dt.uint32)], [u32])[0]
    r = ctx.op("stablehlo.remainder", [q, ctx.constant(mesh.axis_sizes[a], dt.uint32)],
               [u32])[0]
    return ctx.op("stablehlo.convert", [r], ctx.out_types)


axis_index = Primitive("axis_index", _axis_index_rule, _axis_index_emit,
                       _unbound_reference("axis_index"), vjp=NOT_DIFFERENTIABLE,
                       family="collective")
axis_index.batch = _axis_index_batch


# ---- ppermute ------------------------------------------------------------------------

def _ppermute_rule(x, *, axis_name, perm):
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ShapeError(f"ppermute: perm {perm} sends from or to one position twice")
    return x


def _ppermute_emit(ctx, x):
    groups = replica_groups(_mesh(ctx, "ppermute"), ctx.attrs["axis_name"])
    pairs = np.array([(g[s], g[d]) for g in groups for s, d in ctx.attrs["perm"]],
                     dtype=np.int64).reshape(-1, 2)
    return ctx.op("stablehlo.collective_permute", [x], ctx.out_types,
                  f"{_CHANNEL}, source_target_pairs = {_dense_i64(pairs)}")


def _ppermute_batch(ops, xs, batched, *, axis_name, perm):
    (x,), (b,) = xs, batched
    if ops.axis[0] != axis_name:
        return (ops.bind(ppermute, x, axis_name=axis_name, perm=perm),)
    n = ops.axis[1]
    x = br.bring(ops, x, b, n)
    shape = x.type.shape
    source = {d: s for s, d in perm}
    pieces = []
    for j in range(n):  # position j receives from source[j], or zeros
        if j in source:
            start = [source[j]] + [0] * (len(shape) - 1)
            limit = [source[j] + 1] + list(shape[1:])
            pieces.append(ops.bind(shape_ops.slice_, x, start=tuple(start),
                                   limit=tuple(limit), strides=(1,) * len(shape)))
        else:
            pieces.append(ops.const(0, x.type.dtype, (1,) + tuple(shape[1:])))
    return (ops.bind(shape_ops.concatenate, *pieces, dimension=0),)


ppermute = Primitive("ppermute", _ppermute_rule, _ppermute_emit,
                     _unbound_reference("ppermute"), family="collective")
ppermute.vjp = lambda ops, cts, primals, outs, *, axis_name, perm: (
    ops.bind(ppermute, cts[0], axis_name=axis_name, perm=tuple((d, s) for s, d in perm)),)
ppermute.batch = _ppermute_batch


# ---- all_to_all (tiled: split_axis is cut into axis_size blocks) ----------------------

def _all_to_all_rule(x, *, axis_name, axis_size, split_axis, concat_axis):
    for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
        if not 0 <= a < x.ndim:
            raise ShapeError(f"all_to_all: {what} {a} is out of range for an operand of "
                             f"rank {x.ndim}")
    if x.shape[split_axis] % axis_size:
        raise ShapeError(f"all_to_all: split axis {split_axis} of size "
                         f"{x.shape[split_axis]} does not divide into {axis_size} blocks")
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return TensorType(shape, x.dtype)


def _all_to_all_emit(ctx, x):
    a = ctx.attrs
    return ctx.op("stablehlo.all_to_all", [x], ctx.out_types,
                  f"{_CHANNEL}, concat_dimension = {a['concat_axis']} : i64, "
                  f"{_groups(ctx, 'all_to_all')}, split_count = {a['axis_size']} : i64, "
                  f"split_dimension = {a['split_axis']} : i64")


def _all_to_all_batch(ops, xs, batched, *, axis_name, axis_size, split_axis, concat_axis):
    """Position i gets block i of every position j's split axis, concatenated in j
    order along the concat axis."""
    (x,), (b,) = xs, batched
    if ops.axis[0] != axis_name:
        return (ops.bind(all_to_all, x, axis_name=axis_name, axis_size=axis_size,
                         split_axis=split_axis + 1, concat_axis=concat_axis + 1),)
    n = axis_size
    x = br.bring(ops, x, b, n)
    local = list(x.type.shape[1:])
    # (j, ..., i, block, ...): the split axis cut into n blocks of size block
    cut = [n] + local[:split_axis] + [n, local[split_axis] // n] + local[split_axis + 1:]
    x = ops.reshape(x, cut)

    def pos(k):  # where local axis k (after the cut) sits in `cut`
        return k + 1 if k < split_axis else (split_axis + 2 if k == split_axis else k + 2)

    perm = [split_axis + 1] + [pos(k) for k in range(concat_axis)] + [0] + [
        pos(k) for k in range(concat_axis, len(local))]
    x = ops.transpose(x, perm)  # (i, ..., j, concat axis, ...)
    out = [n] + local
    out[split_axis + 1] //= n
    out[concat_axis + 1] *= n
    return (ops.reshape(x, out),)


all_to_all = Primitive("all_to_all", _all_to_all_rule, _all_to_all_emit,
                       _unbound_reference("all_to_all"), family="collective")
all_to_all.vjp = lambda ops, cts, primals, outs, *, axis_name, axis_size, split_axis, \
    concat_axis: (ops.bind(all_to_all, cts[0], axis_name=axis_name, axis_size=axis_size,
                           split_axis=concat_axis, concat_axis=split_axis),)
all_to_all.batch = _all_to_all_batch


# ---- psum_scatter (tiled: position i keeps block i of the sum) ------------------------

def _psum_scatter_rule(x, *, axis_name, axis_size, scatter_dimension):
    d = scatter_dimension
    if not 0 <= d < x.ndim or x.shape[d] % axis_size:
        raise ShapeError(f"psum_scatter: scatter_dimension {d} of an operand of shape "
                         f"{x.shape} must exist and divide into {axis_size} blocks")
    shape = list(x.shape)
    shape[d] //= axis_size
    return TensorType(shape, x.dtype)


def _psum_scatter_emit(ctx, x):
    return ctx.op("stablehlo.reduce_scatter", [x], ctx.out_types,
                  f"{_CHANNEL}, {_groups(ctx, 'psum_scatter')}, "
                  f"scatter_dimension = {ctx.attrs['scatter_dimension']} : i64, "
                  f"use_global_device_ids", regions=[_combiner(ctx, "stablehlo.add")])


def _psum_scatter_batch(ops, xs, batched, *, axis_name, axis_size, scatter_dimension):
    (x,), (b,) = xs, batched
    if ops.axis[0] != axis_name:
        return (ops.bind(psum_scatter, x, axis_name=axis_name, axis_size=axis_size,
                         scatter_dimension=scatter_dimension + 1),)
    n, d = axis_size, scatter_dimension
    total = ops.bind(reductions.reduce_sum, x, axes=(0,)) if b else ops.scale(x, n)
    shape = list(total.type.shape)
    cut = shape[:d] + [n, shape[d] // n] + shape[d + 1:]
    return (br.move_axis(ops, ops.reshape(total, cut), d, 0),)


def _psum_scatter_vjp(ops, cts, primals, outs, *, axis_name, axis_size, scatter_dimension):
    return (ops.bind(all_gather, cts[0], axis_name=axis_name, axis_size=axis_size,
                     axis=scatter_dimension, tiled=True),)


psum_scatter = Primitive("psum_scatter", _psum_scatter_rule, _psum_scatter_emit,
                         _unbound_reference("psum_scatter"), vjp=_psum_scatter_vjp,
                         family="collective")
psum_scatter.batch = _psum_scatter_batch

PRIMITIVES = [psum, pmax, pmin, all_gather, axis_index, ppermute, all_to_all, psum_scatter]
