"""stablejit.random: the same bits as jax.random (threefry2x32, partitionable layout),
the same values on jit, eager XLA and the reference backend, and distributions checked
with moments and goodness-of-fit tests at fixed seeds."""

import jax
import jax.random as jr
import numpy as np
import pytest
import stablejit
from stablejit import random as sr

from tests.support.runners import run_three_ways

N = 20000


def _three(fn, *args):
    """fn(key, *args) on the three paths, with the key made on each path."""
    return run_three_ways(lambda k, *a: fn(k, *a), np.array([0, 42], np.uint32), *args)


def _same_everywhere(res, exact=True):
    base = res["jit"]
    for path, got in res.items():
        if exact:
            np.testing.assert_array_equal(got, base, err_msg=path)
        else:
            np.testing.assert_allclose(got, base, rtol=2e-6, atol=2e-6, err_msg=path)
    return base


# ---- bits: exactly jax's --------------------------------------------------------------------

def test_key_split_fold_in_match_jax():
    assert jax.config.jax_default_prng_impl == "threefry2x32"
    for seed in (0, 42, 2**31 - 1):
        np.testing.assert_array_equal(sr.key(seed).numpy(), jr.PRNGKey(seed))
    k, jk = sr.key(42), jr.PRNGKey(42)
    np.testing.assert_array_equal(sr.split(k).numpy(), jr.split(jk))
    np.testing.assert_array_equal(sr.split(k, (2, 3)).numpy(), jr.split(jk, (2, 3)))
    np.testing.assert_array_equal(sr.fold_in(k, 7).numpy(), jr.fold_in(jk, 7))
    # a traced seed makes the same key as a Python one
    np.testing.assert_array_equal(stablejit.jit(sr.key)(np.int64(42)).numpy(), jr.PRNGKey(42))


@pytest.mark.parametrize("name,ours,theirs", [
    ("bits", lambda k: sr.bits(k, (4, 5)), lambda k: jr.bits(k, (4, 5))),
    ("uniform", lambda k: sr.uniform(k, (1000,), minval=-2.0, maxval=3.0),
     lambda k: jr.uniform(k, (1000,), minval=-2.0, maxval=3.0)),
    ("uniform_f16", lambda k: sr.uniform(k, (64,), "float16"),
     lambda k: jr.uniform(k, (64,), "float16")),
    ("uniform_bf16", lambda k: sr.uniform(k, (64,), "bfloat16"),
     lambda k: jr.uniform(k, (64,), "bfloat16")),
    ("normal", lambda k: sr.normal(k, (1000,)), lambda k: jr.normal(k, (1000,))),
    ("randint", lambda k: sr.randint(k, (500,), -3, 17, "int32"),
     lambda k: jr.randint(k, (500,), -3, 17)),
    ("randint_default_dtype", lambda k: sr.randint(k, (500,), -3, 17),
     lambda k: jr.randint(k, (500,), -3, 17)),
    ("randint_u8", lambda k: sr.randint(k, (200,), 0, 256, "uint8"),
     lambda k: jr.randint(k, (200,), 0, 256, "uint8")),
    ("bernoulli", lambda k: sr.bernoulli(k, 0.3, (500,)), lambda k: jr.bernoulli(k, 0.3, (500,))),
    ("gumbel", lambda k: sr.gumbel(k, (300,)), lambda k: jr.gumbel(k, (300,))),
    ("permutation", lambda k: sr.permutation(k, 50), lambda k: jr.permutation(k, 50)),
    *[(f"choice_{i}", lambda k, kw=kw: sr.choice(k, **kw), lambda k, kw=kw: jr.choice(k, **kw))
      for i, kw in enumerate([
          dict(a=10, shape=(6,)), dict(a=10, shape=(2, 3), replace=False),
          dict(a=np.arange(12.0).reshape(3, 4), shape=(5,), axis=1),
          dict(a=np.arange(12.0).reshape(3, 4), shape=(2,), replace=False),
          dict(a=5, shape=(7,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32)),
          dict(a=5, shape=(3,), replace=False,
               p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32))])],
    ("permutation_axis", lambda k: sr.permutation(k, np.arange(12).reshape(3, 4), axis=1),
     lambda k: jr.permutation(k, np.arange(12).reshape(3, 4), axis=1)),
    ("permutation_indep", lambda k: sr.permutation(k, np.arange(12).reshape(3, 4),
                                                   independent=True),
     lambda k: jr.permutation(k, np.arange(12).reshape(3, 4), independent=True)),
])
def test_bits_match_jax(name, ours, theirs):
    got = ours(sr.key(42)).numpy()
    np.testing.assert_array_equal(got, np.asarray(theirs(jr.PRNGKey(42))), err_msg=name)


P5 = np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)
A45 = np.arange(20.0, dtype=np.float32).reshape(4, 5)

