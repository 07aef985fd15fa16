"""Integer and boolean inputs to functions that compute in floating point give the
default float dtype, float32: the dtype of `asarray(1.0)`, of
`__array_namespace_info__().default_dtypes()["real floating"]` and of
`result_type(int64, 1.0)` (which is how SciPy's own array-API code picks it:
`xp_promote(..., force_floating=True)`). jax without x64 gives the same; NumPy and SciPy
give float64 (docs/numerics.md, "Type promotion", states the rule and the difference).

The table: every function of stablejit.scipy.special, every method of every
stablejit.scipy.stats distribution and the float functions of stablejit.scipy.linalg,
at int8, uint8, int32, int64 and bool inputs, against SciPy's float64 answer rounded
to float32. The namespace's own float functions (sin, mean, quantile ...) are checked at
integer inputs by the op records (tests/host/test_op_records.py)."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
import stablejit.numpy as snp
from stablejit.scipy import linalg as slinalg
from stablejit.scipy import special, stats

INT_DTYPES = ["int8", "uint8", "int32", "int64", "bool"]
EXACT = {"factorial", "comb"}  # integer functions whose float results are exact either way


def test_the_rule_is_the_namespace_s_default_float():
    default = snp.__array_namespace_info__().default_dtypes()["real floating"]
    assert snp.asarray(1.0).dtype == default == snp.float32
    for d in INT_DTYPES:
        assert snp.result_type(getattr(snp, d if d != "bool" else "bool_"), 1.0) == default


def _required(f) -> int:
    return sum(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
               for p in inspect.signature(f).parameters.values())


def _ints(dtype: str, n: int = 3) -> np.ndarray:
    # 0, 1, 2 ... in range of every dtype (bool: False, True, True)
    return (np.arange(n) % 3).astype(dtype) if dtype != "bool" else np.arange(n) > 0


def _positive(dtype: str) -> np.ndarray:
    return _ints(dtype) + 1 if dtype != "bool" else np.ones(3, bool)


def _compare(got, want, what: str):
    got = [g for g in (got if isinstance(got, tuple) else (got,))]
    want = [w for w in (want if isinstance(want, tuple) else (want,))]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == snp.float32, f"{what}: {g.dtype}, not the default float float32"
        np.testing.assert_allclose(np.asarray(g), np.asarray(w, dtype=np.float64)
                                   .astype(np.float32), rtol=2e-5, atol=1e-6,
                                   equal_nan=True, err_msg=what)


# (bernoulli takes a Python int count, not values: tests/host/test_scipy_special.py)
SPECIAL = [n for n in special.__all__ if n not in EXACT and n != "bernoulli"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", SPECIAL)
def test_special_functions_take_integers_as_the_default_float(name, dtype):
    f = getattr(special, name)
    # above the poles at 0, where jax's conventions (nan) and SciPy's (inf) differ
    positive = name in ("gamma", "digamma", "gammaln", "loggamma", "betaln", "beta", "poch",
                        "gammainc",
                        "gammaincc", "betainc", "multigammaln")
    args = [_positive(dtype) if positive else _ints(dtype) for _ in range(_required(f))]
    if name == "multigammaln":
        args = [_positive(dtype) + (1 if dtype != "bool" else 0), 1]
    got = f(*[snp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    with np.errstate(all="ignore"):
        want = getattr(scipy.special, name)(*[a.astype(np.float64) if isinstance(
            a, np.ndarray) else a for a in args])
    _compare(got, want, f"special.{name}({dtype})")


DISTS = [n for n in stats.__all__ if isinstance(getattr(stats, n), types.ModuleType)]
STATS = [(d, m) for d in DISTS for m in getattr(stats, d).__all__]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("dist,method", STATS, ids=[f"{d}.{m}" for d, m in STATS])
def test_stats_methods_take_integers_as_the_default_float(dist, method, dtype):
    f = getattr(getattr(stats, dist), method)
    if dist == "multivariate_normal":
        args = [_ints(dtype, 2), _ints(dtype, 2), (np.eye(2) * 2).astype(dtype)]
        if dtype == "bool":  # a bool covariance is the identity, singular-free
            args[2] = np.eye(2, dtype=bool)
    else:
        shape_params = [_positive(dtype) for _ in range(_required(f) - 1)]
        if dist in ("bernoulli", "geom") and shape_params:
            shape_params = [np.ones(3, dtype)]  # p = 1: an integer probability
        # q = 1 for ppf/isf (at q = 0 bernoulli's ppf is 0 in jax and here, -1 in SciPy)
        first = np.ones(3, dtype) if method in ("ppf", "isf") else _ints(dtype)
        args = [first, *shape_params]
    got = f(*[snp.asarray(a) for a in args])
    with np.errstate(all="ignore"):
        want = getattr(getattr(scipy.stats, dist), method)(*[a.astype(np.float64)
                                                             for a in args])
    _compare(got, want, f"stats.{dist}.{method}({dtype})")


SPD_INT = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]])
LINALG = {
    "cholesky": lambda L, a: L.cholesky(a, lower=True),
    "det": lambda L, a: L.det(a),
    "eigh": lambda L, a: L.eigh(a, eigvals_only=True),
    "expm": lambda L, a: L.expm(a),
    "inv": lambda L, a: L.inv(a),
    "lu": lambda L, a: L.lu(a),
    "solve": lambda L, a: L.solve(a, a[:, 0]),
    "solve_triangular": lambda L, a: L.solve_triangular(a, a[:, 0], lower=True),
    "svd": lambda L, a: L.svd(a, compute_uv=False),
}


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_scipy_linalg_takes_integers_as_the_default_float(name, dtype):
    a = SPD_INT.astype(dtype)
    got = LINALG[name](slinalg, snp.asarray(a))
    _compare(got, LINALG[name](scipy.linalg, a.astype(np.float64)),
             f"linalg.{name}({dtype})")
