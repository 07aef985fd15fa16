"""Transformations behave as JAX's (issue 10), each checked against jax as the oracle:
which arguments grad / value_and_grad / vjp trace, jit's static arguments by position
or keyword, custom_vjp / custom_jvp (nondiff_argnums, defjvps, rules traced only when
differentiated, closures), holomorphic gradients, checkpoint / remat, scan's unroll and
linearize."""

from __future__ import annotations

import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.compiler.autodiff import DifferentiationError

RNG = np.random.default_rng(0)


def _close(got, want, rtol=1e-5, atol=1e-6):
    g_leaves, g_tree = jax.tree.flatten(jax.tree.map(np.asarray, got))
    w_leaves, w_tree = jax.tree.flatten(jax.tree.map(np.asarray, want))
    assert len(g_leaves) == len(w_leaves), (got, want)
    for g, w in zip(g_leaves, w_leaves, strict=True):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ---- 1. grad traces only the arguments it differentiates ------------------------------------

class Settings:
    """A plain object (not a pytree) passed to a differentiated function."""

    def __init__(self, scale):
        self.scale = scale


def _branch(np_):
    def f(x, flag):
        return x ** 2 if flag else x
    return f


def _loop(np_):
    def f(x, n):
        for _ in range(n):
            x = np_.sin(x)
        return x
    return f


def _mode(np_):
    def f(x, mode):
        return np_.sin(x) if mode == "sin" else np_.cos(x)
    return f


def _none(np_):
    def f(x, y):
        return x * 2.0 if y is None else x * y
    return f


def _obj(np_):
    def f(x, s):
        return np_.sum(x * s.scale)
    return f


def _float(np_):
    def f(x, s):
        return np_.sum(np_.tanh(x) * s)
    return f


def _batch(np_):
    def loss(params, xb, yb):
        pred = np_.tanh(xb @ params["w"] + params["b"])
        return np_.mean((pred - yb) ** 2)
    return loss


def _second_arg(np_):
    def f(n, x):
        return np_.sum(x ** n)
    return f


W = RNG.standard_normal((3, 2)).astype(np.float32)
B = RNG.standard_normal((2,)).astype(np.float32)
XB = RNG.standard_normal((5, 3)).astype(np.float32)
YB = RNG.standard_normal((5, 2)).astype(np.float32)
X3 = RNG.standard_normal((3,)).astype(np.float32)

# (label, function maker, args, kwargs, argnums)
NON_DIFF = [
    ("python-if-true", _branch, (2.0, True), {}, 0),
    ("python-if-false", _branch, (2.0, False), {}, 0),
    ("range-n", _loop, (1.0, 3), {}, 0),
    ("range-n-keyword", _loop, (1.0,), {"n": 3}, 0),
    ("string", _mode, (0.5, "cos"), {}, 0),
    ("none", _none, (1.5, None), {}, 0),
    ("object", _obj, (X3, Settings(2.5)), {}, 0),
    ("python-float", _float, (X3, 3.5), {}, 0),
    ("numpy-scalar", _float, (X3, np.float32(3.5)), {}, 0),
    ("array-batch", _batch, ({"w": W, "b": B}, XB, YB), {}, 0),
    ("argnums-1-int-first", _second_arg, (3, X3), {}, 1),
    ("argnums-both-arrays", _batch, ({"w": W, "b": B}, XB, YB), {}, (0, 1)),
]


@pytest.mark.parametrize("label,make,args,kwargs,argnums", NON_DIFF,
                         ids=[c[0] for c in NON_DIFF])
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_non_differentiated_arguments_reach_f_as_jax_passes_them(label, make, args, kwargs,
                                                                 argnums, transform):
    got = getattr(stablejit, transform)(make(snp), argnums)(*args, **kwargs)
    want = getattr(jax, transform)(make(jnp), argnums)(*args, **kwargs)
    _close(got, want)


def test_python_values_are_not_traced():
    seen = []

    def f(x, n, flag, name):
        seen.append((type(n), type(flag), type(name)))
        return x * n

    stablejit.grad(f)(2.0, 3, True, "a")
    assert seen == [(int, bool, str)]


