"""Index grids and index arithmetic: indices, mgrid, ogrid, ix_, unravel_index and
ravel_multi_index; NumPy's index helpers s_ and index_exp (plain Python objects) and
the concatenators r_ and c_.

Grid shapes are static: each 1-D axis is built once (with NumPy, from the static slice)
and broadcast with broadcast_in_dim, so a grid inside jit is never a large constant.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT, default_float
from ..tensor import Tensor
from ._elementwise import clip, floor_divide, logical_and, remainder, select
from ._manipulation import concatenate, reshape, stack, transpose
from ._operands import as_tensor, asarray, astype, broadcast_arrays
from ._reductions import all


def _iota(shape, dim: int, dtype) -> Tensor:
    return bind1(so.iota, shape=tuple(shape), dtype=dtype, dimension=dim)


def indices(dimensions, dtype=None, sparse: bool = False):
    """The index of every position of a grid of shape `dimensions`: one (len, *dims)
    tensor, or with sparse=True one broadcastable tensor per axis."""
    dims = tuple(int(d) for d in dimensions)
    d = dt.dtype(dtype) if dtype is not None else DEFAULT_INT
    if sparse:
        return tuple(_iota(tuple(n if j == i else 1 for j, n in enumerate(dims)), i, d)
                     for i in range(len(dims)))
    if not dims:
        return reshape(asarray(np.zeros(0, d.np)), (0,))
    return stack([_iota(dims, i, d) for i in range(len(dims))], 0)


def _axis_values(s) -> np.ndarray:
    """The 1-D values of one slice of mgrid/ogrid (a complex step is a point count)."""
    if not isinstance(s, slice):
        raise TypeError(at_user_line(f"mgrid/ogrid take slices such as mgrid[0:3, 0:1:5j], "
                                     f"got {s!r}"))
    return np.mgrid[s]


class _Grid:
    """mgrid[...] (dense, sparse=False) and ogrid[...] (open, sparse=True)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        axes = [_axis_values(s) for s in ((key,) if single else key)]
        d = default_float() if builtins.any(a.dtype.kind == "f" for a in axes) else DEFAULT_INT
        vals = [asarray(a.astype(d.np)) for a in axes]
        if single:
            return vals[0]
        shape = tuple(v.shape[0] for v in vals)
        n = len(vals)
        if self.sparse:
            return tuple(reshape(v, tuple(shape[i] if j == i else 1 for j in range(n)))
                         for i, v in enumerate(vals))
        return stack([bind1(so.broadcast_in_dim, v, shape=shape, broadcast_dimensions=(i,))
                      for i, v in enumerate(vals)], 0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)

# slices and tuples of them, as written inside [...]: NumPy's own objects (JAX's too)
s_ = np.s_
index_exp = np.index_exp


