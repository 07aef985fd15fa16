"""Gradients at special inputs (NaN, infinities, signed zeros, kinks, ties) against
jax.grad, for every differentiable elementwise function of stablejit.numpy and every
activation stablejit.nn shares with jax.nn, eagerly and under jit.

The kind of bug: a derivative rule written as `where(x > y, ...)` (or a select on a
comparison) takes a finite branch when the comparison with NaN is false, so the gradient
at a NaN input is finite (softplus'(NaN) was 0.5, relu'(NaN) 1) and a training step's
parameter update stays finite while its loss is NaN."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.experimental import enable_x64

jax = pytest.importorskip("jax")
jnp = jax.numpy

NAN, INF = float("nan"), float("inf")
# unary: the specials, and the kinks of the piecewise functions (relu6 at 6, hard_sigmoid
# at -3 and 3, hard_tanh and sparse_plus at -1 and 1)
UNARY_POINTS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -3.0, 6.0]
# binary: every pair of these, so every tie x == y (NaN with NaN included)
BINARY_POINTS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.0]

# every ufunc of NumPy with a float result that both stablejit.numpy and jax.numpy have,
# by arity (test_every_elementwise_function_is_listed keeps these lists complete)
UNARY = ["abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh",
         "arctan", "arctanh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "conj",
         "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1", "fabs",
         "floor", "log", "log10", "log1p", "log2", "negative", "positive", "rad2deg",
         "radians", "reciprocal", "rint", "sign", "sin", "sinh", "sqrt", "square", "tan",
         "tanh", "trunc",
         # elementwise, but not ufuncs in NumPy
         "sinc", "round", "real", "imag", "angle", "nan_to_num", "i0"]
BINARY = ["add", "arctan2", "atan2", "copysign", "divide", "floor_divide", "fmax", "fmin",
          "fmod", "heaviside", "hypot", "logaddexp", "logaddexp2", "maximum", "minimum",
          "mod", "multiply", "pow", "power", "remainder", "subtract", "true_divide",
          # elementwise, but not ufuncs in NumPy
          "float_power"]
NOT_ELEMENTWISE_OR_NOT_FLOAT = {
    "matmul", "matvec", "vecdot", "vecmat",  # contractions
    "ldexp",  # an integer exponent: no derivative in it (covered below with x only)
    # jax has no derivative rule for it (an error); here, a primitive without derivative,
    # its cotangent is 0
    "nextafter",
}
# the ternary ones, as functions of two floats: clip's bounds, where's branches
TERNARY = {
    "clip(x, lo=y, hi=1)": (lambda m, x, y: m.clip(x, y, 1.0)),
    "clip(x, lo=-1, hi=y)": (lambda m, x, y: m.clip(x, -1.0, y)),
    "where(x > y, x, y)": (lambda m, x, y: m.where(x > y, x, y)),
    "where(x > 0, x, y)": (lambda m, x, y: m.where(x > 0, x, y)),
    "ldexp(x, 2) + y": (lambda m, x, y: m.ldexp(x, 2) + y),
}

# the functions stablejit.nn shares with jax.nn, with their keyword variants
# (tests/host/test_nn_special_values.py keeps the list of shared names)
NN_ELEMENTWISE = ["celu", "elu", "gelu", "gelu(approximate=False)", "hard_sigmoid",
                  "hard_silu", "hard_swish", "hard_tanh", "identity", "leaky_relu",
                  "log1mexp", "log_sigmoid", "mish", "relu", "relu6", "selu", "sigmoid",
                  "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
                  "squareplus", "swish", "tanh"]
NN_ROWS = ["log_softmax", "logsumexp", "softmax", "standardize", "glu"]



def _finite(v):
    return np.isfinite(v)


# where stablejit differs from jax on purpose, each with its reason (and a row in
# docs/porting_from_jax.md): name -> predicate of (the input point, the operand, x or y)
KNOWN_DIFFERENCES = {
    # x**0 is the constant 1, so its derivative in x is 0 at x == 0 too (jax's rule for
    # an integer exponent says so; for a float 0 it computes 0 * 0**-1 = NaN)
    **{f: (lambda p, wrt: wrt == "x" and p[0] == 0 and p[1] == 0)
       for f in ("power", "pow", "float_power")},
    # logaddexp(x, +inf) is +inf whatever x is: its derivative in x is 0 (jax's rule
    # replaces the +inf result by 0 and gives exp(x)); at equal infinities each operand
    # gets 1/2, since logaddexp(x, x) = x + log 2 has slope 1 everywhere (jax: 1 each at
    # +inf, NaN at -inf; test_grad.py's test_logaddexp_derivative_at_equal_infinities)
    **{f: (lambda p, wrt: (wrt == "x" and _finite(p[0]) and p[1] == INF)
           or (wrt == "y" and _finite(p[1]) and p[0] == INF)
           or (np.isinf(p[0]) and p[0] == p[1]))
       for f in ("logaddexp", "logaddexp2")},
    # ldexp(x, n) is x * 2**n: its derivative is 2**n at 0 and at the infinities too
    # (jax's where(x == 0 | isinf(x), x, ...) gives 1 there)
    "ldexp(x, 2) + y": lambda p, wrt: wrt == "x" and (p[0] == 0 or np.isinf(p[0])),
    # acosh(-1) is NaN (outside the domain); the derivative's rsqrt((x - 1) * (x + 1))
    # meets -0 there and gives -inf. It is kept for its accuracy near 1, where jax's
    # rsqrt(x * x - 1) cancels
    **{f: (lambda p, wrt: p[0] == -1) for f in ("acosh", "arccosh")},
    # log1mexp(-inf) is NaN (outside the domain): so is its derivative here; jax's
    # rule 1 / expm1(x) gives -1
    "log1mexp": lambda p, wrt: p[0] == -INF,
}

DTYPES = [np.float32, np.float64]


def _nn(module, name):
    if name == "gelu(approximate=False)":
        return lambda x: module.gelu(x, approximate=False)
    return getattr(module, name)


def _compare(name, wrt, dtype, points, got, want, atol=0.0):
    """got against jax's want at each point (a row of the input): NaN where jax's is NaN,
    otherwise close, except the KNOWN_DIFFERENCES."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype, want.dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    bad = ~((np.isnan(got) & np.isnan(want)) | np.isclose(got, want, rtol=rtol, atol=atol))
    allowed = KNOWN_DIFFERENCES.get(name, lambda p, wrt: False)
    rows = [(p, g, w) for p, g, w, b in zip(points, got.reshape(len(points), -1),
                                            want.reshape(len(points), -1),
                                            bad.reshape(len(points), -1), strict=True)
            if b.any() and not allowed(tuple(float(v) for v in np.atleast_1d(p)), wrt[0])]
    assert not rows, f"{name} in {wrt}, {np.dtype(dtype).name}: (input, grad, jax grad) " + (
        "; ".join(f"{tuple(np.atleast_1d(p).tolist())} {g.tolist()} {w.tolist()}"
                  for p, g, w in rows))