def test_nested_and_jitted_grad_with_a_loop_count():
    f_s, f_j = _loop(snp), _loop(jnp)
    _close(stablejit.grad(stablejit.grad(f_s))(1.0, 3), jax.grad(jax.grad(f_j))(1.0, 3))
    _close(stablejit.jit(stablejit.grad(f_s), static_argnums=1)(1.0, 3),
           jax.grad(f_j)(1.0, 3))


def test_vjp_passes_python_ints_through():
    f_s, f_j = _loop(snp), _loop(jnp)
    out, fn = stablejit.vjp(f_s, 1.0, 3)
    want_out, want_fn = jax.vjp(f_j, 1.0, 3)
    _close(out, want_out)
    g, g_n = fn(snp.asarray(1.0))
    _close(g, want_fn(jnp.float32(1.0))[0])
    assert float(g_n) == 0.0


# vjp(has_aux=True): (main output, aux), where the main output is any pytree, as in jax
VJP_AUX = {
    "array and array aux": lambda np_: lambda a: (np_.sin(a), a * 3),
    "array and Python float aux": lambda np_: lambda a: (np_.sin(a), 3.0),
    "tuple output, dict aux": lambda np_: lambda a: ((np_.sin(a), a[0] * a[1]),
                                                    {"q": a * 3, "r": 1.0}),
    "scalar output, None aux": lambda np_: lambda a: (np_.sum(a ** 2), None),
}


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("label", list(VJP_AUX))
def test_vjp_with_aux_matches_jax(label, jit):
    x = np.array([0.3, 0.7, 1.1, 0.45])

    def run(t, np_):
        def g(a):
            out, vjp_fn, aux = t.vjp(VJP_AUX[label](np_), a, has_aux=True)
            ct = jax.tree.map(lambda o: o * 2.0 + 1.0, out)
            return out, vjp_fn(ct), aux
        return (t.jit(g) if jit else g)(x)

    _close(run(stablejit, snp), run(jax, jnp), rtol=1e-6, atol=1e-7)


