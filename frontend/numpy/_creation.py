"""Creation functions: full, zeros, ones, empty (and their _like forms), arange, eye,
identity, tri, tril/triu, linspace, logspace, geomspace, meshgrid, array, copy and from_dlpack.

Their arguments are static, so concrete backends build the data with NumPy and place
it; inside jit the values become IR constants (a splat constant broadcast, or iota for
ranges) instead of large embedded arrays. (asarray is in _operands: every namespace
function converts its operands with it.)
"""

from __future__ import annotations

import math
import numbers
import operator
import sys

import numpy as np

from ..api import resolve_backend
from ..compiler import dtypes as dt
from ..compiler.primitives import shape_ops as so
from ..compiler.symbolic import DimExpr, is_symbolic_shape
from ..dispatch import bind1, current_backend
from ..errors import at_user_line
from ..promotion import (
    DEFAULT_INT,
    check_python_int,
    default_float,
    python_scalar_dtype,
    result_type_and_weak,
)
from ..runtime import buffers
from ..tensor import Tensor
from ._elementwise import (
    abs,
    add,
    divide,
    floor,
    log10,
    multiply,
    power,
    select,
    sign,
    subtract,
)
from ._operands import (
    as_shape,
    as_tensor,
    asarray,
    astype,
    broadcast_shapes,
    broadcast_to,
    normalize_axis,
    promote_operands,
)


def _backend(device):
    if device is None:
        return current_backend()
    return resolve_backend(device)


# ---- sizes: checked before anything is allocated --------------------------------------

_MAX = 2**63 - 1  # the most elements a dimension, or bytes an array, can have (NumPy's)
_ASK_DEVICE = 1 << 24  # arrays above 16 MiB are compared with the device's memory


def _count(fn: str, name: str, value) -> int:
    """A size-like argument (num, N, M, n) as an int: TypeError for a non-integer,
    ValueError for a negative or impossibly large one (NumPy's exception types)."""
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(at_user_line(
            f"{fn}: {name} must be a non-negative integer, got {value!r} (a "
            f"{type(value).__name__})")) from None
    if n < 0:
        raise ValueError(at_user_line(f"{fn}: {name} must be a non-negative integer, got {n}"))
    if n > _MAX:
        raise ValueError(at_user_line(f"{fn}: {name}={n} is more than an array dimension can "
                                      f"hold (2**63-1)"))
    return n


def _outer() -> str:
    """The creation function the user called (zeros calls full): the outermost public
    function of this module on the stack. Only asked on the error paths."""
    name, f = "full", sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") == __name__:
        if not f.f_code.co_name.startswith("_"):
            name = f.f_code.co_name
        f = f.f_back
    return name


def _fits(shape: tuple, d: dt.DType, backend) -> None:
    """An array of `shape` and `d` can exist (ValueError, as NumPy's "Maximum allowed
    dimension exceeded") and, on a device, fits in its memory (DeviceMemoryError, a
    MemoryError, instead of XLA's RESOURCE_EXHAUSTED once the program runs)."""
    if is_symbolic_shape(shape):  # a size known only when an exported function runs
        return
    if any(n > _MAX for n in shape):
        raise ValueError(at_user_line(f"{_outer()}: shape {shape} has a dimension larger than "
                                      f"2**63-1"))
    nbytes = math.prod(shape) * d.np.itemsize
    if nbytes > _MAX:
        raise ValueError(at_user_line(
            f"{_outer()}: an array of shape {shape} and dtype {d.name} would take {nbytes} "
            f"bytes, more than any array can (2**63-1)"))
    if nbytes > _ASK_DEVICE and backend.concrete:
        device = getattr(backend, "device", None)
        limit = buffers.memory_limit(device)
        if limit is not None and nbytes > limit:
            e = buffers.out_of_memory(shape, d.np, device or "the host", limit,
                                      f"snp.{_outer()}: an array")
            raise buffers.DeviceMemoryError(at_user_line(str(e)))


def full(shape, fill_value, dtype=None, *, device=None) -> Tensor:
    shape = as_shape(shape)
    if isinstance(fill_value, Tensor):
        return broadcast_to(astype(fill_value, dtype) if dtype else fill_value, shape)
    d = dt.dtype(dtype) if dtype is not None else python_scalar_dtype(
        fill_value) if isinstance(fill_value, (bool, int, float, complex)) else dt.dtype(
        np.asarray(fill_value).dtype)
    check_python_int(fill_value, d)
    backend = _backend(device)
    _fits(shape, d, backend)
    if backend.concrete and math.prod(shape) <= 1:
        return backend.from_numpy(np.full(shape, fill_value, dtype=d.np))
    s = backend.scalar(fill_value, d)
    return bind1(so.broadcast_in_dim, s, shape=shape, broadcast_dimensions=())