def _grads(f, jf, args, argnums):
    """stablejit's gradient eagerly, under jit, and jax's, of sum(f(*args)): for an
    elementwise f, the derivative at each element."""
    def loss(*a):
        return snp.sum(f(*a))

    def jloss(*a):
        return jnp.sum(jf(*a))

    sargs = [snp.asarray(a) for a in args]
    eager = stablejit.grad(loss, argnums=argnums)(*sargs)
    jitted = stablejit.jit(stablejit.grad(loss, argnums=argnums))(*sargs)
    want = jax.grad(jloss, argnums=argnums)(*[jnp.asarray(a) for a in args])
    return eager, jitted, want


def _x64(dtype):
    return enable_x64() if dtype == np.float64 else _Nothing()


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _check_pair(name, f, jf, dtype):
    x, y = (np.array(v, dtype) for v in zip(*itertools.product(BINARY_POINTS, repeat=2),
                                                strict=True))
    points = list(zip(x, y, strict=True))
    with _x64(dtype), jax.enable_x64(dtype == np.float64):
        eager, jitted, want = _grads(f, jf, (x, y), (0, 1))
        for how, got in (("grad", eager), ("jit(grad)", jitted)):
            for i, wrt in enumerate("xy"):
                _compare(name, f"{wrt} ({how})", dtype, points, got[i], want[i])