# jvp, linearize and hessian take jax's has_aux (and hessian holomorphic=); they were
# TypeErrors (unexpected keyword)
@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("transform", ["jvp", "linearize"])
@pytest.mark.parametrize("label", list(VJP_AUX))
def test_jvp_and_linearize_with_aux_match_jax(label, transform, jit):
    x = np.array([0.3, 0.7, 1.1, 0.45])
    t = np.array([1.0, 0.5, -1.0, 2.0])

    def run(tr, np_):
        f = VJP_AUX[label](np_)

        def g(a, da):
            if transform == "jvp":
                return tr.jvp(f, (a,), (da,), has_aux=True)
            out, f_jvp, aux = tr.linearize(f, a, has_aux=True)
            return out, f_jvp(da), aux
        return (tr.jit(g) if jit else g)(x, t)

    _close(run(stablejit, snp), run(jax, jnp), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("jit", [False, True])
def test_hessian_has_aux_and_holomorphic_match_jax(jit):
    x = np.array([0.3, 0.7, 1.1, 0.45])
    z = x + 1j * x[::-1]

    def run(t, np_):
        w = t.jit if jit else (lambda g: g)
        aux = w(t.hessian(lambda a: (np_.sum(np_.sin(a) * a ** 2), a * 3), has_aux=True))(x)
        holo = w(t.hessian(lambda c: np_.sum(c ** 3 * np_.exp(c)), holomorphic=True))(z)
        return aux, holo

    _close(run(stablejit, snp), run(jax, jnp), rtol=1e-6, atol=1e-7)


def test_python_if_on_a_differentiated_value_names_grad_not_jit():
    # outside jit grad follows the branch (see the test below); inside jit it cannot
    with pytest.raises(stablejit.TracerBoolConversionError) as e:
        stablejit.jit(lambda v: stablejit.grad(lambda x: x if x > 0 else -x)(v))(1.0)
    msg = str(e.value)
    assert "stablejit.grad" in msg and "stablejit.jit" not in msg
    assert "outside argnums" in msg


# boolean-mask indexing (and nonzero, compress ...) by a differentiated value outside jit:
# the number of elements is known from the values, as in jax's eager grad (it was a
# MustCompileError that said "inside jit" to a caller who used no jit)
MASKED = {
    "sum of cubes": lambda np_: lambda x: np_.sum(x[x > 0.5] ** 3),
    "mask of a gather": lambda np_: lambda x: np_.sum(x[np_.argsort(x)][np_.sort(x) > 0.4]
                                                      * x[0]),
    "2-d mask, nothing selected": lambda np_: lambda x: np_.sum(
        x.reshape(5, 1)[x.reshape(5, 1) > 9.0]) + np_.sum(x ** 2),
    "nonzero": lambda np_: lambda x: np_.sum(x[np_.nonzero(x > 0.5)] ** 3),
    "argwhere": lambda np_: lambda x: np_.sum(x[np_.argwhere(x > 0.5)[:, 0]] * x[1]),
    "flatnonzero": lambda np_: lambda x: np_.sum(x[np_.flatnonzero(x < 0.5)] ** 2),
    "where of one argument": lambda np_: lambda x: np_.sum(x[np_.where(x > 0.5)] ** 3),
    "compress": lambda np_: lambda x: np_.sum(np_.compress(x > 0.5, x) ** 2),
    "extract": lambda np_: lambda x: np_.sum(np_.extract(x > 0.5, x) * x[0]),
}


@pytest.mark.parametrize("mode", ["eager", "lazy"])
@pytest.mark.parametrize("transform", ["value_and_grad", "jacrev", "vjp"])
@pytest.mark.parametrize("label", list(MASKED))
def test_boolean_mask_on_a_differentiated_value_outside_jit_matches_jax(label, transform,
                                                                        mode):
    def run(t, np_, x):
        f = MASKED[label](np_)
        if transform == "vjp":
            out, fn = t.vjp(f, x)
            return out, fn(out * 0 + 1.5)
        return getattr(t, transform)(f)(x)

    for x in (np.array([0.3, 0.7, 1.1, 0.45, -0.2]), np.array([0.9, -0.7, 0.1, 2.0, 0.6])):
        want = run(jax, jnp, x)
        if mode == "lazy":
            with stablejit.lazy():
                got = run(stablejit, snp, x)
        else:
            got = run(stablejit, snp, x)
        _close(got, want, rtol=1e-6, atol=1e-7)
    with pytest.raises(stablejit.MustCompileError, match="inside jit cannot be compiled"):
        stablejit.jit(lambda v: run(stablejit, snp, v))(x)


# ---- 2. jit's static arguments by position or keyword ----------------------------------------

@pytest.mark.parametrize("how", ["argnames-positional", "argnames-keyword",
                                 "argnums-positional", "argnums-keyword"])
def test_jit_static_argument_by_position_or_keyword(how):
    kind, passed = how.split("-")
    spec = {"static_argnames": "n"} if kind == "argnames" else {"static_argnums": 1}
    f = stablejit.jit(_loop(snp), **spec)
    got = f(0.7, 3) if passed == "positional" else f(0.7, n=3)
    want = jax.jit(_loop(jnp), **spec)(0.7, 3)
    _close(got, want)


def test_grad_of_jit_with_a_static_argument():
    got = stablejit.grad(stablejit.jit(_loop(snp), static_argnums=1))(2.0, 3)
    _close(got, jax.grad(jax.jit(_loop(jnp), static_argnums=1))(2.0, 3))


# ---- 3. custom derivatives ---------------------------------------------------------------------

def _sin_times(np_, custom_vjp):
    """JAX docs: f(x, y) = sin(x) * y with a hand-written vjp."""
    @custom_vjp
    def f(x, y):
        return np_.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (np_.cos(x), np_.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    return lambda x, y: np_.sum(f(x, y))


def _clip_gradient(np_, custom_vjp):
    """JAX docs: clip_gradient with nondiff_argnums."""
    @partial(custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (np_.clip(g, lo, hi),)

    clip_gradient.defvjp(fwd, bwd)
    return lambda x: np_.sum(np_.sin(clip_gradient(-0.75, 0.75, x * 3.0)))


def _fixed_point(np_, custom_vjp, vjp, while_loop):
    """JAX docs: implicit differentiation of a fixed point; fwd and bwd call the custom
    function itself."""
    @partial(custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return np_.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)

        _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar),
                                   x_star_bar))
        return a_bar, np_.zeros_like(x_star)

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    return newton_sqrt


