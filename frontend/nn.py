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
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from . import numpy as snp
from . import random
from .autodiff import stop_gradient
from .errors import at_user_line
from .scipy.special import erf
from .tensor import Tensor
from .tree import flatten, tree_map, unflatten

# ---- activations -------------------------------------------------------------------------


def relu(x) -> Tensor:
    """max(x, 0), with gradient 0 at 0 (as JAX)."""
    x = snp.asarray(x)
    return snp.where(x > 0, x, snp.zeros_like(x))


def sigmoid(x) -> Tensor:
    return snp.sigmoid(x)


def silu(x) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    x = snp.asarray(x)
    return x * snp.sigmoid(x)


swish = silu


def gelu(x, approximate: bool = True) -> Tensor:
    """The Gaussian error linear unit: x * Phi(x), Phi the standard normal CDF. As in
    JAX, approximate=True (the default) uses the tanh form; approximate=False is exact,
    0.5 * x * (1 + erf(x / sqrt(2)))."""
    x = snp.asarray(x)
    if not approximate:
        return 0.5 * x * (1.0 + erf(x * (1 / math.sqrt(2.0))))
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + snp.tanh(c * (x + 0.044715 * (x * x * x))))


def logsumexp(x, axis: int | Sequence[int] | None = -1, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x))) along axis, computed as m + log(sum(exp(x - m))) with m the
    (gradient-free) maximum, so it neither overflows nor underflows to -inf."""
    x = snp.asarray(x)
    m = stop_gradient(snp.max(x, axis=axis, keepdims=True))
    m = snp.where(snp.isfinite(m), m, snp.zeros_like(m))
    out = snp.log(snp.sum(snp.exp(x - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return out
    return snp.squeeze(out, axis=axis) if axis is not None else snp.reshape(out, ())


def softmax(x, axis: int | Sequence[int] = -1) -> Tensor:
    x = snp.asarray(x)
    e = snp.exp(x - stop_gradient(snp.max(x, axis=axis, keepdims=True)))
    return e / snp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis: int | Sequence[int] = -1) -> Tensor:
    x = snp.asarray(x)
    shifted = x - stop_gradient(snp.max(x, axis=axis, keepdims=True))
    return shifted - snp.log(snp.sum(snp.exp(shifted), axis=axis, keepdims=True))


def one_hot(labels, num_classes: int, dtype=snp.float32) -> Tensor:
    """labels[..., None] == arange(num_classes), as `dtype`; out-of-range labels give a
    row of zeros."""
    try:
        n = operator.index(num_classes)
    except TypeError:
        raise TypeError(at_user_line(
            f"one_hot: num_classes must be an integer, got {num_classes!r}")) from None
    if n < 0:
        raise ValueError(at_user_line(f"one_hot: num_classes must be non-negative, got {n}"))
    labels = snp.asarray(labels)
    classes = snp.arange(n, dtype=labels.dtype)
    return snp.astype(snp.expand_dims(labels, -1) == classes, dtype)


def standardize(x, axis: int | Sequence[int] = -1, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) along axis."""
    x = snp.asarray(x)
    mean = snp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    var = snp.mean(centered * centered, axis=axis, keepdims=True)
    return centered * snp.rsqrt(var + eps)


def layer_norm(x, scale=None, bias=None, axis: int | Sequence[int] = -1,
               eps: float = 1e-5) -> Tensor:
    y = standardize(x, axis, eps)
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


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
    if isinstance(key, (int, np.integer)):
        key = np.random.default_rng(int(key))
    if isinstance(key, np.random.Generator):
        d = snp.dtype(dtype) if not isinstance(dtype, snp.dtype) else dtype
        return snp.asarray(key.uniform(-limit, limit, size=tuple(shape)).astype(d.np))
    return random.uniform(key, tuple(shape), dtype=dtype, minval=-limit, maxval=limit)


def _normal(key, shape, dtype, std: float) -> Tensor:
    if isinstance(key, (int, np.integer)):
        key = np.random.default_rng(int(key))
    if isinstance(key, np.random.Generator):
        d = snp.dtype(dtype) if not isinstance(dtype, snp.dtype) else dtype
        return snp.asarray((key.standard_normal(size=tuple(shape)) * std).astype(d.np))
    return random.normal(key, tuple(shape), dtype=dtype) * std


def glorot_uniform(key, shape: Sequence[int], dtype=snp.float32) -> Tensor:
    """Uniform in +-sqrt(6 / (fan_in + fan_out)). `key` is a stablejit.random key, a
    numpy Generator, or an int seed."""
    fan_in, fan_out = _fans(shape)
    return _uniform(key, shape, dtype, math.sqrt(6.0 / (fan_in + fan_out)))


