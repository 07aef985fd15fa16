"""sort/argsort (stable, descending, NaN last), top_k, cumulative ops, searchsorted,
take/take_along_axis/put_along_axis and nonzero(size=) three ways against NumPy (jax where
it differs on purpose), plus the sort/top_k/scan vjps against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.compare import assert_close
from tests.support.runners import check_three_ways, run_three_ways

rng = np.random.default_rng(2)
F = rng.normal(size=(4, 7)).astype(np.float32)
F[1, 2] = np.nan
F[2, 3] = -0.0
F[2, 4] = 0.0
TIES = rng.integers(0, 3, (3, 8)).astype(np.int32)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort_match_numpy(axis):
    check_three_ways(lambda x: snp.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), F)
    check_three_ways(lambda x: snp.argsort(x, axis=axis),
                     lambda x: np.argsort(x, axis=axis, kind="stable"), TIES)


def test_descending_is_stable_and_puts_nans_first_like_jax():
    for x in (F, TIES):
        check_three_ways(lambda x: snp.argsort(x, axis=1, descending=True),
                         lambda x: np.asarray(jnp.argsort(x, axis=1, descending=True)), x,
                         check_dtype=False)  # jax: int32 without x64
        check_three_ways(lambda x: snp.sort(x, axis=1, descending=True),
                         lambda x: np.asarray(jnp.sort(x, axis=1, descending=True)), x)


def test_top_k_matches_jax():
    check_three_ways(lambda x: list(snp.top_k(x, 3)),
                     lambda x: [np.asarray(a) for a in jax.lax.top_k(x, 3)], F)
    check_three_ways(lambda x: list(snp.top_k(x, 4)),
                     lambda x: [np.asarray(a) for a in jax.lax.top_k(x, 4)], TIES)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_numpy_scans(name):
    x = rng.uniform(0.5, 1.5, (3, 6)).astype(np.float32)
    check_three_ways(lambda x: getattr(snp, name)(x, axis=1), lambda x: getattr(np, name)(
        x, axis=1), x)
    check_three_ways(lambda x: getattr(snp, name)(x), lambda x: getattr(np, name)(x), TIES)


def test_array_api_cumulative_with_include_initial():
    x = rng.uniform(0.5, 1.5, (3, 6)).astype(np.float32)
    for f in ("cumulative_sum", "cumulative_prod"):
        check_three_ways(lambda x, f=f: getattr(snp, f)(x, axis=0, include_initial=True),
                         lambda x, f=f: getattr(np, f)(x, axis=0, include_initial=True), x)
    check_three_ways(lambda x: snp.cumulative_sum(x, dtype=snp.float64),
                     lambda x: np.cumulative_sum(x, dtype=np.float64), TIES[0])


def test_cummax_cummin_match_jax():
    for f in ("cummax", "cummin"):
        for rev in (False, True):
            check_three_ways(lambda x, f=f, r=rev: getattr(snp, f)(x, axis=1, reverse=r),
                             lambda x, f=f, r=rev: np.asarray(getattr(jax.lax, f)(
                                 x, axis=1, reverse=r)), F)


def test_searchsorted_matches_numpy():
    a = np.sort(rng.integers(0, 10, 25)).astype(np.float32)
    a[-2:] = np.nan
    v = np.array([-1, 0, 3.5, 3, 9, 10, np.nan], np.float32)
    for side in ("left", "right"):
        check_three_ways(lambda a, v, s=side: snp.searchsorted(a, v, side=s),
                         lambda a, v, s=side: np.searchsorted(a, v, side=s), a, v)


def test_take_and_along_axis():
    idx = np.array([0, 5, -1])
    check_three_ways(lambda x: snp.take(x, idx, axis=1), lambda x: np.take(x, idx, axis=1), F)
    check_three_ways(lambda x: snp.take(x, np.array([[1, 20]]), mode="clip"),
                     lambda x: np.take(x, [[1, 20]], mode="clip"), F)
    check_three_ways(lambda x: snp.take(x, np.array([-9, 30]), mode="wrap"),
                     lambda x: np.take(x, [-9, 30], mode="wrap"), F)
    order = np.argsort(F, axis=1)
    check_three_ways(lambda x, i: snp.take_along_axis(x, i, axis=1),
                     lambda x, i: np.take_along_axis(x, i, axis=1), F, order)
    want = F.copy()
    np.put_along_axis(want, order[:, :2], 9.0, axis=1)
    check_three_ways(lambda x, i: snp.put_along_axis(x, i, 9.0, axis=1, inplace=False),
                     lambda x, i: want,
                     F, order[:, :2])
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 7"):
        snp.take(snp.asarray(F), [9], axis=1)


def test_take_with_tensor_indices_fills_like_jax():
    idx = np.array([1, 100, -1])
    check_three_ways(lambda x, i: snp.take(x, i, axis=1),
                     lambda x, i: np.asarray(jnp.take(x, i, axis=1)), F, idx)


def test_nonzero_argwhere_with_size():
    x = (F > 0.2)
    check_three_ways(lambda x: list(snp.nonzero(x, size=20, fill_value=-1)),
                     lambda x: list(np.asarray(a) for a in jnp.nonzero(x, size=20,
                                                                       fill_value=-1)), x,
                     check_dtype=False)  # jax gives int32 without x64
    check_three_ways(lambda x: snp.argwhere(x, size=3), lambda x: np.argwhere(x)[:3], x)
    check_three_ways(lambda x: list(snp.nonzero(x)), lambda x: list(np.nonzero(x)), x,
                     paths=("eager", "reference"))
    with pytest.raises(stablejit.MustCompileError, match="size=N"):
        stablejit.jit(snp.nonzero)(snp.asarray(x))


def _grad_check(f_sj, f_jax, x):
    g = stablejit.grad(f_sj)(snp.asarray(x))
    assert_close(np.asarray(g), np.asarray(jax.grad(f_jax)(x)), rtol=1e-4, atol=1e-5)


W = rng.normal(size=(4, 7)).astype(np.float32)


def test_vjps_of_sort_top_k_and_scans_match_jax():
    x = rng.normal(size=(4, 7)).astype(np.float32)  # no ties
    x[1, 3] = 0.0  # cumprod through a zero
    w = snp.asarray(W)
    for sj, jx in [
        (lambda x: snp.sum(snp.sort(x, axis=0) * w), lambda x: jnp.sum(jnp.sort(x, 0) * W)),
        (lambda x: snp.sum(snp.sort(x, axis=1, descending=True) * w),
         lambda x: jnp.sum(jnp.sort(x, 1, descending=True) * W)),
        (lambda x: snp.sum(snp.top_k(x, 3)[0] * w[:, :3]),
         lambda x: jnp.sum(jax.lax.top_k(x, 3)[0] * W[:, :3])),
        (lambda x: snp.sum(snp.cumsum(x, axis=1) * w), lambda x: jnp.sum(jnp.cumsum(x, 1) * W)),
        (lambda x: snp.sum(snp.cumprod(x, axis=1) * w),
         lambda x: jnp.sum(jnp.cumprod(x, 1) * W)),
        (lambda x: snp.sum(snp.cumprod(x, axis=1, reverse=True) * w),
         lambda x: jnp.sum(jax.lax.cumprod(x, 1, reverse=True) * W)),
        (lambda x: snp.sum(snp.cummax(x, axis=1) * w),
         lambda x: jnp.sum(jax.lax.cummax(x, 1) * W)),
        (lambda x: snp.sum(snp.cummin(x, axis=0, reverse=True) * w),
         lambda x: jnp.sum(jax.lax.cummin(x, 0, reverse=True) * W)),
    ]:
        _grad_check(sj, jx, x)


def test_a_running_or_top_k_extreme_of_complex_numbers_is_a_clear_error():
    # (sort and argsort order complex numbers lexicographically: test_sorting_complex.py)
    for f in (lambda x: snp.top_k(x, 1), snp.cummax):
        with pytest.raises(TypeError, match="no order"):
            f(snp.asarray(np.array([1j, 2], np.complex64)))


@pytest.mark.parametrize("kind", [None, "quicksort", "QuickSort", "q", "mergesort", "heap",
                                  "stable", "weird", "", 5])
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort_kinds_are_numpys(name, kind):
    """NumPy's kinds (read by their first letter) are accepted; another kind is NumPy's
    error, not silently ignored."""
    x = np.asarray([3.0, 1.0, 2.0])
    try:
        want = getattr(np, name)(x, kind=kind)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e), match="kind"):
            getattr(snp, name)(snp.asarray(x), kind=kind)
        return
    np.testing.assert_array_equal(np.asarray(getattr(snp, name)(snp.asarray(x), kind=kind)),
                                  want)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_sorts_with_nans_agree_on_every_backend(dtype):
    """The reference backend ranked keys with np.unique, whose sort misorders bfloat16
    around a NaN (ml_dtypes' comparisons): argsort of a bfloat16 column without a NaN
    came back wrong when another column held one. Eager, jit and reference against
    NumPy's order of the same values in float32."""
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    pool = np.array([np.nan, -0.0, 0.0, 1, -1, 2.5, -3, np.inf, -np.inf, 0.5, -1.84375])
    for _ in range(10):
        x = rng.choice(pool, size=(5, 7)).astype(np_dtype)
        wide = x.astype(np.float32)
        for axis in (0, 1):
            want = {"argsort": np.argsort(wide, axis=axis, kind="stable"),
                    "sort": np.sort(wide, axis=axis)}
            for name, f in (("argsort", lambda t, a=axis: snp.argsort(t, axis=a, stable=True)),
                            ("sort", lambda t, a=axis: snp.sort(t, axis=a))):
                got = run_three_ways(f, x)
                for path, g in got.items():
                    np.testing.assert_array_equal(np.asarray(g).astype(np.float32),
                                                  want[name], err_msg=f"{name} {path}")
