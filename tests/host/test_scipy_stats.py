"""stablejit.scipy.stats against jax.scipy.stats: every function jax has for each of the
distributions, over arguments with special values (nan, +-inf, outside the support),
under jit, eagerly on XLA and on the reference backend; gradients against jax.grad."""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats
import stablejit
import stablejit.numpy as snp
import stablejit.scipy.stats
import stablejit.scipy.stats.norm
from stablejit.scipy import stats
from stablejit.scipy.stats import norm

from tests.support.runners import check_three_ways

nan, inf = np.nan, np.inf
f32 = np.float32
N = 12  # one length for every argument: eager runs share compiled ops


def _vec(values) -> np.ndarray:
    return np.resize(np.array(values, f32), N)


X = _vec([nan, -inf, -10, -2, -0.5, 0, 0.5, 1, 2, 10, inf, 3.3])
Q = _vec([nan, -0.1, 0, 1e-6, 0.1, 0.3, 0.5, 0.9, 0.999, 1, 1.1, 0.7])
POS = _vec([0.5, 1, 2, 3.5, 10, 0.1, 1, 2, 5, 30, 1.5, 0.2])
UNIT_X = _vec([nan, -0.5, 0, 1e-3, 0.1, 0.3, 0.5, 0.7, 0.99, 1, 1.5, 0.25])
K = _vec([nan, -1, 0, 1, 2, 3, 2.5, 10, 50, 0, 1, 4])
P = _vec([0.5, 0.3, 0.0, 1.0, 0.7, 0.2, 0.5, 0.9, 0.1, -0.1, 1.2, nan])
LOC, SCALE = f32(0.5), f32(2.0)

# distribution -> {function: arguments}; every function jax has for it
TABLE = {
    "norm": {"logpdf": (X, LOC, POS), "pdf": (X, LOC, POS), "cdf": (X, LOC, POS),
             "logcdf": (X * 5, LOC, POS), "sf": (X, LOC, POS), "logsf": (X * 5, LOC, POS),
             "ppf": (Q, LOC, POS), "isf": (Q, LOC, POS)},
    "t": {"logpdf": (X, POS, LOC, SCALE), "pdf": (X, POS, LOC, SCALE)},
    "gamma": {f: (X, POS, LOC, SCALE) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                                 "logsf")},
    "beta": {f: (UNIT_X, POS, POS[::-1], f32(0.0), f32(1.0))
             for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")},
    "poisson": {"logpmf": (K, POS), "pmf": (K, POS), "cdf": (K, POS),
                "entropy": (_vec([0, 0.5, 3, 9.9, 10, 30, 99, 100, 300, 1e-3, 2, 50]),)},
    "bernoulli": {"logpmf": (K, P), "pmf": (K, P), "cdf": (K, P), "ppf": (Q, P)},
    "uniform": {f: (X, LOC, POS) for f in ("logpdf", "pdf", "cdf")} | {"ppf": (Q, LOC, POS)},
    "laplace": {f: (X, LOC, POS) for f in ("logpdf", "pdf", "cdf")},
    "logistic": {"logpdf": (X, LOC, POS), "pdf": (X, LOC, POS), "cdf": (X, LOC, POS),
                 "sf": (X, LOC, POS), "ppf": (Q, LOC, POS), "isf": (Q, LOC, POS)},
    "expon": {f: (X, LOC, POS) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")}
    | {"ppf": (Q, LOC, POS)},
    "chi2": {f: (X, POS, LOC, SCALE) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                                "logsf")},
    "geom": {"logpmf": (K, P), "pmf": (K, P)},
    "pareto": {f: (X, POS, LOC, SCALE) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                                  "logsf")} | {"ppf": (Q, POS, LOC, SCALE)},
    # cauchy's log tails at +-inf: see test_cauchy_log_tails_under_jit_are_jax_jits
    "cauchy": {f: (X, LOC, POS) for f in ("logpdf", "pdf", "cdf", "sf")}
    | {f: (np.clip(X, -10, 10), LOC, POS) for f in ("logcdf", "logsf")}
    | {"ppf": (Q, LOC, POS), "isf": (Q, LOC, POS)},
}
TOL = {("gamma", "logsf"): 1e-4, ("gamma", "sf"): 1e-4, ("beta", "logsf"): 1e-4,
       ("beta", "logcdf"): 1e-4, ("poisson", "entropy"): 1e-4,
       ("chi2", "sf"): 1e-4,
       ("chi2", "logsf"): 1e-4}

rng = np.random.default_rng(0)
_M = rng.standard_normal((3, 3)).astype(f32)
COV = _M @ _M.T + np.eye(3, dtype=f32)
MVN_X = rng.standard_normal((5, 3)).astype(f32)
MEAN = np.array([0.5, -1, 2], f32)


def _jax(fn):
    def run(*args):
        return jax.tree.map(np.asarray, fn(*(jnp.asarray(a) for a in args)))
    return run


