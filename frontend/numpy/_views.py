"""The namespace functions that return views, as NumPy's do (see views.py).

Each one computes its result as before and marks it a view of its operand with the
functions that recompute it from the operand (forward) and put a new value of it back
(backward), and its NumPy layout. What NumPy returns as a copy (advanced indexing,
reshape where the strides do not allow a view, flatten) stays a copy.

The library's own code calls the plain functions (_manipulation, _indexing): their
results are intermediates nobody else holds, so they need no view records.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import recorder_native, views
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import shape_ops as so
from ..dispatch import bind1
from ..errors import at_user_line
from ..tensor import Tensor
from ..tracebacks import filter_exception
from . import _diagonals, _elementwise, _indexing, _manipulation, _operands
from ._operands import as_tensor, normalize_axes, normalize_axis

# ---- indexing -----------------------------------------------------------------------

def _basic(index, ndim: int) -> tuple | None:
    """The index as NumPy's basic index for the layout (0-d integer tensors kept, see
    _layout_index), or None if NumPy would copy:
    advanced (array, list, boolean) indices, or an integer for every axis (a scalar)."""
    items = index if isinstance(index, tuple) else (index,)
    out, ints = [], 0
    for i in items:
        if i is None or i is Ellipsis or isinstance(i, slice):
            out.append(i)
        elif isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            out.append(int(i))
            ints += 1
        elif isinstance(i, Tensor) and i.ndim == 0 and i.dtype.is_integer:
            out.append(i)  # read (a host sync) only if the layout is ever asked for
            ints += 1
        else:
            return None
    if ints == len(out) and ints >= ndim:
        return None
    return tuple(out)


def getitem(x: Tensor, index) -> Tensor:
    # x[i] is this function: a public boundary, inline (free until something is raised)
    try:
        out = _indexing.getitem(x, index)
        np_index = _basic(index, x.ndim)
        if np_index is None:  # a copy (x[()] of a 0-d x is x's value, not x itself)
            return out if out is not x else type(x)(x._data, x._backend, x.type, x.weak)
        return views.make_view(
            x, out, lambda p: _indexing.getitem(p, index),
            lambda p, new: _set_index(p, new, index),
            lambda layout: layout[tuple(map(_layout_index, np_index))])
    except Exception as e:
        filter_exception(e)
        raise


def _set_index(p: Tensor, new: Tensor, index) -> Tensor:
    """p with p[index] replaced by new: the backward function of a view p[index]."""
    return _indexing._update(p, index, new, "set", last_wins=True)


# recorder_native makes getitem Tensor.__getitem__'s C operator (recorder.c's
# fastop_getitem): an index of None, Ellipsis and slices on a tensor that is no view,
# whose plan _indexing.getitem made before, is bound and made a view in C, with these
# three functions as its forward, backward and layout (what the lambdas above compute
# for such an index)
getitem._native_index = (_indexing._PLANS, views.View, views.Aliases, _indexing.getitem,
                         _set_index, operator.getitem)


def _layout_index(i):
    """An index of the NumPy layout: a concrete integer tensor's value; a traced one's 0
    (only the strides matter then)."""
    if isinstance(i, Tensor):
        return int(i) if i._backend.concrete and i._data is not None else 0
    return i


# ---- axes ----------------------------------------------------------------------------

_INVERSE: dict = {}  # permutation -> its inverse (a few distinct ones per program)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = _INVERSE.get(perm)
    if inv is None:
        out = [0] * len(perm)
        for i, p in enumerate(perm):
            out[p] = i
        inv = tuple(out)
        if len(_INVERSE) < 4096:
            _INVERSE[perm] = inv
    return inv


def _permutation_view(x: Tensor, out: Tensor, perm: tuple[int, ...]) -> Tensor:
    inverse = _inverse(perm)
    return views.make_view(
        x, out, lambda p: _manipulation.transpose(p, perm),
        lambda p, new: _permuted_back(p, new, inverse),
        lambda layout: _permuted_layout(layout, perm))


# a permutation view's backward and layout functions (lambdas above; recorder.c's
# fastop_view binds them to x.T's permutation)
def _permuted_back(p: Tensor, new: Tensor, inverse: tuple[int, ...]) -> Tensor:
    return _manipulation.transpose(new, inverse)


def _permuted_layout(layout: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    return layout.transpose(perm)


def transpose(x, axes=None) -> Tensor:
    x = as_tensor(x)
    out = _manipulation.transpose(x, axes)
    perm = tuple(reversed(range(x.ndim))) if axes is None else tuple(
        a % x.ndim for a in axes)
    return _permutation_view(x, out, perm)


def permute_dims(x, axes) -> Tensor:
    return transpose(x, axes)


def matrix_transpose(x) -> Tensor:
    x = as_tensor(x)
    out = _manipulation.matrix_transpose(x)
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return _permutation_view(x, out, tuple(perm))


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    x = as_tensor(x)
    out = _manipulation.swapaxes(x, axis1, axis2)
    perm = list(range(x.ndim))
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return _permutation_view(x, out, tuple(perm))


def moveaxis(x, source, destination) -> Tensor:
    x = as_tensor(x)
    out = _manipulation.moveaxis(x, source, destination)
    src = normalize_axes(source, x.ndim, "source")
    dst = normalize_axes(destination, x.ndim, "destination")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _permutation_view(x, out, tuple(order))


# ---- shapes --------------------------------------------------------------------------

def _reshaped_view(x: Tensor, out: Tensor) -> Tensor:
    """out (x reshaped) as a view of x where NumPy's reshape would not copy."""
    if not views.owns_c_layout(x):  # a base is C-contiguous: a view's strides may not be
        try:
            np.reshape(views.layout_of(x), out.shape, copy=False)
        except ValueError:  # NumPy would copy: so do we (out is already a new tensor)
            return out if out is not x else _copy(x)
    old = x.shape
    return views.make_view(x, out, lambda p: _manipulation.reshape(p, out.shape),
                           lambda p, new: _reshaped_back(p, new, old),
                           lambda parent: _reshaped_layout(parent, out.shape))


