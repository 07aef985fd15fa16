"""stablejit.random: counter-based random numbers (threefry2x32), as in jax.random.

A key is a uint32[2] tensor. The same key gives the same numbers on every backend
(reference, eager XLA, jit) and, for float32 / integer samplers, the same bits as
jax.random with its default threefry2x32 implementation (jax's partitionable layout:
element i of a draw hashes the 64-bit counter i). Keys are values, never state: use
`split` or `fold_in` to get new ones.

    k = stablejit.random.key(0)
    k1, k2 = stablejit.random.split(k)
    x = stablejit.random.normal(k1, (3, 4))

The hash is written with ordinary uint32 add / xor / shift / or primitives, so it
compiles like any other code. Each sampler runs as one small jitted program (static
shape and dtype), so on the eager backend a draw is one compiled call, and inside jit it
is traced inline.

Differences from jax.random: float64 `normal` uses Box-Muller on 64-bit uniforms (jax
computes erf_inv in float64); `truncated_normal` computes erf / erf_inv with float32
accuracy for every dtype, so its samples are within the bounds and correctly
distributed, but not bit-identical to jax's. `key(seed)` treats a seed as a 64-bit
integer (for seeds in [0, 2**31) that is the same key jax makes); it is the uint32[2]
that `jax.random.key_data(jax.random.key(seed))` holds, so `key` and `PRNGKey` are one
function. Indices (`permutation(key, n)`, `choice` of an int, `categorical`) have the
default int dtype, int64 (jax: int32), with the same values; `randint` defaults to
int32 as jax's does, because its numbers depend on the dtype's width.

The other distributions (exponential, laplace, logistic, cauchy, rademacher, maxwell,
double_sided_maxwell, weibull_min, pareto, rayleigh, wald, geometric, triangular,
lognormal, gamma, loggamma, beta, dirichlet, chisquare, t, f, generalized_normal, ball,
poisson, binomial, multinomial, multivariate_normal, orthogonal) follow jax.random's
algorithms and order of draws, so a float32 draw is jax's, bit for bit for most; maxwell
(a sum of squares), multivariate_normal (a matmul and a LAPACK factor) and orthogonal (a
LAPACK QR) agree to float rounding. The rejection samplers (gamma and the samplers
built on it, poisson, binomial) keep one loop state per element and stop updating an
element once it is accepted, which is what jax's per-element loops do. Integer results
of rademacher, geometric and poisson default to int64 (jax: int32), with the same values.
Inside an enclosing jit, XLA may fuse exp / log / pow differently, so values there can
differ from eager ones in the last bit.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import numpy as snp
from .compiler import dtypes as dt
from .compiler.ir import Attrs
from .compiler.primitives import elementwise as ew
from .compiler.primitives import shape_ops as so
from .compiler.primitives import sorting as srt
from .control_flow import while_loop
from .dispatch import bind, bind1
from .errors import at_user_line
from .jit import jit
from .numpy._operands import as_shape
from .promotion import DEFAULT_INT
from .tensor import Tensor

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "randint",
           "bernoulli", "categorical", "choice", "gumbel", "permutation", "truncated_normal",
           "threefry2x32", "exponential", "laplace", "logistic", "cauchy", "rademacher",
           "maxwell", "double_sided_maxwell", "weibull_min", "pareto", "rayleigh", "wald",
           "geometric", "triangular", "lognormal", "gamma", "loggamma", "beta", "dirichlet",
           "chisquare", "t", "f", "generalized_normal", "ball", "poisson", "binomial",
           "multinomial", "multivariate_normal", "orthogonal"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32 = dt.uint32


# ---- the hash -------------------------------------------------------------------------------

def _rotl(x: Tensor, d: int) -> Tensor:
    return snp.bitwise_or(snp.left_shift(x, d), snp.right_shift(x, 32 - d))


def threefry2x32(k1, k2, x1, x2) -> tuple[Tensor, Tensor]:
    """The Threefry-2x32 block cipher (20 rounds): key words k1, k2 (uint32 scalars or
    arrays), counter words x1, x2 (uint32 arrays); returns the two output words."""
    k1, k2, x1, x2 = (snp.asarray(v, dtype=_U32) for v in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x1, x2 = x1 + ks[0], x2 + ks[1]
    for r in range(5):
        for rot in _ROTATIONS[r % 2]:
            x1 = x1 + x2
            x2 = _rotl(x2, rot) ^ x1
        x1 = x1 + ks[(r + 1) % 3]
        x2 = x2 + ks[(r + 2) % 3] + (r + 1)
    return x1, x2


def _counters(shape) -> tuple[Tensor, Tensor]:
    """The 64-bit counters 0..size-1 laid out in `shape`, as (high, low) uint32 words."""
    size = math.prod(shape)
    if size >= 1 << 32:
        raise ValueError(at_user_line(f"random: cannot draw {size} values at once (the "
                                      f"limit is 2**32 per draw); split the key"))
    lo = bind1(so.iota, shape=(size,), dtype=_U32, dimension=0)
    lo = snp.reshape(lo, tuple(shape))
    return snp.zeros(tuple(shape), _U32), lo


def _words(key: Tensor, ndraw: int = 0) -> tuple[Tensor, Tensor]:
    """The key words; for a batch of keys (*B, 2), shaped (*B, 1, ..., 1) with `ndraw`
    trailing ones, so that they broadcast against a draw's counters."""
    if key.ndim == 1:
        return key[0], key[1]
    lead = key.shape[:-1] + (1,) * ndraw
    return snp.reshape(key[..., 0], lead), snp.reshape(key[..., 1], lead)


# ---- keys ------------------------------------------------------------------------------------

def _check_key(name: str, key) -> Tensor:
    k = key if isinstance(key, Tensor) else snp.asarray(key)
    if k.shape != (2,) or k.dtype is not _U32:
        raise TypeError(at_user_line(
            f"random.{name}: expected a key (a uint32[2] tensor from stablejit.random.key, "
            f"split or fold_in), got a {k.dtype.name}{list(k.shape)} tensor"))
    return k


def key(seed) -> Tensor:
    """A key from an integer seed (a Python int or an integer scalar tensor), read as a
    64-bit integer: [high 32 bits, low 32 bits]."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        v = int(seed)
        if not -(1 << 63) <= v < (1 << 64):
            raise ValueError(at_user_line(f"random.key: seed {v} does not fit in 64 bits"))
        v &= (1 << 64) - 1
        return snp.asarray(np.array([v >> 32, v & 0xFFFFFFFF], dtype=np.uint32))
    s = snp.asarray(seed)
    if s.shape != () or s.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"random.key: the seed must be an integer scalar, got "
                                     f"{s.type}; use split or vmap-free loops for many keys"))
    return _key_from_tensor(s)


@jit
def _key_from_tensor(s):
    if s.dtype.bits == 64:
        u = bind1(ew.bitcast_convert, s, dtype=dt.uint64) if s.dtype.kind == "i" else s
        hi = snp.astype(snp.right_shift(u, 32), _U32)
        lo = snp.astype(snp.bitwise_and(u, 0xFFFFFFFF), _U32)
    else:
        hi = snp.zeros((), _U32)
        lo = snp.astype(s, _U32)
    return snp.stack([hi, lo])


PRNGKey = key


def _key_array(name: str, keys) -> Tensor:
    k = keys if isinstance(keys, Tensor) else snp.asarray(keys)
    if k.ndim < 1 or k.shape[-1] != 2 or k.dtype is not _U32:
        raise TypeError(at_user_line(
            f"random.{name}: expected keys (a uint32[..., 2] tensor, as random.key, split "
            f"and fold_in make), got a {k.dtype.name}{list(k.shape)} tensor"))
    return k


def key_data(keys) -> Tensor:
    """The uint32[..., 2] data of keys (jax.random.key_data). A stablejit key is its
    data already, so this returns the keys themselves."""
    return _key_array("key_data", keys)


def wrap_key_data(key_bits_array, *, impl=None) -> Tensor:
    """Keys from their uint32[..., 2] data (jax.random.wrap_key_data). impl may be None
    or "threefry2x32", the one implementation stablejit has."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(at_user_line(
            f"random.wrap_key_data: impl={impl!r} is not available; stablejit's keys are "
            f"threefry2x32 (impl=None or 'threefry2x32')"))
    return _key_array("wrap_key_data", key_bits_array)


