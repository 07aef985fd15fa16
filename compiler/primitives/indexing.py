"""Gather and scatter, with StableHLO's dimension numbers.

    gather(operand, indices)            one slice of `slice_sizes` per index vector
    scatter(operand, indices, updates)  combine update windows into a copy of operand;
                                        `kind` is the update computation:
                                        set (replace), add, mul, min, max

Out-of-range start indices follow StableHLO/XLA: gather clamps each start so the slice
stays inside the operand; scatter skips (drops) a whole update window that would leave
the operand. The frontend normalises negative indices and checks static ones; these
primitives see only what the program computes.

Batching dimensions (operand_batching_dims) are not used: the frontend expresses
batched gathers with explicit iota index components instead.
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..emitter import i64_array, i64_list
from ..errors import ShapeError
from ..ir import Literal, TensorType, scalar_type
from ..primitive import Primitive
from . import elementwise as ew
from . import reductions, shape_ops

SCATTER_KINDS = ("set", "add", "mul", "min", "max")
_SCATTER_BODY = {"add": "stablehlo.add", "mul": "stablehlo.multiply",
                 "min": "stablehlo.minimum", "max": "stablehlo.maximum"}


def _index_batch(opname: str, indices: TensorType, index_vector_dim: int):
    """(batch shape, index vector length) of an indices operand."""
    if not indices.dtype.is_integer:
        raise ShapeError(f"{opname}: indices must have an integer dtype, got "
                         f"{indices.dtype.name}")
    if not 0 <= index_vector_dim <= indices.ndim:
        raise ShapeError(f"{opname}: index_vector_dim {index_vector_dim} is out of range for "
                         f"indices of shape {indices.shape}")
    if index_vector_dim == indices.ndim:
        return indices.shape, 1
    batch = indices.shape[:index_vector_dim] + indices.shape[index_vector_dim + 1:]
    return batch, indices.shape[index_vector_dim]


def _check_dims(opname: str, what: str, dims, bound: int, *, ordered: bool = True) -> None:
    if len(set(dims)) != len(dims) or any(not 0 <= d < bound for d in dims):
        raise ShapeError(f"{opname}: {what} {tuple(dims)} must be distinct dimensions in "
                         f"[0, {bound})")
    if ordered and list(dims) != sorted(dims):
        raise ShapeError(f"{opname}: {what} {tuple(dims)} must be sorted")


def _index_map(opname: str, what: str, index_map, k: int, operand: TensorType) -> None:
    if len(index_map) != k:
        raise ShapeError(f"{opname}: the index vector has {k} components but {what} has "
                         f"{len(index_map)} entries")
    _check_dims(opname, what, index_map, operand.ndim, ordered=False)


# ---- gather --------------------------------------------------------------------------

def _gather_rule(x, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                 index_vector_dim, slice_sizes, indices_are_sorted=False):
    batch, k = _index_batch("gather", indices, index_vector_dim)
    _index_map("gather", "start_index_map", start_index_map, k, x)
    if len(slice_sizes) != x.ndim:
        raise ShapeError(f"gather: slice_sizes {tuple(slice_sizes)} needs one entry per "
                         f"axis of the operand {x}")
    for d, (s, n) in enumerate(zip(slice_sizes, x.shape, strict=True)):
        if not 0 <= s <= n:
            raise ShapeError(f"gather: slice size {s} on axis {d} does not fit the operand "
                             f"{x} (axis size {n})")
    _check_dims("gather", "collapsed_slice_dims", collapsed_slice_dims, x.ndim)
    for d in collapsed_slice_dims:
        if slice_sizes[d] != 1:
            raise ShapeError(f"gather: collapsed axis {d} must have slice size 1, not "
                             f"{slice_sizes[d]}")
    offsets = [s for d, s in enumerate(slice_sizes) if d not in collapsed_slice_dims]
    rank = len(batch) + len(offsets)
    if len(offset_dims) != len(offsets):
        raise ShapeError(f"gather: offset_dims {tuple(offset_dims)} must name "
                         f"{len(offsets)} result axes (one per uncollapsed slice axis)")
    _check_dims("gather", "offset_dims", offset_dims, rank)
    shape, b, o = [], iter(batch), iter(offsets)
    for i in range(rank):
        shape.append(next(o) if i in offset_dims else next(b))
    return TensorType(shape, x.dtype)


def _gather_emit(ctx, x, indices):
    a = ctx.attrs
    parts = [f"offset_dims = {i64_list(a['offset_dims'])}",
             f"collapsed_slice_dims = {i64_list(a['collapsed_slice_dims'])}",
             f"start_index_map = {i64_list(a['start_index_map'])}",
             f"index_vector_dim = {a['index_vector_dim']}"]
    return ctx.op("stablehlo.gather", [x, indices], ctx.out_types,
                  f"dimension_numbers = #stablehlo.gather<{', '.join(parts)}>, "
                  f"slice_sizes = {i64_array(a['slice_sizes'])}, "
                  f"indices_are_sorted = {str(bool(a.get('indices_are_sorted'))).lower()}")


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """indices with the index vector moved last: shape batch + (k,), as int64."""
    idx = np.asarray(indices)
    idx = idx[..., None] if index_vector_dim == idx.ndim else np.moveaxis(
        idx, index_vector_dim, -1)
    return idx.astype(np.int64)


def _window_grids(starts, batch, sizes, shape):
    """Per operand axis, start + arange(size) broadcast to batch + sizes."""
    nb, r = len(batch), len(sizes)
    grids = []
    for d in range(r):
        off = np.arange(sizes[d]).reshape((1,) * nb + tuple(
            sizes[d] if j == d else 1 for j in range(r)))
        grids.append(starts[d].reshape(tuple(batch) + (1,) * r) + off)
    return grids


def _gather_ref(x, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                index_vector_dim, slice_sizes, indices_are_sorted=False):
    idx = _index_vectors(indices, index_vector_dim)
    batch = idx.shape[:-1]
    starts = []
    for d in range(x.ndim):
        s = np.zeros(batch, np.int64)
        if d in start_index_map:
            s = idx[..., list(start_index_map).index(d)]
        starts.append(np.clip(s, 0, x.shape[d] - slice_sizes[d]))  # StableHLO clamps
    if x.ndim:
        out = x[tuple(_window_grids(starts, batch, slice_sizes, x.shape))]
    else:
        out = np.broadcast_to(x, batch)
    out = out.reshape(tuple(batch) + tuple(
        s for d, s in enumerate(slice_sizes) if d not in collapsed_slice_dims))
    nb = len(batch)
    perm, bi = [], 0
    for i in range(out.ndim):
        if i in offset_dims:
            perm.append(nb + list(offset_dims).index(i))
        else:
            perm.append(bi)
            bi += 1
    return out.transpose(perm)


def clamp_starts(ops, indices, operand_shape, start_index_map, index_vector_dim,
                 slice_sizes):
    """The start indices as gather uses them (clamped into the operand)."""
    top = _largest_starts(ops, indices, operand_shape, start_index_map, index_vector_dim,
                          slice_sizes)
    return ops.bind(ew.clamp, ops.zeros_like(indices), indices, top)


def _largest_starts(ops, indices, operand_shape, index_map, index_vector_dim, sizes):
    """Per index, the largest start that keeps its window inside the operand, shaped like
    `indices` (so it can clamp them or test them)."""
    t = indices.type
    hi = [operand_shape[d] - sizes[d] for d in index_map]
    if index_vector_dim == t.ndim:
        return ops.const(hi[0], t.dtype, t.shape)
    return ops.broadcast(ops.bind(shape_ops.constant, value=_lit(hi, t.dtype)), t.shape,
                         (index_vector_dim,))


def _lit(values, dtype):
    return Literal(np.asarray(values, dtype=dtype.np))


def _gather_vjp(ops, cts, primals, outs, *, offset_dims, collapsed_slice_dims,
                start_index_map, index_vector_dim, slice_sizes, indices_are_sorted=False):
    (ct,) = cts
    x, indices = primals
    if ct is None:
        return (None, None)
    # gather clamped its starts; scatter would drop them, so clamp first
    idx = clamp_starts(ops, indices, x.type.shape, start_index_map, index_vector_dim,
                       slice_sizes)
    zeros = ops.zeros_like(x)
    return (ops.bind(scatter, zeros, idx, ct, update_window_dims=tuple(offset_dims),
                     inserted_window_dims=tuple(collapsed_slice_dims),
                     scatter_dims_to_operand_dims=tuple(start_index_map),
                     index_vector_dim=index_vector_dim, kind="add",
                     indices_are_sorted=indices_are_sorted, unique_indices=False), None)


gather = Primitive("gather", _gather_rule, _gather_emit, _gather_ref, vjp=_gather_vjp,
                   family="indexing")


def _gather_batch(ops, xs, batched, *, offset_dims, collapsed_slice_dims, start_index_map,
                  index_vector_dim, slice_sizes, indices_are_sorted=False):
    (x, idx), (bx, bi) = xs, batched
    if not bi:  # the batch axis is one more whole slice axis, the result's first
        return (ops.bind(gather, x, idx, offset_dims=(0,) + br.shift(offset_dims),
                         collapsed_slice_dims=br.shift(collapsed_slice_dims),
                         start_index_map=br.shift(start_index_map),
                         index_vector_dim=index_vector_dim,
                         slice_sizes=(x.type.shape[0],) + tuple(slice_sizes),
                         indices_are_sorted=indices_are_sorted),)
    attrs = dict(offset_dims=br.shift(offset_dims), index_vector_dim=index_vector_dim + 1)
    if not bx:  # the batch axis is one more axis of index vectors, the result's first
        return (ops.bind(gather, x, idx, collapsed_slice_dims=tuple(collapsed_slice_dims),
                         start_index_map=tuple(start_index_map),
                         slice_sizes=tuple(slice_sizes), indices_are_sorted=False, **attrs),)
    # both: every index vector starts with its example's number, which picks (and
    # collapses) that example's slice of the batch axis
    return (ops.bind(gather, x, _with_batch_index(ops, idx, index_vector_dim + 1),
                     collapsed_slice_dims=(0,) + br.shift(collapsed_slice_dims),
                     start_index_map=(0,) + br.shift(start_index_map),
                     slice_sizes=(1,) + tuple(slice_sizes),
                     indices_are_sorted=indices_are_sorted, **attrs),)


def _with_batch_index(ops, idx, index_vector_dim: int):
    """Batched indices (batch axis first) whose index vectors (along index_vector_dim,
    possibly implicit) get a leading component: the example's number along axis 0."""
    t = idx.type
    n = t.shape[0]
    if index_vector_dim == t.ndim:
        idx = ops.reshape(idx, t.shape + (1,))
    if n - 1 > np.iinfo(t.dtype.np).max:  # too many examples for a narrow index dtype
        idx = ops.convert(idx, dt.int64)
    shape = list(idx.type.shape)
    shape[index_vector_dim] = 1
    counts = ops.iota(shape, idx.type.dtype, 0)
    return ops.bind(shape_ops.concatenate, counts, idx, dimension=index_vector_dim)


