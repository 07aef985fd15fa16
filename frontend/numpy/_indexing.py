"""x[index]: integers, slices (any step), None, Ellipsis and scalar integer tensors
(dynamic_slice); boolean masks and integer arrays on concrete tensors.

Inside jit, a boolean mask has a data-dependent result shape, so it raises the
must-compile error (use where(mask, x, 0) or a static size)."""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import ALL as P
from ..dispatch import bind, bind1
from ..errors import MustCompileError, at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._core import as_tensor, astype
from ._manipulation import reshape


def _is_int(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


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


def getitem(x: Tensor, index) -> Tensor:
    idx = _expand(index, x.ndim)
    if any(_is_array_index(i) for i in idx):
        return _advanced(x, idx)
    # basic indexing: one static slice (+ reverse), dynamic slices, one reshape
    start, limit, strides, rev = [], [], [], []
    out_shape, drop, dynamic = [], [], []
    axis = 0
    for i in idx:
        if i is None:
            out_shape.append(("new",))
            continue
        n = x.shape[axis]
        if isinstance(i, slice):
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
                raise IndexError(at_user_line(f"index {i} is out of bounds for axis {axis} "
                                              f"with size {n}"))
            i %= n
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            drop.append(axis)
        elif isinstance(i, Tensor) and i.ndim == 0 and i.dtype.is_integer:
            start.append(0)
            limit.append(n)
            strides.append(1)
            dynamic.append((axis, i))
            drop.append(axis)
        else:
            raise IndexError(at_user_line(
                f"unsupported index {i!r} of type {type(i).__name__}: use integers, slices, "
                f"None, Ellipsis, integer tensors or boolean masks"))
        axis += 1
    out = x
    if rev:
        out = bind1(P["reverse"], out, axes=tuple(rev))
    if tuple(start) != (0,) * x.ndim or tuple(limit) != x.shape or any(s != 1 for s in strides):
        out = bind1(P["slice"], out, start=tuple(start), limit=tuple(limit),
                    strides=tuple(strides))
    if dynamic:
        out = _dynamic(out, dynamic)
    shape = []
    for item in out_shape:
        shape.append(1 if item[0] == "new" else out.shape[item[1]])
    # dropped axes are not in out_shape; `shape` lists kept and new axes in order
    if tuple(shape) != out.shape:
        out = reshape(out, tuple(shape))
    return out


def _dynamic(x: Tensor, dynamic) -> Tensor:
    sizes = list(x.shape)
    zero = x._backend.scalar(0, DEFAULT_INT)
    starts = []
    by_axis = dict(dynamic)
    for axis in range(x.ndim):
        if axis in by_axis:
            i = astype(by_axis[axis], DEFAULT_INT)
            n = x.shape[axis]
            i = (i < 0) * n + i  # negative indices count from the end, as in NumPy
            starts.append(i)
            sizes[axis] = 1
        else:
            starts.append(zero)
    return bind(P["dynamic_slice"], (x, *starts), Attrs({"sizes": tuple(sizes)}))[0]


def _advanced(x: Tensor, idx) -> Tensor:
    if not x._backend.concrete or any(isinstance(i, Tensor) and not i._backend.concrete
                                      for i in idx):
        kind = "boolean mask" if any(
            (isinstance(i, (Tensor, np.ndarray)) and i.dtype in (dt.bool_, np.bool_))
            for i in idx) else "integer-array"
        if kind == "boolean mask":
            raise MustCompileError(at_user_line(
                "boolean-mask indexing inside jit cannot be compiled: the number of selected "
                "elements depends on the data, and XLA programs have static shapes. Use "
                "stablejit.numpy.where(mask, x, 0) to keep the shape, or index outside jit"))
        raise NotImplementedError(at_user_line(
            "integer-array indexing inside jit is not supported yet (it needs the gather "
            "primitive); use take()/one-hot products, or index outside jit"))
    # concrete tensors: compute the index on the host, then gather by NumPy semantics
    host_idx = tuple(i.numpy() if isinstance(i, Tensor) else i for i in idx)
    result = x.numpy()[host_idx]
    return x._backend.from_numpy(np.asarray(result))


def nonzero(x) -> tuple[Tensor, ...]:
    x = as_tensor(x)
    if not x._backend.concrete:
        raise MustCompileError(at_user_line(
            "nonzero inside jit cannot be compiled: the number of nonzero elements depends "
            "on the data, and XLA programs have static shapes. Use where(cond, x, y) to "
            "keep the shape, or call nonzero outside jit"))
    return tuple(x._backend.from_numpy(np.asarray(i, dtype=DEFAULT_INT.np))
                 for i in np.nonzero(x.numpy()))
