"""Integer and categorical draws: randint, bernoulli, categorical, permutation, choice,
and the rejection samplers poisson and binomial."""

from __future__ import annotations

import math

import numpy as np

from .. import numpy as snp
from ..compiler import dtypes as dt
from ..compiler.ir import Attrs
from ..compiler.primitives import sorting as srt
from ..control_flow import while_loop
from ..dispatch import bind
from ..errors import at_user_line
from ..promotion import DEFAULT_INT
from ..tensor import Tensor
from ._core import (
    _bits_impl,
    _c,
    _check_key,
    _float_dtype,
    _int_dtype,
    _param_shape,
    _real_param,
    _shape,
    _split_impl,
    _uniform_impl,
    _words_split,
    sampler,
    uniform,
)
from .continuous import _gumbel_impl, gumbel


def randint(key, shape, minval, maxval, dtype=None) -> Tensor:
    """Uniform integers in [minval, maxval) (jax.random.randint's algorithm: two draws
    of the dtype's width, reduced modulo the span). The dtype defaults to int32, as in
    jax.random.randint, so the same call gives the same numbers (the draws depend on the
    dtype's width: dtype=int64 matches jax with 64-bit types enabled).

    Example:
        >>> stablejit.random.randint(stablejit.random.key(0), (5,), 0, 10)
        Tensor<i32[5] xla:host:0>
        [9, 0, 2, 3, 1]
    """
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


_randint = sampler(_randint_impl, (3, 4))


def categorical(key, logits, axis: int = -1, shape=None) -> Tensor:
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max
    trick, as jax.random.categorical with replace=True).

    Example:
        >>> logits = snp.log(snp.asarray([0.1, 0.2, 0.7]))
        >>> stablejit.random.categorical(stablejit.random.key(0), logits, shape=(6,))
        Tensor<i64[6] xla:host:0>
        [1, 2, 2, 1, 2, 2]
    """
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


_categorical = sampler(_categorical_impl, (2, 3))


def permutation(key, x, axis: int = 0, independent: bool = False) -> Tensor:
    """A random permutation of range(x) (x an int) or of x's entries along `axis`
    (every slice permuted the same way, or each independently).

    Example:
        >>> stablejit.random.permutation(stablejit.random.key(0), 5)
        Tensor<i64[5] xla:host:0>
        [0, 1, 4, 3, 2]
    """
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
    replace=False.

    Example:
        >>> stablejit.random.choice(stablejit.random.key(0), 10, (3,), replace=False)
        Tensor<i64[3] xla:host:0>
        [0, 1, 8]
    """
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


_permutation = sampler(_permutation_impl, (2, 3))


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


_geometric = sampler(_geometric_impl, (2, 3))


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
    from ..scipy._gamma import gammaln  # XLA's lgamma algorithm, as jax's lax.lgamma

    return gammaln(x)


def _poisson_impl(k, lam, shape, d):
    use_knuth = snp.isnan(lam) | (lam < 10)
    lam_knuth = snp.where(use_knuth, lam, 0.0)
    lam_rejection = snp.where(use_knuth, 1e5, lam)  # keeps the unused branch cheap
    out = snp.where(use_knuth, _poisson_knuth(k, lam_knuth, shape, d),
                    _poisson_rejection(k, lam_rejection, shape, d))
    return snp.where(lam == 0, snp.zeros_like(out), out)


_poisson = sampler(_poisson_impl, (2, 3))


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


_binomial = sampler(_binomial_impl, (3, 4))


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


_multinomial = sampler(_multinomial_impl, (3, 4))
