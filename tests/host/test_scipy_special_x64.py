"""stablejit.scipy.special against scipy.special in float64 (x64 mode), to a few ulps:
the functions conformance/scipy_plugin.py lets SciPy call natively for the stablejit
backend (NATIVE_SPECIAL), one table of argument ranges per function, including the
ranges where a textbook formula cancels (log_ndtr's upper tail, logit near 1/2,
rel_entr and kl_div with p near q), and special values where SciPy's differ from jax's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import stablejit.numpy as snp
from stablejit.experimental import enable_x64
from stablejit.scipy import special

sc = pytest.importorskip("scipy.special")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from scipy_plugin import NATIVE_SPECIAL  # noqa: E402

RTOL = 1e-14  # a few dozen ulps of float64; SciPy's own are within a few
# XLA on the CPU flushes subnormal results to zero (erfc(26.6) is 7e-309 in SciPy, 0 here)
ATOL = np.finfo(np.float64).tiny
_rng = np.random.default_rng(20261126)
N = 2000


def _real():
    return np.concatenate([_rng.uniform(-5, 5, N), _rng.uniform(-40, 40, N),
                           -(10 ** _rng.uniform(-10, 2.5, N)), 10 ** _rng.uniform(-10, 2.5, N),
                           [0.0, -0.0, np.inf, -np.inf, np.nan]])


def _pos():
    return np.concatenate([_rng.uniform(0, 1, N), _rng.uniform(0, 20, N),
                           10 ** _rng.uniform(-10, 3, N), [0.0, np.inf, np.nan]])


def _unit():
    return np.concatenate([_rng.uniform(0, 1, N), 10 ** _rng.uniform(-15, 0, N),
                           1 - 10 ** _rng.uniform(-15, 0, N), _rng.uniform(0.3, 0.7, N),
                           [0.0, 0.5, 1.0, -0.1, 1.1, np.nan]])


def _near(p):
    """q within a few parts in 10**k of p: where p log p - p log q cancels."""
    return p * (1 + _rng.choice([-1, 1], p.size) * 10 ** _rng.uniform(-12, -1, p.size))


def _pair(a, b):
    n = min(a.size, b.size)
    return _rng.permutation(a)[:n], _rng.permutation(b)[:n]


def _cases():
    real, pos, unit = _real(), _pos(), _unit()
    p = _rng.uniform(0.01, 10, 3 * N)
    upper = _rng.uniform(0, 38, N)  # log_ndtr's upper tail: log1p(-ndtr(-x))
    return {
        "erf": (real,), "erfc": (real,), "erfinv": (_rng.uniform(-1, 1, 3 * N),),
        "ndtr": (real,), "ndtri": (unit,), "log_ndtr": (np.concatenate([real, upper]),),
        "gammasgn": (real,),
        "i0": (real,), "i0e": (real,), "i1": (real,), "i1e": (real,),
        "xlogy": _pair(real, pos),
        "xlog1py": _pair(real, np.concatenate([pos, _rng.uniform(-1, 0, N)])),
        "logit": (unit,), "expit": (real,), "entr": (real,),
        "rel_entr": (np.concatenate([p, pos]), np.concatenate([_near(p), _rng.permutation(pos)])),
        "kl_div": (np.concatenate([p, pos]), np.concatenate([_near(p), _rng.permutation(pos)])),
    }


CASES = _cases()


def test_the_table_covers_what_the_plugin_routes():
    assert set(CASES) == set(NATIVE_SPECIAL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_values_match_scipy(name):
    args = CASES[name]
    want = getattr(sc, name)(*args)
    with enable_x64():
        got = getattr(special, name)(*[snp.asarray(a) for a in args])
        assert got.dtype == snp.float64, f"{name}: {got.dtype}"
        got = np.asarray(got)
    atol = ATOL
    if name == "kl_div":
        # p log(p / q) - p + q cancels to about eps (p + q) absolute, in SciPy's (plain
        # p log(p / q)) as in ours: neither is relatively accurate for p near q
        atol = 4 * np.finfo(np.float64).eps * (np.abs(args[0]) + np.abs(args[1]))
    with np.errstate(invalid="ignore"):
        close = (got == want) | (np.isnan(got) & np.isnan(want)) | (
            np.abs(got - want) <= RTOL * np.abs(want) + atol)
    bad = np.flatnonzero(~close)[:5]
    assert not bad.size, (f"{name} in float64 against scipy.special, {np.sum(~close)} "
                          f"off: " + "; ".join(f"{[float(a[i]) for a in args]}: "
                                               f"{got[i]!r}, SciPy's {want[i]!r}"
                                               for i in bad))


@pytest.mark.parametrize("name, args, want", [
    ("log_ndtr", (7.979498631363455,), -7.346443742585716e-16),  # was 6% off
    ("log_ndtr", (20.0,), -2.7536241186061556e-89),
    ("logit", (0.500029121576726,), 0.00011648630703557989),
    ("rel_entr", (0.8473162252065003, 0.8473709857559012), -5.475877993839867e-05),
    ("kl_div", (0.8849801772088292, 0.8840928213386882), 4.4516656960702505e-07),
    ("xlog1py", (2.0, -0.41416944308353365), -1.069449366474624),  # XLA's log1p: 2.7e-14
    ("log_ndtr", (-21.0, ), -224.4657158314145),  # 3 series terms from -20: 1e-11 off
    ("gammainc", (np.inf, 1.0), 0.0),  # XLA's igamma: nan
    ("gammainc", (np.inf, np.inf), np.nan),  # XLA's igamma: 1
    ("rel_entr", (np.nan, 1.0), np.nan),  # jax's: inf
    ("kl_div", (np.inf, 0.0), np.inf),  # rel_entr - p + q: nan
])
def test_cancelling_ranges_and_special_values_in_float64(name, args, want):
    assert getattr(sc, name)(*args) == pytest.approx(want, rel=1e-15, nan_ok=True)
    with enable_x64():
        got = float(getattr(special, name)(*[snp.asarray(a, dtype=snp.float64)
                                             for a in args]))
    assert got == pytest.approx(want, rel=4e-16, nan_ok=True), name
