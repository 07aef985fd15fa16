"""Sorting and scans: sort, sort_complex, argsort, lexsort, partition, argpartition, top_k,
cumulative_sum/cumulative_prod (array API), cumsum/cumprod (NumPy), nancumsum/nancumprod,
cummax/cummin.

Order is NumPy's: NaNs sort last, -0.0 equals 0.0, and sorts are stable by default.
Complex numbers sort lexicographically (real part, then imaginary part), NaNs last in
NumPy's classes.
`descending=True` gives the reverse order with ties kept in their original order (as
JAX's numpy), so NaNs come first.

top_k lives here, as stablejit.numpy.top_k(x, k) -> (values, indices): the k largest
along the last axis, largest first, ties to the lower index (XLA's TopK; NaN counts as
larger than every number).
"""

from __future__ import annotations

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import shape_ops as so
from ..compiler.primitives import sorting as srt
from ..dispatch import bind, bind1
from ..errors import at_user_line
from ..promotion import DEFAULT_INT, default_complex
from ..tensor import Tensor
from ._elementwise import isnan, select
from ._index_values import index_dtype
from ._manipulation import concatenate, reshape
from ._operands import as_tensor, astype, full_like_tensor, normalize_axis


def _flat_or_axis(x: Tensor, axis):
    if axis is None:
        return reshape(x, (x.size,)), 0
    if x.ndim == 0:
        raise ValueError(at_user_line("cannot sort a 0-d tensor along an axis; use axis=None "
                                      "or reshape it first"))
    return x, normalize_axis(axis, x.ndim)


def _check_sortable(x: Tensor, what: str) -> None:
    if x.dtype.is_complex:
        raise TypeError(at_user_line(
            f"{what} of complex numbers is not supported (they have no order); sort by the "
            f"real part or the absolute value instead"))


def _keys(x: Tensor) -> list[Tensor]:
    """The sort keys of x: x itself, or for complex numbers NumPy's lexicographic order
    (real part, then imaginary part) with NaNs last as NumPy puts them:
    R + Rj < R + nanj < nan + Rj < nan + nanj, each class by its parts that are numbers."""
    if not x.dtype.is_complex:
        return [x]
    re, im = bind1(ew.real, x), bind1(ew.imag, x)
    nan_re, nan_im = isnan(re), isnan(im)
    zero = full_like_tensor(0, re)
    return [astype(nan_re, dt.int8), astype(nan_im, dt.int8), select(nan_re, zero, re),
            select(nan_im, zero, im)]


def _check_kind(name: str, kind) -> None:
    """NumPy's sort kinds are accepted (the sort is stable whichever is named); NumPy
    reads a kind by its first letter, q, m, h or s. Another is NumPy's ValueError."""
    if kind is not None and not isinstance(kind, str):
        raise TypeError(at_user_line(f"{name}: kind must be a str such as 'stable', got "
                                     f"{type(kind).__name__}"))
    if kind is not None and kind[:1].lower() not in tuple("qmhs"):
        raise ValueError(at_user_line(
            f"{name}: kind={kind!r} is not a sort kind; use 'quicksort', 'mergesort', "
            f"'heapsort' or 'stable' (or leave it out: the sort is stable)"))


def sort(x, axis=-1, *, descending: bool = False, stable: bool = True, kind=None,
         order=None) -> Tensor:
    _check_kind("sort", kind)
    x = as_tensor(x)
    if order is not None:
        raise TypeError(at_user_line("sort(order=...) applies to structured arrays, which "
                                     "stablejit does not have"))
    x, ax = _flat_or_axis(x, axis)
    if x.size == 0:
        return x
    keys = _keys(x)
    if len(keys) > 1:  # complex: the keys decide, x rides along
        return bind(srt.sort, (*keys, x), _attrs(ax, len(keys), descending, stable))[-1]
    return bind(srt.sort, (x,), _attrs(ax, 1, descending, stable))[0]