def split(key, num=2) -> Tensor:
    """`num` new keys (an int, or a tuple for a shape): a uint32[*num, 2] tensor."""
    k = _check_key("split", key)
    shape = (int(num),) if isinstance(num, (int, np.integer)) else tuple(int(n) for n in num)
    return _split(k, shape)


def _split_impl(k, shape):
    # k may be a batch of keys (*B, 2): the result is (*B, *shape, 2)
    k1, k2 = _words(k, len(shape))
    hi, lo = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return snp.stack([b1, b2], axis=b1.ndim)


_split = jit(_split_impl, static_argnums=(1,))


def fold_in(key, data) -> Tensor:
    """A new key made from `key` and an integer (data is read as uint32)."""
    k = _check_key("fold_in", key)
    d = snp.asarray(data)
    if d.shape != () or d.dtype.kind not in "biu":
        raise TypeError(at_user_line(f"random.fold_in: data must be an integer scalar, got "
                                     f"{d.type}"))
    return _fold_in(k, snp.astype(d, _U32))


@jit
def _fold_in(k, d):
    k1, k2 = _words(k)
    b1, b2 = threefry2x32(k1, k2, snp.zeros((), _U32), d)
    return snp.stack([b1, b2])


# ---- bits and uniform floats ---------------------------------------------------------------

def _shape(shape) -> tuple[int, ...]:
    return () if shape is None else as_shape(shape)


def bits(key, shape=(), bit_width: int = 32) -> Tensor:
    """Uniform random bits: an unsigned integer tensor of `bit_width` (8, 16, 32, 64)."""
    k = _check_key("bits", key)
    if bit_width not in (8, 16, 32, 64):
        raise ValueError(at_user_line(f"random.bits: bit_width must be 8, 16, 32 or 64, got "
                                      f"{bit_width}"))
    return _bits(k, bit_width, _shape(shape))


def _bits_impl(k, bit_width, shape):
    # k may be a batch of keys (*B, 2): the result is (*B, *shape)
    k1, k2 = _words(k, len(shape))
    hi, lo = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    if bit_width == 64:
        return snp.bitwise_or(snp.left_shift(snp.astype(b1, dt.uint64), 32),
                              snp.astype(b2, dt.uint64))
    out = b1 ^ b2
    return out if bit_width == 32 else snp.astype(out, dt.dtype(f"uint{bit_width}"))


_bits = jit(_bits_impl, static_argnums=(1, 2))


def _float_dtype(name: str, dtype) -> dt.DType:
    d = dt.float32 if dtype is None else dt.dtype(dtype)
    if d.kind != "f":
        raise TypeError(at_user_line(f"random.{name}: dtype must be a floating-point dtype, "
                                     f"got {d.name}"))
    return d


def _finfo(d: dt.DType):
    return ml_dtypes.finfo(d.np)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0) -> Tensor:
    """Uniform floats in [minval, maxval)."""
    k = _check_key("uniform", key)
    d = _float_dtype("uniform", dtype)
    return _uniform(k, minval, maxval, _shape(shape), d)


def _uniform_impl(k, minval, maxval, shape, d):
    nbits, nmant = d.bits, int(_finfo(d).nmant)
    rng_bits = nbits if nmant >= 8 else 8
    b = _bits_impl(k, rng_bits, shape)
    u = dt.dtype(f"uint{nbits}")
    if rng_bits != nbits:
        b = snp.astype(b, u)
    one = int(np.array(1.0, d.np).view(u.np))
    fbits = snp.bitwise_or(snp.right_shift(b, rng_bits - nmant), snp.asarray(one, dtype=u))
    floats = bind1(ew.bitcast_convert, fbits, dtype=d) - snp.asarray(1.0, dtype=d)
    lo, hi = snp.astype(snp.asarray(minval), d), snp.astype(snp.asarray(maxval), d)
    return snp.maximum(lo, floats * (hi - lo) + lo)


_uniform = jit(_uniform_impl, static_argnums=(3, 4))


# ---- normal --------------------------------------------------------------------------------

# Giles' single-precision erf_inv (the polynomial XLA / CHLO use for float32).
_ERFINV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv32(x: Tensor) -> Tensor:
    """erf_inv in float32 arithmetic (x is float32)."""
    w = -snp.log1p(-(x * x))
    small = w < 5.0
    w = snp.where(small, w - 2.5, snp.sqrt(w) - 3.0)
    f32 = dt.float32
    p = snp.where(small, snp.asarray(_ERFINV_SMALL[0], dtype=f32),
                  snp.asarray(_ERFINV_LARGE[0], dtype=f32))
    for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:], strict=True):
        c = snp.where(small, snp.asarray(a, dtype=f32), snp.asarray(b, dtype=f32))
        p = c + p * w
    return snp.where(snp.abs(x) == 1.0, x * np.float32(np.inf), p * x)


def _erf32(x: Tensor) -> Tensor:
    """erf in float32 arithmetic through erfc's Chebyshev fit (fractional error below
    1.2e-7, Numerical Recipes' erfcc)."""
    z = snp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.17087277
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223):
        poly = c + t * poly
    erfc = t * snp.exp(-z * z + poly)
    return snp.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def normal(key, shape=(), dtype=None) -> Tensor:
    """Standard normal floats."""
    k = _check_key("normal", key)
    d = _float_dtype("normal", dtype)
    return _normal(k, _shape(shape), d)


def _normal_impl(k, shape, d):
    if d.bits == 64:  # Box-Muller keeps float64's resolution
        ks = _split_impl(k, (2,))
        k1, k2 = ks[..., 0, :], ks[..., 1, :]
        u1 = _uniform_impl(k1, float(np.finfo(np.float64).tiny), 1.0, shape, d)
        u2 = _uniform_impl(k2, 0.0, 1.0, shape, d)
        return snp.sqrt(-2.0 * snp.log(u1)) * snp.cos(2.0 * np.pi * u2)
    lo = float(np.nextafter(np.array(-1.0, d.np), np.array(0.0, d.np)))
    u = _uniform_impl(k, lo, 1.0, shape, d)
    e = snp.astype(_erf_inv32(snp.astype(u, dt.float32)), d)
    return snp.asarray(np.sqrt(2.0), dtype=d) * e


_normal = jit(_normal_impl, static_argnums=(1, 2))


def truncated_normal(key, lower, upper, shape=None, dtype=None) -> Tensor:
    """Standard normal floats conditioned on lower < x < upper (shape defaults to the
    broadcast shape of the bounds)."""
    k = _check_key("truncated_normal", key)
    d = _float_dtype("truncated_normal", dtype)
    lo, hi = snp.asarray(lower), snp.asarray(upper)
    bshape = snp.broadcast_shapes(lo.shape, hi.shape)
    shape = bshape if shape is None else _shape(shape)
    snp.broadcast_shapes(shape, bshape)  # raises a clear error when they do not fit
    return _truncated(k, lo, hi, shape, d)