# Where jax loses the tails, SciPy (in float64, rounded to float32) is the reference:
# cauchy's tan(pi (q - 1/2)) is -2.3e7 at q = 1 in float32 (inf), norm.isf through
# ppf(1 - q) rounds a small q away
SCIPY_REFERENCE = {("cauchy", "ppf"), ("cauchy", "isf"), ("norm", "isf")}


def _scipy(dist: str, name: str):
    def run(*args):
        with np.errstate(all="ignore"):
            out = getattr(getattr(scipy.stats, dist), name)(
                *(np.asarray(a, np.float64) for a in args))
        return np.asarray(out).astype(f32)
    return run


def _rows():
    for dist, fns in TABLE.items():
        for name, args in fns.items():
            ours = getattr(getattr(stats, dist), name)
            theirs = getattr(getattr(jst, dist), name)
            if (dist, name) in SCIPY_REFERENCE:
                yield pytest.param(ours, _scipy(dist, name), args, TOL.get((dist, name)),
                                   id=f"{dist}.{name}(SciPy)")
                continue
            yield pytest.param(ours, theirs, args, TOL.get((dist, name)),
                               id=f"{dist}.{name}")
    for name in ("logpdf", "pdf"):
        ours, theirs = getattr(stats.multivariate_normal, name), \
            getattr(jst.multivariate_normal, name)
        yield pytest.param(ours, theirs, (MVN_X, MEAN, COV), None,
                           id=f"multivariate_normal.{name}(matrix cov)")
        yield pytest.param(ours, theirs, (MVN_X, MEAN, f32(2.0)), None,
                           id=f"multivariate_normal.{name}(scalar cov)")
        yield pytest.param(ours, theirs, (X, f32(0.5), f32(2.0)), None,
                           id=f"multivariate_normal.{name}(scalar mean)")


@pytest.mark.parametrize("fn, jfn, args, rtol", list(_rows()))
def test_matches_jax_three_ways(fn, jfn, args, rtol):
    check_three_ways(fn, jfn if jfn.__name__ == "run" else _jax(jfn), *args, rtol=rtol,
                     atol=1e-6)


@pytest.mark.parametrize("dist", sorted(stats.__all__))
def test_each_distribution_has_the_functions_jax_has(dist):
    public = lambda m: {n for n in dir(m) if not n.startswith("_") and callable(getattr(m, n))
                        and getattr(getattr(m, n), "__module__", "").startswith(m.__name__)}
    jax_module = importlib.import_module(f"jax.scipy.stats.{dist}")
    jax_fns = {n for n in dir(jax_module) if not n.startswith("_")
               and callable(getattr(jax_module, n))}
    assert public(getattr(stats, dist)) == jax_fns


def test_both_import_styles_name_the_same_module():
    assert stablejit.scipy.stats.norm is norm
    assert stablejit.scipy.stats.norm.logpdf is norm.logpdf


def test_cauchy_log_tails_under_jit_are_jax_jits():
    """Under jit XLA contracts 0.5 + atan(x) / pi into a fused multiply-add, so
    logcdf(-inf) is log(6.3e-9), not -inf: the same number jax.jit gives."""
    x = np.array([-inf, inf, -1e30], f32)
    for name in ("logcdf", "logsf"):
        ours = stablejit.jit(getattr(stats.cauchy, name))(x).numpy()
        np.testing.assert_allclose(ours, np.asarray(jax.jit(getattr(jst.cauchy, name))(x)),
                                   rtol=1e-6)


def test_python_scalars_and_defaults():
    np.testing.assert_allclose(norm.logpdf(1.0).numpy(), np.asarray(jst.norm.logpdf(1.0)),
                               rtol=1e-6)
    assert stats.poisson.logpmf(3, 2.0).dtype == snp.float32


GRAD_CASES = [
    ("norm.logpdf", lambda m: m.norm.logpdf, (X[2:10], f32(0.5), POS[2:10])),
    ("norm.logcdf", lambda m: m.norm.logcdf, (X[2:10] * 5, f32(0.5), POS[2:10])),
    ("t.logpdf", lambda m: m.t.logpdf, (X[2:10], POS[2:10])),
    ("gamma.logpdf", lambda m: m.gamma.logpdf, (POS[2:10], POS[:8])),
    ("gamma.cdf", lambda m: m.gamma.cdf, (POS[2:10], POS[:8])),
    ("beta.logpdf", lambda m: m.beta.logpdf, (UNIT_X[4:9], POS[4:9], POS[:5])),
    ("poisson.logpmf", lambda m: lambda mu: m.poisson.logpmf(K[2:10], mu), (POS[2:10],)),
    ("multivariate_normal.logpdf", lambda m: m.multivariate_normal.logpdf,
     (MVN_X, MEAN, COV)),
]


@pytest.mark.parametrize("name, get, args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradient_matches_jax(name, get, args):
    argnums = tuple(range(len(args)))
    ours = stablejit.jit(stablejit.grad(lambda *xs: snp.sum(get(stats)(*xs)),
                                        argnums=argnums))(*args)
    theirs = jax.grad(lambda *xs: jnp.sum(get(jst)(*xs)), argnums=argnums)(*args)
    for i, (g, e) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name}, argument {i}")