class _Concatenator:
    """r_[...] and c_[...]: the items concatenated along `axis`, each made at least
    `ndmin`-D (a 1-D item's axis placed by `trans1d`, NumPy's rule). A slice is a range
    (a complex step is a point count, as in mgrid); a leading string 'axis[,ndmin[,
    trans1d]]' changes the three."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        # ranges and scalars are made where the tensors among the items are
        like = next((item for item in key if isinstance(item, Tensor)), None)
        items = []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(at_user_line(
                        f"{self.name}: a string directive must come first, got {item!r} at "
                        f"position {k}"))
                if item in ("r", "c"):
                    raise ValueError(at_user_line(
                        f"{self.name}: the matrix directives 'r' and 'c' are not supported "
                        f"(stablejit has no matrix class, nor has JAX)"))
                try:
                    vec = [int(v) for v in item.split(",")]
                except ValueError:
                    raise ValueError(at_user_line(
                        f"{self.name}: the directive {item!r} is not 'axis[,ndmin[,trans1d]]' "
                        f"with integers")) from None
                if len(vec) > 3:
                    raise ValueError(at_user_line(
                        f"{self.name}: the directive {item!r} has more than 3 numbers"))
                axis, ndmin, trans1d = (vec + [ndmin, trans1d][len(vec) - 1:])[:3]
                continue
            if isinstance(item, slice):
                t = as_tensor(_axis_values(item), like)
                t = astype(t, default_float() if t.dtype.kind == "f" else DEFAULT_INT)
                item_ndim = 1
            else:
                t = as_tensor(item, like)
                item_ndim = t.ndim
            if t.ndim < ndmin:
                t = reshape(t, (1,) * (ndmin - t.ndim) + t.shape)
                if trans1d != -1 and ndmin - item_ndim > 0:
                    # NumPy's rule: rotate the axes so the item's axes start at trans1d
                    order = tuple(builtins.range(ndmin))
                    shift = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
                    t = transpose(t, order[shift:] + order[:shift])
            items.append(t)
        if not items:
            return asarray(np.zeros(0, default_float().np))
        return concatenate(items, axis)


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


def ix_(*args) -> tuple[Tensor, ...]:
    """An open mesh from 1-D index sequences: the k-th of n results has shape
    (1, ..., len, ..., 1) with len at position k. Boolean masks need concrete values."""
    out = []
    n = len(args)
    for k, a in enumerate(args):
        t = as_tensor(a) if isinstance(a, Tensor) else asarray(np.asarray(a))
        if t.ndim != 1:
            raise ValueError(at_user_line(f"ix_: argument {k} has shape {t.shape}; each must "
                                          f"be 1-D"))
        if t.dtype is dt.bool_:
            if not t._backend.concrete:
                raise MustCompileError(at_user_line(
                    f"ix_: argument {k} is a boolean mask, whose number of True entries "
                    f"depends on the data; inside jit pass integer indices instead "
                    f"(nonzero(mask, size=N)[0])"))
            t = asarray(np.nonzero(t.numpy())[0].astype(DEFAULT_INT.np))
        out.append(reshape(t, tuple(t.shape[0] if j == k else 1 for j in range(n))))
    return tuple(out)


def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """Flat indices to one index per axis of `shape` (C order). As in JAX, indices
    beyond the end clip to the last position and negative ones below -size to 0."""
    idx = as_tensor(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"unravel_index: indices must be integers, got "
                                     f"{idx.dtype}"))
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    outs = [None] * len(shape)
    rest = idx
    for i in range(len(shape) - 1, -1, -1):
        outs[i] = remainder(rest, shape[i])
        rest = floor_divide(rest, shape[i])
    over = rest > 0
    under = rest < -1 if idx.dtype.kind == "i" else rest != rest
    return tuple(select(over, s - 1, select(under, 0, o)).astype(idx.dtype)
                 for s, o in zip(shape, outs, strict=True))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C") -> Tensor:
    """One flat index per position from one index tensor per axis of `dims`.
    mode: 'raise' (checks the bounds, so it needs concrete indices: outside jit),
    'wrap', 'clip'."""
    dims = tuple(int(d) for d in dims)
    idx = broadcast_arrays(*[as_tensor(i) for i in multi_index])
    if len(idx) != len(dims):
        raise ValueError(at_user_line(f"ravel_multi_index: {len(idx)} index tensors for "
                                      f"{len(dims)} dimensions"))
    for k, i in enumerate(idx):
        if i.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"ravel_multi_index: index {k} has dtype {i.dtype}; "
                                         f"indices must be integers"))
    if mode == "raise":
        if not builtins.all(i._backend.concrete for i in idx):
            raise MustCompileError(at_user_line(
                "ravel_multi_index inside jit cannot check its bounds with mode='raise'; "
                "pass mode='wrap' or mode='clip'"))
        for i, d in zip(idx, dims, strict=True):
            if not bool(all(logical_and(i >= 0, i < d))):
                raise ValueError(at_user_line(
                    f"ravel_multi_index: an index is out of bounds for a dimension of size "
                    f"{d}; pass mode='wrap' or mode='clip' to map it into range"))
    elif mode == "wrap":
        idx = [remainder(i, d) for i, d in zip(idx, dims, strict=True)]
    elif mode == "clip":
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims, strict=True)]
    else:
        raise ValueError(at_user_line(f"ravel_multi_index: mode must be 'raise', 'wrap' or "
                                      f"'clip', got {mode!r}"))
    if order == "C":
        strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]
    elif order == "F":
        strides = [math.prod(dims[:k]) for k in range(len(dims))]
    else:
        raise ValueError(at_user_line(f"ravel_multi_index: order must be 'C' or 'F', got "
                                      f"{order!r}"))
    out = astype(idx[0], DEFAULT_INT) * strides[0]
    for i, s in zip(idx[1:], strides[1:], strict=True):
        out = out + astype(i, DEFAULT_INT) * s
    return out