def _log1pexp(np_, custom_jvp):
    """JAX docs: a custom_jvp whose rule calls the function itself."""
    @custom_jvp
    def log1pexp(x):
        return np_.log(1.0 + np_.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = log1pexp(x)
        return ans, (1 - 1 / (1 + np_.exp(x))) * x_dot

    return log1pexp


def _defjvps(np_, custom_jvp):
    """JAX docs: one jvp rule per argument."""
    @custom_jvp
    def f(x, y):
        return np_.sin(x) * y

    f.defjvps(lambda x_dot, primal_out, x, y: np_.cos(x) * x_dot * y,
              lambda y_dot, primal_out, x, y: np_.sin(x) * y_dot)
    return f


def _jvp_nondiff(np_, custom_jvp):
    """A custom_jvp with a function as a non-differentiated argument."""
    @partial(custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        x, = primals
        t, = tangents
        return f(x), 7.0 * t

    return lambda x: app(np_.sin, x) * x


SJ = {"custom_vjp": stablejit.custom_vjp, "custom_jvp": stablejit.custom_jvp,
      "vjp": stablejit.vjp, "while_loop": stablejit.while_loop}
JX = {"custom_vjp": jax.custom_vjp, "custom_jvp": jax.custom_jvp, "vjp": jax.vjp,
      "while_loop": jax.lax.while_loop}

# (label, maker, names of the library functions it takes, args, argnums)
CUSTOM = [
    ("vjp-sin-times", _sin_times, ["custom_vjp"], (X3, X3 + 1), (0, 1)),
    ("vjp-nondiff-clip", _clip_gradient, ["custom_vjp"], (X3,), 0),
    ("vjp-fixed-point-self-reference", _fixed_point,
     ["custom_vjp", "vjp", "while_loop"], (2.0,), 0),
    ("jvp-self-reference", _log1pexp, ["custom_jvp"], (100.0,), 0),
    ("jvp-self-reference-small", _log1pexp, ["custom_jvp"], (0.3,), 0),
    ("jvp-defjvps", _defjvps, ["custom_jvp"], (1.0, 2.0), (0, 1)),
    ("jvp-nondiff", _jvp_nondiff, ["custom_jvp"], (0.4,), 0),
]


@pytest.mark.parametrize("label,make,names,args,argnums", CUSTOM, ids=[c[0] for c in CUSTOM])
@pytest.mark.parametrize("mode", ["eager", "jit", "value"])
def test_custom_rules_match_jax(label, make, names, args, argnums, mode):
    f_s = make(snp, *[SJ[n] for n in names])
    f_j = make(jnp, *[JX[n] for n in names])
    if mode == "value":
        _close(stablejit.jit(f_s)(*args), f_j(*args))
        return
    g = stablejit.grad(f_s, argnums)
    got = (stablejit.jit(g) if mode == "jit" else g)(*args)
    _close(got, jax.grad(f_j, argnums)(*args), rtol=1e-4)


def test_custom_jvp_second_order_and_forward_mode():
    f_s, f_j = _log1pexp(snp, stablejit.custom_jvp), _log1pexp(jnp, jax.custom_jvp)
    _close(stablejit.grad(stablejit.grad(f_s))(0.3), jax.grad(jax.grad(f_j))(0.3))
    g_s, g_j = _defjvps(snp, stablejit.custom_jvp), _defjvps(jnp, jax.custom_jvp)
    _close(stablejit.jvp(g_s, (1.0, 2.0), (0.5, -1.0)), jax.jvp(g_j, (1.0, 2.0), (0.5, -1.0)))


def test_custom_rules_are_traced_only_when_differentiated():
    calls = []

    @stablejit.custom_vjp
    def f(x):
        return snp.sin(x)

    def fwd(x):
        calls.append("fwd")
        return f(x), snp.cos(x)

    def bwd(c, g):
        calls.append("bwd")
        return (c * g,)

    f.defvjp(fwd, bwd)

    @stablejit.custom_jvp
    def h(x):
        return snp.exp(x)

    @h.defjvp
    def h_jvp(primals, tangents):
        calls.append("jvp")
        return h(primals[0]), h(primals[0]) * tangents[0]

    stablejit.jit(lambda x: f(x) + h(x))(1.0)
    assert calls == []
    _close(stablejit.grad(lambda x: f(x) + h(x))(1.0), np.cos(1.0) + np.exp(1.0))
    assert sorted(calls) == ["bwd", "fwd", "jvp"]


@pytest.mark.parametrize("kind", ["custom_vjp", "custom_jvp"])
def test_differentiating_a_closed_over_value_is_a_clear_error(kind):
    def outer(y):
        if kind == "custom_vjp":
            @stablejit.custom_vjp
            def f(x):
                return x * y
            f.defvjp(lambda x: (x * y, None), lambda _, g: (g * 2.0,))
        else:
            @stablejit.custom_jvp
            def f(x):
                return x * y
            f.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 2.0))
        return f(2.0)

    with pytest.raises(DifferentiationError, match="closes over.*as an argument"):
        stablejit.grad(outer)(3.0)
    # jax refuses too (with an UnexpectedTracerError)
    with pytest.raises(Exception):  # noqa: B017
        jax.grad(lambda y: _jax_closure(kind, y))(3.0)


