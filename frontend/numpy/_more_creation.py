"""More creation functions of the array API: asarray with its copy semantics,
from_dlpack, meshgrid, tril/triu, linspace (also inside jit and with tensor end points),
logspace."""

from __future__ import annotations

import operator

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import ALL as P
from ..dispatch import bind1, current_backend
from ..errors import at_user_line
from ..promotion import DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INT
from ..tensor import Tensor
from ._core import as_tensor, astype, broadcast_to
from ._core import asarray as _asarray
from ._elementwise import add, multiply, power, where


def asarray(obj, /, dtype=None, *, device=None, copy=None) -> Tensor:
    """A Tensor from a Tensor, NumPy array, Python scalar, nested sequence or buffer.

    copy=None copies only when needed; copy=True always gives a new tensor; copy=False
    raises ValueError when a copy cannot be avoided (host data must always be copied to
    a device, and a dtype or device change copies). Tensors are immutable, so sharing
    one is never observable except through deallocate/donation.
    """
    if copy is False:
        from ..api import resolve_backend

        if not isinstance(obj, Tensor):
            raise ValueError(at_user_line(
                f"asarray(copy=False): a {type(obj).__name__} must be copied to become a "
                f"tensor; use copy=None to allow it"))
        if dtype is not None and dt.dtype(dtype) is not obj.dtype or (
                device is not None and resolve_backend(device) is not obj._backend):
            raise ValueError(at_user_line(
                "asarray(copy=False): changing the dtype or device needs a copy; use "
                "copy=None to allow it"))
    out = _asarray(obj, dtype, device=device)
    if copy and out is obj and obj._backend.concrete:
        from ..api import backend_copy

        out = backend_copy(obj, obj._backend)
    return out


def array(obj, dtype=None, *, copy: bool = True, device=None) -> Tensor:
    """NumPy's array(): like asarray but copying by default."""
    return asarray(obj, dtype, device=device, copy=copy)


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A tensor from any object with __dlpack__ (a NumPy, torch or jax array ...).

    The data goes through numpy.from_dlpack (so it must be readable from the host: CPU
    memory, or a producer that can copy to the CPU), then is placed on `device` (default:
    the current default backend). That placement copies, so copy=False raises.
    """
    if copy is False:
        raise ValueError(at_user_line(
            "from_dlpack(copy=False): stablejit places the data on its own device buffers, "
            "which always copies; use copy=None"))
    if isinstance(x, Tensor):
        return asarray(x, device=device)
    try:
        a = np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError) as e:
        raise BufferError(at_user_line(
            f"from_dlpack: cannot read {type(x).__name__} through DLPack on the host ({e}); "
            f"move it to CPU memory first")) from None
    return _asarray(np.array(a, copy=True), device=device)


def meshgrid(*arrays, indexing: str = "xy") -> list[Tensor]:
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
        return []
    shape = [t.shape[0] for t in ts]
    dims = list(range(len(ts)))
    if indexing == "xy" and len(ts) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        dims[0], dims[1] = 1, 0
    from ._core import promote_operands

    ts, _ = promote_operands(*ts)
    return [bind1(P["broadcast_in_dim"], t, shape=tuple(shape), broadcast_dimensions=(d,))
            for t, d in zip(ts, dims, strict=True)]


def _tri_mask(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(at_user_line(f"{'tril' if lower else 'triu'} needs at least 2 "
                                      f"dimensions, got shape {x.shape}"))
    n, m = x.shape[-2:]
    rows = bind1(P["iota"], shape=(n, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(P["iota"], shape=(n, m), dtype=DEFAULT_INT, dimension=1)
    d = cols - rows
    mask = d <= k if lower else d >= k
    return broadcast_to(mask, x.shape)


def tril(x, /, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes (below and on the k-th diagonal)."""
    x = as_tensor(x)
    return where(_tri_mask(x, k, True), x, _zero(x))


def triu(x, /, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes (above and on the k-th diagonal)."""
    x = as_tensor(x)
    return where(_tri_mask(x, k, False), x, _zero(x))


def _zero(x: Tensor) -> Tensor:
    return x._backend.scalar(0, x.dtype)


def linspace(start, stop, /, num: int = 50, *, dtype=None, device=None,
             endpoint: bool = True) -> Tensor:
    """`num` evenly spaced values from start to stop (inclusive unless endpoint=False).
    start and stop may be complex, or tensors (also traced ones inside jit)."""
    num = operator.index(num)  # 2.5 points is an error (TypeError), as in NumPy
    if num < 0:
        raise ValueError(at_user_line(f"linspace: num must be non-negative, got {num}"))
    is_complex = any(isinstance(v, complex) or isinstance(v, Tensor) and v.dtype.is_complex
                     for v in (start, stop))
    if dtype is not None:
        d = dt.dtype(dtype)
    elif any(isinstance(v, Tensor) and v.dtype.is_inexact for v in (start, stop)):
        d = next(v.dtype for v in (start, stop) if isinstance(v, Tensor) and v.dtype.is_inexact)
    else:
        d = DEFAULT_COMPLEX if is_complex else DEFAULT_FLOAT
    tensors = [v for v in (start, stop) if isinstance(v, Tensor)]
    backend = current_backend() if device is None else None
    if not tensors and (device is not None or backend.concrete):
        from ._creation import _backend

        a = np.linspace(start, stop, num, endpoint=endpoint)
        return _backend(device).from_numpy(a.astype(d.np) if d.kind != "b" else a != 0)
    # on tensors or inside jit: start + i * step with an iota, the last value exact
    work = dt.float64 if d in (dt.float64, dt.complex128) else dt.float32
    if d.is_complex or is_complex:
        work = dt.complex_dtype(work)
    s, e = (_asarray(v, work) for v in (start, stop))  # Python floats straight to work
    div = (num - 1) if endpoint else num
    i = astype(bind1(P["iota"], shape=(num,), dtype=DEFAULT_INT, dimension=0), work)
    step = (e - s) / float(max(div, 1))
    out = add(s, multiply(i, step))
    if endpoint and num > 1:
        last = i == float(num - 1)
        out = where(last, broadcast_to(e, out.shape), out)
    return astype(out, d)


def logspace(start, stop, /, num: int = 50, *, endpoint: bool = True, base: float = 10.0,
             dtype=None, device=None) -> Tensor:
    """base ** linspace(start, stop, num)."""
    out = power(base, linspace(start, stop, num, endpoint=endpoint, device=device,
                               dtype=dt.float64 if dtype in (dt.float64, "float64") else None))
    return astype(out, dtype) if dtype is not None else out