def _truncated_impl(k, lower, upper, shape, d):
    f32 = dt.float32
    lower, upper = snp.astype(lower, d), snp.astype(upper, d)
    sqrt2 = np.float32(np.sqrt(2.0))
    a = _erf32(snp.astype(lower, f32) / sqrt2)
    b = _erf32(snp.astype(upper, f32) / sqrt2)
    u = _uniform_impl(k, a, b, shape, f32)
    out = snp.astype(sqrt2 * _erf_inv32(u), d)
    return snp.clip(out, snp.nextafter(lower, snp.asarray(np.inf, dtype=d)),
                    snp.nextafter(upper, snp.asarray(-np.inf, dtype=d)))


_truncated = jit(_truncated_impl, static_argnums=(3, 4))


# ---- integers and choices ------------------------------------------------------------------

def randint(key, shape, minval, maxval, dtype=None) -> Tensor:
    """Uniform integers in [minval, maxval) (jax.random.randint's algorithm: two draws
    of the dtype's width, reduced modulo the span). The dtype defaults to int32, as in
    jax.random.randint, so the same call gives the same numbers (the draws depend on the
    dtype's width: dtype=int64 matches jax with 64-bit types enabled)."""
    k = _check_key("randint", key)
    d = dt.int32 if dtype is None else dt.dtype(dtype)
    if d.kind not in "iu":
        raise TypeError(at_user_line(f"random.randint: dtype must be an integer dtype, got "
                                     f"{d.name}"))
    info = np.iinfo(d.np)
    sample = d
    lo, hi = snp.asarray(minval), snp.asarray(maxval)
    for name, v in (("minval", lo), ("maxval", hi)):
        if v.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"random.randint: {name} must be an integer, got "
                                         f"{v.dtype.name}"))
    if dtype is None:  # as jax's default int32 does: the same key gives the same integers
        sample = dt.int32
    elif d.bits < 32:  # sample at 32 bits to avoid bias
        sample = dt.int32
        lo = snp.clip(snp.astype(lo, dt.int32), int(info.min), int(info.max))
        hi = snp.clip(snp.astype(hi, dt.int32), int(info.min), int(info.max) + 1)
    return snp.astype(_randint(k, lo, hi, _shape(shape), sample), d)


def _clip_convert(v: Tensor, d: dt.DType) -> Tensor:
    """v converted to integer dtype d, clipped to d's range instead of wrapping."""
    vi, di = np.iinfo(v.dtype.np), np.iinfo(d.np)
    lo, hi = max(int(vi.min), int(di.min)), min(int(vi.max), int(di.max))
    return snp.astype(snp.clip(v, snp.asarray(lo, dtype=v.dtype), snp.asarray(hi, dtype=v.dtype)),
                      d)