def zeros(shape, dtype=None, *, device=None) -> Tensor:
    return full(shape, 0, dtype or default_float(), device=device)


def ones(shape, dtype=None, *, device=None) -> Tensor:
    return full(shape, 1, dtype or default_float(), device=device)


def empty(shape, dtype=None, *, device=None) -> Tensor:
    return zeros(shape, dtype, device=device)


def _like(x, dtype):
    x = as_tensor(x)
    return x, (dtype or x.dtype)


def zeros_like(x, dtype=None, *, shape=None, device=None) -> Tensor:
    return full_like(x, 0, dtype, shape=shape, device=device)


def ones_like(x, dtype=None, *, shape=None, device=None) -> Tensor:
    return full_like(x, 1, dtype, shape=shape, device=device)


def empty_like(x, dtype=None, *, shape=None, device=None) -> Tensor:
    return full_like(x, 0, dtype, shape=shape, device=device)


def full_like(x, fill_value, dtype=None, *, shape=None, device=None) -> Tensor:
    x, d = _like(x, dtype)
    return full(x.shape if shape is None else shape, fill_value, d,
                device=device or _device_of(x))


def _device_of(x: Tensor):
    return x._backend


class ZeroStepError(ValueError, ZeroDivisionError):
    """arange's step is 0: NumPy raises ZeroDivisionError, stablejit said ValueError."""


