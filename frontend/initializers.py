"""stablejit.nn.initializers: JAX's `jax.nn.initializers`. Each builder returns an
`init(key, shape, dtype=...)` function, and draws from stablejit.random with the same
arithmetic as JAX (variance in the weights' dtype, the same truncation constant), so a
stablejit key gives the bits a JAX key of the same seed gives wherever the random
functions agree.

    init = initializers.glorot_uniform()
    w = init(random.key(0), (784, 512))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from . import numpy as snp
from . import random
from .compiler import dtypes as dt
from .errors import at_user_line
from .promotion import default_float
from .tensor import Tensor

__all__ = ["constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal",
           "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
           "xavier_normal", "xavier_uniform", "zeros"]

Initializer = Callable[..., Tensor]
Axes = int | Sequence[int]

# the standard deviation of a standard normal truncated to (-2, 2)
_TRUNCATED_STD = .87962566103423978


def _dtype(dtype):
    return default_float() if dtype is None else dt.dtype(dtype)


def zeros(key, shape, dtype=None) -> Tensor:
    """An initialiser's result of zeros (jax.nn.initializers.zeros): `key` is ignored.

    Returns a tensor of `shape` and `dtype` (default float32).

    Example:
        >>> stablejit.nn.initializers.zeros(stablejit.random.key(0), (2, 3))
        Tensor<f32[2,3] xla:host:0>
        [[0., 0., 0.],
         [0., 0., 0.]]
    """
    return snp.zeros(tuple(shape), _dtype(dtype))


def ones(key, shape, dtype=None) -> Tensor:
    """An initialiser's result of ones (jax.nn.initializers.ones): `key` is ignored.

    Returns a tensor of `shape` and `dtype` (default float32).
    """
    return snp.ones(tuple(shape), _dtype(dtype))


def constant(value, dtype=None) -> Initializer:
    """An initialiser whose every element is `value` (jax.nn.initializers.constant).

    Returns a function init(key, shape, dtype) -> Tensor; `key` is ignored.
    """
    def init(key, shape, dtype=dtype) -> Tensor:
        return snp.full(tuple(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale: float = 1e-2, dtype=None) -> Initializer:
    """Uniform in [0, scale)."""
    def init(key, shape, dtype=dtype) -> Tensor:
        d = _dtype(dtype)
        return random.uniform(key, tuple(shape), d) * snp.asarray(scale, dtype=d)
    return init


def normal(stddev: float = 1e-2, dtype=None) -> Initializer:
    """An initialiser drawing from N(0, stddev^2) (jax.nn.initializers.normal),
    with jax's bits for the same key.

    Returns a function init(key, shape, dtype) -> Tensor.
    """
    def init(key, shape, dtype=dtype) -> Tensor:
        d = _dtype(dtype)
        return random.normal(key, tuple(shape), d) * snp.asarray(stddev, dtype=d)
    return init


def truncated_normal(stddev: float = 1e-2, dtype=None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """stddev times a standard normal truncated to (lower, upper) (no correction of the
    standard deviation for the truncation, as JAX)."""
    def init(key, shape, dtype=dtype) -> Tensor:
        d = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, tuple(shape), d) * snp.asarray(
            stddev, dtype=d)
    return init


def _size(shape, axes) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _fans(shape: tuple[int, ...], in_axis: Axes, out_axis: Axes, batch_axis: Axes
          ) -> tuple[float, float]:
    """fan_in, fan_out: the in/out axes' sizes times the receptive field (the axes that
    are neither in, out nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(at_user_line(
            f"can't compute input and output sizes of a {len(shape)}-dimensional weights "
            f"tensor with the default in_axis; give at least 2 axes or in_axis="))
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: Axes = -2,
                     out_axis: Axes = -1, batch_axis: Axes = (), dtype=None) -> Initializer:
    """Zero-mean draws with variance scale / n, n the fan given by `mode` ("fan_in",
    "fan_out", "fan_avg", "fan_geo_avg"); `distribution` is "truncated_normal" (at two
    standard deviations, rescaled), "normal" or "uniform". Real dtypes only."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(at_user_line(f"variance_scaling: invalid mode {mode!r}; use "
                                      f"'fan_in', 'fan_out', 'fan_avg' or 'fan_geo_avg'"))
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(at_user_line(
            f"variance_scaling: invalid distribution {distribution!r}; use "
            f"'truncated_normal', 'normal' or 'uniform'"))

    def init(key, shape, dtype=dtype) -> Tensor:
        shape = tuple(int(n) for n in shape)
        d = _dtype(dtype)
        if not d.is_float:
            raise TypeError(at_user_line(f"variance_scaling: dtype {d.name} is not a real "
                                         f"floating type"))
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = snp.asarray(scale / denominator, dtype=d)
        if distribution == "truncated_normal":
            stddev = snp.sqrt(variance) / snp.asarray(_TRUNCATED_STD, dtype=d)
            return random.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return random.normal(key, shape, d) * snp.sqrt(variance)
        return random.uniform(key, shape, d, -1) * snp.sqrt(3 * variance)

    return init


def _scaled(scale: float, mode: str, distribution: str, doc: str) -> Callable:
    def builder(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    builder.__doc__ = doc
    return builder


glorot_uniform = _scaled(1.0, "fan_avg", "uniform", "variance_scaling(1, fan_avg, uniform)")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                        """variance_scaling(1, fan_avg, truncated_normal)

    Example:
        >>> init = stablejit.nn.initializers.glorot_normal()
        >>> init(stablejit.random.key(0), (2, 3))
        Tensor<f32[2,3] xla:host:0>
        [[ 1.0468423 ,  1.2329134 , -0.29671577],
         [-0.05394943,  0.12079362, -0.65617436]]
    """)
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "variance_scaling(1, fan_in, uniform)")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal",
                       "variance_scaling(1, fan_in, truncated_normal)")
he_uniform = _scaled(2.0, "fan_in", "uniform", "variance_scaling(2, fan_in, uniform)")
he_normal = _scaled(2.0, "fan_in", "truncated_normal",
                    """variance_scaling(2, fan_in, truncated_normal)

    Example:
        >>> init = stablejit.nn.initializers.he_normal()
        >>> init(stablejit.random.key(0), (2, 2))
        Tensor<f32[2,2] xla:host:0>
        [[ 1.6552032 ,  1.9494075 ],
         [-0.46914884, -0.08530156]]
    """)
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype=None) -> Initializer:
    """Orthonormal columns along `column_axis` (the QR of a normal draw with the signs of
    R's diagonal folded in, as jax.random.orthogonal), times scale."""
    def init(key, shape, dtype=dtype) -> Tensor:
        shape = tuple(int(n) for n in shape)
        d = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(at_user_line(f"orthogonal initializer needs at least a 2-d "
                                          f"shape, got {shape}"))
        if 0 in shape:
            return snp.zeros(shape, d)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        z = random.normal(key, (max(n_rows, n_cols), min(n_rows, n_cols)), d)
        q, r = snp.linalg.qr(z)
        q = q * snp.expand_dims(snp.sign(snp.linalg.diagonal(r)), -2)
        if n_rows < n_cols:
            q = snp.matrix_transpose(q)
        q = snp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return snp.asarray(scale, dtype=d) * snp.moveaxis(q, -1, column_axis)
    return init


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
