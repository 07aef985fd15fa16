"""Creation functions. Their arguments are static, so concrete backends build the data
with NumPy and place it; inside jit the values become IR constants (a splat constant
broadcast, or iota for ranges) instead of large embedded arrays."""

from __future__ import annotations

import math

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.primitives import ALL as P
from ..dispatch import bind1, current_backend
from ..promotion import DEFAULT_FLOAT, DEFAULT_INT, python_scalar_dtype
from ..tensor import Tensor
from ._core import as_shape, as_tensor, astype, broadcast_to


def _backend(device):
    if device is None:
        return current_backend()
    from ..api import resolve_backend

    return resolve_backend(device)


def full(shape, fill_value, dtype=None, *, device=None) -> Tensor:
    shape = as_shape(shape)
    if isinstance(fill_value, Tensor):
        return broadcast_to(astype(fill_value, dtype) if dtype else fill_value, shape)
    d = dt.dtype(dtype) if dtype is not None else python_scalar_dtype(
        fill_value) if isinstance(fill_value, (bool, int, float, complex)) else dt.dtype(
        np.asarray(fill_value).dtype)
    backend = _backend(device)
    if backend.concrete and math.prod(shape) <= 1:
        return backend.from_numpy(np.full(shape, fill_value, dtype=d.np))
    s = backend.scalar(fill_value, d)
    return bind1(P["broadcast_in_dim"], s, shape=shape, broadcast_dimensions=())


def zeros(shape, dtype=None, *, device=None) -> Tensor:
    return full(shape, 0, dtype or DEFAULT_FLOAT, device=device)


def ones(shape, dtype=None, *, device=None) -> Tensor:
    return full(shape, 1, dtype or DEFAULT_FLOAT, device=device)


def empty(shape, dtype=None, *, device=None) -> Tensor:
    return zeros(shape, dtype, device=device)


def _like(x, dtype):
    x = as_tensor(x)
    return x, (dtype or x.dtype)


def zeros_like(x, dtype=None, *, device=None) -> Tensor:
    x, d = _like(x, dtype)
    return full(x.shape, 0, d, device=device or _device_of(x))


def ones_like(x, dtype=None, *, device=None) -> Tensor:
    x, d = _like(x, dtype)
    return full(x.shape, 1, d, device=device or _device_of(x))


def empty_like(x, dtype=None, *, device=None) -> Tensor:
    return zeros_like(x, dtype, device=device)


def full_like(x, fill_value, dtype=None, *, device=None) -> Tensor:
    x, d = _like(x, dtype)
    return full(x.shape, fill_value, d, device=device or _device_of(x))


def _device_of(x: Tensor):
    return x._backend


def arange(start, stop=None, step=1, dtype=None, *, device=None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        py = [v for v in (start, stop, step) if v is not None]
        d = DEFAULT_FLOAT if any(isinstance(v, float) or isinstance(v, np.floating)
                                 for v in py) else DEFAULT_INT
    else:
        d = dt.dtype(dtype)
    n = max(0, math.ceil((stop - start) / step)) if step else None
    if n is None:
        raise ValueError("arange: step must not be zero")
    backend = _backend(device)
    if backend.concrete:
        return backend.from_numpy(np.arange(start, stop, step).astype(d.np)[:n])
    out = bind1(P["iota"], shape=(n,), dtype=d if d.kind != "b" else DEFAULT_INT, dimension=0)
    if step != 1:
        out = out * step
    if start != 0:
        out = out + start
    return astype(out, d)


def eye(n_rows: int, n_cols: int | None = None, k: int = 0, dtype=None, *, device=None
        ) -> Tensor:
    d = dt.dtype(dtype) if dtype is not None else DEFAULT_FLOAT
    m = n_rows if n_cols is None else n_cols
    backend = _backend(device)
    if backend.concrete:
        return backend.from_numpy(np.eye(n_rows, m, k, dtype=d.np))
    rows = bind1(P["iota"], shape=(n_rows, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(P["iota"], shape=(n_rows, m), dtype=DEFAULT_INT, dimension=1)
    return astype(cols - rows == k, d)


def identity(n: int, dtype=None, *, device=None) -> Tensor:
    return eye(n, dtype=dtype, device=device)


def tri(n: int, m: int | None = None, k: int = 0, dtype=None) -> Tensor:
    m = n if m is None else m
    rows = bind1(P["iota"], shape=(n, m), dtype=DEFAULT_INT, dimension=0)
    cols = bind1(P["iota"], shape=(n, m), dtype=DEFAULT_INT, dimension=1)
    return astype(cols <= rows + k, dtype or DEFAULT_FLOAT)