def arange(start, stop=None, step=1, dtype=None, *, device=None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        py = [v for v in (start, stop, step) if v is not None]
        d = default_float() if any(isinstance(v, float) or isinstance(v, np.floating)
                                 for v in py) else DEFAULT_INT
    else:
        d = dt.dtype(dtype)
    if not step:
        raise ZeroStepError(at_user_line("arange: step must not be zero"))
    try:
        if all(type(v) is int or type(v) is DimExpr for v in (start, stop, step)):
            n = max(0, -((start - stop) // step))  # exact: 10**30 is not rounded
        else:
            n = max(0, math.ceil((stop - start) / step))
    except (OverflowError, ValueError):  # an infinite or NaN bound or step
        raise ValueError(at_user_line(
            f"arange: cannot make arange({start!r}, {stop!r}, {step!r}): its length "
            f"(stop - start) / step is not a finite number")) from None
    if type(n) is int and n > _MAX:
        raise ValueError(at_user_line(
            f"arange({start!r}, {stop!r}, {step!r}) would have {n} elements, more than an "
            f"array can hold (2**63-1)"))
    backend = _backend(device)
    _fits((n,), d, backend)
    if not d.is_inexact:
        return _integer_range(start, step, n, d, backend)
    if backend.concrete:
        return backend.from_numpy(np.arange(start, stop, step).astype(d.np)[:n])
    out = bind1(so.iota, shape=(n,), dtype=d, dimension=0)
    if step != 1:
        out = out * step
    if start != 0:
        out = out + start
    return astype(out, d)


def _integer_range(start, step, n: int, d: dt.DType, backend) -> Tensor:
    """NumPy's arange for an integer or bool dtype: start and start + step are cast to d
    (a float truncated toward zero), and their difference in d is repeated, wrapping as
    d does: arange(0, 5, 1.5, dtype=int) is [0, 1, 2, 3], arange(-0.5, 3, dtype=int) is
    [0, 0, 0, 0]."""
    if d.kind == "b":
        if n > 2:
            raise TypeError(at_user_line(
                f"arange: a bool range holds at most 2 values (NumPy's rule); this one "
                f"would have {n}; make an integer range and compare it (arange({n}) != 0)"))
        values = np.array([bool(start), bool(start + step)][:n], np.bool_)
        return backend.from_numpy(values) if backend.concrete else asarray(values)
    # computed in 64 bits, where wrapping agrees with d's: its range divides 2**64
    work = dt.uint64 if d is dt.uint64 else DEFAULT_INT
    symbolic = isinstance(start, DimExpr) or isinstance(step, DimExpr)
    if symbolic:  # an exported function's size: exact ints
        first, delta = start, step
    else:
        first = _cast_bound(start, d, "start")
        delta = _cast_bound(start + step, d, "start + step") - first if n > 1 else 1
        low = int(np.iinfo(work.np).min)
        delta = (delta - low) % 2**64 + low
    if backend.concrete:
        i = np.arange(n, dtype=work.np)
        return backend.from_numpy((i * work.np.type(delta) + work.np.type(first)).astype(d.np))
    out = bind1(so.iota, shape=(n,), dtype=work, dimension=0)
    if delta != 1:  # (NumPy scalars: a Python int above 2**63 is no weak int)
        out = out * (delta if symbolic else work.np.type(delta))
    if first != 0:
        out = out + (first if symbolic else work.np.type(first))
    return astype(out, d)


def _cast_bound(v, d: dt.DType, what: str) -> int:
    """A value of an integer arange as NumPy stores it in d: truncated toward zero, and
    OverflowError naming the value and d's range where d cannot hold it."""
    try:
        n = int(v)
    except (OverflowError, ValueError):
        raise ValueError(at_user_line(f"arange: {what} {v!r} is not a finite number")) \
            from None
    info = np.iinfo(d.np)
    if not info.min <= n <= info.max:
        raise OverflowError(at_user_line(
            f"arange: {what} = {v!r} is out of bounds for {d.name}, which holds {info.min} "
            f"to {info.max} (NumPy stores start and start + step in the dtype); ask for a "
            f"dtype that holds them"))
    return n


def eye(n_rows: int, n_cols: int | None = None, k: int = 0, dtype=None, *, device=None
        ) -> Tensor:
    d = dt.dtype(dtype) if dtype is not None else default_float()
    n_rows = _count(_outer(), "N", n_rows)
    m = n_rows if n_cols is None else _count(_outer(), "M", n_cols)
    backend = _backend(device)
    _fits((n_rows, m), d, backend)
    if backend.concrete:
        return backend.from_numpy(np.eye(n_rows, m, k, dtype=d.np))
    rows = bind1(so.iota, shape=(n_rows, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(so.iota, shape=(n_rows, m), dtype=DEFAULT_INT, dimension=1)
    return astype(cols - rows == k, d)


def identity(n: int, dtype=None, *, device=None) -> Tensor:
    return eye(_count("identity", "n", n), dtype=dtype, device=device)


def tri(n: int, m: int | None = None, k: int = 0, dtype=None) -> Tensor:
    n = _count("tri", "N", n)
    m = n if m is None else _count("tri", "M", m)
    _fits((n, m), dt.dtype(dtype or default_float()), current_backend())
    rows = bind1(so.iota, shape=(n, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(so.iota, shape=(n, m), dtype=DEFAULT_INT, dimension=1)
    return astype(cols <= rows + k, dtype or default_float())


def array(obj, dtype=None, *, copy: bool = True, device=None) -> Tensor:
    """NumPy's array(): like asarray but copying by default."""
    return asarray(obj, dtype, device=device, copy=copy)


def copy(a, order=None) -> Tensor:
    """A new tensor with a's value (NumPy's copy; `order` is accepted and ignored, tensors
    have one layout)."""
    return asarray(a, copy=True)


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A tensor from any object with __dlpack__ (a NumPy, torch or jax array ...).

    The data goes through numpy.from_dlpack (so it must be readable from the host: CPU
    memory, or a producer that can copy to the CPU), then is placed on `device` (default:
    the current default backend). That placement copies, so copy=False raises BufferError,
    except for a stablejit tensor already on `device`, which is returned as it is.
    """
    if isinstance(x, Tensor) and copy is not True:
        moved = asarray(x, device=device)
        if copy is False and moved is not x:
            raise BufferError(at_user_line(
                "from_dlpack(copy=False): the tensor is on another device, and moving it "
                "copies; use copy=None"))
        return moved
    if copy is False:
        raise BufferError(at_user_line(
            "from_dlpack(copy=False): stablejit places the data on its own device buffers, "
            "which always copies; use copy=None"))
    if isinstance(x, Tensor):
        return asarray(x, device=device, copy=True)
    try:
        a = np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError) as e:
        raise BufferError(at_user_line(
            f"from_dlpack: cannot read {type(x).__name__} through DLPack on the host ({e}); "
            f"move it to CPU memory first")) from None
    return asarray(np.array(a, copy=True), device=device)


def meshgrid(*arrays, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors; indexing 'xy' (Cartesian) or 'ij' (matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(at_user_line(f"meshgrid: indexing must be 'xy' or 'ij', got "
                                      f"{indexing!r}"))
    ts = [as_tensor(a) for a in arrays]
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(at_user_line(f"meshgrid: array {i} has shape {t.shape}; every "
                                          f"input must be 1-D"))
    if not ts:
        return ()
    shape = [t.shape[0] for t in ts]
    dims = list(range(len(ts)))
    if indexing == "xy" and len(ts) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        dims[0], dims[1] = 1, 0
    ts, _ = promote_operands(*ts)
    return tuple(bind1(so.broadcast_in_dim, t, shape=tuple(shape), broadcast_dimensions=(d,))
                 for t, d in zip(ts, dims, strict=True))  # a tuple: NumPy 2's, array API 2025.12


def _tri_mask(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(at_user_line(f"{'tril' if lower else 'triu'} needs at least 2 "
                                      f"dimensions, got shape {x.shape}"))
    n, m = x.shape[-2:]
    rows = bind1(so.iota, shape=(n, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(so.iota, shape=(n, m), dtype=DEFAULT_INT, dimension=1)
    d = cols - rows
    mask = d <= k if lower else d >= k
    return broadcast_to(mask, x.shape)


def tril(x, /, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes (below and on the k-th diagonal)."""
    x = as_tensor(x)
    return select(_tri_mask(x, k, True), x, _zero(x))


def triu(x, /, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes (above and on the k-th diagonal)."""
    x = as_tensor(x)
    return select(_tri_mask(x, k, False), x, _zero(x))


def _zero(x: Tensor) -> Tensor:
    return x._backend.scalar(0, x.dtype)


def linspace(start, stop, /, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
    """`num` evenly spaced values from start to stop (inclusive unless endpoint=False).
    start and stop may be complex, or tensors (also traced ones inside jit): the values
    then run along a new `axis` of their broadcast shape. An integer dtype floors the
    values (NumPy's rule). retstep=True returns (samples, step), the step a tensor."""
    num = _count(_outer(), "num", num)  # 2.5 points is an error (TypeError), as in NumPy
    start, stop = (v if isinstance(v, (Tensor, numbers.Number)) else asarray(v)
                   for v in (start, stop))
    nd = _inexact(start, stop)
    d = dt.dtype(dtype) if dtype is not None else nd
    step_dtype = d if d.is_inexact else nd
    shape = broadcast_shapes(*(getattr(v, "shape", ()) for v in (start, stop)))
    ax = normalize_axis(axis, len(shape) + 1)
    _fits((num,) + shape, d, _backend(device))
    floor_to_int = d.kind in "iu"
    if not isinstance(start, Tensor) and not isinstance(stop, Tensor) and (
            device is not None or current_backend().concrete):
        a, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
        if floor_to_int and a.dtype.kind != "c":
            a = np.floor(a)
        out = _backend(device).from_numpy(a.astype(d.np) if d.kind != "b" else a != 0)
        return (out, asarray(step, step_dtype, device=device)) if retstep else out
    # on tensors or inside jit: start + i * step with an iota, the last value exact
    work = dt.float64 if floor_to_int or {d, nd} & {dt.float64, dt.complex128} else dt.float32
    if d.is_complex or nd.is_complex:
        work = dt.complex_dtype(work)
    # (Python numbers straight to work: through float32 first would round them)
    s, e = (broadcast_to(asarray(v, work), shape) for v in (start, stop))
    i = astype(bind1(so.iota, shape=(num,), dtype=DEFAULT_INT, dimension=0),
               dt.real_dtype(work))
    i = reshape_front(i, len(shape))
    div = (num - 1) if endpoint else num
    delta = subtract(e, s)
    if div > 0:
        step = divide(delta, float(div))
        out = add(s, multiply(i, step))
    else:  # no step: NumPy's NaN, a scalar whatever the shape
        step = full((), math.nan, work)
        out = add(s, multiply(i, delta))
    if endpoint and num > 1:
        out = out.at[num - 1].set(e)
    out = _along(out, ax)
    if floor_to_int and not work.is_complex:
        out = floor(out)
    out = astype(out, d)
    return (out, astype(step, step_dtype)) if retstep else out


def _inexact(start, stop) -> dt.DType:
    """The dtype linspace computes start and stop in: theirs, at least the default float."""
    d, _ = result_type_and_weak(start, stop)
    return d if d.is_inexact else default_float()


def _along(y: Tensor, axis: int) -> Tensor:
    """y, whose values run along its first axis, with them along `axis` instead."""
    if axis == 0:
        return y
    from ._manipulation import moveaxis  # the manipulation module builds on this one
    return moveaxis(y, 0, axis)


def logspace(start, stop, /, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0, *, device=None) -> Tensor:
    """base ** linspace(start, stop, num). start, stop and base may be tensors: the
    values run along a new `axis` of their broadcast shape. An integer dtype truncates
    (NumPy's rule)."""
    out = None if dtype is None else dt.dtype(dtype)
    work = dt.float64 if out is not None and (
        out in (dt.float64, dt.complex128) or out.kind in "iu") else None
    if not isinstance(base, numbers.Number):  # NumPy's rule: all three at one ndim
        base = asarray(base)
        ndim = len(broadcast_shapes(*(getattr(v, "shape", ()) for v in (start, stop, base))))
        start, stop, base = (_ndmin(v, ndim) for v in (start, stop, base))
        ax = normalize_axis(axis, ndim + 1)  # base gets a 1 where the values run
        base = bind1(so.broadcast_in_dim, base, shape=base.shape[:ax] + (1,) + base.shape[ax:],
                     broadcast_dimensions=tuple(k for k in range(ndim + 1) if k != ax))
    y = linspace(start, stop, num, endpoint=endpoint, device=device, dtype=work, axis=axis)
    y = power(base, y)
    return astype(y, out) if out is not None else y


def _ndmin(v, ndim: int) -> Tensor:
    """v with leading 1s to ndim dimensions (NumPy's array(v, ndmin=ndim))."""
    t = v if isinstance(v, Tensor) else asarray(v)
    return bind1(so.broadcast_in_dim, t, shape=(1,) * (ndim - t.ndim) + t.shape,
                 broadcast_dimensions=tuple(range(ndim - t.ndim, ndim)))


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
              axis: int = 0) -> Tensor:
    """`num` values from start to stop evenly spaced on a log scale (a geometric
    progression). start and stop may be tensors (the values run along a new `axis`) or
    complex; the end points are exact (NumPy's rule). The dtype is that of start and
    stop, at least the default float (as in JAX)."""
    num = _count("geomspace", "num", num)
    if any(isinstance(v, numbers.Number) and v == 0 for v in (start, stop)):
        raise ValueError(at_user_line(
            f"geomspace: a geometric sequence cannot include zero (start={start!r}, "
            f"stop={stop!r}); start and stop must both be nonzero (for 0 .. stop, use "
            f"linspace, or start at a small nonzero value)"))
    _, d = promote_operands(start, stop)
    out = dt.dtype(dtype) if dtype is not None else d if d.is_inexact else default_float()
    work = dt.float64 if out in (dt.float64, dt.complex128) or (
        dtype is not None and not out.is_inexact and d in (dt.float64, dt.complex128)) \
        else dt.float32
    if d.is_complex or out.is_complex:
        work = dt.complex_dtype(work)
    s, e = (asarray(v, work) if not isinstance(v, Tensor) else astype(v, work)
            for v in (start, stop))  # Python numbers straight to the working dtype
    shape = broadcast_shapes(s.shape, e.shape)
    s, e = broadcast_to(s, shape), broadcast_to(e, shape)
    # the progression of |start| .. stop/sign(start), turned back by start's sign (or
    # direction, for complex numbers)
    direction = divide(s, abs(s)) if work.is_complex else sign(s)
    s, e = divide(s, direction), divide(e, direction)
    lo, hi = log10(s), log10(e)
    div = (num - 1) if endpoint else num
    t = astype(arange(num, dtype=DEFAULT_INT), dt.real_dtype(work))
    t = reshape_front(divide(t, float(max(div, 1))), len(shape))
    res = power(astype(as_tensor(10.0), work), add(lo, multiply(t, subtract(hi, lo))))
    if num > 0:
        res = res.at[0].set(s)
    if endpoint and num > 1:
        res = res.at[num - 1].set(e)
    res = _along(multiply(direction, res), normalize_axis(axis, res.ndim))
    return astype(res, out)


def reshape_front(t: Tensor, ndim: int) -> Tensor:
    """The 1-D t as shape (n, 1, ..., 1) with ndim ones: values along a new first axis."""
    return bind1(so.broadcast_in_dim, t, shape=t.shape + (1,) * ndim,
                 broadcast_dimensions=(0,))
