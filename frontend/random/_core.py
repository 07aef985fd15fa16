"""The PRNG core: keys (uint32[2]), the threefry2x32 hash, split / fold_in / bits,
uniform draws and the coin flips built on them (bernoulli, rademacher), and the argument
checks every sampler shares."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..compiler.primitives import shape_ops as so
from ..control_flow import fori_loop
from ..dispatch import bind1
from ..errors import at_user_line
from ..jit import jit
from ..numpy._operands import as_shape
from ..promotion import DEFAULT_INT, default_float
from ..tensor import Tensor

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


_U32 = dt.uint32


def sampler(impl, static_argnums):
    """A sampler's one jitted program per (shape, dtype, ...). Samplers compile once per
    requested shape by design, so they never warn about recompiling."""
    f = jit(impl, static_argnums=static_argnums)
    f.warn_recompiles = False
    return f


def _rotl(x: Tensor, d) -> Tensor:
    """x rotated left by d bits (0 < d < 32; an int or a uint32 scalar tensor)."""
    return snp.bitwise_or(snp.left_shift(x, d), snp.right_shift(x, 32 - d))


def threefry2x32(k1, k2, x1, x2) -> tuple[Tensor, Tensor]:
    """The Threefry-2x32 block cipher (20 rounds): key words k1, k2 (uint32 scalars or
    arrays), counter words x1, x2 (uint32 arrays); returns the two output words.

    The five groups of four rounds are a loop, as jax writes them: unrolled, the
    20 rounds are one long chain of integer ops that XLA fuses into one loop, and the
    LLVM in jaxlib 0.11 takes exponential time vectorising it (an advi step's program
    never finished compiling)."""
    k1, k2, x1, x2 = (snp.asarray(v, dtype=_U32) for v in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x1, x2 = x1 + ks[0], x2 + ks[1]
    rotations = (snp.asarray(_ROTATIONS[0], dtype=_U32), snp.asarray(_ROTATIONS[1], dtype=_U32))

    def group(r, carry):
        # rounds 4r .. 4r + 3, then the key injection; the keys and the rotations turn
        # one place each group (ks[(r + 1) % 3], ks[(r + 2) % 3], _ROTATIONS[r % 2])
        x1, x2, ka, kb, kc, rot, next_rot = carry
        for j in range(4):
            x1 = x1 + x2
            x2 = _rotl(x2, rot[j]) ^ x1
        x1 = x1 + kb
        x2 = x2 + kc + snp.astype(r + 1, _U32)
        return x1, x2, kb, kc, ka, next_rot, rot

    x1, x2, *_ = fori_loop(0, 5, group, (x1, x2, *ks, *rotations))
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


def _check_key(name: str, key) -> Tensor:
    k = key if isinstance(key, Tensor) else snp.asarray(key)
    if k.shape != (2,) or k.dtype is not _U32:
        raise TypeError(at_user_line(
            f"random.{name}: expected a key (a uint32[2] tensor from stablejit.random.key, "
            f"split or fold_in), got a {k.dtype.name}{list(k.shape)} tensor"))
    return k


def key(seed) -> Tensor:
    """A key from an integer seed (a Python int or an integer scalar tensor), read as a
    64-bit integer: [high 32 bits, low 32 bits].

    Example:
        >>> key = stablejit.random.key(0)
        >>> stablejit.random.uniform(key, (3,))
        Tensor<f32[3] xla:host:0>
        [0.947667  , 0.9785799 , 0.33229148]
    """
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
    """`num` new keys (an int, or a tuple for a shape): a uint32[*num, 2] tensor.

    Example:
        >>> k1, k2 = stablejit.random.split(stablejit.random.key(0))
        >>> stablejit.random.split(stablejit.random.key(0), 3).shape
        (3, 2)
    """
    k = _check_key("split", key)
    shape = (int(num),) if isinstance(num, (int, np.integer)) else tuple(int(n) for n in num)
    return _split(k, shape)


def _split_impl(k, shape):
    # k may be a batch of keys (*B, 2): the result is (*B, *shape, 2)
    k1, k2 = _words(k, len(shape))
    hi, lo = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return snp.stack([b1, b2], axis=b1.ndim)


_split = sampler(_split_impl, (1,))


def fold_in(key, data) -> Tensor:
    """A new key made from `key` and an integer (data is read as uint32).

    Example:
        >>> k = stablejit.random.fold_in(stablejit.random.key(0), 7)   # one key per step
        >>> stablejit.random.uniform(k, (2,))
        Tensor<f32[2] xla:host:0>
        [0.47504628, 0.07194722]
    """
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


_bits = sampler(_bits_impl, (1, 2))


def _float_dtype(name: str, dtype) -> dt.DType:
    d = default_float() if dtype is None else dt.dtype(dtype)
    if d.kind != "f":
        raise TypeError(at_user_line(f"random.{name}: dtype must be a floating-point dtype, "
                                     f"got {d.name}"))
    return d


def _finfo(d: dt.DType):
    return ml_dtypes.finfo(d.np)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0) -> Tensor:
    """Uniform floats in [minval, maxval).

    Example:
        >>> stablejit.random.uniform(stablejit.random.key(1), (3,), minval=-1.0, maxval=1.0)
        Tensor<f32[3] xla:host:0>
        [-0.12273502,  0.06750584, -0.10816336]
    """
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


_uniform = sampler(_uniform_impl, (3, 4))


def _words_split(k):
    ks = _split_impl(k, (2,))
    return ks[0], ks[1]


def bernoulli(key, p=0.5, shape=None) -> Tensor:
    """Booleans that are True with probability p.

    Example:
        >>> stablejit.random.bernoulli(stablejit.random.key(0), 0.5, (6,))
        Tensor<pred[6] xla:host:0>
        [False, False,  True,  True, False,  True]
    """
    k = _check_key("bernoulli", key)
    pt = snp.asarray(p)
    if pt.dtype.kind != "f":
        raise TypeError(at_user_line(f"random.bernoulli: p must be floating point, got "
                                     f"{pt.dtype.name}"))
    shape = pt.shape if shape is None else _shape(shape)
    return _bernoulli(k, pt, shape)


def _bernoulli_impl(k, p, shape):
    return _uniform_impl(k, 0.0, 1.0, shape, p.dtype) < p


_bernoulli = sampler(_bernoulli_impl, (2,))


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


_rademacher = sampler(_rademacher_impl, (1, 2))
