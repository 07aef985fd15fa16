"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin,
count_nonzero, and the whole-tensor comparisons allclose, array_equal, array_equiv."""

from __future__ import annotations

from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import reductions as red
from ..compiler.symbolic import DimExpr
from ..composite import one_program
from ..dispatch import bind, bind1
from ..errors import at_user_line
from ..promotion import DEFAULT_INT, default_float
from ..tensor import Tensor
from ._elementwise import (
    add,
    conj,
    divide,
    equal,
    isnan,
    logical_and,
    logical_or,
    maximum,
    minimum,
    multiply,
    not_equal,
    real,
    select,
    sqrt,
    subtract,
)
from ._elementwise_more import isclose
from ._manipulation import expand_dims, reshape
from ._operands import (
    as_tensor,
    astype,
    broadcast_shapes,
    broadcast_to,
    full_like_tensor,
    normalize_axes,
    normalize_axis,
    promote_operands,
    values_in,
)


def _keep(out: Tensor, axes, ndim: int, keepdims: bool) -> Tensor:
    if not keepdims:
        return out
    shape = list(out.shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return reshape(out, tuple(shape)) if len(shape) == ndim else out


_REDUCE = {"sum": red.reduce_sum, "prod": red.reduce_prod, "max": red.reduce_max,
           "min": red.reduce_min, "and": red.reduce_and, "or": red.reduce_or}


_AXES_ATTRS: dict = {}  # axes -> Attrs(axes=axes): made once, not on every call


# Sums and products of 16-bit floats accumulate in float32 and round once at the end, as
# JAX's do (a float16 running sum of 4096 values of 0.1 ends 1.3 short of 409.5)
_HALF = (dt.float16, dt.bfloat16)


def _reduce(kind: str, x, axis, keepdims: bool, dtype=None, initial_ok=True) -> Tensor:
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        x = astype(x, dtype)
    if x.dtype in _HALF and kind in ("sum", "prod"):
        out = astype(bind(_REDUCE[kind], (astype(x, dt.float32),), _axes_attrs(axes))[0],
                     x.dtype)
        out.weak = x.weak
    else:
        out = bind(_REDUCE[kind], (x,), _axes_attrs(axes))[0]
    return _keep(out, axes, x.ndim, keepdims)


def _axes_attrs(axes: tuple[int, ...]) -> Attrs:
    attrs = _AXES_ATTRS.get(axes)
    if attrs is None:
        attrs = Attrs({"axes": axes})
        if len(_AXES_ATTRS) < 1024:
            _AXES_ATTRS[axes] = attrs
    return attrs


def _sum_dtype(x: Tensor):
    # array API: small integers and booleans accumulate in the default integer type
    if x.dtype.kind == "b" or x.dtype.kind == "i" and x.dtype.bits < DEFAULT_INT.bits:
        return DEFAULT_INT
    if x.dtype.kind == "u" and x.dtype.bits < 64:
        return dt.uint64
    return None


def where_mask(x: Tensor, where) -> Tensor:
    """The mask `where=` of a reduction of x, broadcast to x's shape (NumPy's rule: the
    mask broadcasts to the operand, never the operand to the mask)."""
    mask = astype(as_tensor(where, x), dt.bool_)
    try:
        shape = broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        shape = None
    if shape != x.shape:
        raise ValueError(at_user_line(f"where= of shape {mask.shape} does not broadcast to "
                                      f"the reduced tensor's shape {x.shape}; pass a mask "
                                      f"of that shape or one that broadcasts to it"))
    return broadcast_to(mask, x.shape)


def _where_filled(x: Tensor, where, fill) -> Tensor:
    """x with `fill` where the (broadcast) mask `where` is False."""
    if where is None:
        return x
    mask = where_mask(x, where)
    fill = broadcast_to(fill, x.shape) if isinstance(fill, Tensor) else full_like_tensor(fill, x)
    return select(mask, x, fill)


@one_program
def sum(x, axis=None, dtype=None, keepdims: bool = False, *, initial=None,  # noqa: A001
        where=None) -> Tensor:
    """Sum over `axis`; `where=` masks out elements (counted as 0), `initial` is added."""
    x = as_tensor(x)
    out = _reduce("sum", _where_filled(x, where, 0), axis, keepdims, dtype or _sum_dtype(x))
    return out if initial is None else add(out, values_in(out, initial))


@one_program
def prod(x, axis=None, dtype=None, keepdims: bool = False, *, initial=None,
         where=None) -> Tensor:
    """Product over `axis`; `where=` masks out elements (counted as 1), `initial`
    multiplies the result."""
    x = as_tensor(x)
    out = _reduce("prod", _where_filled(x, where, 1), axis, keepdims, dtype or _sum_dtype(x))
    return out if initial is None else multiply(out, values_in(out, initial))


def _minmax(kind, x, axis, keepdims, initial=None, where=None):
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    if x.dtype.is_complex:
        raise TypeError(at_user_line(f"{kind} of complex numbers is not defined"))
    if initial is None:
        if where is not None:
            raise ValueError(at_user_line(
                f"{kind} with where= needs initial=: {kind} has no identity to stand for "
                f"the masked-out elements; pass initial= (the value of an empty reduction)"))
        if 0 in [x.shape[a] for a in axes]:  # (`any` here is the reduction)
            raise ValueError(at_user_line(f"zero-size tensor of shape {x.shape} has no {kind} "
                                          f"along axis {axis}; pass a non-empty tensor or "
                                          f"initial="))
        return _reduce(kind, x, axes, keepdims)
    init = as_tensor(initial, x)
    (x, init), _ = promote_operands(x, init)
    out = _reduce(kind, _where_filled(x, where, init), axes, keepdims)
    return (maximum if kind == "max" else minimum)(out, init)


@one_program
def max(x, axis=None, keepdims: bool = False, *, initial=None, where=None  # noqa: A001
        ) -> Tensor:
    """Maximum over `axis`; `initial` takes part in it (and is the result of an empty
    reduction), `where=` masks out elements (then initial= is needed)."""
    return _minmax("max", x, axis, keepdims, initial, where)


@one_program
def min(x, axis=None, keepdims: bool = False, *, initial=None, where=None  # noqa: A001
        ) -> Tensor:
    """Minimum over `axis`; see max."""
    return _minmax("min", x, axis, keepdims, initial, where)


amax, amin = max, min


@one_program
def all(x, axis=None, keepdims: bool = False, *, where=None) -> Tensor:  # noqa: A001
    # (docstring: _docstrings' table) where= masks out elements, counted as true
    x = astype(as_tensor(x), dt.bool_)
    return _reduce("and", _where_filled(x, where, True), axis, keepdims)


@one_program
def any(x, axis=None, keepdims: bool = False, *, where=None) -> Tensor:  # noqa: A001
    # (docstring: _docstrings' table) where= masks out elements, counted as false
    x = astype(as_tensor(x), dt.bool_)
    return _reduce("or", _where_filled(x, where, False), axis, keepdims)


def _count(x: Tensor, axes) -> int:
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _masked_mean(x: Tensor, axes, keepdims: bool, mask: Tensor) -> Tensor:
    """The mean of the elements of x that `mask` selects (NaN where it selects none, as
    NumPy's 0/0): half floats are summed and divided in float32, then rounded once."""
    xc = astype(x, dt.float32) if x.dtype in _HALF else x
    total = _reduce("sum", select(mask, xc, full_like_tensor(0, xc)), axes, keepdims)
    n = astype(sum(mask, axes, keepdims=keepdims), dt.real_dtype(total.dtype))
    return astype(divide(total, n), x.dtype)


@one_program
def mean(x, axis=None, dtype=None, keepdims: bool = False, *, where=None) -> Tensor:
    # (docstring: _docstrings' table) where= selects the elements averaged
    x = as_tensor(x)
    if dtype is not None:
        x = astype(x, dtype)
    elif not x.dtype.is_inexact:
        x = astype(x, default_float())
    axes = normalize_axes(axis, x.ndim)
    if where is not None:
        out = _masked_mean(x, axes, keepdims, where_mask(x, where))
        return out if dtype is None else astype(out, dtype)
    total = _reduce("sum", x, axes, keepdims)
    n = _count(x, axes)
    # a symbolic count (export) is computed in the program: the sum of n ones (exact, as
    # float(n) is, below 2**24 in float32)
    if type(n) is DimExpr:
        ones = broadcast_to(total._backend.scalar(1, total.dtype), (n,))
        out = divide(total, _reduce("sum", ones, (0,), False))
    else:
        out = divide(total, float(n))
    return out if dtype is None else astype(out, dtype)  # an integer dtype: NumPy truncates


_mean = mean  # (var's and std's parameter mean= hides the function)


def variance_operand(x, dtype, out, ddof, correction, name: str):
    """(x in the dtype the variance is computed and returned in, the correction): NumPy's
    and jax's parameters (dtype, out, ddof) beside the array API's (correction)."""
    if out is not None:
        raise TypeError(at_user_line(f"{name}: out= is not supported (tensors are immutable);"
                                     f" use the result"))
    if ddof is not None and correction is not None:  # NumPy's rule
        raise ValueError(at_user_line(f"{name}: ddof={ddof} and correction={correction} "
                                      f"are the same parameter; pass one of the two"))
    x = as_tensor(x)
    if dtype is not None:
        if not dt.dtype(dtype).is_inexact:
            raise TypeError(at_user_line(
                f"{name}: dtype={dt.dtype(dtype)} is an integer dtype; a variance is "
                f"computed in a float or complex dtype (jax refuses it too); cast the "
                f"result with .astype({dt.dtype(dtype)}) if an integer is wanted"))
        x = astype(x, dtype)  # computed in dtype, as NumPy's and jax's dtype= does
    elif not x.dtype.is_inexact:
        x = astype(x, default_float())
    return x, (ddof if ddof is not None else correction or 0)


def in_dtype(out: Tensor, dtype) -> Tensor:
    """out in the dtype= asked for (a complex dtype of a real statistic: NumPy's)."""
    return out if dtype is None or out.dtype is dt.dtype(dtype) else astype(out, dtype)


def _given_mean(x: Tensor, axes, m, name: str) -> Tensor:
    """mean= of var/std (NumPy 2's, jax's): the mean with the reduced axes kept."""
    m = as_tensor(m, x)
    want = tuple(1 if a in axes else d for a, d in enumerate(x.shape))
    if m.shape != want:
        raise ValueError(at_user_line(
            f"{name}: mean= has shape {m.shape}; it must be the mean with keepdims=True, "
            f"of shape {want}"))
    return m


def _masked_var(x: Tensor, axes, keepdims: bool, correction, mask: Tensor, m) -> Tensor:
    """The variance of the elements `mask` selects; NaN where fewer than correction + 1
    are selected (as jax)."""
    if m is None:
        m = mean(x, axes, keepdims=True, where=mask)
    d = subtract(x, m)
    # (0 before squaring, not after: a finite gradient where the mean of nothing is NaN)
    d = select(mask, d, full_like_tensor(0, d))
    total = _reduce("sum", real(multiply(d, conj(d))), axes, keepdims)
    n = subtract(astype(sum(mask, axes, keepdims=keepdims), total.dtype), float(correction))
    return select(n > 0, divide(total, n), full_like_tensor(float("nan"), total))


@one_program
def var(x, axis=None, dtype=None, out=None, ddof=None, keepdims: bool = False, *,
        where=None, mean=None, correction=None) -> Tensor:  # noqa: A002
    """The variance over axis; the parameters in NumPy's and jax's order (dtype= is the
    dtype it is computed and returned in), correction= the array API's name of ddof,
    where= selects the elements, mean= a mean already computed (with keepdims=True)."""
    x, correction = variance_operand(x, dtype, out, ddof, correction, "var")
    axes = normalize_axes(axis, x.ndim)
    m = None if mean is None else _given_mean(x, axes, mean, "var")
    if where is not None:
        return in_dtype(_masked_var(x, axes, keepdims, correction, where_mask(x, where), m),
                        dtype)
    if m is None:
        m = _mean(x, axes, keepdims=True)
    d = subtract(x, m)
    sq = real(multiply(d, conj(d)))
    n = _count(x, axes) - correction
    if type(n) is DimExpr:  # a symbolic count (export): computed in the program
        n = as_tensor(n) if n > 0 else float("nan")
    else:
        n = float(n) if n > 0 else float("nan")
    return in_dtype(divide(_reduce("sum", sq, axes, keepdims), n), dtype)


@one_program
def std(x, axis=None, dtype=None, out=None, ddof=None, keepdims: bool = False, *,
        where=None, mean=None, correction=None) -> Tensor:  # noqa: A002
    """The standard deviation: sqrt(var(...)), with var's parameters."""
    v = var(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
            correction=correction)
    return in_dtype(sqrt(real(v) if v.dtype.is_complex else v), dtype)


def _arg(kind: str, x, axis, keepdims: bool) -> Tensor:
    x = as_tensor(x)
    if axis is None:
        flat = reshape(x, (-1,))
        out = _arg(kind, flat, 0, False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    a = normalize_axis(axis, x.ndim)
    if x.shape[a] == 0:
        raise ValueError(at_user_line(f"attempt to get arg{kind} of an empty axis"))
    if x.dtype.is_complex:
        raise TypeError(at_user_line(f"arg{kind} of complex numbers is not defined"))
    out = bind1(red.argmax if kind == "max" else red.argmin, x, axis=a, index_dtype=DEFAULT_INT)
    return expand_dims(out, a) if keepdims else out


@one_program
def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    return _arg("max", x, axis, keepdims)


@one_program
def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    return _arg("min", x, axis, keepdims)


@one_program
def count_nonzero(x, axis=None, keepdims: bool = False) -> Tensor:
    return sum(not_equal(as_tensor(x), 0), axis, keepdims=keepdims)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
             ) -> Tensor:
    """A 0-d boolean tensor: whether all elements are close (bool() it outside jit)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False) -> Tensor:
    """A 0-d boolean tensor: same shape and equal elements."""
    # lists of traced values too, as in jax
    x = as_tensor(a1, stack=True)
    y = as_tensor(a2, a1 if isinstance(a1, Tensor) else None, stack=True)
    if x.shape != y.shape:
        return full_like_tensor(False, astype(all(x), dt.bool_))
    eq = equal(x, y)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return all(eq)


def array_equiv(a1, a2) -> Tensor:
    """A 0-d boolean tensor: equal after broadcasting (False if they do not broadcast)."""
    # lists of traced values too, as in jax
    x = as_tensor(a1, stack=True)
    y = as_tensor(a2, a1 if isinstance(a1, Tensor) else None, stack=True)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return full_like_tensor(False, astype(all(x), dt.bool_))
    return all(equal(x, y))