def _randint_impl(k, minval, maxval, shape, d):
    nbits = d.bits
    dmax = np.iinfo(d.np).max
    vi = np.iinfo(maxval.dtype.np)
    too_big = maxval > snp.asarray(min(int(dmax), int(vi.max)), dtype=maxval.dtype)
    minval, maxval = _clip_convert(minval, d), _clip_convert(maxval, d)
    k1, k2 = _words_split(k)
    higher, lower = _bits_impl(k1, nbits, shape), _bits_impl(k2, nbits, shape)
    u = dt.dtype(f"uint{nbits}")
    span = snp.astype(maxval - minval, u)
    span = snp.where(maxval <= minval, snp.asarray(1, dtype=u), span)
    span = snp.where(too_big & (maxval > minval), span + snp.asarray(1, dtype=u), span)
    mult = snp.remainder(snp.asarray(2 ** (nbits // 2), dtype=u), span)
    mult = snp.remainder(mult * mult, span)
    offset = snp.remainder(higher, span) * mult + snp.remainder(lower, span)
    offset = snp.remainder(offset, span)
    return snp.broadcast_to(minval + snp.astype(offset, d), shape)


def _words_split(k):
    ks = _split_impl(k, (2,))
    return ks[0], ks[1]


_randint = jit(_randint_impl, static_argnums=(3, 4))


def bernoulli(key, p=0.5, shape=None) -> Tensor:
    """Booleans that are True with probability p."""
    k = _check_key("bernoulli", key)
    pt = snp.asarray(p)
    if pt.dtype.kind != "f":
        raise TypeError(at_user_line(f"random.bernoulli: p must be floating point, got "
                                     f"{pt.dtype.name}"))
    shape = pt.shape if shape is None else _shape(shape)
    return _bernoulli(k, pt, shape)


def _bernoulli_impl(k, p, shape):
    return _uniform_impl(k, 0.0, 1.0, shape, p.dtype) < p


_bernoulli = jit(_bernoulli_impl, static_argnums=(2,))


def gumbel(key, shape=(), dtype=None) -> Tensor:
    """Standard Gumbel floats: -log(-log(u))."""
    k = _check_key("gumbel", key)
    d = _float_dtype("gumbel", dtype)
    return _gumbel(k, _shape(shape), d)


def _gumbel_impl(k, shape, d):
    tiny = float(_finfo(d).tiny)
    return -snp.log(-snp.log(_uniform_impl(k, tiny, 1.0, shape, d)))


_gumbel = jit(_gumbel_impl, static_argnums=(1, 2))


def categorical(key, logits, axis: int = -1, shape=None) -> Tensor:
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max
    trick, as jax.random.categorical with replace=True)."""
    k = _check_key("categorical", key)
    lg = snp.asarray(logits)
    if lg.dtype.kind != "f" or lg.ndim == 0:
        raise TypeError(at_user_line(f"random.categorical: logits must be a floating-point "
                                     f"tensor with at least one axis, got {lg.type}"))
    ax = axis % lg.ndim
    batch = lg.shape[:ax] + lg.shape[ax + 1:]
    shape = batch if shape is None else _shape(shape)
    if len(shape) < len(batch) or snp.broadcast_shapes(shape[len(shape) - len(batch):],
                                                       batch) != shape[len(shape) - len(batch):]:
        raise ValueError(at_user_line(f"random.categorical: shape {shape} does not end with "
                                      f"the logits' batch shape {batch}"))
    return _categorical(k, lg, ax - lg.ndim, shape)


def _categorical_impl(k, logits, axis, shape):
    nd = logits.ndim
    batch = len(shape) - (nd - 1)
    prefix = shape[:batch]
    lshape = list(shape[batch:])
    lshape.insert(axis % nd, logits.shape[axis])
    g = _gumbel_impl(k, (*prefix, *lshape), logits.dtype)
    lg = snp.reshape(logits, (1,) * len(prefix) + logits.shape)
    return snp.argmax(g + lg, axis=axis)


_categorical = jit(_categorical_impl, static_argnums=(2, 3))


def permutation(key, x, axis: int = 0, independent: bool = False) -> Tensor:
    """A random permutation of range(x) (x an int) or of x's entries along `axis`
    (every slice permuted the same way, or each independently)."""
    k = _check_key("permutation", key)
    if isinstance(x, (int, np.integer)):
        n = int(x)
        if n < 0:
            raise ValueError(at_user_line(f"random.permutation: n must be >= 0, got {n}"))
        xt = snp.arange(n)
        return _permutation(k, xt, 0, True)
    xt = snp.asarray(x)
    if xt.ndim == 0:
        raise TypeError(at_user_line("random.permutation: x must be an integer or have at "
                                     "least one axis"))
    return _permutation(k, xt, axis % xt.ndim, bool(independent or xt.ndim == 1))


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0) -> Tensor:
    """A random sample of a's entries along `axis` (of range(a), as default ints, when a
    is an int), with jax.random.choice's algorithm and numbers: randint without p, a
    permutation's first entries when replace=False; with p, a search of the cumulative
    sum for uniform draws, or the top of Gumbel-perturbed log-probabilities when
    replace=False."""
    k = _check_key("choice", key)
    shape = _shape(shape)
    arr = snp.asarray(a)
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(at_user_line(f"random.choice: a must be an integer or a tensor "
                                         f"with at least one axis, got {arr.type}"))
        # a Python int is a size (static under jit); a 0-d tensor must be concrete
        n_inputs = int(a) if isinstance(a, (int, np.integer)) else int(arr)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return snp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError(at_user_line("random.choice: a must be greater than 0 unless no "
                                      "samples are taken"))
    if not replace and n_draws > n_inputs:
        raise ValueError(at_user_line(
            f"random.choice: cannot take a larger sample (size {n_draws}) than the "
            f"population (size {n_inputs}) with replace=False"))
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)  # int32 draws: jax's numbers
            result = snp.astype(ind, DEFAULT_INT) if arr.ndim == 0 else snp.take(
                arr, ind, axis=axis)
        else:
            perm = permutation(k, n_inputs if arr.ndim == 0 else arr, axis)
            result = snp.take(perm, snp.arange(n_draws), axis=0 if arr.ndim == 0 else axis)
    else:
        pt = snp.asarray(p)
        pt = pt if pt.dtype.is_inexact else snp.astype(pt, snp.float32)
        if pt.shape != (n_inputs,):
            raise ValueError(at_user_line(
                f"random.choice: p must be None or a 1-d tensor of a.shape[axis] = "
                f"{n_inputs} entries, got shape {pt.shape}"))
        if replace:
            p_cuml = snp.cumsum(pt)
            r = p_cuml[-1] * (1 - uniform(k, shape, dtype=p_cuml.dtype))
            ind = snp.searchsorted(p_cuml, r)
        else:
            g = gumbel(k, (n_inputs,), dtype=pt.dtype) + snp.log(pt)
            ind = snp.argsort(g, descending=True, stable=True)[:n_draws]
        result = ind if arr.ndim == 0 else snp.take(arr, ind, axis=axis)
    return snp.reshape(result, shape if arr.ndim == 0 else
                       arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:])


def _permutation_impl(k, x, axis, independent):
    # jax's shuffle: sort by fresh 32-bit keys, enough rounds that ties are unlikely
    n = x.size if independent else x.shape[axis]
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        ks = _split_impl(k, (2,))
        k, sub = ks[0], ks[1]
        if independent:
            keys = _bits_impl(sub, 32, x.shape)
        else:
            keys = _bits_impl(sub, 32, (x.shape[axis],))
            shape1 = [1] * x.ndim
            shape1[axis] = x.shape[axis]
            keys = snp.broadcast_to(snp.reshape(keys, tuple(shape1)), x.shape)
        _, x = bind(srt.sort, (keys, x), Attrs({"dimension": axis, "num_keys": 1,
                                                 "descending": False, "is_stable": True}))
    return x


_permutation = jit(_permutation_impl, static_argnums=(2, 3))


# ---- parameters of the distributions below ------------------------------------------------

def _real_param(name: str, argname: str, v) -> Tensor:
    t = v if isinstance(v, Tensor) else snp.asarray(v)
    if t.dtype.kind not in "biuf":
        raise TypeError(at_user_line(f"random.{name}: {argname} must be a real number or a "
                                     f"tensor of real numbers, got {t.type}"))
    return t


def _param_shape(name: str, shape, **params) -> tuple[int, ...]:
    """jax's rule: shape=None is the parameters' broadcast shape; a given shape must be
    what it and the parameters' shapes broadcast to. params: tensors or shapes."""
    shapes = [v if isinstance(v, tuple) else v.shape for v in params.values()]
    desc = ", ".join(f"{n}{list(s)}" for n, s in zip(params, shapes, strict=True))
    want = None if shape is None else _shape(shape)
    try:
        got = snp.broadcast_shapes(*shapes) if want is None else snp.broadcast_shapes(
            want, *shapes)
    except (ValueError, TypeError):
        got = None
    if got is None or (want is not None and got != want):
        target = "each other" if want is None else f"shape={want}"
        raise ValueError(at_user_line(
            f"random.{name}: the parameter shapes ({desc}) do not broadcast to {target}; "
            f"pass parameters of compatible shapes, or shape=None"))
    return got


def _prepare(name: str, key, dtype, shape, **params):
    """A distribution's arguments checked: (key, float dtype, its real parameters as
    tensors in the order given, the draw's shape by jax's broadcasting rule)."""
    k = _check_key(name, key)
    d = _float_dtype(name, dtype)
    ts = {n: _real_param(name, n, v) for n, v in params.items()}
    return k, d, tuple(ts.values()), _param_shape(name, shape, **ts)


def _int_dtype(name: str, dtype) -> dt.DType:
    d = DEFAULT_INT if dtype is None else dt.dtype(dtype)
    if d.kind not in "iu":
        raise TypeError(at_user_line(f"random.{name}: dtype must be an integer dtype, got "
                                     f"{d.name}"))
    return d


def _c(v, d: dt.DType) -> Tensor:
    return snp.asarray(v, dtype=d)


# ---- transforms of uniform and normal draws -----------------------------------------------

def exponential(key, shape=(), dtype=None) -> Tensor:
    """Standard exponential floats (rate 1): -log(1 - u)."""
    k = _check_key("exponential", key)
    return _exponential(k, _shape(shape), _float_dtype("exponential", dtype))


def _exponential_impl(k, shape, d):
    # 1 - u lies in (0, 1], so the log is finite
    return -snp.log1p(-_uniform_impl(k, 0.0, 1.0, shape, d))


_exponential = jit(_exponential_impl, static_argnums=(1, 2))


def laplace(key, shape=(), dtype=None) -> Tensor:
    """Standard Laplace floats (density exp(-|x|) / 2)."""
    k = _check_key("laplace", key)
    return _laplace(k, _shape(shape), _float_dtype("laplace", dtype))


def _laplace_impl(k, shape, d):
    lo = float(np.array(-1.0, d.np) + _finfo(d).epsneg)  # keeps log1p(-|u|) finite
    u = _uniform_impl(k, lo, 1.0, shape, d)
    return snp.sign(u) * snp.log1p(-snp.abs(u))


_laplace = jit(_laplace_impl, static_argnums=(1, 2))


def logistic(key, shape=(), dtype=None) -> Tensor:
    """Standard logistic floats: log(u / (1 - u))."""
    k = _check_key("logistic", key)
    return _logistic(k, _shape(shape), _float_dtype("logistic", dtype))


def _logistic_impl(k, shape, d):
    x = _uniform_impl(k, float(_finfo(d).tiny), 1.0, shape, d)
    return snp.log(x) - snp.log1p(-x)


_logistic = jit(_logistic_impl, static_argnums=(1, 2))


def cauchy(key, shape=(), dtype=None) -> Tensor:
    """Standard Cauchy floats: tan(pi (u - 1/2))."""
    k = _check_key("cauchy", key)
    return _cauchy(k, _shape(shape), _float_dtype("cauchy", dtype))


def _cauchy_impl(k, shape, d):
    u = _uniform_impl(k, float(_finfo(d).eps), 1.0, shape, d)
    return snp.tan(_c(np.pi, d) * (u - _c(0.5, d)))


_cauchy = jit(_cauchy_impl, static_argnums=(1, 2))


def rademacher(key, shape=(), dtype=None) -> Tensor:
    """-1 or +1 with equal probability, in `dtype` (default: the default int dtype, int64;
    jax's is int32, with the same values)."""
    k = _check_key("rademacher", key)
    d = DEFAULT_INT if dtype is None else dt.dtype(dtype)
    if d.kind not in "iuf":
        raise TypeError(at_user_line(f"random.rademacher: dtype must be an integer or "
                                     f"floating-point dtype, got {d.name}"))
    return _rademacher(k, _shape(shape), d)


def _rademacher_impl(k, shape, d):
    b = _bernoulli_impl(k, snp.asarray(0.5, dtype=dt.float32), shape)
    return snp.astype(2 * snp.astype(b, d) - 1, d)


_rademacher = jit(_rademacher_impl, static_argnums=(1, 2))


def maxwell(key, shape=(), dtype=None) -> Tensor:
    """One-sided Maxwell floats (density ~ x^2 exp(-x^2 / 2)): the length of a standard
    normal 3-vector."""
    k = _check_key("maxwell", key)
    return _maxwell(k, _shape(shape), _float_dtype("maxwell", dtype))


def _maxwell_impl(k, shape, d):
    z = _normal_impl(k, (*shape, 3), d)
    return snp.sqrt(snp.sum(z * z, axis=-1))


_maxwell = jit(_maxwell_impl, static_argnums=(1, 2))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None) -> Tensor:
    """Double-sided Maxwell floats (density ~ z^2 exp(-z^2 / 2), z = (x - loc) / scale).
    As in jax, the result shape is shape + the parameters' broadcast shape (shape=()
    stands for that broadcast shape)."""
    k = _check_key("double_sided_maxwell", key)
    d = _float_dtype("double_sided_maxwell", dtype)
    lo = _real_param("double_sided_maxwell", "loc", loc)
    sc = _real_param("double_sided_maxwell", "scale", scale)
    pshape = _param_shape("double_sided_maxwell", None, loc=lo, scale=sc)
    shape = _shape(shape) or pshape
    return _double_sided_maxwell(k, lo, sc, shape + pshape, d)


