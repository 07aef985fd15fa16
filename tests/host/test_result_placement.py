"""Results follow their inputs: a function given tensors of the reference backend (or of
another device) returns tensors there, as a committed jax array's results stay on its
device and SciPy's array-API tests expect (scipy/_lib/tests/test_array_api.py,
test_device_dtype). The constants a library function makes inside (an identity matrix,
an arange, a Python bool predicate) must not drag the result to the default device.

Tables: every function of stablejit.scipy (special, stats, linalg) against SciPy; every
function of stablejit.numpy.linalg and .fft, and the control-flow constructs, against
the same call on the default backend; every record of the stablejit.numpy op table
(tests/host/test_op_records.py) against NumPy. Each on the reference backend and on a
second host device."""

from __future__ import annotations

import inspect
import re
import types

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
import stablejit
import stablejit.numpy as snp
from stablejit.runtime.client import PlatformError
from stablejit.scipy import linalg as slinalg
from stablejit.scipy import special, stats

from tests.host import test_op_records as records

pytestmark = pytest.mark.host_devices(2)

TARGETS = ["reference", "xla:host:1"]


def _on(target: str, a) -> stablejit.Tensor:
    return stablejit.backend_copy(snp.asarray(a), target)


def _check_placement(out, target: str, what: str) -> None:
    backend = stablejit.resolve_backend(target)
    leaves = [t for t in stablejit.tree.leaves(out) if isinstance(t, stablejit.Tensor)]
    assert leaves, f"{what}: no tensor result"
    moved = {t._backend for t in leaves} - {backend}
    assert not moved, f"{what}: inputs on {backend}, results on {moved}"


def _public_functions(module) -> list[str]:
    """The public functions of a namespace module (its __all__)."""
    return sorted(n for n in module.__all__ if callable(getattr(module, n))
                  and not inspect.isclass(getattr(module, n))
                  and not isinstance(getattr(module, n), types.ModuleType))


def _close(got, want, what: str, rtol=1e-6, atol=1e-9) -> None:
    got, want = stablejit.tree.leaves(got), stablejit.tree.leaves(want)
    assert len(got) == len(want), what
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)


# ---- scipy.special: each function with its arguments, against SciPy ------------------------

X = np.array([0.3, 0.6, 0.9])
A, B = np.array([0.5, 1.5, 2.0]), np.array([1.0, 2.0, 0.7])
SPECIAL = {
    "beta": (A, B), "betainc": (A, B, X), "betaln": (A, B), "boxcox": (A, B - 0.5),
    "boxcox1p": (X, B), "poch": (A, B), "comb": (np.array([5.0, 6.0, 7.0]),
                                                     np.array([2.0, 3.0, 1.0])),
    "digamma": (A,), "entr": (X,), "erf": (X,), "erfc": (X,), "erfinv": (X - 0.5,),
    "expit": (X,), "factorial": (np.array([3.0, 4.0, 5.0]),), "gamma": (A,),
    "gammainc": (A, X), "gammaincc": (A, X), "gammaln": (A,), "gammasgn": (X - 0.5,),
    "i0": (X,), "i0e": (X,), "i1": (X,), "i1e": (X,), "kl_div": (X, A), "log_ndtr": (X,),
    "log_softmax": (X,), "loggamma": (A,), "logit": (X,), "logsumexp": (X,),
    "multigammaln": (A + 1.0, 2), "ndtr": (X,), "ndtri": (X,),
    "polygamma": (np.array([0.0, 1.0, 2.0]), A), "rel_entr": (X, A), "softmax": (X,),
    "xlog1py": (X, A), "xlogy": (X, A), "zeta": (A + 1.0, B),
}


NO_TENSOR_INPUTS = {"bernoulli"}  # (a Python int count: its result is on the default device)


