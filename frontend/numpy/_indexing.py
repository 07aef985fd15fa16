"""x[index] and x.at[index]: NumPy's indexing rules over gather and scatter.

Basic indices (integers, slices of any step, None, Ellipsis) become one static slice
(+ reverse) and a reshape; scalar integer tensors become a dynamic_slice. Integer
arrays (NumPy arrays, lists, integer tensors) are advanced indices: they broadcast
together, and the result takes NumPy's layout (the broadcast index dimensions replace
the indexed axes when those are adjacent, and go first otherwise). They are applied
with one `gather`, on every backend, traced or not.

Boolean masks select a data-dependent number of elements: on concrete tensors they are
turned into integer indices on the host; inside jit they raise MustCompileError (use
where(mask, x, 0), or nonzero(mask, size=...)).

Out-of-range indices:
  * static indices (Python ints, NumPy arrays, lists) raise IndexError naming the index,
    the axis and its size, as NumPy does;
  * tensor indices are not checked (that would need the values on the host). As in JAX,
    negative ones count from the end; reads (x[i], .at[i].get()) clamp into range, and
    updates (.at[i].set/add/...) drop an update whose index is out of range.
An explicit `mode=` (x.at[i].get/set/add/..., take, take_along_axis) applies to static
and tensor indices alike, as in JAX: negative indices count from the end once, then
"clip" clamps into range; for reads "fill" (or "drop") gives `fill_value` and
"promise_in_bounds" clamps; for updates "drop" (or "fill", "promise_in_bounds") skips
the out-of-range updates.
"""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import indexing as ix
from ..compiler.primitives import shape_ops as so
from ..compiler.symbolic import DimExpr, slice_indices
from ..dispatch import bind, bind1, kept_attrs
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._creation import arange
from ._index_values import (
    _host_index,
    _in_range,
    _is_int,
    _is_mask,
    _tensor_index,
    index_as,
    index_dtype,
    static_indices_in_mode,
)
from ._manipulation import concatenate, reshape
from ._operands import (
    as_tensor,
    astype,
    broadcast_shapes,
    broadcast_to,
    has_value,
    values_in,
)


def _is_array_index(i) -> bool:
    if isinstance(i, Tensor):
        return i.ndim > 0 or i.dtype is dt.bool_
    if isinstance(i, (np.ndarray, list)):
        return True
    return isinstance(i, (bool, np.bool_))


def _expand(index, ndim: int) -> list:
    if not isinstance(index, tuple):
        index = (index,)
    def consumes(i):
        if i is None:
            return 0
        if isinstance(i, Tensor) and i.dtype is dt.bool_:
            return i.ndim
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            return i.ndim
        return 1
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError(at_user_line("an index can only have a single ellipsis ('...')"))
    used = sum(consumes(i) for i in index if i is not Ellipsis)
    if used > ndim:
        raise IndexError(at_user_line(f"too many indices for a tensor of dimension {ndim}: "
                                      f"{used} were given"))
    out = []
    for i in index:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(i)
    if not n_ellipsis:
        out.extend([slice(None)] * (ndim - used))
    return out


# x.at[i].get's modes, as JAX reads them: what each does to an out-of-range index
GET_MODES = {None: None, "clip": "clip", "promise_in_bounds": "clip", "fill": "fill",
             "drop": "fill"}
# and x.at[i].set/add/...'s: "drop" skips the update, "clip" clamps its index
UPDATE_MODES = {None: None, "drop": "drop", "fill": "drop", "promise_in_bounds": "drop",
                "clip": "clip"}


# (shape, _plain_key) -> the ops of that basic index on that shape: x[:, None] and
# x[1:, ::2] in a training step rebuild none of the analysis below (~4 us a call)
_PLANS: dict = {}
_PLANS_KEPT = 4096


_INT = "int"  # a Python int's place in a plan key: its value is the program's input


def _plain_key(index) -> tuple | None:
    """A hashable key for an index made only of None, Ellipsis, Python ints and slices
    with int or None bounds (Python slices are unhashable before 3.12), else None. An
    int is keyed by its place alone (its value is checked and passed each call)."""
    items = index if type(index) is tuple else (index,)
    key = []
    for i in items:
        if i is None or i is Ellipsis:
            key.append(i)
        elif type(i) is slice:
            s, e, st = i.start, i.stop, i.step
            if not ((s is None or type(s) is int) and (e is None or type(e) is int)
                    and (st is None or type(st) is int)):
                return None
            key.append((s, e, st))
        elif type(i) is int:
            key.append(_INT)
        else:
            return None
    return tuple(key)