# a reshaped view's backward and layout functions (lambdas above; recorder.c's
# fastop_view binds them to the shapes)
def _reshaped_back(p: Tensor, new: Tensor, old: tuple[int, ...]) -> Tensor:
    return _manipulation.reshape(new, old)


def _reshaped_layout(parent: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.reshape(parent, shape, copy=False)


def _copy(x: Tensor) -> Tensor:
    return _operands.astype(x, x.dtype, copy=True)


def reshape(x, shape, *, copy=None) -> Tensor:
    x = as_tensor(x)
    out = _manipulation.reshape(x, shape)
    if copy:
        return out if out is not x else _copy(x)
    if copy is False:
        try:
            np.reshape(views.layout_of(x), out.shape, copy=False)
        except ValueError:
            raise ValueError(at_user_line(
                f"reshape(copy=False): this {x.shape} tensor is a view (of a transpose or "
                f"a strided slice) that cannot be reshaped to {out.shape} without a copy, "
                f"as in NumPy; pass copy=None to allow the copy, or reshape the tensor it "
                f"was taken from")) from None
    return _reshaped_view(x, out)


def ravel(x) -> Tensor:
    return reshape(x, (-1,))


def flatten(x) -> Tensor:
    """x flattened, always a copy (NumPy's ndarray.flatten; ravel gives a view)."""
    return reshape(x, (-1,), copy=True)


def expand_dims(x, axis) -> Tensor:
    x = as_tensor(x)
    return _reshaped_view(x, _manipulation.expand_dims(x, axis))


def squeeze(x, axis=None) -> Tensor:
    x = as_tensor(x)
    return _reshaped_view(x, _manipulation.squeeze(x, axis))


# ---- flips, rotations, pieces ------------------------------------------------------------

def flip(x, axis=None) -> Tensor:
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return views.make_view(x, _manipulation.flip(x, axes),
                           lambda p: _manipulation.flip(p, axes),
                           lambda p, new: _manipulation.flip(new, axes),
                           lambda lay: np.flip(lay, axes))


def fliplr(x) -> Tensor:
    return flip(x, 1)


def flipud(x) -> Tensor:
    return flip(x, 0)


def rot90(x, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `axes` (from the first toward the
    second); a view of x, as NumPy's."""
    x = as_tensor(x)
    out = _manipulation.rot90(x, k, axes)
    plane, k = normalize_axes(tuple(axes), x.ndim), int(k) % 4
    return views.make_view(x, out, lambda p: _manipulation.rot90(p, k, plane),
                           lambda p, new: _manipulation.rot90(new, -k, plane),
                           lambda lay: np.rot90(lay, k, plane))


def _pieces(x: Tensor, axis: int, bounds) -> list[Tensor]:
    """x's slices [lo:hi] along axis, as views (the pieces of NumPy's split)."""
    head = (slice(None),) * axis
    return [getitem(x, head + (slice(lo, hi),)) for lo, hi in bounds]


def array_split(x, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Split into sections (sizes may differ by one) or at the given indices; the pieces
    are views of x, as NumPy's."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim)
    return _pieces(x, axis, _manipulation.split_bounds(x, indices_or_sections, axis,
                                                        even=False))


def split(x, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Like array_split, but a number of sections must divide the axis evenly; the
    pieces are views of x."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.ndim)
    return _pieces(x, axis, _manipulation.split_bounds(x, indices_or_sections, axis))


def hsplit(x, indices_or_sections) -> list[Tensor]:
    x, axis = _manipulation.split_axis(x, "hsplit")
    return split(x, indices_or_sections, axis)


def vsplit(x, indices_or_sections) -> list[Tensor]:
    x, axis = _manipulation.split_axis(x, "vsplit")
    return split(x, indices_or_sections, axis)


def dsplit(x, indices_or_sections) -> list[Tensor]:
    x, axis = _manipulation.split_axis(x, "dsplit")
    return split(x, indices_or_sections, axis)


def unstack(x, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of x along `axis`, as a tuple of views of x."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(at_user_line("unstack needs at least one dimension"))
    head = (slice(None),) * normalize_axis(axis, x.ndim)
    return tuple(getitem(x, head + (i,)) for i in range(x.shape[len(head)]))


def _at_least(plain):
    def f(x) -> Tensor:
        x = as_tensor(x)
        out = plain(x)
        return x if out is x else _reshaped_view(x, out)
    f.__name__ = f.__qualname__ = plain.__name__
    f.__doc__ = plain.__doc__
    return f


atleast_1d = _at_least(_manipulation.atleast_1d)
atleast_2d = _at_least(_manipulation.atleast_2d)
atleast_3d = _at_least(_manipulation.atleast_3d)


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """`axis` moved to stand before position `start` (NumPy's older moveaxis)."""
    a = as_tensor(a)
    return moveaxis(a, *_manipulation.rollaxis_axes(a.ndim, axis, start))


# ---- real and imaginary parts, read-only views -----------------------------------------

def real(x) -> Tensor:
    x = as_tensor(x)
    out = _elementwise.real(x)
    if not x.dtype.is_complex:  # NumPy: a.real of a real array is a view of all of a
        return views.make_view(x, out, lambda p: p, lambda p, new: new, lambda lay: lay)
    return views.make_view(
        x, out, _elementwise.real,
        lambda p, new: bind1(ew.complex_, new, _elementwise.imag(p)), lambda lay: lay.real)


def imag(x) -> Tensor:
    x = as_tensor(x)
    out = _elementwise.imag(x)
    if not x.dtype.is_complex:  # NumPy: a new read-only array of zeros
        return out
    return views.make_view(
        x, out, _elementwise.imag,
        lambda p, new: bind1(ew.complex_, _elementwise.real(p), new), lambda lay: lay.imag)


def diag(v, k: int = 0) -> Tensor:
    """A 1-D input becomes a square matrix with it on the k-th diagonal (a new tensor);
    a 2-D input gives its k-th diagonal, a read-only view as NumPy's."""
    v = as_tensor(v)
    return diagonal(v, k) if v.ndim == 2 else _diagonals.diag(v, k)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    x = as_tensor(a)
    out = _diagonals.diagonal(x, offset, axis1, axis2)
    return views.make_view(x, out, lambda p: _diagonals.diagonal(p, offset, axis1, axis2),
                           None, lambda lay: np.diagonal(lay, offset, axis1, axis2),
                           writable=False)


def broadcast_to(x, shape) -> Tensor:
    x = as_tensor(x)
    out = _operands.broadcast_to(x, shape)
    return views.make_view(x, out, lambda p: _operands.broadcast_to(p, out.shape), None,
                           lambda lay: np.broadcast_to(lay, out.shape), writable=False)


def shares_memory(a, b, max_work=None) -> bool:
    """Whether a and b share elements (NumPy's exact answer; views share their base)."""
    return _shares(a, b, exact=True)


def may_share_memory(a, b, max_work=None) -> bool:
    """Whether a and b may share memory (NumPy's bounds check on their layouts)."""
    return _shares(a, b, exact=False)


def _shares(a, b, exact: bool) -> bool:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            return False  # a tensor's memory is never a NumPy array's
        return bool(np.shares_memory(a, b) if exact else np.may_share_memory(a, b))
    return views.shares_memory(a, b, exact)


# x.T (transpose of all axes) and reshape(x, shape) of a tensor that is no view, with a
# shape seen before, bound and made views in C where the native recorder is built
# (recorder.c's fastop_view; every other call is the Python function's)
transpose = recorder_native.view_op(transpose, 1, so.transpose, _manipulation._REVERSED,
                                    _manipulation.transpose, _permuted_back, _permuted_layout)
reshape = recorder_native.view_op(reshape, 2, so.reshape, _manipulation._RESHAPES,
                                  _manipulation.reshape, _reshaped_back, _reshaped_layout)