def argsort(x, axis=-1, *, descending: bool = False, stable: bool = True, kind=None,
            order=None) -> Tensor:
    _check_kind("argsort", kind)
    x = as_tensor(x)
    x, ax = _flat_or_axis(x, axis)
    iota = bind1(so.iota, shape=x.shape, dtype=index_dtype(x.shape[ax]), dimension=ax) \
        if x.ndim else None
    if x.size == 0:
        return astype(iota, DEFAULT_INT)
    keys = _keys(x)
    out = bind(srt.sort, (*keys, iota), _attrs(ax, len(keys), descending, stable))[-1]
    return astype(out, DEFAULT_INT)


def _attrs(axis, num_keys, descending, stable):
    return Attrs({"dimension": axis, "num_keys": num_keys, "descending": bool(descending),
                  "is_stable": bool(stable)})


def sort_with(keys: list[Tensor], riders: list[Tensor], axis: int, *,
              descending: bool = False) -> tuple[Tensor, ...]:
    """One stable sort of `keys` (lexicographic) carrying `riders` along."""
    return bind(srt.sort, (*keys, *riders), _attrs(axis, len(keys), descending, True))


def lexsort(keys, axis=-1) -> Tensor:
    """Indices that sort by several keys: the last key is the primary one, as NumPy.
    `keys` is a sequence of tensors of one shape (or a tensor whose first axis holds
    them)."""
    ks = list(keys) if not isinstance(keys, Tensor) else [keys[i] for i in range(keys.shape[0])]
    if not ks:
        raise TypeError(at_user_line("lexsort needs at least one key"))
    ks = [as_tensor(k) for k in ks]
    shape = ks[0].shape
    for i, k in enumerate(ks):
        if k.shape != shape:
            raise ValueError(at_user_line(f"lexsort: key {i} has shape {k.shape}, key 0 has "
                                          f"{shape}; all keys need one shape"))
    if not shape:
        return astype(as_tensor(0), DEFAULT_INT)
    ax = normalize_axis(axis, len(shape))
    iota = bind1(so.iota, shape=shape, dtype=index_dtype(shape[ax]), dimension=ax)
    if ks[0].size == 0:
        return astype(iota, DEFAULT_INT)
    # (a complex key is its sort keys, in their order)
    return astype(sort_with([part for k in ks[::-1] for part in _keys(k)], [iota], ax)[-1],
                  DEFAULT_INT)


def _kth(x: Tensor, kth, axis, name: str) -> int:
    if not isinstance(kth, int):
        raise TypeError(at_user_line(f"{name}: kth must be a Python int (as in JAX), got "
                                     f"{type(kth).__name__}"))
    n = x.shape[normalize_axis(axis, x.ndim)]
    if not -n <= kth < n:
        raise ValueError(at_user_line(f"{name}: kth={kth} is out of bounds for an axis of "
                                      f"size {n}"))
    return kth


def partition(a, kth: int, axis: int = -1) -> Tensor:
    """a with its kth element along `axis` where sorting puts it, the smaller ones
    before it and the larger ones after (here: fully sorted, which is one such order)."""
    x = as_tensor(a)
    _kth(x, kth, axis, "partition")
    return sort(x, axis=axis)


def argpartition(a, kth: int, axis: int = -1) -> Tensor:
    """Indices that partition a around its kth element (see partition)."""
    x = as_tensor(a)
    _kth(x, kth, axis, "argpartition")
    return argsort(x, axis=axis)