def _out_of_bounds(i: int, axis: int, n: int) -> IndexError:
    return IndexError(at_user_line(
        f"index {i} is out of bounds for axis {axis} with size {n} (jax.numpy would clamp "
        f"it to the nearest element; stablejit raises, as NumPy does. To clamp, write "
        f"x.at[i].get(mode='clip'); for a fill value, x.at[i].get(mode='fill', "
        f"fill_value=v))"))


def _run_plan(x: Tensor, plan: tuple, index) -> Tensor:
    """x[index] by a cached plan: its ops, and where the index has ints, the dynamic
    slice at their values (each checked against its axis, as the first call did)."""
    out = x
    for step in plan:
        if len(step) == 2:
            out = bind(step[0], (out,), step[1])[0]
            continue
        # (dynamic_slice, its sizes' Attrs, (axis, size) of each int, the other axes)
        runtime = x._backend.runtime_scalar
        starts = [None] * out.ndim
        if step[3]:
            zero = out._backend.scalar(0, DEFAULT_INT)  # (a constant: as _dynamic makes it)
            for axis in step[3]:
                starts[axis] = zero
        k = 0
        for i in (index if type(index) is tuple else (index,)):
            if type(i) is int:
                axis, n = step[2][k]
                if not -n <= i < n:
                    raise _out_of_bounds(i, axis, n)
                starts[axis] = runtime(i % n, DEFAULT_INT)
                k += 1
        out = bind(step[0], (out, *starts), step[1])[0]
    return out


def getitem(x: Tensor, index, mode: str | None = None, fill_value=None) -> Tensor:
    """x[index]. mode=None: static out-of-range indices raise IndexError, tensor ones
    clamp; "clip" (or "promise_in_bounds") clamps both, "fill" (or "drop") reads
    `fill_value` (JAX's default fill when None) at out-of-range indices of either kind."""
    plan_key = (x.shape, _plain_key(index)) if mode is None else None
    if plan_key is not None and plan_key[1] is not None:
        if _INT in plan_key[1]:  # (ints are a program input where the backend says so)
            plan_key = (*plan_key, type(x._backend))
        plan = _PLANS.get(plan_key)
        if plan is not None:
            return _run_plan(x, plan, index)
    else:
        plan_key = None
    index, empty_axes = _scalar_masks(index, x.ndim)
    if empty_axes:
        return getitem(getitem(x, index, mode, fill_value),
                       (slice(None),) * empty_axes[0] + (slice(0, 0),))
    idx = _expand(index, x.ndim)
    if mode is not None:
        mode = GET_MODES[mode]
        idx = static_indices_in_mode(x, idx, mode)
    if any(_is_array_index(i) for i in idx) or mode == "fill" and any(
            isinstance(i, Tensor) for i in idx):
        return _advanced(x, idx, mode or "clip", fill_value)
    # basic indexing: one static slice (+ reverse), dynamic slices, one reshape
    start, limit, strides, rev = [], [], [], []
    out_shape, drop, dynamic = [], [], []
    int_axes, static_ints = [], False  # (axis, size) of each int that is an input
    # on a device an integer index is a program input: x[i] in a loop compiles once
    runtime = getattr(x._backend, "runtime_scalar", None)
    axis = 0
    for i in idx:
        if i is None:
            out_shape.append(("new",))
            continue
        n = x.shape[axis]
        if isinstance(i, slice):
            if type(n) is DimExpr:  # a symbolic size (export)
                s, e, st, count = slice_indices(i, n)
            else:
                s, e, st = i.indices(n)
                count = len(range(s, e, st))
            if st < 0:
                rev.append(axis)
                s, st = n - 1 - s, -st
            start.append(s)
            limit.append(s + (count - 1) * st + 1 if count else s)
            strides.append(st)
            out_shape.append(("axis", axis))
        elif _is_int(i):
            i = int(i)
            if not -n <= i < n:
                raise _out_of_bounds(i, axis, n)
            i %= n
            at = runtime(i, DEFAULT_INT) if runtime is not None else None
            if at is not None:  # an input of the program, not part of its key
                start.append(0)
                limit.append(n)
                dynamic.append((axis, at, True))
                int_axes.append((axis, n))
            else:
                start.append(i)
                limit.append(i + 1)
                static_ints = True
            strides.append(1)
            drop.append(axis)
        elif isinstance(i, Tensor) and i.ndim == 0 and i.dtype.is_integer:
            start.append(0)
            limit.append(n)
            strides.append(1)
            dynamic.append((axis, i, False))
            drop.append(axis)
        else:
            raise IndexError(at_user_line(
                f"unsupported index {i!r} of type {type(i).__name__}: use integers, slices, "
                f"None, Ellipsis, integer tensors or boolean masks"))
        axis += 1
    out, plan = x, []
    if rev:
        plan.append((so.reverse, Attrs({"axes": tuple(rev)})))
        out = bind(plan[-1][0], (out,), plan[-1][1])[0]
    if tuple(start) != (0,) * x.ndim or tuple(limit) != x.shape or any(s != 1 for s in strides):
        plan.append((so.slice_, Attrs({"start": tuple(start), "limit": tuple(limit),
                                       "strides": tuple(strides)})))
        out = bind(plan[-1][0], (out,), plan[-1][1])[0]
    if dynamic:
        out = _dynamic(out, dynamic)
        ints = {axis for axis, _ in int_axes}
        plan.append((so.dynamic_slice, kept_attrs(_SIZES, "sizes", out.shape), tuple(int_axes),
                     tuple(a for a in range(out.ndim) if a not in ints)))
    shape = []
    for item in out_shape:
        shape.append(1 if item[0] == "new" else out.shape[item[1]])
    # dropped axes are not in out_shape; `shape` lists kept and new axes in order
    if tuple(shape) != out.shape:
        out = reshape(out, tuple(shape))
        plan.append((so.reshape, Attrs({"shape": out.shape})))
    # (a plan with ints: each one an input here; a tensor index is never in a plan key)
    if plan_key is not None and not static_ints and all(type(n) is int for n in x.shape):
        if len(_PLANS) >= _PLANS_KEPT:
            _PLANS.clear()
        _PLANS[plan_key] = tuple(plan)
    return out