def _double_sided_maxwell_impl(k, loc, scale, shape, d):
    ks = _split_impl(k, (2,))
    m = _maxwell_impl(ks[0], shape, d)
    sign = _rademacher_impl(ks[1], shape, d)
    return sign * m * snp.astype(scale, d) + snp.astype(loc, d)


_double_sided_maxwell = jit(_double_sided_maxwell_impl, static_argnums=(3, 4))


def weibull_min(key, scale, concentration, shape=(), dtype=None) -> Tensor:
    """Weibull floats (density ~ x^(c-1) exp(-(x/scale)^c), c = concentration), by
    inverting the CDF; the result is shape broadcast with the parameters."""
    k = _check_key("weibull_min", key)
    d = _float_dtype("weibull_min", dtype)
    sc = _real_param("weibull_min", "scale", scale)
    co = _real_param("weibull_min", "concentration", concentration)
    shape = _shape(shape)
    _param_shape("weibull_min", None, sample=shape, scale=sc, concentration=co)
    return _weibull_min(k, sc, co, shape, d)


def _weibull_min_impl(k, scale, concentration, shape, d):
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    inv_c = snp.astype(1.0 / snp.astype(concentration, dt.float32), d)
    return snp.power(-snp.log1p(-u), inv_c) * snp.astype(scale, d)


_weibull_min = jit(_weibull_min_impl, static_argnums=(3, 4))


def pareto(key, b, shape=None, dtype=None) -> Tensor:
    """Pareto floats (density b / x^(b+1) on x >= 1): exp(exponential / b)."""
    k, d, (bt,), shape = _prepare("pareto", key, dtype, shape, b=b)
    return _pareto(k, bt, shape, d)


def _pareto_impl(k, b, shape, d):
    return snp.exp(_exponential_impl(k, shape, d) / snp.astype(b, d))


_pareto = jit(_pareto_impl, static_argnums=(2, 3))


def rayleigh(key, scale, shape=None, dtype=None) -> Tensor:
    """Rayleigh floats (density ~ x exp(-x^2 / (2 scale^2))): scale sqrt(-2 log u)."""
    k, d, (sc,), shape = _prepare("rayleigh", key, dtype, shape, scale=scale)
    return _rayleigh(k, sc, shape, d)


def _rayleigh_impl(k, scale, shape, d):
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    scale = snp.broadcast_to(snp.astype(scale, d), shape)
    return scale * snp.sqrt(snp.log(u) * _c(-2.0, d))


_rayleigh = jit(_rayleigh_impl, static_argnums=(2, 3))


def wald(key, mean, shape=None, dtype=None) -> Tensor:
    """Wald (inverse Gaussian, shape parameter 1) floats with the given mean, by
    Michael, Schucany and Haas' transformation of a normal and a uniform draw."""
    k, d, (m,), shape = _prepare("wald", key, dtype, shape, mean=mean)
    return _wald(k, m, shape, d)


