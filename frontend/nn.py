"""stablejit.nn: activations, normalisation, initialisers, losses and optimisers.

Everything is a composition of stablejit.numpy (no primitives of its own), so it runs
eagerly, under jit and under grad alike. Reductions that exponentiate shift by the
maximum first (logsumexp, softmax) so large inputs do not overflow.

Optimisers are pure functions over pytrees of parameters:

    opt = nn.adam(1e-3)
    state = opt.init(params)
    params, state = opt.update(grads, state, params)
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Sequence

import numpy as np

from . import initializers, random
from . import numpy as snp
from .autodiff import stop_gradient
from .composite import one_program
from .errors import at_user_line
from .optimizers import Optimizer, adam, apply_updates, sgd
from .promotion import default_float
from .scipy.special import erfc
from .tensor import Tensor

# `import stablejit.nn.initializers` finds the module here (as `import os.path` finds
# posixpath): jax.nn.initializers is a module, and stablejit.nn is one file
sys.modules[f"{__name__}.initializers"] = initializers

# ---- activations -------------------------------------------------------------------------


def identity(x) -> Tensor:
    """x unchanged, as a tensor (jax.nn.identity): the activation that does nothing."""
    return snp.asarray(x)


@one_program
def relu(x) -> Tensor:
    """max(x, 0), with gradient 0 at 0 and at NaN (as JAX); NaN stays NaN.

    Example:
        >>> stablejit.nn.relu(snp.asarray([-1.0, 0.0, 2.0]))
        Tensor<f32[3] xla:host:0>
        [0., 0., 2.]
    """
    x = snp.asarray(x)
    # NaN passes through gradient-free: its derivative is JAX's 0 (x > 0 is false), not 1
    zero = snp.zeros_like(x)
    return snp.where(x > 0, x, snp.where(snp.isnan(x), stop_gradient(x), zero))


@one_program
def relu6(x) -> Tensor:
    """min(max(x, 0), 6), with gradient 0 at both kinks (as JAX)."""
    x = snp.asarray(x)
    value = snp.minimum(snp.maximum(stop_gradient(x), 0), 6.0)
    inside = snp.logical_and(x > 0, x < 6)
    return value + snp.where(inside, x - stop_gradient(x), 0.0)


def sigmoid(x) -> Tensor:
    """The logistic function 1 / (1 + exp(-x)), elementwise (jax.nn.sigmoid).

    Integers become the default float. Returns a tensor of x's shape.

    Example:
        >>> stablejit.nn.sigmoid(snp.asarray([0.0, 100.0, -100.0]))
        Tensor<f32[3] xla:host:0>
        [0.5, 1. , 0. ]
    """
    return snp.sigmoid(x)


def tanh(x) -> Tensor:
    """The hyperbolic tangent, elementwise (jax.nn.tanh; the same as stablejit.numpy.tanh)."""
    return snp.tanh(x)


@one_program
def silu(x) -> Tensor:
    """x * sigmoid(x) (also called swish).

    Example:
        >>> stablejit.nn.silu(snp.asarray([0.0, 100.0]))
        Tensor<f32[2] xla:host:0>
        [  0., 100.]
    """
    x = snp.asarray(x)
    return x * snp.sigmoid(x)


swish = silu


@one_program
def log_sigmoid(x) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), finite for large |x|."""
    return -softplus(-snp.asarray(x))


@one_program
def softplus(x) -> Tensor:
    """log(1 + exp(x)), as logaddexp(x, 0).

    Example:
        >>> stablejit.nn.softplus(snp.asarray([0.0, 100.0]))
        Tensor<f32[2] xla:host:0>
        [  0.6931472, 100.       ]
    """
    return snp.logaddexp(snp.asarray(x), 0)


@one_program
def soft_sign(x) -> Tensor:
    """x / (|x| + 1)."""
    x = snp.asarray(x)
    return x / (snp.abs(x) + 1)


@one_program
def squareplus(x, b=4) -> Tensor:
    """(x + sqrt(x**2 + b)) / 2."""
    x = snp.asarray(x)
    return (x + snp.sqrt(snp.square(x) + b)) / 2


@one_program
def mish(x) -> Tensor:
    """x * tanh(softplus(x))."""
    x = snp.asarray(x)
    return x * snp.tanh(softplus(x))


