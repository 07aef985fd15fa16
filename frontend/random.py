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
from .dispatch import bind, bind1
from .errors import at_user_line
from .jit import jit
from .numpy._operands import as_shape
from .promotion import DEFAULT_INT
from .tensor import Tensor

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "bernoulli", "categorical", "choice", "gumbel", "permutation", "truncated_normal",
           "threefry2x32"]

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


def _words(key: Tensor) -> tuple[Tensor, Tensor]:
    return key[0], key[1]


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


def split(key, num=2) -> Tensor:
    """`num` new keys (an int, or a tuple for a shape): a uint32[*num, 2] tensor."""
    k = _check_key("split", key)
    shape = (int(num),) if isinstance(num, (int, np.integer)) else tuple(int(n) for n in num)
    return _split(k, shape)


def _split_impl(k, shape):
    k1, k2 = _words(k)
    hi, lo = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return snp.stack([b1, b2], axis=len(shape))


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
    k1, k2 = _words(k)
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
        k1, k2 = _split_impl(k, (2,))
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


# Samplers compile once per requested shape by design: no recompilation warnings.
for _sampler in (_split, _bits, _uniform, _normal, _truncated, _randint, _bernoulli, _gumbel,
                 _categorical, _permutation):
    _sampler.warn_recompiles = False