# a custom_vjp fwd whose primal output does not have f's shapes: refused, as jax mostly
# refuses it (it was silently ignored: the value came from f, the derivative from bwd)
BAD_FWD = {
    "a scalar for a vector": lambda np_, f: lambda x: (np_.sum(x), None),
    "a slice": lambda np_, f: lambda x: (f(x)[:2], None),
    "one leaf of two of another shape": lambda np_, f: lambda x: ((x, x[None]), None),
}


@pytest.mark.parametrize("label", list(BAD_FWD))
def test_custom_vjp_fwd_returning_another_shape_is_refused(label):
    two = label.startswith("one leaf")

    def make(t, np_):
        f = t.custom_vjp(lambda x: (x * 2, x * 3) if two else x * 2)
        f.defvjp(BAD_FWD[label](np_, f), lambda _, g: ((g[0] if two else g) * 2,))
        return lambda x: np_.sum(f(x)[1] if two else f(x))

    x = np.ones(3)
    with pytest.raises(ValueError, match="custom_vjp fwd of .* returns an output of shape"):
        stablejit.grad(make(stablejit, snp))(x)
    with pytest.raises(ValueError, match="custom_vjp fwd of .* returns an output of shape"):
        stablejit.jit(stablejit.grad(make(stablejit, snp)))(x)
    if not two:  # (jax does not look at an output leaf that is not differentiated)
        with pytest.raises((TypeError, ValueError)):
            jax.grad(make(jax, jnp))(x)


def _jax_closure(kind, y):
    if kind == "custom_vjp":
        f = jax.custom_vjp(lambda x: x * y)
        f.defvjp(lambda x: (x * y, None), lambda _, g: (g * 2.0,))
    else:
        f = jax.custom_jvp(lambda x: x * y)
        f.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 2.0))
    return f(2.0)


def test_closing_over_a_value_not_differentiated_is_fine():
    c = snp.asarray(X3)

    @stablejit.custom_vjp
    def f(x):
        return x * c

    f.defvjp(lambda x: (x * c, None), lambda _, g: (g * c,))
    _close(stablejit.grad(lambda x: snp.sum(f(x)))(X3), X3)


# ---- 4. holomorphic gradients ------------------------------------------------------------------

HOLOMORPHIC = [
    ("square", lambda np_: lambda z: z ** 2),
    ("sin-times-z", lambda np_: lambda z: np_.sin(z) * z),
    ("exp-over", lambda np_: lambda z: np_.exp(z) / (1.0 + z)),
    ("log-cosh", lambda np_: lambda z: np_.log(np_.cosh(z))),
]