def top_k(x, k: int) -> tuple[Tensor, Tensor]:
    """The k largest entries along the last axis and their int32 indices."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(at_user_line("top_k needs at least one axis; got a 0-d tensor"))
    if not isinstance(k, int) or not 0 <= k <= x.shape[-1]:
        raise ValueError(at_user_line(f"top_k: k={k!r} must be an integer between 0 and the "
                                      f"size of the last axis ({x.shape[-1]})"))
    if x.dtype is dt.bool_:
        x = astype(x, dt.int8)
    _check_sortable(x, "top_k")
    values, indices = bind(srt.top_k, (x,), _attrs_k(k))
    return values, indices


def _attrs_k(k):
    return Attrs({"k": int(k)})


# ---- scans ----------------------------------------------------------------------------

def _scan_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dt.dtype(dtype)
    if x.dtype.kind == "b" or x.dtype.kind == "i" and x.dtype.bits < DEFAULT_INT.bits:
        return DEFAULT_INT
    if x.dtype.kind == "u" and x.dtype.bits < 64:
        return dt.uint64
    return x.dtype


_SCANS = {"sum": srt.cumsum, "prod": srt.cumprod, "max": srt.cummax, "min": srt.cummin}


def _scan(kind: str, x, axis, dtype=None, include_initial=False, reverse=False,
          promote=True) -> Tensor:
    x = as_tensor(x)
    if axis is None:
        x, ax = reshape(x, (x.size,)), 0
    elif x.ndim == 0:
        raise ValueError(at_user_line(f"cum{kind} of a 0-d tensor needs axis=None"))
    else:
        ax = normalize_axis(axis, x.ndim)
    if promote:
        x = astype(x, _scan_dtype(x, dtype))
    elif dtype is not None:
        x = astype(x, dtype)
    if x.dtype is dt.bool_:  # cummax/cummin of booleans: the same as on integers
        out = astype(_scan(kind, astype(x, dt.int8), ax, reverse=reverse, promote=False),
                     dt.bool_)
    elif x.shape[ax] == 0:
        out = x
    else:
        out = bind1(_SCANS[kind], x, axis=ax, reverse=bool(reverse))
    if include_initial:  # only cumulative_sum/prod have it: the identity is 0 or 1
        shape = list(out.shape)
        shape[ax] = 1
        first = bind1(so.broadcast_in_dim, out._backend.scalar(
            {"sum": 0, "prod": 1}[kind], out.dtype), shape=tuple(shape),
            broadcast_dimensions=())
        out = concatenate([out, first] if reverse else [first, out], axis=ax)
    return out


def _cumulative(kind: str, x, axis, dtype, include_initial: bool) -> Tensor:
    """The array API's cumulative_sum/prod: axis may be omitted only for 1-d input."""
    x = as_tensor(x)
    if axis is None and x.ndim > 1:
        raise ValueError(at_user_line(
            f"cumulative_{kind} needs axis= for a tensor of more than one dimension "
            f"(shape {x.shape})"))
    return _scan(kind, x, 0 if axis is None and x.ndim == 1 else axis, dtype, include_initial)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    return _cumulative("sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    return _cumulative("prod", x, axis, dtype, include_initial)


def cumsum(x, axis=None, dtype=None, *, reverse: bool = False) -> Tensor:
    """NumPy cumsum: axis=None scans the flattened tensor."""
    return _scan("sum", x, axis, dtype, reverse=reverse)


def cumprod(x, axis=None, dtype=None, *, reverse: bool = False) -> Tensor:
    return _scan("prod", x, axis, dtype, reverse=reverse)


def cummax(x, axis=None, *, reverse: bool = False) -> Tensor:
    """Running maximum (as JAX's lax.cummax); NaN propagates."""
    x = as_tensor(x)
    _check_sortable(x, "cummax")
    return _scan("max", x, axis, reverse=reverse, promote=False)


def cummin(x, axis=None, *, reverse: bool = False) -> Tensor:
    x = as_tensor(x)
    _check_sortable(x, "cummin")
    return _scan("min", x, axis, reverse=reverse, promote=False)


def _nan_as(x, value) -> Tensor:
    x = as_tensor(x)
    if not x.dtype.is_inexact:
        return x
    return select(isnan(x), full_like_tensor(value, x), x)


def nancumsum(x, axis=None, dtype=None) -> Tensor:
    """cumsum counting NaNs as zero."""
    return cumsum(_nan_as(x, 0), axis, dtype)


def nancumprod(x, axis=None, dtype=None) -> Tensor:
    """cumprod counting NaNs as one."""
    return cumprod(_nan_as(x, 1), axis, dtype)


def sort_complex(a) -> Tensor:
    """a sorted along its last axis (by real part, then imaginary part) as complex
    numbers: float32 and smaller become complex64, float64 complex128, integers the
    default complex (as in JAX)."""
    x = as_tensor(a)
    if x.dtype.is_complex:  # NumPy's order: by real, then imaginary part, NaNs last
        return x if x.ndim == 0 else sort(x, axis=-1)
    s = sort(x, axis=-1)
    target = dt.complex128 if s.dtype is dt.float64 else dt.complex64 if s.dtype.is_float \
        else default_complex()
    return astype(s, target)