@one_program
def elu(x, alpha=1.0) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = snp.asarray(x)
    positive = x > 0
    return snp.where(positive, x, alpha * snp.expm1(snp.where(positive, 0.0, x)))


@one_program
def selu(x) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


@one_program
def celu(x, alpha=1.0) -> Tensor:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = snp.asarray(x)
    return snp.maximum(x, 0.0) + alpha * snp.expm1(snp.minimum(x, 0.0) / alpha)


@one_program
def leaky_relu(x, negative_slope=1e-2) -> Tensor:
    """x where x >= 0, else negative_slope * x, elementwise (jax.nn.leaky_relu).

    negative_slope: the slope below 0 (default 0.01). Returns a tensor of x's shape.

    Example:
        >>> stablejit.nn.leaky_relu(snp.asarray([-2.0, 3.0]), negative_slope=0.5)
        Tensor<f32[2] xla:host:0>
        [-1.,  3.]
    """
    x = snp.asarray(x)
    return snp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x) -> Tensor:
    """x clipped to [-1, 1]."""
    x = snp.asarray(x)
    return snp.where(x > 1, 1, snp.where(x < -1, -1, x))


def hard_sigmoid(x) -> Tensor:
    """relu6(x + 3) / 6."""
    return relu6(snp.asarray(x) + 3.0) / 6.0


def hard_silu(x) -> Tensor:
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x = snp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def sparse_plus(x) -> Tensor:
    """0 for x <= -1, x for x >= 1, (x + 1)**2 / 4 between."""
    x = snp.asarray(x)
    return snp.where(x <= -1.0, 0.0, snp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x) -> Tensor:
    """clip((x + 1) / 2, 0, 1)."""
    return 0.5 * snp.clip(snp.asarray(x) + 1.0, 0.0, 2.0)


def log1mexp(x) -> Tensor:
    """log(1 - exp(-x)), accurate on both sides of log 2."""
    x = snp.asarray(x)
    small = x < math.log(2.0)
    # each branch sees its own side only, so the one not taken has a finite derivative
    # (at 0, log1p(-exp(-0)) is -inf and its derivative inf: times the zero cotangent
    # the select gives it, NaN)
    a = snp.where(small, x, math.log(2.0))
    b = snp.where(small, math.log(2.0), x)
    return snp.where(small, snp.log(-snp.expm1(-a)), snp.log1p(-snp.exp(-b)))


@one_program
def gelu(x, approximate: bool = True) -> Tensor:
    """The Gaussian error linear unit: x * Phi(x), Phi the standard normal CDF. As in
    JAX, approximate=True (the default) uses the tanh form; approximate=False is exact,
    0.5 * x * erfc(-x / sqrt(2)).

    Example:
        >>> stablejit.nn.gelu(snp.asarray([-1.0, 0.0, 1.0]))
        Tensor<f32[3] xla:host:0>
        [-0.15880...,  0. ...,  0.841192...]
    """
    x = snp.asarray(x)
    if not snp.isdtype(x.dtype, ("real floating", "complex floating")):
        x = snp.astype(x, default_float())
    if not approximate:
        return 0.5 * x * erfc(-x * snp.asarray(math.sqrt(0.5), dtype=x.dtype))
    c = snp.asarray(math.sqrt(2.0 / math.pi), dtype=x.dtype)
    return x * (0.5 * (1.0 + snp.tanh(c * (x + 0.044715 * (x * x * x)))))


@one_program
def glu(x, axis: int = -1) -> Tensor:
    """The first half of x along axis, gated by the sigmoid of the second half."""
    x = snp.asarray(x)
    if x.shape[axis] % 2:
        raise ValueError(at_user_line(f"glu: axis {axis} of shape {x.shape} has odd size "
                                      f"{x.shape[axis]}; it must split into two halves"))
    a, b = snp.split(x, 2, axis)
    return a * snp.sigmoid(b)


# ---- reductions with a shift ----------------------------------------------------------


def _masked(x: Tensor, where, fill) -> Tensor:
    return x if where is None else snp.where(where, x, fill)