def glorot_normal(key, shape: Sequence[int], dtype=snp.float32) -> Tensor:
    fan_in, fan_out = _fans(shape)
    return _normal(key, shape, dtype, math.sqrt(2.0 / (fan_in + fan_out)))


def he_uniform(key, shape: Sequence[int], dtype=snp.float32) -> Tensor:
    fan_in, _ = _fans(shape)
    return _uniform(key, shape, dtype, math.sqrt(6.0 / fan_in))


def he_normal(key, shape: Sequence[int], dtype=snp.float32) -> Tensor:
    fan_in, _ = _fans(shape)
    return _normal(key, shape, dtype, math.sqrt(2.0 / fan_in))


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal

# ---- losses --------------------------------------------------------------------------------


def cross_entropy(logits, labels) -> Tensor:
    """Mean cross-entropy of integer class labels under softmax(logits) (last axis)."""
    logits = snp.asarray(logits)
    labels = snp.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy expects integer class labels, got {labels.dtype}; "
                        f"for probability targets use softmax_cross_entropy")
    return softmax_cross_entropy(logits, one_hot(labels, logits.shape[-1], logits.dtype))


def softmax_cross_entropy(logits, targets) -> Tensor:
    """Mean over the batch of -sum(targets * log_softmax(logits)) (last axis)."""
    per_example = -snp.sum(snp.asarray(targets) * log_softmax(logits), axis=-1)
    return snp.mean(per_example)


def mse(predictions, targets) -> Tensor:
    """Mean squared error."""
    d = snp.asarray(predictions) - snp.asarray(targets)
    return snp.mean(d * d)


# ---- optimisers ----------------------------------------------------------------------------


class Optimizer(NamedTuple):
    """init(params) -> state; update(grads, state, params) -> (new params, new state)."""

    init: Callable
    update: Callable


def _schedule(learning_rate, step):
    return learning_rate(step) if callable(learning_rate) else learning_rate


def sgd(learning_rate=1e-2, momentum: float = 0.0, nesterov: bool = False) -> Optimizer:
    """Stochastic gradient descent, with (heavy-ball or Nesterov) momentum when
    momentum > 0. learning_rate may be a function of the step count."""

    def init(params):
        step = snp.asarray(np.zeros((), np.int32))
        if momentum == 0:
            return (step,)
        return (step, tree_map(snp.zeros_like, params))

    def update(grads, state, params):
        step = state[0]
        lr = _schedule(learning_rate, step)
        if momentum == 0:
            new = tree_map(lambda p, g: p - lr * g, params, grads)
            return new, (step + 1,)
        velocity = tree_map(lambda v, g: momentum * v + g, state[1], grads)
        if nesterov:
            direction = tree_map(lambda v, g: g + momentum * v, velocity, grads)
        else:
            direction = velocity
        new = tree_map(lambda p, d: p - lr * d, params, direction)
        return new, (step + 1, velocity)

    return Optimizer(init, update)


def adam(learning_rate=1e-3, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba): state (step, first moments, second moments)."""

    def init(params):
        zeros = tree_map(snp.zeros_like, params)
        return (snp.asarray(np.zeros((), np.int32)), zeros, tree_map(snp.zeros_like, params))

    def update(grads, state, params):
        step, m, v = state
        t = step + 1
        m = tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = tree_map(lambda v_, g: b2 * v_ + (1 - b2) * (g * g), v, grads)
        tf = snp.astype(t, snp.float32)
        # bias corrections folded into the step size
        lr = _schedule(learning_rate, step)
        alpha = lr * snp.sqrt(1 - b2 ** tf) / (1 - b1 ** tf)
        leaves_p, td = flatten(params)
        leaves_m, _ = flatten(m)
        leaves_v, _ = flatten(v)
        new = [p - snp.astype(alpha, p.dtype) * mi / (snp.sqrt(vi) + eps)
               for p, mi, vi in zip(leaves_p, leaves_m, leaves_v, strict=True)]
        return unflatten(td, new), (t, m, v)

    return Optimizer(init, update)


def apply_updates(params, updates):
    """params + updates, leaf by leaf."""
    return tree_map(lambda p, u: p + u, params, updates)


__all__ = ["relu", "sigmoid", "silu", "swish", "gelu", "logsumexp", "softmax", "log_softmax",
           "one_hot", "standardize", "layer_norm", "glorot_uniform", "glorot_normal",
           "he_uniform", "he_normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "cross_entropy", "softmax_cross_entropy", "mse", "Optimizer",
           "sgd", "adam", "apply_updates"]