gather.batch = _gather_batch

# ---- scatter -------------------------------------------------------------------------


def _scatter_windows(x: TensorType, updates: TensorType, update_window_dims,
                     inserted_window_dims):
    """The window size along every operand axis (1 on inserted axes)."""
    sizes, it = [], iter(update_window_dims)
    for d in range(x.ndim):
        sizes.append(1 if d in inserted_window_dims else updates.shape[next(it)])
    return sizes


def _scatter_rule(x, indices, updates, *, update_window_dims, inserted_window_dims,
                  scatter_dims_to_operand_dims, index_vector_dim, kind,
                  indices_are_sorted=False, unique_indices=False):
    if kind not in SCATTER_KINDS:
        raise ShapeError(f"scatter: unknown update computation {kind!r}; use one of "
                         f"{', '.join(SCATTER_KINDS)}")
    if updates.dtype is not x.dtype:
        raise ShapeError(f"scatter: updates have dtype {updates.dtype.name} but the operand "
                         f"has {x.dtype.name}; convert the updates first")
    if x.dtype.kind == "b" and kind in ("add", "mul"):
        raise ShapeError(f"scatter: update computation {kind!r} needs a numeric operand, "
                         f"not bool")
    if x.dtype.kind == "c" and kind in ("min", "max"):
        raise ShapeError(f"scatter: update computation {kind!r} is not defined for complex")
    batch, k = _index_batch("scatter", indices, index_vector_dim)
    _index_map("scatter", "scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, k, x)
    _check_dims("scatter", "update_window_dims", update_window_dims, updates.ndim)
    _check_dims("scatter", "inserted_window_dims", inserted_window_dims, x.ndim)
    if len(update_window_dims) + len(inserted_window_dims) != x.ndim:
        raise ShapeError(f"scatter: {len(update_window_dims)} update window dims plus "
                         f"{len(inserted_window_dims)} inserted dims must equal the operand "
                         f"rank {x.ndim}")
    scatter_shape = tuple(n for d, n in enumerate(updates.shape)
                          if d not in update_window_dims)
    if scatter_shape != tuple(batch):
        raise ShapeError(f"scatter: updates {updates} have scatter dimensions "
                         f"{scatter_shape}, which must equal the index batch shape "
                         f"{tuple(batch)} of indices {indices}")
    for d, (w, n) in enumerate(zip(_scatter_windows(x, updates, update_window_dims,
                                                    inserted_window_dims), x.shape, strict=True)):
        if w > n:
            raise ShapeError(f"scatter: update window of size {w} on operand axis {d} is "
                             f"larger than the axis ({n})")
    return x


def _scatter_emit(ctx, x, indices, updates):
    a = ctx.attrs
    s = scalar_type(ctx.in_types[0].dtype)
    kind = a["kind"]
    if kind == "set":
        region = ctx.region([s, s], lambda old, new: [new])
    else:
        region = ctx.region([s, s], lambda old, new: ctx.op(_SCATTER_BODY[kind], [old, new],
                                                             [s]))
    parts = [f"update_window_dims = {i64_list(a['update_window_dims'])}",
             f"inserted_window_dims = {i64_list(a['inserted_window_dims'])}",
             f"scatter_dims_to_operand_dims = {i64_list(a['scatter_dims_to_operand_dims'])}",
             f"index_vector_dim = {a['index_vector_dim']}"]
    return ctx.op("stablehlo.scatter", [x, indices, updates], ctx.out_types,
                  f"scatter_dimension_numbers = #stablehlo.scatter<{', '.join(parts)}>, "
                  f"indices_are_sorted = {str(bool(a.get('indices_are_sorted'))).lower()}, "
                  f"unique_indices = {str(bool(a.get('unique_indices'))).lower()}",
                  regions=[region])


_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_ref(x, indices, updates, *, update_window_dims, inserted_window_dims,
                 scatter_dims_to_operand_dims, index_vector_dim, kind,
                 indices_are_sorted=False, unique_indices=False):
    out = np.array(x, copy=True)
    idx = _index_vectors(indices, index_vector_dim)
    batch = idx.shape[:-1]
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    u = np.transpose(updates, scatter_dims + list(update_window_dims))
    sizes = _scatter_windows(_t(x), _t(updates), update_window_dims, inserted_window_dims)
    starts = []
    valid = np.ones(batch, bool)
    for d in range(x.ndim):
        s = np.zeros(batch, np.int64)
        if d in scatter_dims_to_operand_dims:
            s = idx[..., list(scatter_dims_to_operand_dims).index(d)]
        # XLA drops windows that leave x (s <= n - size: s + size could overflow)
        valid &= (s >= 0) & (s <= x.shape[d] - sizes[d])
        starts.append(s)
    full = tuple(batch) + tuple(sizes)
    grids = [np.broadcast_to(g, full) for g in _window_grids(starts, batch, sizes, x.shape)]
    keep = np.broadcast_to(valid.reshape(tuple(batch) + (1,) * x.ndim), full)
    vals = np.broadcast_to(u.reshape(full), full)[keep]
    where = tuple(g[keep] for g in grids)
    with np.errstate(all="ignore"):
        if kind == "set":
            out[where] = vals
        else:
            _UFUNC[kind].at(out, where, vals)
    return out


def _t(a: np.ndarray) -> TensorType:
    return TensorType(a.shape, dt.dtype(a.dtype))


def _scatter_vjp(ops, cts, primals, outs, *, update_window_dims, inserted_window_dims,
                 scatter_dims_to_operand_dims, index_vector_dim, kind,
                 indices_are_sorted=False, unique_indices=False):
    (ct,) = cts
    x, indices, updates = primals
    (out,) = outs
    if ct is None:
        return (None, None, None)
    dn = dict(update_window_dims=tuple(update_window_dims),
              inserted_window_dims=tuple(inserted_window_dims),
              scatter_dims_to_operand_dims=tuple(scatter_dims_to_operand_dims),
              index_vector_dim=index_vector_dim, indices_are_sorted=indices_are_sorted,
              unique_indices=unique_indices)
    gdn = dict(offset_dims=tuple(update_window_dims),
               collapsed_slice_dims=tuple(inserted_window_dims),
               start_index_map=tuple(scatter_dims_to_operand_dims),
               index_vector_dim=index_vector_dim, indices_are_sorted=indices_are_sorted,
               slice_sizes=tuple(_scatter_windows(x.type, updates.type, update_window_dims,
                                                  inserted_window_dims)))

    def take(v):  # v at every update position (gather clamps; callers mask dropped ones)
        return ops.bind(gather, v, indices, **gdn)

    sizes = gdn["slice_sizes"]

    def in_bounds():  # updates whose window the scatter did not drop
        return _window_in_bounds(ops, indices, x.type.shape, scatter_dims_to_operand_dims,
                                 index_vector_dim, sizes, updates.type, update_window_dims)

    if kind == "add":
        return (ct, None, ops.select(in_bounds(), take(ct), ops.zeros_like(updates)))
    if kind == "set":
        # with repeated indices only the update that was written gets the cotangent: scatter
        # each update's id the same way and see which id each position kept
        ids = _update_ids(ops, updates)
        hit = ops.bind(scatter, ops.const(0, ids.type.dtype, x.type.shape), indices, ids,
                       kind="set", **dn)
        won = ops.eq(take(hit), ids)  # a dropped update's id is nowhere, so never won
        ct_x = ops.select(ops.eq(hit, ops.zeros_like(hit)), ct, ops.zeros_like(ct))
        return (ct_x, None, ops.select(won, take(ct), ops.zeros_like(updates)))
    if kind == "mul":
        if not unique_indices:
            raise NotImplementedError(
                "the gradient of a scatter-multiply is only defined here for unique indices; "
                "pass unique_indices=True to x.at[...].multiply(...) when the indices do not "
                "repeat")
        mask = in_bounds()
        factor = ops.bind(scatter, ops.ones_like(x), indices, updates, kind="mul", **dn)
        ct_u = ops.select(mask, take(ops.mul(ct, x)), ops.zeros_like(updates))
        return (ops.mul(ct, factor), None, ct_u)
    # min / max: the cotangent goes to the values equal to the result, split among ties
    mask = in_bounds()
    x_hit = ops.convert(ops.eq(x, out), x.type.dtype)
    u_hit = ops.select(mask, ops.convert(ops.eq(updates, take(out)), x.type.dtype),
                       ops.zeros_like(updates))
    count = ops.add(x_hit, ops.bind(scatter, ops.zeros_like(x), indices, u_hit, kind="add",
                                    **dn))
    share = ops.div(ct, ops.max(count, ops.ones_like(count)))
    return (ops.mul(share, x_hit), None, ops.mul(take(share), u_hit))


def _update_ids(ops, updates):
    """1 + the linear position of every update element, as int32 (0 means none)."""
    shape = updates.type.shape
    n = updates.type.size
    flat = ops.iota((n,), dt.int32, 0)
    flat = ops.add(flat, ops.const(1, dt.int32, (n,)))
    return ops.reshape(flat, shape)


def _window_in_bounds(ops, indices, operand_shape, index_map, index_vector_dim, sizes,
                      updates_type, update_window_dims):
    """A bool tensor of the updates' shape: whose window lies inside the operand."""
    t = indices.type
    top = _largest_starts(ops, indices, operand_shape, index_map, index_vector_dim, sizes)
    ok = ops.and_(ops.ge(indices, ops.zeros_like(indices)), ops.le(indices, top))
    if index_vector_dim < t.ndim:
        ok = ops.bind(reductions.reduce_and, ok, axes=(index_vector_dim,))
    scatter_dims = [d for d in range(updates_type.ndim) if d not in update_window_dims]
    return ops.broadcast(ok, updates_type.shape, scatter_dims)


scatter = Primitive("scatter", _scatter_rule, _scatter_emit, _scatter_ref, vjp=_scatter_vjp,
                    family="indexing")


def _scatter_batch(ops, xs, batched, *, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, index_vector_dim, **rest):
    """Operand and updates always get the batch axis (every example updates its own
    copy); indices as in gather's rule."""
    n = br.batch_size(xs, batched)
    x, u = br.bring(ops, xs[0], batched[0], n), br.bring(ops, xs[2], batched[2], n)
    if not batched[1]:  # the batch axis is one more whole window axis
        return (ops.bind(scatter, x, xs[1], u, update_window_dims=(0,) + br.shift(
            update_window_dims), inserted_window_dims=br.shift(inserted_window_dims),
            scatter_dims_to_operand_dims=br.shift(scatter_dims_to_operand_dims),
            index_vector_dim=index_vector_dim, **rest),)
    # the batch axis is one more axis of index vectors, each led by its example's number
    return (ops.bind(scatter, x, _with_batch_index(ops, xs[1], index_vector_dim + 1), u,
                     update_window_dims=br.shift(update_window_dims),
                     inserted_window_dims=(0,) + br.shift(inserted_window_dims),
                     scatter_dims_to_operand_dims=(0,) + br.shift(scatter_dims_to_operand_dims),
                     index_vector_dim=index_vector_dim + 1, **rest),)


scatter.batch = _scatter_batch

PRIMITIVES = [gather, scatter]


# ---- batching of dynamic_slice and dynamic_update_slice (defined in shape_ops, which
# cannot import gather and scatter: this module imports shape_ops) --------------------

def _zero_start(ops, starts):
    """The start of the new leading batch axis, in the dtype the other starts share."""
    return ops.const(0, starts[0].type.dtype if starts else dt.int32)


def _start_vectors(ops, starts, batched, n: int):
    """Scalar starts, some batched, as one (n, k) array of start vectors."""
    cols = [ops.reshape(br.bring(ops, s, b, n), (n, 1)) for s, b in zip(starts, batched,
                                                                         strict=True)]
    return cols[0] if len(cols) == 1 else ops.bind(shape_ops.concatenate, *cols, dimension=1)


def _dynamic_slice_batch(ops, xs, batched, *, sizes):
    (x, *starts), (bx, *bs) = xs, batched
    r = len(sizes)
    if not any(bs):  # slice the whole batch axis
        return (ops.bind(shape_ops.dynamic_slice, x, _zero_start(ops, starts), *starts,
                         sizes=(x.type.shape[0],) + tuple(sizes)),)
    # a gather of one window per example, which clamps its start as dynamic_slice does
    idx = _start_vectors(ops, starts, bs, br.batch_size(xs, batched))
    return _gather_batch(ops, (x, idx), (bx, True), offset_dims=tuple(range(r)),
                         collapsed_slice_dims=(), start_index_map=tuple(range(r)),
                         index_vector_dim=0, slice_sizes=tuple(sizes))


def _dus_batch(ops, xs, batched):
    (x, u, *starts), (bx, bu, *bs) = xs, batched
    n = br.batch_size(xs, batched)
    if not any(bs):  # update along the whole batch axis
        return (ops.bind(shape_ops.dynamic_update_slice, br.bring(ops, x, bx, n),
                         br.bring(ops, u, bu, n), _zero_start(ops, starts), *starts),)
    # a scatter of one window per example; dynamic_update_slice clamps its starts so the
    # update fits, where scatter would drop the window, so clamp them first
    r = len(starts)
    idx = clamp_starts(ops, _start_vectors(ops, starts, bs, n), x.type.shape[int(bx):],
                       tuple(range(r)), 1, u.type.shape[int(bu):])
    return _scatter_batch(ops, (x, idx, u), (bx, True, bu), update_window_dims=tuple(range(r)),
                          inserted_window_dims=(), scatter_dims_to_operand_dims=tuple(range(r)),
                          index_vector_dim=0, kind="set", indices_are_sorted=True,
                          unique_indices=True)


shape_ops.dynamic_slice.batch = _dynamic_slice_batch
shape_ops.dynamic_update_slice.batch = _dus_batch


# ---- helpers for rules that index along one axis --------------------------------------

def along_axis_indices(ops, idx, axis: int):
    """Full coordinates (shape idx.shape + (rank,)) that pick idx[..] along `axis` and
    the same position on every other axis: what take_along_axis gathers."""
    t = idx.type
    parts = []
    for d in range(t.ndim):
        comp = idx if d == axis else ops.iota(t.shape, t.dtype, d)
        parts.append(ops.reshape(comp, t.shape + (1,)))
    if len(parts) == 1:
        return parts[0]
    return ops.bind(shape_ops.concatenate, *parts, dimension=t.ndim)


def scatter_add_along_axis(ops, shape, idx, values, axis: int):
    """zeros(shape) with values added at idx along axis (the transpose of
    take_along_axis); idx and values have one shape."""
    r = len(shape)
    coords = along_axis_indices(ops, idx, axis)
    return ops.bind(scatter, ops.const(0, values.type.dtype, shape), coords, values,
                    update_window_dims=(), inserted_window_dims=tuple(range(r)),
                    scatter_dims_to_operand_dims=tuple(range(r)), index_vector_dim=r,
                    kind="add", indices_are_sorted=False, unique_indices=False)