@one_program
def logsumexp(a, axis: int | Sequence[int] | None = None, b=None, keepdims: bool = False,
              return_sign: bool = False, where=None):
    """log(sum(b * exp(a))) over axis (all axes by default, as JAX and SciPy), computed as
    m + log(sum(b * exp(a - m))) with m the (gradient-free) maximum, so it neither
    overflows nor underflows to -inf. return_sign=True gives (log|sum|, sign(sum));
    otherwise a negative sum gives NaN. `where` masks elements out.

    Example:
        >>> stablejit.nn.logsumexp(snp.asarray([0.0, 0.0]))
        Tensor<f32[] xla:host:0>
        0.6931472
    """
    a = snp.asarray(a)
    if not a.dtype.is_inexact:
        a = snp.astype(a, default_float())
    if where is not None:
        a = snp.where(where, a, 0)
    if b is not None:
        b = snp.asarray(b)
        a = snp.where(b != 0, a, -math.inf)
    real = snp.real(a) if a.dtype.is_complex else a
    m = snp.max(_masked(real, where, -math.inf), axis=axis, keepdims=True)
    m = stop_gradient(snp.where(snp.isfinite(m), m, snp.zeros_like(m)))
    e = snp.exp(a - snp.astype(m, a.dtype))
    if b is not None:
        e = e * b
    total = snp.sum(_masked(e, where, 0), axis=axis, keepdims=True)
    sign = snp.sign(total)
    if return_sign or not total.dtype.is_complex:
        total = snp.abs(total)
    out = snp.log(total) + snp.astype(m, total.dtype)
    if not keepdims:
        drop = tuple(range(a.ndim)) if axis is None else axis
        out, sign = snp.squeeze(out, axis=drop), snp.squeeze(sign, axis=drop)
    if return_sign:
        return out, sign
    if b is not None and not out.dtype.is_complex:
        out = snp.where(sign < 0, math.nan, out)
    return out


@one_program
def softmax(x, axis: int | Sequence[int] | None = -1, where=None) -> Tensor:
    """exp(x) / sum(exp(x)) along axis (None: all axes); masked-out elements (`where`
    False) get 0.

    Example:
        >>> stablejit.nn.softmax(snp.asarray([1.0, 2.0, 3.0]))
        Tensor<f32[3] xla:host:0>
        [0.09003057, 0.244728..., 0.66524094]
    """
    x = snp.asarray(x)
    x_max = stop_gradient(snp.max(_masked(x, where, -math.inf), axis=axis, keepdims=True))
    e = snp.exp(_masked(x, where, -math.inf) - x_max)
    out = e / snp.sum(_masked(e, where, 0), axis=axis, keepdims=True)
    return _masked(out, where, 0)


@one_program
def log_softmax(x, axis: int | Sequence[int] | None = -1, where=None) -> Tensor:
    """x - logsumexp(x) along axis; masked-out elements (`where` False) get -inf.

    Example:
        >>> stablejit.nn.log_softmax(snp.asarray([1.0, 2.0, 3.0]))
        Tensor<f32[3] xla:host:0>
        [-2.40760..., -1.40760..., -0.40760...]
    """
    x = snp.asarray(x)
    x_max = stop_gradient(snp.max(_masked(x, where, -math.inf), axis=axis, keepdims=True))
    shifted = _masked(x, where, -math.inf) - x_max
    total = snp.sum(_masked(snp.exp(shifted), where, 0), axis=axis, keepdims=True)
    return _masked(shifted - snp.log(total), where, -math.inf)


@one_program
def one_hot(x, num_classes: int, dtype=None, *, axis: int = -1) -> Tensor:
    """x == class along a new axis `axis` of size num_classes, as `dtype` (default: the
    default float, float32 or in x64 mode float64, as jax's); out-of-range labels give
    all zeros.

    Example:
        >>> stablejit.nn.one_hot(snp.asarray([0, 2]), 3)
        Tensor<f32[2,3] xla:host:0>
        [[1., 0., 0.],
         [0., 0., 1.]]
    """
    try:
        n = operator.index(num_classes)
    except TypeError:
        raise TypeError(at_user_line(
            f"one_hot: num_classes must be an integer, got {num_classes!r}")) from None
    if n < 0:
        raise ValueError(at_user_line(f"one_hot: num_classes must be non-negative, got {n}"))
    x = snp.asarray(x)
    out_axis = axis % (x.ndim + 1) if -(x.ndim + 1) <= axis <= x.ndim else None
    if out_axis is None:
        raise ValueError(at_user_line(f"one_hot: axis {axis} is out of range for a result "
                                      f"of rank {x.ndim + 1}"))
    shape = [1] * x.ndim
    shape.insert(out_axis, n)
    classes = snp.reshape(snp.arange(n, dtype=x.dtype), tuple(shape))
    return snp.astype(snp.expand_dims(x, out_axis) == classes,
                      default_float() if dtype is None else dtype)