def _wald_impl(k, mean, shape, d):
    ks = _split_impl(k, (2,))
    mean = snp.broadcast_to(snp.astype(mean, d), shape)
    v = _normal_impl(ks[0], shape, d)
    z = _uniform_impl(ks[1], 0.0, 1.0, shape, d)
    y = v * v
    mean_sq = mean * mean
    sqrt_term = snp.sqrt(4 * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return snp.where(z <= mean / (mean + x), x, mean_sq / x)


_wald = jit(_wald_impl, static_argnums=(2, 3))


def geometric(key, p, shape=None, dtype=None) -> Tensor:
    """Geometric integers >= 1 (the number of Bernoulli(p) trials up to the first
    success), in `dtype` (default: the default int dtype, int64; jax's is int32)."""
    k = _check_key("geometric", key)
    d = _int_dtype("geometric", dtype)
    pt = _real_param("geometric", "p", p)
    if pt.dtype.kind != "f":
        pt = snp.astype(pt, dt.float32)
    return _geometric(k, pt, _param_shape("geometric", shape, p=pt), d)


def _geometric_impl(k, p, shape, d):
    u = _uniform_impl(k, 0.0, 1.0, shape, p.dtype)
    u = snp.where(u == 0, _c(1.0, p.dtype), u)  # as jax: u = 0 would give log(0)
    g = snp.floor(snp.log(u) / snp.broadcast_to(snp.log1p(-p), shape)) + 1
    return snp.astype(g, d)


_geometric = jit(_geometric_impl, static_argnums=(2, 3))


def triangular(key, left, mode, right, shape=None, dtype=None) -> Tensor:
    """Triangular floats on [left, right] with peak at mode, by inverting the CDF."""
    k, d, (lo, mo, hi), shape = _prepare("triangular", key, dtype, shape, left=left,
                                         mode=mode, right=right)
    return _triangular(k, lo, mo, hi, shape, d)


def _triangular_impl(k, left, mode, right, shape, d):
    left, mode, right = (snp.broadcast_to(snp.astype(v, d), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform_impl(k, 0.0, 1.0, shape, d)
    out1 = left + snp.sqrt(u * (right - left) * (mode - left))
    out2 = right - snp.sqrt((1 - u) * (right - left) * (right - mode))
    return snp.where(u < fc, out1, out2)


_triangular = jit(_triangular_impl, static_argnums=(4, 5))


def lognormal(key, sigma=1.0, shape=None, dtype=None) -> Tensor:
    """Log-normal floats: exp(sigma * standard normal)."""
    k, d, (sg,), shape = _prepare("lognormal", key, dtype, shape, sigma=sigma)
    return _lognormal(k, sg, shape, d)


def _lognormal_impl(k, sigma, shape, d):
    return snp.exp(_normal_impl(k, shape, d) * snp.astype(sigma, d))


_lognormal = jit(_lognormal_impl, static_argnums=(2, 3))


# ---- gamma and what is built on it ------------------------------------------------------

def _gamma_many(keys, alpha, d, log_space):
    """One gamma(alpha[i]) draw per key keys[i] (keys: (n, 2), alpha: (n,)), by Marsaglia
    and Tsang's rejection method in jax's order of draws, so each element's numbers are
    those of jax's per-element loop: every element keeps drawing until it is accepted,
    and an accepted element's state stops changing. alpha < 1 is boosted to alpha + 1
    and scaled by u^(1/alpha) (or, in log space, shifted by log(u) / alpha)."""
    one, zero = _c(1.0, d), _c(0.0, d)
    third = _c(1.0 / 3.0, d)
    boost = alpha >= one
    alpha_orig = alpha
    alpha = snp.where(boost, alpha, alpha + one)
    dd = alpha - third
    cc = third / snp.sqrt(dd)

    def rejected(x2, v, u):
        return (u >= one - _c(0.0331, d) * (x2 * x2)) & (
            snp.log(u) >= x2 * _c(0.5, d) + dd * (one - v + snp.log(v)))

    def cond(st):
        return snp.any(rejected(*st[1:]))

    def body(st):
        key, x2, v3, u = st
        active = rejected(x2, v3, u)
        ks = _split_impl(key, (3,))

        # normals until v = 1 + c x is positive
        def inner_body(s):
            kk, x, v = s
            need = v <= zero
            sub = _split_impl(kk, (2,))
            x_new = _normal_impl(sub[:, 1], (), d)
            return (snp.where(need[:, None], sub[:, 0], kk), snp.where(need, x_new, x),
                    snp.where(need, one + x_new * cc, v))

        init = (ks[:, 1], snp.zeros_like(alpha), snp.where(active, -one, one))
        _, x, v = while_loop(lambda s: snp.any(s[2] <= zero), inner_body, init)
        u_new = _uniform_impl(ks[:, 2], 0.0, 1.0, (), d)
        return (snp.where(active[:, None], ks[:, 0], key), snp.where(active, x * x, x2),
                snp.where(active, v * v * v, v3), snp.where(active, u_new, u))

    ks = _split_impl(keys, (2,))
    n = alpha.shape
    init = (ks[:, 0], snp.zeros(n, d), snp.ones(n, d), snp.full(n, 2.0, dtype=d))
    v3 = while_loop(cond, body, init)[2]
    if log_space:
        # log(u) through log1p(-u'), the form jax uses, so that both spaces agree
        log_u = snp.log1p(-_uniform_impl(ks[:, 1], 0.0, 1.0, (), d))
        log_boost = snp.where(boost | (log_u == 0), zero, log_u * (one / alpha_orig))
        return snp.log(dd) + snp.log(v3) + log_boost
    u = 1 - _uniform_impl(ks[:, 1], 0.0, 1.0, (), d)
    return dd * v3 * snp.where(boost, one, snp.power(u, one / alpha_orig))


def gamma(key, a, shape=None, dtype=None) -> Tensor:
    """Standard gamma floats with shape parameter a (density ~ x^(a-1) exp(-x))."""
    k, d, (at,), shape = _prepare("gamma", key, dtype, shape, a=a)
    return _gamma(k, at, shape, d, False)


def loggamma(key, a, shape=None, dtype=None) -> Tensor:
    """The logs of standard gamma(a) draws, computed in log space (accurate for small a,
    where the draws themselves underflow)."""
    k, d, (at,), shape = _prepare("loggamma", key, dtype, shape, a=a)
    return _gamma(k, at, shape, d, True)


def _gamma_impl(k, a, shape, d, log_space):
    n = math.prod(shape)
    if n == 0:
        return snp.zeros(shape, d)
    a = snp.reshape(snp.broadcast_to(snp.astype(a, d), shape), (n,))
    keys = _split_impl(k, (n,))  # one key per element, as jax's split(key, size)
    return snp.reshape(_gamma_many(keys, a, d, log_space), shape)


_gamma = jit(_gamma_impl, static_argnums=(2, 3, 4))


def beta(key, a, b, shape=None, dtype=None) -> Tensor:
    """Beta(a, b) floats on [0, 1]: g_a / (g_a + g_b) for gamma draws, formed from
    their logs so that small a and b keep their precision."""
    k, d, (at, bt), shape = _prepare("beta", key, dtype, shape, a=a, b=b)
    return _beta(k, at, bt, shape, d)


def _beta_impl(k, a, b, shape, d):
    ks = _split_impl(k, (2,))
    lga = _gamma_impl(ks[0], a, shape, d, True)
    lgb = _gamma_impl(ks[1], b, shape, d, True)
    log_max = snp.maximum(lga, lgb)
    ga, gb = snp.exp(lga - log_max), snp.exp(lgb - log_max)
    return ga / (ga + gb)


_beta = jit(_beta_impl, static_argnums=(3, 4))


def dirichlet(key, alpha, shape=None, dtype=None) -> Tensor:
    """Dirichlet(alpha) floats: points of the simplex along the last axis (normalized
    gamma draws, from their logs); the result shape is shape + alpha.shape[-1:]."""
    k = _check_key("dirichlet", key)
    d = _float_dtype("dirichlet", dtype)
    al = _real_param("dirichlet", "alpha", alpha)
    if al.ndim < 1:
        raise ValueError(at_user_line("random.dirichlet: alpha must have at least one axis "
                                      "(the concentrations of the categories), got a "
                                      "scalar"))
    shape = _param_shape("dirichlet", shape, **{"alpha.shape[:-1]": al.shape[:-1]})
    return _dirichlet(k, al, shape, d)


def _dirichlet_impl(k, alpha, shape, d):
    lg = _gamma_impl(k, alpha, (*shape, alpha.shape[-1]), d, True)
    e = snp.exp(lg - snp.max(lg, axis=-1, keepdims=True))
    return e / snp.sum(e, axis=-1, keepdims=True)


_dirichlet = jit(_dirichlet_impl, static_argnums=(2, 3))


def chisquare(key, df, shape=None, dtype=None) -> Tensor:
    """Chi-square floats with df degrees of freedom: 2 gamma(df / 2)."""
    k, d, (dft,), shape = _prepare("chisquare", key, dtype, shape, df=df)
    return _chisquare(k, dft, shape, d)


def _chisquare_impl(k, df, shape, d):
    half = snp.astype(df, d) / _c(2.0, d)
    return snp.exp(_gamma_impl(k, half, shape, d, True)) * _c(2.0, d)


_chisquare = jit(_chisquare_impl, static_argnums=(2, 3))


def t(key, df, shape=None, dtype=None) -> Tensor:
    """Student's t floats with df degrees of freedom: normal / sqrt(gamma(df/2) / (df/2))."""
    k, d, (dft,), shape = _prepare("t", key, dtype, shape, df=df)
    return _t(k, dft, shape, d)


def _t_impl(k, df, shape, d):
    ks = _split_impl(k, (2,))
    n = _normal_impl(ks[0], shape, d)
    half = snp.astype(df, d) / _c(2.0, d)
    g = _gamma_impl(ks[1], half, shape, d, False)
    return n * snp.sqrt(half / g)


_t = jit(_t_impl, static_argnums=(2, 3))


def f(key, dfnum, dfden, shape=None, dtype=None) -> Tensor:
    """F-distribution floats: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)."""
    k, d, (num, den), shape = _prepare("f", key, dtype, shape, dfnum=dfnum, dfden=dfden)
    return _f(k, num, den, shape, d)


def _f_impl(k, dfnum, dfden, shape, d):
    dfnum, dfden = snp.astype(dfnum, d), snp.astype(dfden, d)
    ks = _split_impl(k, (2,))
    chi_num = _chisquare_impl(ks[1], dfnum, shape, d)
    chi_den = _chisquare_impl(ks[0], dfden, shape, d)
    return (chi_num / dfnum) / (chi_den / dfden)


_f = jit(_f_impl, static_argnums=(3, 4))


def generalized_normal(key, p, shape=(), dtype=None) -> Tensor:
    """Generalized normal floats (density ~ exp(-|x|^p)): a random sign times
    gamma(1/p)^(1/p)."""
    k = _check_key("generalized_normal", key)
    d = _float_dtype("generalized_normal", dtype)
    pt = _real_param("generalized_normal", "p", p)
    if pt.ndim:
        raise ValueError(at_user_line(f"random.generalized_normal: p must be a scalar, got "
                                      f"shape {pt.shape}"))
    return _generalized_normal(k, pt, _shape(shape), d)


def _generalized_normal_impl(k, p, shape, d):
    ks = _split_impl(k, (2,))
    inv_p = _c(1.0, d) / snp.astype(p, d)
    g = _gamma_impl(ks[0], inv_p, shape, d, False)
    return _rademacher_impl(ks[1], shape, d) * snp.power(g, inv_p)


_generalized_normal = jit(_generalized_normal_impl, static_argnums=(2, 3))


def ball(key, d, p=2, shape=(), dtype=None) -> Tensor:
    """Points drawn uniformly from the unit p-norm ball in d dimensions: a (*shape, d)
    tensor (Barthe, Guedon, Mendelson and Naor's construction)."""
    k = _check_key("ball", key)
    fd = _float_dtype("ball", dtype)
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
        raise ValueError(at_user_line(f"random.ball: d must be a non-negative Python int "
                                      f"(the dimension), got {d!r}"))
    pt = _real_param("ball", "p", p)
    if pt.ndim:
        raise ValueError(at_user_line(f"random.ball: p must be a scalar, got shape "
                                      f"{pt.shape}"))
    return _ball(k, pt, int(d), _shape(shape), fd)


def _ball_impl(k, p, d, shape, fd):
    ks = _split_impl(k, (2,))
    g = _generalized_normal_impl(ks[0], p, (*shape, d), fd)
    e = _exponential_impl(ks[1], shape, fd)
    p = snp.astype(p, fd)
    r = snp.power(snp.sum(snp.power(snp.abs(g), p), axis=-1) + e, _c(1.0, fd) / p)
    return g / r[..., None]


_ball = jit(_ball_impl, static_argnums=(2, 3, 4))


# ---- counts: poisson, binomial, multinomial ---------------------------------------------

_MAX_ITERS = np.iinfo(np.int32).max  # a bound on the rejection loops that is never reached


def poisson(key, lam, shape=None, dtype=None) -> Tensor:
    """Poisson(lam) integers, in `dtype` (default: the default int dtype, int64; jax's is
    int32): Knuth's product of uniforms for lam < 10, Hormann's transformed rejection
    above, as jax does."""
    k = _check_key("poisson", key)
    d = _int_dtype("poisson", dtype)
    lt = _real_param("poisson", "lam", lam)
    shape = _param_shape("poisson", shape, lam=lt)
    return _poisson(k, snp.astype(snp.broadcast_to(lt, shape), dt.float32), shape, d)


def _poisson_knuth(k, lam, shape, d):
    def body(st):
        i, n, key, log_prod = st
        ks = _split_impl(key, (2,))
        n = snp.where(log_prod > -lam, n + 1, n)
        u = _uniform_impl(ks[1], 0.0, 1.0, shape, dt.float32)
        return i + 1, n, ks[0], log_prod + snp.log(u)

    def cond(st):
        return snp.any(st[3] > -lam) & (st[0] < _MAX_ITERS)

    init = (snp.asarray(0, dtype=dt.int32), snp.zeros(shape, d), k, snp.zeros(shape, dt.float32))
    return while_loop(cond, body, init)[1] - 1


def _poisson_rejection(k, lam, shape, d):
    f32 = dt.float32
    log_lam = snp.log(lam)
    b = 0.931 + 2.53 * snp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(st):
        i, k_out, accepted, key = st
        ks = _split_impl(key, (3,))
        u = _uniform_impl(ks[1], 0.0, 1.0, shape, f32) - 0.5
        v = _uniform_impl(ks[2], 0.0, 1.0, shape, f32)
        us = 0.5 - snp.abs(u)
        n = snp.floor((2 * a / us + b) * u + lam + 0.43)
        s = snp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + n * log_lam - _gammaln(n + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (n < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, snp.where(accept, n, k_out), accepted | accept, ks[0]

    def cond(st):
        return snp.any(~st[2]) & (st[0] < _MAX_ITERS)

    init = (snp.asarray(0, dtype=dt.int32), snp.full(shape, -1.0, dtype=f32),
            snp.zeros(shape, dt.bool_), k)
    return snp.astype(while_loop(cond, body, init)[1], d)


def _gammaln(x):
    from .scipy._gamma import gammaln  # XLA's lgamma algorithm, as jax's lax.lgamma

    return gammaln(x)


def _poisson_impl(k, lam, shape, d):
    use_knuth = snp.isnan(lam) | (lam < 10)
    lam_knuth = snp.where(use_knuth, lam, 0.0)
    lam_rejection = snp.where(use_knuth, 1e5, lam)  # keeps the unused branch cheap
    out = snp.where(use_knuth, _poisson_knuth(k, lam_knuth, shape, d),
                    _poisson_rejection(k, lam_rejection, shape, d))
    return snp.where(lam == 0, snp.zeros_like(out), out)


_poisson = jit(_poisson_impl, static_argnums=(2, 3))


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(x):
    """log(k!) minus its Stirling approximation: a table for k <= 9, a series above."""
    table = snp.asarray(np.array(_STIRLING_TAIL, x.dtype.np))
    small = x <= 9
    x = snp.clip(x, 0.0, 9.0)
    kp1sq = (x + 1) * (x + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (x + 1)
    return snp.where(small, snp.take(table, snp.astype(snp.floor(x), dt.int32)), approx)


def _binomial_inversion(k, count, prob, shape):
    log1mp = snp.log1p(-prob)

    def body(st):
        i, num_geom, geom_sum, key = st
        ks = _split_impl(key, (2,))  # jax draws from the first key, keeps the second
        num_geom = snp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform_impl(ks[0], 0.0, 1.0, shape, prob.dtype)
        return i + 1, num_geom, geom_sum + snp.ceil(snp.log(u) / log1mp), ks[1]

    def cond(st):
        return snp.any(st[2] <= count) & (st[0] < _MAX_ITERS)

    zeros = snp.zeros(shape, prob.dtype)
    return while_loop(cond, body, (snp.asarray(0, dtype=dt.int32), zeros, zeros, k))[1] - 1


def _btrs(k, count, prob, shape):
    """Hormann's transformed rejection with squeeze (BTRS) for count * prob > 10."""
    stddev = snp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = snp.floor((count + 1) * prob)

    def body(st):
        i, k_out, accepted, key = st
        ks = _split_impl(key, (3,))
        u = _uniform_impl(ks[1], 0.0, 1.0, shape, prob.dtype)
        v = _uniform_impl(ks[2], 0.0, 1.0, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - snp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        n = snp.floor((2 * a / us + b) * u + c)
        reject = (n < 0) | (n > count)
        v = snp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * snp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * snp.log((count - m + 1) / (count - n + 1))
              + (n + 0.5) * snp.log(r * (count - n + 1) / (n + 1))
              + _stirling_tail(m) + _stirling_tail(count - m)
              - _stirling_tail(n) - _stirling_tail(count - n))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, snp.where(accept, n, k_out), accepted | accept, ks[0]

    def cond(st):
        return snp.any(~st[2]) & (st[0] < _MAX_ITERS)

    init = (snp.asarray(0, dtype=dt.int32), snp.full(shape, -1.0, dtype=prob.dtype),
            snp.zeros(shape, dt.bool_), k)
    return while_loop(cond, body, init)[1]


def binomial(key, n, p, shape=None, dtype=None) -> Tensor:
    """Binomial(n, p) counts as floats (n trials of success probability p; n is floored):
    inversion by geometric waiting times when n min(p, 1-p) <= 10, BTRS above, as jax
    does. nan for p outside [0, 1] or nan, or n negative or nan; inf for n = inf."""
    k = _check_key("binomial", key)
    d = _float_dtype("binomial", dtype)
    nt, pt = _real_param("binomial", "n", n), _real_param("binomial", "p", p)
    if pt.dtype.kind != "f":
        pt = snp.astype(pt, dt.float32)
    return _binomial(k, nt, pt, _param_shape("binomial", shape, n=nt, p=pt), d)


def _binomial_impl(k, count, prob, shape, d):
    count = snp.broadcast_to(snp.astype(count, prob.dtype), shape)
    prob = snp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = snp.where(p_lt_half, prob, 1.0 - prob)  # draw the rarer outcome
    count_bad = snp.isnan(count) | (count < 0.0)
    count_inf = snp.isinf(count)
    q_nan, q_neg = snp.isnan(q), q < 0.0
    q = snp.where(q_nan | q_neg, snp.full_like(q, 0.01), q)
    use_inversion = count_bad | (count * q <= 10.0)
    count = snp.floor(count)
    count_inv = snp.where(use_inversion, count, snp.zeros_like(count))
    count_btrs = snp.where(use_inversion, snp.full_like(count, 1e4), count)
    q_btrs = snp.where(use_inversion, snp.full_like(q, 0.5), q)
    out = snp.where(use_inversion, _binomial_inversion(k, count_inv, q, shape),
                    _btrs(k, count_btrs, q_btrs, shape))
    out = snp.astype(out, d)
    invalid = q_neg | q_nan | count_bad
    out = snp.where(invalid, snp.full_like(out, np.nan), out)
    out = snp.where(count_inf & ~invalid, snp.full_like(out, np.inf), out)
    return snp.where(p_lt_half | count_bad | q_nan | count_inf, out,
                     snp.astype(count, d) - out)


_binomial = jit(_binomial_impl, static_argnums=(3, 4))


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1) -> Tensor:
    """Multinomial counts (as floats) of n trials over the categories on p's last axis,
    by a binomial draw per category from what is left. As in jax, `shape` is the full
    result shape (categories last; default p.shape); `unroll` is accepted for
    compatibility (the loop over categories is always unrolled)."""
    del unroll
    k = _check_key("multinomial", key)
    d = _float_dtype("multinomial", dtype)
    nt, pt = _real_param("multinomial", "n", n), _real_param("multinomial", "p", p)
    if pt.ndim < 1:
        raise ValueError(at_user_line("random.multinomial: p must have at least one axis "
                                      "(the probabilities of the categories), got a scalar"))
    ft = pt.dtype if pt.dtype.kind == "f" else dt.float32
    shape = pt.shape if shape is None else _shape(shape)
    if not shape:
        raise ValueError(at_user_line("random.multinomial: shape must have at least one "
                                      "axis (the categories, last)"))
    _param_shape("multinomial", shape, p=pt)
    _param_shape("multinomial", shape[:-1], n=nt)
    return _multinomial(k, snp.astype(nt, ft), snp.astype(pt, ft), shape, d)


def _multinomial_impl(k, n, p, shape, d):
    n = snp.broadcast_to(n, shape[:-1])
    p = snp.moveaxis(snp.broadcast_to(p, shape), -1, 0)
    remaining = snp.flip(snp.cumsum(snp.flip(p, 0), axis=0), 0)
    ratios = p / snp.where(remaining == 0, 1, remaining)
    keys = _split_impl(k, (shape[-1],))
    counts = []
    for i in range(shape[-1]):
        c = _binomial_impl(keys[i], n, snp.clip(ratios[i], 0, 1), shape[:-1], n.dtype)
        n = n - c
        counts.append(c)
    return snp.astype(snp.stack(counts, axis=-1), d)


_multinomial = jit(_multinomial_impl, static_argnums=(3, 4))


# ---- multivariate and matrix draws ---------------------------------------------------------

def multivariate_normal(key, mean, cov, shape=None, dtype=None,
                        method: str = "cholesky") -> Tensor:
    """Multivariate normal vectors: mean + F z for a factor F F^T = cov (Cholesky, or
    'svd' / 'eigh' for singular covariances); the result is shape + mean.shape[-1:],
    shape defaulting to the broadcast batch shape of mean and cov."""
    k = _check_key("multivariate_normal", key)
    mt = _real_param("multivariate_normal", "mean", mean)
    ct = _real_param("multivariate_normal", "cov", cov)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(at_user_line(f"random.multivariate_normal: method must be "
                                      f"'cholesky', 'svd' or 'eigh', got {method!r}"))
    if mt.ndim < 1:
        raise ValueError(at_user_line("random.multivariate_normal: mean must have at least "
                                      "one axis, got a scalar"))
    nvar = mt.shape[-1]
    if ct.ndim < 2 or ct.shape[-2:] != (nvar, nvar):
        raise ValueError(at_user_line(
            f"random.multivariate_normal: cov must have shape (..., {nvar}, {nvar}) for a "
            f"mean of {nvar} entries, got shape {ct.shape}"))
    mdt = mt.dtype if mt.dtype.kind == "f" else dt.float32
    d = _float_dtype("multivariate_normal", mdt if dtype is None else dtype)
    shape = _param_shape("multivariate_normal", shape, **{
        "mean.shape[:-1]": mt.shape[:-1], "cov.shape[:-2]": ct.shape[:-2]})
    return _multivariate_normal(k, snp.astype(mt, d), snp.astype(ct, d), shape, d, method)


def _multivariate_normal_impl(k, mean, cov, shape, d, method):
    if method == "svd":
        u, s, _ = snp.linalg.svd(cov)
        factor = u * snp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = snp.linalg.eigh(cov)
        factor = v * snp.sqrt(w[..., None, :])
    else:
        factor = snp.linalg.cholesky(cov)
    z = _normal_impl(k, (*shape, mean.shape[-1]), d)
    return mean + snp.matmul(factor, z[..., None])[..., 0]


_multivariate_normal = jit(_multivariate_normal_impl, static_argnums=(3, 4, 5))


def orthogonal(key, n, shape=(), dtype=None, m=None) -> Tensor:
    """Matrices drawn uniformly (Haar measure) from the n x n orthogonal group, or n x m
    with orthonormal columns (n >= m) or rows (n < m): the Q of a normal matrix's QR,
    its columns' signs fixed by R's diagonal (Mezzadri's method)."""
    k = _check_key("orthogonal", key)
    d = _float_dtype("orthogonal", dtype)
    for name, v in (("n", n), ("m", n if m is None else m)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ValueError(at_user_line(f"random.orthogonal: {name} must be a non-negative "
                                          f"Python int (a matrix size), got {v!r}"))
    return _orthogonal(k, int(n), int(n if m is None else m), _shape(shape), d)


def _orthogonal_impl(k, n, m, shape, d):
    z = _normal_impl(k, (*shape, max(n, m), min(n, m)), d)
    q, r = snp.linalg.qr(z)
    signs = snp.sign(snp.diagonal(r, axis1=-2, axis2=-1))
    x = q * signs[..., None, :]
    return snp.swapaxes(x, -1, -2) if n < m else x


_orthogonal = jit(_orthogonal_impl, static_argnums=(1, 2, 3, 4))


# Samplers compile once per requested shape by design: no recompilation warnings.
for _sampler in (_split, _bits, _uniform, _normal, _truncated, _randint, _bernoulli, _gumbel,
                 _categorical, _permutation, _exponential, _laplace, _logistic, _cauchy,
                 _rademacher, _maxwell, _double_sided_maxwell, _weibull_min, _pareto, _rayleigh,
                 _wald, _geometric, _triangular, _lognormal, _gamma, _beta, _dirichlet,
                 _chisquare, _t, _f, _generalized_normal, _ball, _poisson, _binomial,
                 _multinomial, _multivariate_normal, _orthogonal):
    _sampler.warn_recompiles = False
