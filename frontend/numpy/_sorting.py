"""Sorting and scans: sort, argsort, top_k, cumulative_sum/cumulative_prod (array API),
cumsum/cumprod (NumPy), cummax/cummin.

Order is NumPy's: NaNs sort last, -0.0 equals 0.0, and sorts are stable by default.
`descending=True` gives the reverse order with ties kept in their original order (as
JAX's numpy), so NaNs come first.

top_k lives here, as stablejit.numpy.top_k(x, k) -> (values, indices): the k largest
along the last axis, largest first, ties to the lower index (XLA's TopK; NaN counts as
larger than every number).
"""

from __future__ import annotations

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import shape_ops as so
from ..compiler.primitives import sorting as srt
from ..dispatch import bind, bind1
from ..errors import at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._indexing import index_dtype
from ._manipulation import concatenate, reshape
from ._operands import as_tensor, astype, normalize_axis


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


def sort(x, axis=-1, *, descending: bool = False, stable: bool = True, kind=None,
         order=None) -> Tensor:
    x = as_tensor(x)
    _check_sortable(x, "sort")
    if order is not None:
        raise TypeError(at_user_line("sort(order=...) applies to structured arrays, which "
                                     "stablejit does not have"))
    x, ax = _flat_or_axis(x, axis)
    if x.size == 0:
        return x
    return bind(srt.sort, (x,), _attrs(ax, 1, descending, stable))[0]


def argsort(x, axis=-1, *, descending: bool = False, stable: bool = True, kind=None,
            order=None) -> Tensor:
    x = as_tensor(x)
    _check_sortable(x, "argsort")
    x, ax = _flat_or_axis(x, axis)
    iota = bind1(so.iota, shape=x.shape, dtype=index_dtype(x.shape[ax]), dimension=ax) \
        if x.ndim else None
    if x.size == 0:
        return astype(iota, DEFAULT_INT)
    out = bind(srt.sort, (x, iota), _attrs(ax, 1, descending, stable))[1]
    return astype(out, DEFAULT_INT)


def _attrs(axis, num_keys, descending, stable):
    return Attrs({"dimension": axis, "num_keys": num_keys, "descending": bool(descending),
                  "is_stable": bool(stable)})


def sort_with(keys: list[Tensor], riders: list[Tensor], axis: int, *,
              descending: bool = False) -> tuple[Tensor, ...]:
    """One stable sort of `keys` (lexicographic) carrying `riders` along."""
    return bind(srt.sort, (*keys, *riders), _attrs(axis, len(keys), descending, True))


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