@one_program
def standardize(x, axis: int | Sequence[int] | None = -1, mean=None, variance=None,
                epsilon: float = 1e-5, where=None) -> Tensor:
    """(x - mean) / sqrt(variance + epsilon) along axis; mean and variance default to
    the masked (`where`) mean and mean(x**2) - mean**2 (clipped at 0), as JAX."""
    x = snp.asarray(x)
    if mean is None:
        mean = _masked_mean(x, axis, where)
    if variance is None:
        variance = snp.clip(_masked_mean(snp.square(x), axis, where) - snp.square(mean), 0)
    return (x - mean) * snp.rsqrt(variance + epsilon)


normalize = standardize


def _masked_mean(x: Tensor, axis, where) -> Tensor:
    if where is None:
        return snp.mean(x, axis=axis, keepdims=True)
    mask = snp.broadcast_to(snp.asarray(where), x.shape)
    count = snp.sum(snp.astype(mask, x.dtype), axis=axis, keepdims=True)
    return snp.sum(snp.where(mask, x, 0), axis=axis, keepdims=True) / count


@one_program
def layer_norm(x, scale=None, bias=None, axis: int | Sequence[int] = -1,
               eps: float = 1e-5) -> Tensor:
    """Layer normalisation: x standardised over `axis` (zero mean, unit variance,
    with `eps` added to the variance), then multiplied by `scale` and shifted by `bias`
    when they are given (they broadcast against x).

    Returns a tensor of x's shape. Runs as one compiled program per signature.

    Example:
        >>> y = stablejit.nn.layer_norm(snp.asarray([[1.0, 3.0], [2.0, 2.0]]))
        >>> snp.round(y, 4)  # +-1 / sqrt(1 + eps), whose last float32 bit varies by CPU
        Tensor<f32[2,2] xla:host:0>
        [[-1.,  1.],
         [ 0.,  0.]]
    """
    y = standardize(x, axis, epsilon=eps)
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