def test_the_special_table_names_every_function():
    assert sorted(SPECIAL) == sorted(set(_public_functions(special)) - NO_TENSOR_INPUTS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_functions_follow_their_inputs(target, name):
    args = SPECIAL[name]
    got = getattr(special, name)(*[_on(target, a) if isinstance(a, np.ndarray) else a
                                   for a in args])
    _check_placement(got, target, f"scipy.special.{name}")
    _close(got, getattr(scipy.special, name)(*args), name, rtol=1e-5)


# ---- scipy.stats: every method of every distribution, against SciPy -----------------------

SHAPES = {"bernoulli": (0.4,), "geom": (0.4,), "poisson": (1.5,), "beta": (1.5, 2.5),
          "gamma": (1.5,), "chi2": (3.0,), "t": (3.0,), "pareto": (2.0,)}


DISTS = sorted(n for n, v in vars(stats).items()
               if isinstance(v, types.ModuleType) and not n.startswith("_"))
STATS = [(d, m) for d in DISTS for m in _public_functions(getattr(stats, d))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dist,method", STATS, ids=[f"{d}.{m}" for d, m in STATS])
def test_stats_methods_follow_their_inputs(target, dist, method):
    if dist == "multivariate_normal":
        x, mean = np.array([[0.3, -0.2], [1.0, 0.5]]), np.array([0.1, 0.2])
        cov = np.array([[2.0, 0.5], [0.5, 1.0]])
        args = (x, mean, cov)
    else:
        # integer counts for the discrete ones (at a non-integer k jax and stablejit give
        # the formula's value where SciPy gives 0), above pareto's support start
        first = {"bernoulli": np.array([0.0, 1.0, 1.0]), "geom": np.array([1.0, 2.0, 4.0]),
                 "poisson": np.array([0.0, 2.0, 5.0]), "pareto": X + 1}.get(dist, X)
        if method in ("ppf", "isf"):
            first = X
        if method == "entropy":
            args = (X + SHAPES[dist][0],)
        else:
            args = (first, *(np.full(3, s) for s in SHAPES.get(dist, ())))
    got = getattr(getattr(stats, dist), method)(*[_on(target, a) for a in args])
    _check_placement(got, target, f"stats.{dist}.{method}")
    _close(got, getattr(getattr(scipy.stats, dist), method)(*args), f"{dist}.{method}",
           rtol=1e-5, atol=1e-12)


# ---- scipy.linalg: each function (or a pair that composes), against SciPy ------------------

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
RHS = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
LINALG = {  # name(s) -> the call, written once for both namespaces (L: the module)
    "block_diag": lambda L, a, b: L.block_diag(a, b),
    "cho_factor cho_solve": lambda L, a, b: L.cho_solve(L.cho_factor(a, lower=True), b),
    "cholesky": lambda L, a, b: L.cholesky(a),
    "det": lambda L, a, b: L.det(a),
    "eigh": lambda L, a, b: L.eigh(a, eigvals_only=True),
    "expm": lambda L, a, b: L.expm(a / 4),
    "inv": lambda L, a, b: L.inv(a),
    "lu": lambda L, a, b: L.lu(a),
    "lu_factor lu_solve": lambda L, a, b: L.lu_solve(L.lu_factor(a), b),
    "qr": lambda L, a, b: abs(L.qr(a)[1]),
    "solve": lambda L, a, b: L.solve(a, b),
    "solve_triangular": lambda L, a, b: L.solve_triangular(a, b, lower=True),
    "svd": lambda L, a, b: L.svd(a, compute_uv=False),
}


def test_the_linalg_table_names_every_function():
    assert sorted(n for k in LINALG for n in k.split()) == _public_functions(slinalg)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", sorted(LINALG))
def test_scipy_linalg_follows_its_inputs(target, names):
    call = LINALG[names]
    got = call(slinalg, _on(target, SPD), _on(target, RHS))
    _check_placement(got, target, f"scipy.linalg.{names}")
    _close(got, call(scipy.linalg, SPD, RHS), names, rtol=1e-6, atol=1e-12)


# ---- numpy.linalg, numpy.fft and control flow: against the default backend ---------------

VEC3 = np.array([1.0, -2.0, 0.5])
NUMPY_EXT = {  # functions whose arguments are not one SPD matrix (or vector) per parameter
    "linalg.cross": lambda M, a, v: M.cross(v, v[::-1]),
    "linalg.matrix_power": lambda M, a, v: M.matrix_power(a, 3),
    "linalg.multi_dot": lambda M, a, v: M.multi_dot([a, a, a]),
    "linalg.outer": lambda M, a, v: M.outer(v, v),
    "linalg.tensorinv": lambda M, a, v: M.tensorinv(a, ind=1),
    "linalg.tensorsolve": lambda M, a, v: M.tensorsolve(a, v),
    "linalg.lstsq": lambda M, a, v: M.lstsq(a, v)[0],
    "linalg.vecdot": lambda M, a, v: M.vecdot(v, v),
    "linalg.triangular_solve": lambda M, a, v: M.triangular_solve(a, a, lower=True),
    "linalg.eig": lambda M, a, v: M.eigvals(a),
    "fft.fftfreq": None,  # take a length, no tensor: they are made on the default backend
    "fft.rfftfreq": None,
}
EXT = [f"{m}.{n}" for m in ("linalg", "fft") for n in _public_functions(getattr(snp, m))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", EXT)
def test_numpy_linalg_and_fft_follow_their_inputs(target, name):
    mod, fn = name.split(".")
    call = NUMPY_EXT.get(name, lambda M, a, v: getattr(M, fn)(
        *[a] * sum(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
                   for p in inspect.signature(getattr(M, fn)).parameters.values())))
    if call is None:
        return
    M = getattr(snp, mod)
    data = (SPD, VEC3) if mod == "linalg" else (RHS, VEC3)
    got = call(M, *[_on(target, d) for d in data])
    _check_placement(got, target, name)
    _close(got, call(M, *[snp.asarray(d) for d in data]), name)


CONTROL_FLOW = {
    "while_loop": lambda s, x: s.while_loop(lambda c: c[0] < 3, lambda c: c + 1, x),
    "fori_loop": lambda s, x: s.fori_loop(0, 3, lambda i, c: c * 2, x),
    "scan": lambda s, x: s.scan(lambda c, a: (c + a, c * a), x[0], x),
    "cond": lambda s, x: s.cond(True, lambda a: a + 1, lambda a: a - 1, x),
    "switch": lambda s, x: s.switch(1, [lambda a: a, lambda a: a * 3], x),
    "lax.map": lambda s, x: s.lax.map(lambda a: a * a, x),
    "lax.associative_scan": lambda s, x: s.lax.associative_scan(snp.add, x),
    "lax.fori_loop": lambda s, x: s.lax.fori_loop(0, 2, lambda i, c: c + 1, x),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_follows_its_operands(target, name):
    got = CONTROL_FLOW[name](stablejit, _on(target, VEC3))
    _check_placement(got, target, name)
    _close(got, CONTROL_FLOW[name](stablejit, snp.asarray(VEC3)), name)


# ---- stablejit.numpy: every op record, inputs on the target, against NumPy ----------------

# records whose function makes tensors of its own (snp.asarray([...]) in the lambda):
# those are on the default backend by the user's own call, so the result may be too
_MAKES = re.compile(r"snp\.(asarray|array|arange|zeros|ones|full|eye|linspace|empty)\(|sj\.|"
                    r"_q\(")
# and the elementwise functions and reductions: one primitive each on their operands,
# placed by dispatch (the boundary skips them), so a sample of them is enough
_DISPATCHED = ("._elementwise", "._reductions")


def _placed_by_dispatch(rec) -> bool:
    f = getattr(snp, rec.name.split("(")[0], None)
    return getattr(f, "__module__", "").endswith(_DISPATCHED) and "(" not in rec.name


OP_RECORDS = [r for r in records.RECORDS if r.args and not _placed_by_dispatch(r)
              and not _MAKES.search(inspect.getsource(r.fn) if not isinstance(
                  r.fn, types.BuiltinFunctionType) else "")]


# (on the reference backend only: on a second device every eager op compiles again)
@pytest.mark.parametrize("target", ["reference"])
@pytest.mark.parametrize("rec", OP_RECORDS, ids=[r.name for r in OP_RECORDS])
def test_numpy_functions_follow_their_inputs(target, rec):
    dtype = rec.dtypes[0]
    arrays = rec.inputs(dtype)
    got = rec.fn(*[_on(target, a) for a in arrays])
    _check_placement(got, target, rec.name)
    records.compare(got, records.reference(rec, arrays), rec, dtype, f"{rec.name} on {target}")


# ---- config.update("jax_default_device", d): where new tensors go -------------------------

@pytest.mark.parametrize("spelling", ["jax_default_device", "default_device",
                                      "stablejit_default_device"])
def test_the_default_device_setting_places_new_tensors(spelling):
    second = stablejit.devices("host")[1]
    try:
        stablejit.config.update(spelling, second)
        assert stablejit.config.jax_default_device is second
        made = [snp.ones(2), snp.asarray([1.0]), stablejit.jit(lambda: snp.arange(3))()]
        assert {t._backend.name for t in made} == {"xla:host:1"}
        x = _on("reference", VEC3)  # tensors made elsewhere stay where they are
        assert (x + 1)._backend is stablejit.REFERENCE
    finally:
        stablejit.config.update(spelling, None)
    assert stablejit.config.default_device is None
    assert snp.ones(2)._backend.name == "xla:host:0"


@pytest.mark.parametrize("value,error", [(3, TypeError), ("nosuchplatform", PlatformError),
                                         (snp.ones(2), TypeError)])
def test_a_bad_default_device_is_refused_and_changes_nothing(value, error):
    with pytest.raises(error):
        stablejit.config.update("jax_default_device", value)
    assert stablejit.config.default_device is None
    assert snp.ones(2)._backend.name == "xla:host:0"


def test_a_platform_name_as_jax_spells_it():
    try:
        stablejit.config.update("jax_default_device", "cpu")
        assert snp.ones(2)._backend.name == "xla:host:0"
    finally:
        stablejit.config.update("jax_default_device", None)