def _is_scalar_mask(i) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return True
    return isinstance(i, (Tensor, np.ndarray)) and i.ndim == 0 and dt.dtype(
        i.dtype) is dt.bool_ and (not isinstance(i, Tensor) or i._backend.concrete)


def _scalar_masks(index, ndim: int):
    """NumPy's x[True] is x[None] and x[False] is x[None][:0]: scalar boolean masks
    (Python bools, 0-d boolean arrays or concrete tensors) among basic indices become
    new axes. Returns the index and the output positions of the False ones."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(_is_scalar_mask(i) for i in parts) or any(
            _is_array_index(i) and not _is_scalar_mask(i) for i in parts):
        return index, []
    out, empty_axes, pos = [], [], 0
    for i in parts:
        if _is_scalar_mask(i):
            if not bool(i):
                empty_axes.append(pos)
            i = None
        out.append(i)
        if i is Ellipsis:  # the axes it stands for are kept
            pos += ndim - sum(1 for j in parts if j is not None and j is not Ellipsis
                              and not _is_scalar_mask(j))
        elif not (_is_int(i) or isinstance(i, Tensor)):  # None and slices make an axis
            pos += 1
    return tuple(out), empty_axes


_SIZES: dict = {}  # dynamic_slice's sizes -> its Attrs (x[i] in a loop: the same few)


def _dynamic(x: Tensor, dynamic) -> Tensor:
    """x sliced at the 0-d integer tensors of `dynamic`: (axis, index, whether the index
    is known to lie in [0, n) already) triples."""
    sizes = list(x.shape)
    zero = x._backend.scalar(0, DEFAULT_INT) if len(dynamic) < x.ndim else None
    starts = []
    by_axis = {axis: (i, in_range) for axis, i, in_range in dynamic}
    for axis in range(x.ndim):
        if axis in by_axis:
            i, in_range = by_axis[axis]
            if not in_range:
                n = x.shape[axis]
                i = index_as(i, n, DEFAULT_INT)
                i = (i < 0) * n + i  # negative indices count from the end, as in NumPy
            starts.append(i)
            sizes[axis] = 1
        else:
            starts.append(zero)
    attrs = kept_attrs(_SIZES, "sizes", tuple(sizes))
    return bind(so.dynamic_slice, (x, *starts), attrs)[0]


def _masks_to_integers(x: Tensor, idx: list) -> list:
    """Boolean masks become one integer array per masked axis (on the host)."""
    out, axis = [], 0
    for i in idx:
        if i is None:
            out.append(i)
            continue
        if not _is_mask(i):
            out.append(i)
            axis += 1
            continue
        if isinstance(i, Tensor) and not has_value(i):
            raise MustCompileError(at_user_line(
                "boolean-mask indexing inside jit cannot be compiled: the number of selected "
                "elements depends on the data, and XLA programs have static shapes. Use "
                "stablejit.numpy.where(mask, x, 0) to keep the shape, "
                "nonzero(mask, size=N) for a fixed number of indices, or index outside jit"))
        m = i.numpy() if isinstance(i, Tensor) else np.asarray(i, dtype=bool)
        if m.ndim == 0:
            raise IndexError(at_user_line(
                "a scalar boolean index (x[True]) is not supported; use x[None] or "
                "x[None][:0]"))
        for j, n in enumerate(m.shape):
            if n not in (x.shape[axis + j], 0):  # a 0-size mask axis selects nothing (spec)
                raise IndexError(at_user_line(
                    f"boolean index did not match indexed tensor along axis {axis + j}; "
                    f"size of axis is {x.shape[axis + j]} but size of corresponding "
                    f"boolean axis is {n}"))
        out.extend(np.nonzero(m))
        axis += m.ndim
    return out


class _Plan:
    """Advanced indices of one index expression, normalised.

    layout: the result axes in order, each ("new",), ("basic", axis) or ("B",)
    adv:    [(operand axis, index tensor)] broadcast to `bshape`
    valid:  bool tensor of shape bshape (tensor indices in range), or None
    """

    def __init__(self, x: Tensor, idx: list, need_valid: bool):
        idx = _masks_to_integers(x, idx)
        entries, axis = [], 0
        for i in idx:
            if i is None:
                entries.append(("new",))
                continue
            entries.append(("basic", axis) if isinstance(i, slice) else ("adv", axis, i))
            axis += 1
        self.slices = tuple(i if isinstance(i, slice) else slice(None) for i in idx
                            if i is not None)
        adv_pos = [k for k, e in enumerate(entries) if e[0] == "adv"]
        contiguous = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)) if adv_pos else True
        rest = [e for e in entries if e[0] != "adv"]
        if contiguous and adv_pos:
            layout = entries[:adv_pos[0]] + [("B",)] + entries[adv_pos[-1] + 1:]
        else:
            layout = [("B",)] + rest
        self.layout = layout
        sizes = [x.shape[e[1]] for e in entries if e[0] == "adv"]
        idt = index_dtype(*sizes) if not any(isinstance(e[2], Tensor) and e[2].dtype is
                                               dt.int64 for e in entries if e[0] == "adv") \
            else dt.int64
        self.idt = idt
        adv, valid = [], []
        for e in entries:
            if e[0] != "adv":
                continue
            _, ax, i = e
            n = x.shape[ax]
            if isinstance(i, Tensor):
                t = _tensor_index(i, n, idt)
                if need_valid:
                    valid.append(_in_range(t, n))
            else:
                t = as_tensor(_host_index(i, n, ax, idt), like=x)
            adv.append((ax, t))
        self.bshape = broadcast_shapes(*(t.shape for _, t in adv))
        self.adv = [(ax, broadcast_to(t, self.bshape)) for ax, t in adv]
        self.valid = None
        for v in valid:
            v = broadcast_to(v, self.bshape)
            self.valid = v if self.valid is None else bind1(ew.and_, self.valid, v)

    def indices(self) -> Tensor:
        """The index vectors, shape bshape + (k,)."""
        cols = [reshape(t, self.bshape + (1,)) for _, t in self.adv]
        return cols[0] if len(cols) == 1 else concatenate(cols, axis=len(self.bshape))

    def gather_layout(self):
        return [e for e in self.layout if e[0] != "new"]


def _advanced(x: Tensor, idx, mode: str = "clip", fill_value=None) -> Tensor:
    plan = _Plan(x, idx, need_valid=mode == "fill")
    y = getitem(x, plan.slices)  # the basic part first: a static slice of x
    nb = len(plan.bshape)
    axes = [ax for ax, _ in plan.adv]
    offset_dims, pos = [], 0
    for e in plan.gather_layout():
        if e[0] == "B":
            b_at = pos
            pos += nb
        else:
            offset_dims.append(pos)
            pos += 1
    if y.size == 0 and any(y.shape[d] == 0 for d in axes):
        # no data to read, but XLA's gather needs its 1-wide slice to fit each indexed axis
        y = broadcast_to(y._backend.scalar(0, y.dtype),
                         tuple(1 if d in axes and n == 0 else n for d, n in enumerate(y.shape)))
    out = bind1(ix.gather, y, plan.indices(), offset_dims=tuple(offset_dims),
                collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes),
                index_vector_dim=nb,
                slice_sizes=tuple(1 if d in axes else n for d, n in enumerate(y.shape)))
    if mode == "fill" and plan.valid is not None:
        mask = bind1(so.broadcast_in_dim, plan.valid, shape=out.shape,
                     broadcast_dimensions=tuple(range(b_at, b_at + nb)))
        fill = broadcast_to(out._backend.scalar(_fill(out.dtype, fill_value), out.dtype),
                            out.shape)
        out = bind1(ew.select, mask, out, fill)
    shape, it = [], iter(out.shape)
    for e in plan.layout:
        if e[0] == "new":
            shape.append(1)
        elif e[0] == "B":
            shape.extend(next(it) for _ in range(nb))
        else:
            shape.append(next(it))
    return reshape(out, tuple(shape)) if tuple(shape) != out.shape else out


def _fill(d: dt.DType, fill_value):
    """JAX's default fill for out-of-range reads: NaN, the most negative signed integer,
    the largest unsigned one, True."""
    if fill_value is not None:
        return fill_value
    if d.is_inexact:
        return np.nan
    if d.kind == "b":
        return True
    info = np.iinfo(d.np)
    return info.min if d.kind == "i" else info.max


def _leading_advanced(idx: list) -> int:
    """k when idx is k advanced indices on the leading axes followed by full slices;
    else -1 (then the update goes through flat positions)."""
    k = 0
    while k < len(idx) and idx[k] is not None and not isinstance(idx[k], slice) and not \
            _is_mask(idx[k]):
        k += 1
    if any(not (isinstance(i, slice) and i == slice(None)) for i in idx[k:]):
        return -1
    return k


def _update(x: Tensor, index, values, kind: str, *, mode: str | None = None,
            indices_are_sorted: bool = False, unique_indices: bool = False,
            last_wins: bool = False) -> Tensor:
    """x with `values` written at `index` (kind "set", or combined with "add", ...).
    last_wins (NumPy's writes, x[i] = v and put): where a position is written twice,
    the last write stays, on every platform; XLA leaves the order of a scatter's writes
    to one position unspecified (sequential on the host, racing on GPUs), as jax's
    .at[].set does."""
    x = as_tensor(x)
    if mode not in UPDATE_MODES:
        raise ValueError(at_user_line(
            f"unknown mode {mode!r}; use 'drop', 'clip', 'fill' or 'promise_in_bounds'"))
    mode = UPDATE_MODES[mode]
    clip = mode == "clip"
    v = values_in(x, values)
    idx = _expand(index, x.ndim)
    # static indices: out-of-range ones raise without a mode; else clamped or made n,
    # which the scatter drops ("fill" as getitem reads it)
    static_mode = "raise" if mode is None else "clip" if clip else "fill"
    flags = {"indices_are_sorted": bool(indices_are_sorted),
             "unique_indices": bool(unique_indices)}
    k = _leading_advanced(idx)
    if k >= 1 and static_mode == "fill" and all(_is_int(i) for i in idx[:k]) and any(
            n and not -n <= int(i) < n for i, n in zip(idx[:k], x.shape, strict=False)):
        # a static position out of range: the update is dropped here, not by the scatter
        # (XLA for GPUs wrote a constant out-of-range index into the next row); an empty
        # axis has no position at all, which raises below as in jax
        _broadcast_values(v, x.shape[k:])
        return astype(x, x.dtype, copy=True)
    if k >= 1:
        plan = _Plan(x, static_indices_in_mode(x, idx[:k], static_mode), need_valid=False)
        ind = plan.indices()
        nb = len(plan.bshape)
        if clip:
            top = as_tensor(np.asarray([n - 1 for n in x.shape[:k]], plan.idt.np), like=x)
            top = bind1(so.broadcast_in_dim, top, shape=ind.shape,
                        broadcast_dimensions=(nb,))
            ind = bind1(ew.clamp, broadcast_to(ind._backend.scalar(0, ind.dtype), ind.shape),
                        ind, top)
        shape = plan.bshape + x.shape[k:]
        v = _broadcast_values(v, shape)
        if x.size == 0:  # nothing to update (and XLA refuses a window on an empty axis)
            return astype(x, x.dtype, copy=True)
        if last_wins and nb and not _statically_unique(idx[:k], x.shape[:k]):
            strides = np.cumprod((1,) + x.shape[1:k][::-1])[::-1]
            lin = ind[..., 0] * int(strides[0])  # the row-major position of each write
            for j in range(1, k):
                lin = lin + ind[..., j] * int(strides[j])
            keep = _last_writes(lin, int(np.prod(x.shape[:k])))
            # a write that a later one overrides goes out of range: the scatter drops it
            first = concatenate([ind[..., :1] * 0 + x.shape[0], ind[..., 1:]], axis=-1)
            ind = bind1(ew.select, broadcast_to(reshape(keep, keep.shape + (1,)), ind.shape),
                        ind, first)
        return bind1(ix.scatter, x, ind, v, update_window_dims=tuple(
            range(nb, nb + x.ndim - k)), inserted_window_dims=tuple(range(k)),
            scatter_dims_to_operand_dims=tuple(range(k)), index_vector_dim=nb, kind=kind,
            **flags)
    # general case: the flat position of every selected element, then a 1-d scatter
    idt = index_dtype(x.size + 1)
    with_tensors = any(isinstance(i, Tensor) for i in idx)
    if mode is None and with_tensors:  # the "fill" below must not hide a static one
        static_indices_in_mode(x, idx, "raise")
    ids = reshape(arange(x.size, dtype=idt, device=_device(x)), x.shape)
    read = None if mode is None and not with_tensors else "clip" if clip else "fill"
    pos = getitem(ids, index, mode=read,
                  fill_value=x.size)  # an out-of-range position: the scatter drops it
    v = _broadcast_values(v, pos.shape)
    if x.size == 0:  # nothing to update (and XLA refuses a window on an empty axis)
        return astype(x, x.dtype, copy=True)
    if last_wins and pos.size > 1:
        keep = _last_writes(pos, x.size)
        pos = bind1(ew.select, keep, pos, broadcast_to(pos._backend.scalar(x.size, pos.dtype),
                                                       pos.shape))
    flat = bind1(ix.scatter, reshape(x, (x.size,)), reshape(pos, pos.shape + (1,)), v,
                 update_window_dims=(), inserted_window_dims=(0,),
                 scatter_dims_to_operand_dims=(0,), index_vector_dim=pos.ndim, kind=kind,
                 **flags)
    return reshape(flat, x.shape)


def _statically_unique(idx, shape) -> bool:
    """Whether static integer indices (no tensors) select each position once."""
    if any(isinstance(i, Tensor) for i in idx):
        return False
    try:
        arrays = np.broadcast_arrays(*(np.asarray(i) for i in idx))
    except ValueError:
        return False
    if arrays[0].dtype.kind not in "iu":
        return False
    lin = np.ravel_multi_index([np.where(a < 0, a + n, a) for a, n in
                                zip(arrays, shape, strict=True)], shape, mode="clip")
    return np.unique(lin).size == lin.size


def _last_writes(pos: Tensor, size: int) -> Tensor:
    """For flat write positions `pos` (in [0, size]; size is a dropped write), whether
    each is the last write to its position in NumPy's (row-major) order: the largest
    write number per position, by a scatter-max, whose result does not depend on the
    order XLA applies it in."""
    order = reshape(arange(pos.size, dtype=pos.dtype, device=_device(pos)), pos.shape)
    last = bind1(ix.scatter, broadcast_to(pos._backend.scalar(-1, pos.dtype), (size + 1,)),
                 reshape(pos, pos.shape + (1,)), order, update_window_dims=(),
                 inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                 index_vector_dim=pos.ndim, kind="max", indices_are_sorted=False,
                 unique_indices=False)
    mine = bind1(ix.gather, last, reshape(pos, pos.shape + (1,)), offset_dims=(),
                 collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=pos.ndim,
                 slice_sizes=(1,))
    return bind1(ew.eq, mine, order)


def _device(x: Tensor):
    return x._backend if x._backend.concrete else None


def _broadcast_values(v: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    if v.shape == shape:
        return v
    vs = v.shape
    while len(vs) > len(shape) and vs[0] == 1:  # NumPy drops leading 1s of the values
        vs = vs[1:]
    if len(vs) <= len(shape) and all(  # trailing axes only: the shorter shape decides
            a in (1, b) for a, b in zip(vs[::-1], shape[::-1], strict=False)):
        return broadcast_to(reshape(v, vs) if vs != v.shape else v, shape)
    raise ValueError(at_user_line(
        f"values of shape {v.shape} cannot be broadcast to the indexed shape {shape}"))