def test_every_elementwise_function_is_listed():
    ufuncs = {n: getattr(np, n) for n in dir(np) if isinstance(getattr(np, n), np.ufunc)}
    floats = {n for n, u in ufuncs.items() if u.nout == 1 and hasattr(snp, n)
              and hasattr(jnp, n) and any("f" in t.split("->")[1] for t in u.types)}
    listed = set(UNARY) | set(BINARY) | NOT_ELEMENTWISE_OR_NOT_FLOAT
    assert floats <= listed, floats - listed
    for n in (*UNARY, *BINARY):
        assert hasattr(snp, n) and hasattr(jnp, n), n


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY)
def test_unary_grad_at_special_values_matches_jax(name, dtype):
    x = np.array(UNARY_POINTS, dtype)
    with _x64(dtype), jax.enable_x64(dtype == np.float64):
        eager, jitted, want = _grads(getattr(snp, name), getattr(jnp, name), (x,), 0)
        _compare(name, "x (grad)", dtype, list(x), eager, want)
        _compare(name, "x (jit(grad))", dtype, list(x), jitted, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", BINARY)
def test_binary_grad_at_special_values_and_ties_matches_jax(name, dtype):
    _check_pair(name, getattr(snp, name), getattr(jnp, name), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(TERNARY))
def test_clip_and_where_grad_at_special_values_matches_jax(name, dtype):
    g = TERNARY[name]
    _check_pair(name, lambda x, y: g(snp, x, y), lambda x, y: g(jnp, x, y), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NN_ELEMENTWISE)
def test_activation_grad_at_special_values_matches_jax(name, dtype):
    x = np.array(UNARY_POINTS, dtype)
    with _x64(dtype), jax.enable_x64(dtype == np.float64):
        eager, jitted, want = _grads(_nn(stablejit.nn, name), _nn(jax.nn, name), (x,), 0)
        _compare(name, "x (grad)", dtype, list(x), eager, want)
        _compare(name, "x (jit(grad))", dtype, list(x), jitted, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NN_ROWS)
def test_row_function_grad_at_special_values_matches_jax(name, dtype):
    """The functions over an axis, on rows (special, 0.3) and (special, special), weighted
    so the gradient of a softmax's sum (1 for any row) is not 0 for a trivial reason."""
    rows = [(p, 0.3) for p in UNARY_POINTS] + [(p, p) for p in UNARY_POINTS]
    x = np.array(rows, dtype)
    w = np.array([1.0, -2.0], dtype)

    def f(m):
        return lambda a: _nn(m, name)(a) * (w if name != "logsumexp" else 1.0)

    def logsumexp(m):
        return lambda a: m.logsumexp(a, axis=-1)

    sf, jf = ((logsumexp(stablejit.nn), logsumexp(jax.nn)) if name == "logsumexp"
              else (f(stablejit.nn), f(jax.nn)))
    if name == "glu":  # the gate: the second column
        sf, jf = (lambda a: stablejit.nn.glu(a)), (lambda a: jax.nn.glu(a))
    with _x64(dtype), jax.enable_x64(dtype == np.float64):
        eager, jitted, want = _grads(sf, jf, (x,), 0)
        # (standardize's gradient is a difference of near-equal terms: float32 rounding
        # leaves ~1e-5 absolute error on rows like (0.5, 0.3))
        atol = 1e-4 if dtype == np.float32 else 1e-14
        _compare(name, "x (grad)", dtype, rows, eager, want, atol)
        _compare(name, "x (jit(grad))", dtype, rows, jitted, want, atol)