# ---- attention ------------------------------------------------------------------------------


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None) -> Tensor:
    """softmax(query . key / sqrt(H) + bias, masked) . value, as jax.nn's (its "xla"
    implementation). Shapes [B, T, N, H] for query, [B, S, K, H] for key and value (the
    B axis may be left out; N a multiple of K: grouped-query attention); bias and mask
    broadcast to [B, N, T, S]; mask is boolean, True where attention is allowed. Logits
    are computed in at least float32 and the softmax in float32."""
    if implementation not in (None, "xla"):
        raise ValueError(at_user_line(f"dot_product_attention: implementation "
                                      f"{implementation!r} is not available; use None or "
                                      f"'xla'"))
    out_shape = snp.asarray(query).shape
    q, k, v, bias, mask = (None if t is None else _four_d(snp.asarray(t))
                           for t in (query, key, value, bias, mask))
    B, S, K, H = k.shape
    _, T, N, _ = q.shape
    if v.shape != k.shape or q.shape[0] != B or q.shape[3] != H:
        raise ValueError(at_user_line(
            f"dot_product_attention: query {q.shape}, key {k.shape} and value {v.shape} do "
            f"not fit [B, T, N, H], [B, S, K, H], [B, S, K, H]"))
    if N % K:
        raise ValueError(at_user_line(f"dot_product_attention: the number of query heads "
                                      f"must be a multiple of key/value heads, got {N} vs {K}"))
    if mask is not None and mask.dtype is not snp.bool_:
        raise TypeError(at_user_line(f"dot_product_attention: mask must be boolean, got "
                                     f"{mask.dtype}"))
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    logits_dtype = snp.result_type(q.dtype, snp.float32)
    G = N // K
    qg = snp.reshape(q, (B, T, K, G, H))
    logits = snp.einsum("BTKGH,BSKH->BKGTS", snp.astype(qg, logits_dtype),
                        snp.astype(k, logits_dtype))
    logits = logits * snp.asarray(scale, dtype=logits_dtype)
    if bias is not None:
        logits = snp.astype(logits + _grouped(bias, K, G), logits_dtype)
    allowed = None if mask is None else _grouped(mask, K, G)
    if is_causal:
        causal = snp.tril(snp.ones((T, S), dtype=snp.bool_))
        allowed = causal if allowed is None else snp.logical_and(allowed, causal)
    if local_window_size is not None:
        left, right = ((local_window_size, local_window_size)
                       if isinstance(local_window_size, int) else local_window_size)
        qpos, kpos = snp.arange(T)[:, None], snp.arange(S)[None, :]
        window = snp.logical_and(qpos <= kpos + left, qpos >= kpos - right)
        allowed = window if allowed is None else snp.logical_and(allowed, window)
    if query_seq_lengths is not None or key_value_seq_lengths is not None:
        lengths = snp.ones((B, 1, 1, T, S), dtype=snp.bool_)
        if query_seq_lengths is not None:
            qlen = snp.asarray(query_seq_lengths)
            lengths = snp.logical_and(lengths, snp.arange(T)[None, None, None, :, None]
                                      < qlen[:, None, None, None, None])
        if key_value_seq_lengths is not None:
            kvlen = snp.asarray(key_value_seq_lengths)
            lengths = snp.logical_and(lengths, snp.arange(S)[None, None, None, None, :]
                                      < kvlen[:, None, None, None, None])
        allowed = lengths if allowed is None else snp.logical_and(allowed, lengths)
    if allowed is not None:
        big_negative = -0.7 * min(float(snp.finfo(logits_dtype).max),
                                  float(snp.finfo(snp.float32).max))
        logits = snp.where(allowed, logits, snp.asarray(big_negative, dtype=logits_dtype))
    probs = snp.astype(softmax(snp.astype(logits, snp.float32), axis=-1), k.dtype)
    out = snp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if query_seq_lengths is not None:
        keep = snp.arange(T)[None, :] < snp.asarray(query_seq_lengths)[:, None]
        out = out * snp.astype(keep[:, :, None, None, None], out.dtype)
    return snp.reshape(out, out_shape)