# The same call with default arguments, in both libraries: (name, call(random module,
# key), index result) -- index results have the default int dtype, jax's int32 and
# stablejit's int64 (docs/numerics.md, "Type promotion"); every other dtype must be jax's.
DEFAULT_CALLS = [
    ("split", lambda r, k: r.split(k), False),
    ("split_3", lambda r, k: r.split(k, 3), False),
    ("fold_in", lambda r, k: r.fold_in(k, 7), False),
    ("uniform", lambda r, k: r.uniform(k), False),
    ("uniform_shape", lambda r, k: r.uniform(k, (7,)), False),
    ("normal", lambda r, k: r.normal(k, (7,)), False),
    ("bernoulli", lambda r, k: r.bernoulli(k), False),
    ("bernoulli_p", lambda r, k: r.bernoulli(k, 0.3, (7,)), False),
    ("randint", lambda r, k: r.randint(k, (7,), 0, 10), False),
    ("randint_wide", lambda r, k: r.randint(k, (7,), -2**31, 2**31 - 1), False),
    ("permutation", lambda r, k: r.permutation(k, 10), True),
    ("permutation_rows", lambda r, k: r.permutation(k, A45), False),
    ("choice", lambda r, k: r.choice(k, 10, (6,)), True),
    ("choice_scalar", lambda r, k: r.choice(k, 7), True),
    ("choice_no_replace", lambda r, k: r.choice(k, 10, (6,), replace=False), True),
    ("choice_rows", lambda r, k: r.choice(k, A45, (3,), axis=1), False),
    ("choice_p", lambda r, k: r.choice(k, 5, (7,), p=P5), True),
    ("choice_p_no_replace", lambda r, k: r.choice(k, 5, (3,), replace=False, p=P5), True),
    ("choice_p_rows", lambda r, k: r.choice(k, A45, (2, 2), p=P5, axis=1), False),
    ("categorical", lambda r, k: r.categorical(k, P5), True),
]


@pytest.mark.parametrize("seed", [0, 42, 2**31 - 1])
@pytest.mark.parametrize("make_key", ["key", "PRNGKey"])
def test_default_calls_give_jax_numbers(make_key, seed):
    ours = getattr(sr, make_key)(seed)
    theirs = getattr(jr, make_key)(seed)
    bad = []
    for name, call, index in DEFAULT_CALLS:
        got, want = call(sr, ours).numpy(), call(jr, theirs)
        if jax.dtypes.issubdtype(want.dtype, jax.dtypes.prng_key):
            want = jr.key_data(want)
        want = np.asarray(want)
        want_dtype = np.dtype(np.int64) if index else want.dtype
        if got.dtype != want_dtype or got.shape != want.shape or not np.array_equal(got, want):
            bad.append(f"{name}: stablejit {got.dtype} {got.tolist()}, "
                       f"jax {want.dtype} {want.tolist()}")
    assert not bad, "\n".join(bad)


def test_categorical_matches_jax():
    lg = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)
    k, jk = sr.key(3), jr.PRNGKey(3)
    np.testing.assert_array_equal(sr.categorical(k, lg).numpy(), jr.categorical(jk, lg))
    np.testing.assert_array_equal(sr.categorical(k, lg, axis=0, shape=(5, 6)).numpy(),
                                  jr.categorical(jk, lg, axis=0, shape=(5, 6)))


# ---- the same values on every path -------------------------------------------------------

def test_reproducible_across_backends():
    _same_everywhere(_three(lambda k: sr.bits(k, (64,))))
    _same_everywhere(_three(lambda k: sr.uniform(k, (64,))))
    _same_everywhere(_three(lambda k: sr.randint(k, (64,), 0, 9)))
    _same_everywhere(_three(lambda k: sr.permutation(k, 20)))
    _same_everywhere(_three(lambda k: sr.split(sr.fold_in(k, 3), 4)))
    # transcendental functions differ in the last bit between NumPy and XLA
    _same_everywhere(_three(lambda k: sr.normal(k, (64,))), exact=False)
    _same_everywhere(_three(lambda k: sr.truncated_normal(k, -1.0, 0.5, (64,))), exact=False)


def test_keys_are_values_inside_loops():
    # a jitted loop that splits the key each step gives the same draws as a Python loop
    def f(k):
        def body(i, c):
            k, acc = c
            k, sub = sr.split(k)
            return k, acc + sr.uniform(sub, (3,))
        return stablejit.fori_loop(0, 4, body, (k, stablejit.numpy.zeros(3)))[1]

    k = sr.key(42)
    want = np.zeros(3, np.float32)
    kk = jr.PRNGKey(42)
    for _ in range(4):
        kk, sub = jr.split(kk)
        want = want + np.asarray(jr.uniform(sub, (3,)))
    for path, got in _three(f).items():
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=path)
    np.testing.assert_allclose(stablejit.jit(f)(k).numpy(), want, rtol=1e-6)


# ---- distributions -----------------------------------------------------------------------

def _ks(sample, cdf):
    """Kolmogorov-Smirnov statistic and its 1% critical value."""
    x = np.sort(np.asarray(sample, np.float64))
    n = len(x)
    f = cdf(x)
    d = max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))
    return d, 1.63 / np.sqrt(n)