@pytest.mark.parametrize("label,make", HOLOMORPHIC, ids=[c[0] for c in HOLOMORPHIC])
@pytest.mark.parametrize("z", [1.0 + 2.0j, np.complex64(-0.5 + 0.25j), np.complex128(0.3 - 1j)])
def test_holomorphic_grad_matches_jax(label, make, z):
    _close(stablejit.grad(make(snp), holomorphic=True)(z),
           jax.grad(make(jnp), holomorphic=True)(z), rtol=1e-5)
    _close(stablejit.value_and_grad(make(snp), holomorphic=True)(z),
           jax.value_and_grad(make(jnp), holomorphic=True)(z), rtol=1e-5)


def test_holomorphic_errors_as_jax():
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with a complex"):
        stablejit.grad(lambda z: z * 2, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="pass holomorphic=True"):
        stablejit.grad(lambda z: z * 2)(1.0 + 1j)


# ---- 5. checkpoint / remat --------------------------------------------------------------------

M = RNG.standard_normal((8, 8)).astype(np.float32) / 3


def _ck_layers(np_, checkpoint):
    def blk(x):
        for _ in range(3):
            x = np_.tanh(x @ M)
        return x
    b = checkpoint(blk)
    return lambda x: np_.sum(b(b(x)) ** 2)


def _ck_static(np_, checkpoint):
    def f(x, n):
        for _ in range(n):
            x = np_.sin(x) * x
        return x
    g = checkpoint(f, static_argnums=(1,))
    return lambda x: np_.sum(g(x, 3))


def _ck_pytree_closure(np_, checkpoint):
    c = np_.asarray(X3)

    @checkpoint
    def f(p):
        return np_.sin(p["a"] * c) + np_.cos(p["b"])
    return lambda p: np_.sum(f(p) * f(p))


CHECKPOINT = [
    ("layers", _ck_layers, np.ones((4, 8), np.float32)),
    ("static-argnums", _ck_static, X3),
    ("pytree-and-closure", _ck_pytree_closure, {"a": X3, "b": X3 * 2}),
]


@pytest.mark.parametrize("label,make,x", CHECKPOINT, ids=[c[0] for c in CHECKPOINT])
@pytest.mark.parametrize("name", ["checkpoint", "remat"])
def test_checkpoint_gradients_match_jax(label, make, x, name):
    f_s, f_j = make(snp, getattr(stablejit, name)), make(jnp, getattr(jax, name))
    want = jax.grad(f_j)(x)
    _close(stablejit.grad(f_s)(x), want, rtol=1e-5)
    _close(stablejit.jit(stablejit.grad(f_s))(x), want, rtol=1e-5)
    _close(stablejit.jvp(f_s, (x,), (x,)), jax.jvp(f_j, (x,), (x,)), rtol=1e-5)


def _chain(np_, checkpoint, w):
    def blk(x):
        for _ in range(5):
            x = np_.tanh(x @ w)
        return x
    b = checkpoint(blk) if checkpoint else blk

    def f(x):
        for _ in range(4):
            x = b(x)
        return np_.sum(x)
    return f


def test_checkpoint_recomputes_the_forward_in_the_backward_pass_as_jax_does():
    """The backward pass computes each checkpointed block again, behind an optimization
    barrier: the op counts in our StableHLO and in XLA's optimised HLO are jax's."""
    w = RNG.standard_normal((64, 64)).astype(np.float32) / 30
    x = np.ones((64, 64), np.float32)

    def counts(lowered, compiled_text):
        return (len(re.findall(r"stablehlo.tanh[\"(\s]", lowered)),
                len(re.findall(r"stablehlo.optimization_barrier[\"(\s]", lowered)),
                len(re.findall(r" tanh\(", compiled_text)))

    got, want = {}, {}
    for ck in (False, True):
        lo = stablejit.jit(stablejit.grad(_chain(snp, stablejit.checkpoint if ck else None,
                                                 snp.asarray(w)))).lower(x)
        got[ck] = counts(lo.as_text(), lo.compile().as_text())
        jl = jax.jit(jax.grad(_chain(jnp, jax.checkpoint if ck else None, w))).lower(x)
        want[ck] = counts(jl.as_text(), jl.compile().as_text())
    # (barriers: those checkpoint adds, beyond the ones every program of ours has in
    # front of a constant operand of float arithmetic, compiler/passes/hold.py)
    def checkpointed(c):
        return c[True][0], c[True][1] - c[False][1], c[True][2]

    assert got[False][0::2] == want[False][0::2] and got[False][0] == 20 and want[False][1] == 0
    assert checkpointed(got) == checkpointed(want) and checkpointed(got)[:2] == (35, 4)
    # (35 tanh: 15 live + 20 recomputed)