def _four_d(t: Tensor) -> Tensor:
    """t with leading size-1 axes up to rank 4 (attention without a batch axis)."""
    return snp.reshape(t, (1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t


def _grouped(t: Tensor, K: int, G: int) -> Tensor:
    """A [B, N or 1, T, S] bias or mask as [B, K, G, T, S] (N = K * G heads)."""
    tB, tN, tT, tS = t.shape
    if tN == 1:
        return snp.reshape(t, (tB, 1, 1, tT, tS))
    return snp.reshape(t, (tB, K, G, tT, tS))


# ---- initialisers ------------------------------------------------------------------------

def _fans(shape: Sequence[int]) -> tuple[float, float]:
    """fan_in, fan_out as JAX's variance_scaling: the last two axes are (in, out), the
    rest is the receptive field."""
    shape = tuple(shape)
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = float(np.prod(shape[:-2])) if len(shape) > 2 else 1.0
    return shape[-2] * receptive, shape[-1] * receptive


def _uniform(key, shape, dtype, limit: float) -> Tensor:
    dtype = default_float() if dtype is None else dtype
    if isinstance(key, (int, np.integer)):
        key = np.random.default_rng(int(key))
    if isinstance(key, np.random.Generator):
        d = snp.dtype(dtype) if not isinstance(dtype, snp.dtype) else dtype
        return snp.asarray(key.uniform(-limit, limit, size=tuple(shape)).astype(d.np))
    return random.uniform(key, tuple(shape), dtype=dtype, minval=-limit, maxval=limit)


def _normal(key, shape, dtype, std: float) -> Tensor:
    dtype = default_float() if dtype is None else dtype
    if isinstance(key, (int, np.integer)):
        key = np.random.default_rng(int(key))
    if isinstance(key, np.random.Generator):
        d = snp.dtype(dtype) if not isinstance(dtype, snp.dtype) else dtype
        return snp.asarray((key.standard_normal(size=tuple(shape)) * std).astype(d.np))
    return random.normal(key, tuple(shape), dtype=dtype) * std


def glorot_uniform(key, shape: Sequence[int], dtype=None) -> Tensor:
    """Uniform in +-sqrt(6 / (fan_in + fan_out)). `key` is a stablejit.random key, a
    numpy Generator, or an int seed."""
    fan_in, fan_out = _fans(shape)
    return _uniform(key, shape, dtype, math.sqrt(6.0 / (fan_in + fan_out)))


def glorot_normal(key, shape: Sequence[int], dtype=None) -> Tensor:
    """Glorot (Xavier) normal initialisation: normal with standard deviation
    sqrt(2 / (fan_in + fan_out)), fan_in = shape[-2] (times the receptive field),
    fan_out = shape[-1].

    key: a stablejit.random key, a numpy Generator, or an int seed. Returns a tensor of
    `shape` and `dtype` (default: the default float). For jax.nn.initializers' bits, use
    stablejit.nn.initializers.glorot_normal.
    """
    fan_in, fan_out = _fans(shape)
    return _normal(key, shape, dtype, math.sqrt(2.0 / (fan_in + fan_out)))


def he_uniform(key, shape: Sequence[int], dtype=None) -> Tensor:
    """He (Kaiming) uniform initialisation: uniform in +-sqrt(6 / fan_in),
    fan_in = shape[-2] (times the receptive field).

    key: a stablejit.random key, a numpy Generator, or an int seed. Returns a tensor of
    `shape` and `dtype` (default: the default float).
    """
    fan_in, _ = _fans(shape)
    return _uniform(key, shape, dtype, math.sqrt(6.0 / fan_in))


def he_normal(key, shape: Sequence[int], dtype=None) -> Tensor:
    """He (Kaiming) normal initialisation: normal with standard deviation
    sqrt(2 / fan_in), fan_in = shape[-2] (times the receptive field).

    key: a stablejit.random key, a numpy Generator, or an int seed. Returns a tensor of
    `shape` and `dtype` (default: the default float).
    """
    fan_in, _ = _fans(shape)
    return _normal(key, shape, dtype, math.sqrt(2.0 / fan_in))


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal

# ---- losses --------------------------------------------------------------------------------


@one_program
def cross_entropy(logits, labels) -> Tensor:
    """Mean cross-entropy of integer class labels under softmax(logits) (last axis).

    Example:
        >>> logits = snp.asarray([[0.0, 0.0], [0.0, 0.0]])
        >>> stablejit.nn.cross_entropy(logits, snp.asarray([0, 1]))
        Tensor<f32[] xla:host:0>
        0.6931472
    """
    logits = snp.asarray(logits)
    labels = snp.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy expects integer class labels, got {labels.dtype}; "
                        f"for probability targets use softmax_cross_entropy")
    return softmax_cross_entropy(logits, one_hot(labels, logits.shape[-1], logits.dtype))


@one_program
def softmax_cross_entropy(logits, targets) -> Tensor:
    """Mean over the batch of -sum(targets * log_softmax(logits)) (last axis)."""
    per_example = -snp.sum(snp.asarray(targets) * log_softmax(logits), axis=-1)
    return snp.mean(per_example)


@one_program
def mse(predictions, targets) -> Tensor:
    """Mean squared error.

    Example:
        >>> stablejit.nn.mse(snp.asarray([1.0, 2.0]), snp.asarray([1.0, 4.0]))
        Tensor<f32[] xla:host:0>
        2.
    """
    d = snp.asarray(predictions) - snp.asarray(targets)
    return snp.mean(d * d)


__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp", "log_sigmoid",
           "log_softmax", "logsumexp", "mish", "normalize", "one_hot", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
           "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh",
           "dot_product_attention", "layer_norm", "glorot_uniform", "glorot_normal",
           "he_uniform", "he_normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "cross_entropy", "softmax_cross_entropy", "mse", "Optimizer",
           "sgd", "adam", "apply_updates"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