def _normal_cdf(x):
    from math import erf

    return 0.5 * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def test_uniform_and_normal_distributions():
    u = sr.uniform(sr.key(1), (N,), minval=2.0, maxval=5.0).numpy()
    assert u.min() >= 2.0 and u.max() < 5.0
    d, crit = _ks(u, lambda x: (x - 2.0) / 3.0)
    assert d < crit
    z = sr.normal(sr.key(2), (N,)).numpy()
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    d, crit = _ks(z, _normal_cdf)
    assert d < crit
    z64 = sr.normal(sr.key(2), (N,), "float64").numpy()
    assert z64.dtype == np.float64
    d, crit = _ks(z64, _normal_cdf)
    assert d < crit


def test_truncated_normal_within_bounds_and_distributed():
    lo, hi = -0.5, 1.5
    t = sr.truncated_normal(sr.key(3), lo, hi, (N,)).numpy()
    assert t.min() > lo and t.max() < hi
    mass = _normal_cdf(np.array(hi)) - _normal_cdf(np.array(lo))
    d, crit = _ks(t, lambda x: (_normal_cdf(x) - _normal_cdf(np.array(lo))) / mass)
    assert d < crit
    b = sr.truncated_normal(sr.key(4), np.array([-1.0, 0.0, 2.0], np.float32), 3.0,
                            (1000, 3)).numpy()
    assert (b > np.array([-1.0, 0.0, 2.0])).all() and (b < 3.0).all()


def test_randint_and_bernoulli_chi_square():
    r = sr.randint(sr.key(5), (N,), 0, 10, "int32").numpy()
    assert r.dtype == np.int32 and r.min() >= 0 and r.max() <= 9
    counts = np.bincount(r, minlength=10)
    chi2 = np.sum((counts - N / 10) ** 2 / (N / 10))
    assert chi2 < 21.67  # 99th percentile of chi-square with 9 degrees of freedom
    b = sr.bernoulli(sr.key(6), 0.25, (N,)).numpy()
    assert b.dtype == np.bool_ and abs(b.mean() - 0.25) < 0.015


def test_categorical_respects_logits():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = sr.categorical(sr.key(7), np.log(p).astype(np.float32), shape=(N,)).numpy()
    counts = np.bincount(draws, minlength=4)
    chi2 = np.sum((counts - N * p) ** 2 / (N * p))
    assert chi2 < 11.34  # 99th percentile, 3 degrees of freedom
    # a category with -inf logit is never drawn
    lg = np.array([0.0, -np.inf, 0.0], np.float32)
    assert 1 not in sr.categorical(sr.key(8), lg, shape=(1000,)).numpy()


@pytest.mark.filterwarnings("ignore::stablejit.jit.RecompileWarning")  # one compile per size
def test_permutation_is_a_permutation():
    for n in (1, 7, 100, 2000):
        p = sr.permutation(sr.key(n), n).numpy()
        assert sorted(p.tolist()) == list(range(n))
    x = np.arange(20).reshape(4, 5)
    rows = sr.permutation(sr.key(1), x).numpy()
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    # positions are uniform: each value lands in each position about equally often
    hits = np.zeros((5, 5))
    for s in range(400):
        hits[np.arange(5), sr.permutation(sr.fold_in(sr.key(0), s), 5).numpy()] += 1
    chi2 = np.sum((hits - 80) ** 2 / 80)
    assert chi2 < 32.0  # 99th percentile, 16 degrees of freedom


def test_bad_keys_and_dtypes_are_clear_errors():
    with pytest.raises(TypeError, match="uint32"):
        sr.uniform(np.zeros(3, np.float32), (2,))
    with pytest.raises(TypeError, match="floating-point"):
        sr.normal(sr.key(0), (2,), "int32")
    with pytest.raises(TypeError, match="integer"):
        sr.randint(sr.key(0), (2,), 0, 5, "float32")


@pytest.mark.parametrize("draw", [
    lambda k: stablejit.random.bits(k, (8,)),
    lambda k: stablejit.random.normal(k, (4, 3)),
    lambda k: stablejit.random.split(k, 3),
    lambda k: stablejit.vmap(lambda kk: stablejit.random.uniform(kk, (2,)))(
        stablejit.random.split(k, 4))])
def test_threefry_rounds_are_a_loop_as_in_jax(draw):
    """Unrolled, threefry's 20 rounds are one chain of ~100 integer ops that XLA fuses
    into one loop; the LLVM in jaxlib 0.11 took exponential time vectorising it (the
    ported advi program never finished compiling). Each draw's program holds the rounds
    in a while loop of four rounds per step, as jax's does."""
    text = stablejit.jit(draw).lower(stablejit.random.key(0)).as_text()
    assert "stablehlo.while" in text
    assert text.count("stablehlo.xor") <= 3 * 6, text.count("stablehlo.xor")