def test_checkpoint_outside_any_trace_just_runs():
    f = stablejit.checkpoint(lambda x, n: snp.sin(x) * n, static_argnums=1)
    _close(f(snp.asarray(X3), 2), np.sin(X3) * 2)


# ---- 6. scan unroll and linearize -------------------------------------------------------------

def _step(np_):
    def f(c, x):
        c = c * 0.9 + np_.sin(x["a"]) * x["b"]
        return c, (c * x["a"], x["b"] + 1)
    return f


XS = {"a": RNG.standard_normal((7, 3)).astype(np.float32),
      "b": RNG.standard_normal((7, 3)).astype(np.float32)}


@pytest.mark.parametrize("unroll", [1, 2, 3, 7, 10, True, False, 0])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unroll_gives_the_rolled_results(unroll, reverse):
    """Bit for bit while a loop remains; fully unrolled, XLA fuses across steps and may
    round differently in the last place (jax's full unroll does too)."""
    init = np.zeros(3, np.float32)
    rolled = stablejit.scan(_step(snp), init, XS, reverse=reverse)
    got = stablejit.scan(_step(snp), init, XS, reverse=reverse, unroll=unroll)
    full = unroll is True or unroll >= 7
    for a, b in zip(jax.tree.leaves(jax.tree.map(np.asarray, got)),
                    jax.tree.leaves(jax.tree.map(np.asarray, rolled)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6 if full else 0, atol=0)
    _close(got, jax.lax.scan(_step(jnp), init, XS, reverse=reverse, unroll=unroll))

    def loss(np_, scan):
        def f(c0, xs):
            c, (ys, _) = scan(_step(np_), c0, xs, reverse=reverse, unroll=unroll)
            return np_.sum(c) + np_.sum(ys ** 2)
        return f

    _close(stablejit.jit(stablejit.grad(loss(snp, stablejit.scan), (0, 1)))(init + 0.5, XS),
           jax.grad(loss(jnp, jax.lax.scan), (0, 1))(init + 0.5, XS), rtol=1e-4)


@pytest.mark.parametrize("unroll", [None, 1, 2, 3, 5, 9, True, False])
@pytest.mark.parametrize("bounds", [(0, 5), (2, 7), (3, 3), (4, 1)])
def test_fori_loop_unroll_matches_jax(unroll, bounds):
    """fori_loop takes jax's keyword-only unroll= (with bounds known while tracing), with
    the rolled loop's values and gradients."""
    x = RNG.standard_normal(3).astype(np.float32)

    def f(np_, fori):
        return lambda v: np_.sum(fori(*bounds, lambda i, c: c * np_.sin(c) + i, v,
                                      unroll=unroll) ** 2)

    got, want = f(snp, stablejit.fori_loop), f(jnp, jax.lax.fori_loop)
    _close(got(x), want(x))
    _close(stablejit.jit(stablejit.grad(got))(x), jax.grad(want)(x), rtol=1e-4)


def test_fori_loop_unroll_with_traced_bounds_is_refused_as_in_jax():
    body = lambda i, c: c + i  # noqa: E731
    with pytest.raises(ValueError, match="unroll=2 needs bounds known while tracing"):
        stablejit.jit(lambda n: stablejit.fori_loop(0, n, body, 0.0, unroll=2))(3)
    with pytest.raises(ValueError):
        jax.jit(lambda n: jax.lax.fori_loop(0, n, body, 0.0, unroll=2))(3)
    # unroll=1 (or False) with traced bounds is the rolled loop, as in jax
    assert float(stablejit.jit(lambda n: stablejit.fori_loop(0, n, body, 0.0, unroll=1))(4)) \
        == 6.0


def test_scan_unroll_is_checked_as_jax():
    with pytest.raises(ValueError, match="unroll"):
        stablejit.scan(_step(snp), np.zeros(3, np.float32), XS, unroll=-1)


def test_linearize_matches_jax():
    def f(np_):
        return lambda x, y: np_.sin(x) * y + np_.exp(x * y)

    x, y = X3, X3 * 0.5
    out, f_jvp = stablejit.linearize(f(snp), x, y)
    want_out, want_jvp = jax.linearize(f(jnp), x, y)
    _close(out, want_out)
    for tx, ty in [(np.ones(3, np.float32), np.zeros(3, np.float32)), (x, -y)]:
        _close(f_jvp(tx, ty), want_jvp(tx, ty))


# ---- vmap of the calls above ----------------------------------------------------------------

XV = RNG.standard_normal((4, 3)).astype(np.float32)

VMAPPED = [
    ("custom_vjp", lambda np_, lib: _sin_times(np_, lib.custom_vjp), (XV, XV * 0.5)),
    ("custom_vjp-one-batched", lambda np_, lib: _sin_times(np_, lib.custom_vjp),
     (XV, X3)),
    ("custom_jvp", lambda np_, lib: lambda x: np_.sum(_log1pexp(np_, lib.custom_jvp)(x)),
     (XV,)),
    ("defjvps", lambda np_, lib: lambda x, y: np_.sum(_defjvps(np_, lib.custom_jvp)(x, y)),
     (XV, XV + 1)),
    ("checkpoint", lambda np_, lib: _ck_static(np_, lib.checkpoint), (XV,)),
]


@pytest.mark.parametrize("label,make,args", VMAPPED, ids=[c[0] for c in VMAPPED])
def test_vmap_of_custom_rules_and_checkpoint_matches_jax(label, make, args):
    f_s, f_j = make(snp, stablejit), make(jnp, jax)
    in_axes = tuple(0 if a.ndim == 2 else None for a in args)
    argnums = tuple(range(len(args)))
    _close(stablejit.vmap(f_s, in_axes)(*args), jax.vmap(f_j, in_axes)(*args))
    _close(stablejit.vmap(stablejit.grad(f_s, argnums), in_axes)(*args),
           jax.vmap(jax.grad(f_j, argnums), in_axes)(*args), rtol=1e-4)
    # the gradient of a vmapped sum: unbatched arguments collect every example's part
    _close(stablejit.grad(lambda *a: snp.sum(stablejit.vmap(f_s, in_axes)(*a)), argnums)(*args),
           jax.grad(lambda *a: jnp.sum(jax.vmap(f_j, in_axes)(*a)), argnums)(*args), rtol=1e-4)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_holomorphic_jacobians_match_jax(name):
    z = (XV[0] + 1j * XV[1]).astype(np.complex64)

    def f(np_):
        return lambda z: np_.sin(z) * z[::-1]

    _close(getattr(stablejit, name)(f(snp), holomorphic=True)(z),
           getattr(jax, name)(f(jnp), holomorphic=True)(z), rtol=1e-5)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with a complex"):
        getattr(stablejit, name)(f(snp), holomorphic=True)(XV[0])


def test_grad_follows_a_python_if_on_the_differentiated_value_outside_jit():
    """JAX's eager grad follows Python control flow on concrete values (the control-flow
    docs' f(x) = 3x^2 if x < 3 else -4x); under jit it is the usual error."""
    def f(x):
        if x < 3:
            return 3. * x ** 2
        return -4 * x

    for x in (2.0, 4.0):
        assert float(stablejit.grad(f)(x)) == float(jax.grad(f)(x))
    with pytest.raises(stablejit.TracerBoolConversionError):
        stablejit.jit(stablejit.grad(f))(2.0)
