"""Shape manipulation: reshape, transpose, concatenate, stack, squeeze, expand_dims..."""

from __future__ import annotations

import math
import operator

from ..compiler.primitives import ALL as P
from ..dispatch import bind1
from ..errors import at_user_line
from ..tensor import Tensor
from ._core import as_tensor, normalize_axes, normalize_axis, promote_operands


def _resolve_shape(shape, size: int, old) -> tuple[int, ...]:
    if hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        shape = [operator.index(d) for d in shape]  # 3.0 is not a size, as in NumPy
    except TypeError:
        raise TypeError(at_user_line(f"reshape: a shape must be an integer or a sequence of "
                                     f"integers, got {shape!r}")) from None
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(at_user_line(f"reshape: only one dimension can be -1, got {tuple(shape)}"))
    if any(d < -1 for d in shape):
        raise ValueError(at_user_line(f"reshape: negative dimension in {tuple(shape)}"))
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise ValueError(at_user_line(f"cannot reshape a tensor of shape {old} "
                                          f"({size} elements) into shape {tuple(shape)}"))
        shape[unknown[0]] = size // known
    if math.prod(shape) != size:
        raise ValueError(at_user_line(f"cannot reshape a tensor of shape {old} ({size} "
                                      f"elements) into shape {tuple(shape)}"))
    return tuple(shape)


def reshape(x, shape, *, copy=None) -> Tensor:
    x = as_tensor(x)
    shape = _resolve_shape(shape, x.size, x.shape)
    if shape == x.shape:
        return x
    return bind1(P["reshape"], x, shape=shape)


def ravel(x) -> Tensor:
    return reshape(x, (-1,))


flatten = ravel


def transpose(x, axes=None) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = tuple(normalize_axis(a, x.ndim) for a in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise ValueError(at_user_line(f"axes {tuple(axes)} are not a permutation of the "
                                          f"{x.ndim} axes of a tensor of shape {x.shape}"))
    if perm == tuple(range(x.ndim)):
        return x
    return bind1(P["transpose"], x, permutation=perm)


def permute_dims(x, axes) -> Tensor:
    return transpose(x, axes)


def matrix_transpose(x) -> Tensor:
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(at_user_line(f"matrix_transpose needs at least 2 dimensions, got "
                                      f"shape {x.shape}"))
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    x = as_tensor(x)
    perm = list(range(x.ndim))
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination) -> Tensor:
    x = as_tensor(x)
    src = normalize_axes(source, x.ndim)
    dst = normalize_axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(at_user_line("moveaxis: source and destination need as many axes"))
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x, axis) -> Tensor:
    x = as_tensor(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    axes = sorted(normalize_axis(a, ndim) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


def squeeze(x, axis=None) -> Tensor:
    x = as_tensor(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = normalize_axes(axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(at_user_line(f"cannot squeeze axis {a} of shape {x.shape}: "
                                              f"its size is {x.shape[a]}, not 1"))
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def concatenate(arrays, axis: int | None = 0) -> Tensor:
    ts, _ = promote_operands(*arrays)
    if not ts:
        raise ValueError(at_user_line("need at least one tensor to concatenate"))
    if axis is None:
        ts, axis = [reshape(t, (-1,)) for t in ts], 0
    nd = ts[0].ndim
    if nd == 0:
        raise ValueError(at_user_line("zero-dimensional tensors cannot be concatenated"))
    for i, t in enumerate(ts):
        if t.ndim != nd:
            raise ValueError(at_user_line(
                f"concatenate: tensor {i} has {t.ndim} dimensions (shape {t.shape}) but tensor "
                f"0 has {nd} (shape {ts[0].shape})"))
    axis = normalize_axis(axis, nd)
    if len(ts) == 1:
        return ts[0]
    from ..compiler.ir import Attrs
    from ..dispatch import bind

    return bind(P["concatenate"], tuple(ts), Attrs({"dimension": axis}))[0]


concat = concatenate


def stack(arrays, axis: int = 0) -> Tensor:
    ts = [as_tensor(a) for a in arrays]
    if not ts:
        raise ValueError(at_user_line("need at least one tensor to stack"))
    shape = ts[0].shape
    for i, t in enumerate(ts):
        if t.shape != shape:
            raise ValueError(at_user_line(f"stack: all tensors need the same shape; tensor "
                                          f"{i} has {t.shape}, tensor 0 has {shape}"))
    axis = normalize_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(t, axis) for t in ts], axis)


def flip(x, axis=None) -> Tensor:
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return bind1(P["reverse"], x, axes=axes) if axes else x


def atleast_1d(x) -> Tensor:
    x = as_tensor(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def atleast_2d(x) -> Tensor:
    x = as_tensor(x)
    return reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x
