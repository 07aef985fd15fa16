"""Gradients of every differentiable primitive: stablejit.grad against central finite
differences in float64 and against jax.grad (the oracle) on the same function, on the
reference backend, eagerly on XLA and under jit; forward mode (jvp) against the
gradient. `test_every_differentiable_primitive_has_an_entry` fails when a primitive
with a derivative rule appears in no entry's traced IR.

Each entry is a function of float64 arrays written twice: with stablejit (`s`) and
with jax (`j`); its output leaves are reduced to one scalar with fixed random weights,
so every output element gets a distinct cotangent.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.conv as sconv
import stablejit.numpy as snp
import stablejit.scipy.special as sspecial
from stablejit import nn
from stablejit.autodiff import trace_function
from stablejit.compiler.primitive import NOT_DIFFERENTIABLE
from stablejit.compiler.registry import ALL as P
from stablejit.dispatch import bind1
from stablejit.tree import flatten

lax = jax.lax


def _i32(v):
    return snp.asarray(np.int32(v))


def _cv(f):
    """A stablejit.custom_vjp version of f whose rule is f's true derivative (so it can
    be checked against finite differences)."""
    @stablejit.custom_vjp
    def g(x):
        return f(x)

    g.defvjp(lambda x: (f(x), x), lambda x, ct: (ct * snp.cos(x),))
    return g


def _cj(f):
    @stablejit.custom_jvp
    def g(x):
        return f(x)

    @g.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * snp.cos(x)

    return g


def _spd(xp, x):
    return x @ x.T + 3.0 * xp.eye(x.shape[0])


def _sj_fori(x):
    return stablejit.fori_loop(0, 3, lambda i, c: snp.sin(c) * 1.5 + x, x)


def _jax_fori(x):
    return lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * 1.5 + x, x)


def _sj_while(x):
    return stablejit.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, snp.sin(c[1]) * 1.5 + x),
                                (_i32(0), x))[1]


def _jax_while(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5 + x),
                          (0, x))[1]


def _sj_scan(x):
    def body(c, xi):
        c = c * snp.cos(xi) + xi
        return c, c * c
    c, ys = stablejit.scan(body, x[0], x)
    return c + snp.sum(ys, axis=0)


def _jax_scan(x):
    def body(c, xi):
        c = c * jnp.cos(xi) + xi
        return c, c * c
    c, ys = lax.scan(body, x[0], x)
    return c + jnp.sum(ys, axis=0)


def _window(kind):
    init, op = {"sum": (0.0, lax.add), "max": (-jnp.inf, lax.max), "min": (jnp.inf, lax.min),
                "prod": (1.0, lax.mul)}[kind]
    sj = {"sum": sconv.window_sum, "max": sconv.window_max, "min": sconv.window_min,
          "prod": sconv.window_product}[kind]
    return (lambda x: sj(x, (2, 2), (1, 1)),
            lambda x: lax.reduce_window(x, init, op, (2, 2), (1, 1), "VALID"))


# (label, stablejit fn, jax fn, argument domains[, options]); domains: r normal, p positive,
# u in (-0.9, 0.9), g > 1.2, z normal with exact zeros. Shapes follow the colon. Options:
# forward_only (reverse mode is a clear error), raises (the derivative is deliberately
# unsupported: the NotImplementedError it raises).
ENTRIES = [
    ("neg", lambda x: -x, lambda x: -x, ["r:3,4"]),
    ("abs", snp.abs, jnp.abs, ["r:3,4"]),
    ("exp", snp.exp, jnp.exp, ["r:3,4"]),
    ("expm1", snp.expm1, jnp.expm1, ["r:5"]),
    ("log", snp.log, jnp.log, ["p:5"]),
    ("log1p", snp.log1p, jnp.log1p, ["p:5"]),
    ("sqrt", snp.sqrt, jnp.sqrt, ["p:5"]),
    ("rsqrt", lambda x: bind1(P["rsqrt"], x), lax.rsqrt, ["p:5"]),
    ("cbrt", snp.cbrt, jnp.cbrt, ["p:5"]),
    ("sin", snp.sin, jnp.sin, ["r:5"]),
    ("cos", snp.cos, jnp.cos, ["r:5"]),
    ("tan", snp.tan, jnp.tan, ["u:5"]),
    ("tanh", snp.tanh, jnp.tanh, ["r:5"]),
    ("logistic", snp.sigmoid, jax.nn.sigmoid, ["r:5"]),
    ("erf", sspecial.erf, jax.scipy.special.erf, ["r:5"]),
    ("erfc", sspecial.erfc, jax.scipy.special.erfc, ["r:5"]),
    ("gelu exact", lambda x: nn.gelu(x, approximate=False),
     lambda x: jax.nn.gelu(x, approximate=False), ["r:5"]),
    ("acos", lambda x: bind1(P["acos"], x), jnp.arccos, ["u:5"]),
    ("asin", lambda x: bind1(P["asin"], x), jnp.arcsin, ["u:5"]),
    ("atan", lambda x: bind1(P["atan"], x), jnp.arctan, ["r:5"]),
    ("acosh", lambda x: bind1(P["acosh"], x), jnp.arccosh, ["g:5"]),
    ("asinh", lambda x: bind1(P["asinh"], x), jnp.arcsinh, ["r:5"]),
    ("atanh", lambda x: bind1(P["atanh"], x), jnp.arctanh, ["u:5"]),
    ("sinh", lambda x: bind1(P["sinh"], x), jnp.sinh, ["r:5"]),
    ("cosh", lambda x: bind1(P["cosh"], x), jnp.cosh, ["r:5"]),
    ("complex parts", lambda x, y: snp.real(bind1(P["complex"], x, y) ** 2)
     + snp.imag(snp.conj(bind1(P["complex"], x, y)) * 3.0),
     lambda x, y: jnp.real(lax.complex(x, y) ** 2) + jnp.imag(jnp.conj(lax.complex(x, y)) * 3),
     ["r:4", "r:4"]),
    ("convert+complex abs", lambda x: snp.abs(x.astype(snp.complex128) * (1.0 + 2.0j)),
     lambda x: jnp.abs(x.astype(jnp.complex128) * (1.0 + 2.0j)), ["r:4"]),
    ("add/sub/mul/div", lambda x, y: (x + y) * (x - y) / y, lambda x, y: (x + y) * (x - y) / y,
     ["r:3,4", "p:3,4"]),
    ("broadcasting", lambda x, y: x * y + x, lambda x, y: x * y + x, ["r:3,1", "r:4"]),
    ("remainder", lambda x, y: bind1(P["remainder"], x, y), lax.rem, ["r:6", "g:6"]),
    ("power", lambda x, y: x ** y, lambda x, y: x ** y, ["p:5", "r:5"]),
    ("maximum/minimum", lambda x, y: snp.maximum(x, y) * 2 + snp.minimum(x, y),
     lambda x, y: jnp.maximum(x, y) * 2 + jnp.minimum(x, y), ["r:6", "r:6"]),
    ("atan2", snp.arctan2, jnp.arctan2, ["r:5", "r:5"]),
    ("select", lambda x, y: snp.where(x > 0, x * 2, y), lambda x, y: jnp.where(x > 0, x * 2, y),
     ["r:6", "r:6"]),
    ("clamp", lambda lo, x, hi: bind1(P["clamp"], lo, x, hi), lax.clamp,
     ["c-0.5:8", "r:8", "c0.5:8"]),
    ("reshape/transpose", lambda x: snp.transpose(snp.reshape(x, (2, 3, 2)), (2, 0, 1)),
     lambda x: jnp.transpose(jnp.reshape(x, (2, 3, 2)), (2, 0, 1)), ["r:3,4"]),
    ("broadcast_in_dim", lambda x: snp.broadcast_to(x, (2, 3, 4)),
     lambda x: jnp.broadcast_to(x, (2, 3, 4)), ["r:3,1"]),
    ("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], ["r:4,5"]),
    ("dynamic_slice", lambda x: bind1(P["dynamic_slice"], x, _i32(1), _i32(2), sizes=(2, 2)),
     lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), ["r:4,5"]),
    ("dynamic_update_slice",
     lambda x, u: bind1(P["dynamic_update_slice"], x, u, _i32(1), _i32(0)),
     lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)), ["r:4,5", "r:2,3"]),
    ("concatenate", lambda x, y: snp.concatenate([x, y, x], axis=1),
     lambda x, y: jnp.concatenate([x, y, x], axis=1), ["r:2,3", "r:2,2"]),
    ("pad", lambda x, v: bind1(P["pad"], x, v, low=(1, -1), high=(2, 1), interior=(1, 0)),
     lambda x, v: lax.pad(x, v, [(1, 2, 1), (-1, 1, 0)]), ["r:3,4", "r:"]),
    ("reverse", lambda x: snp.flip(x, axis=1), lambda x: jnp.flip(x, axis=1), ["r:3,4"]),
    ("reduce_sum", lambda x: snp.sum(x, axis=0), lambda x: jnp.sum(x, axis=0), ["r:3,4"]),
    ("reduce_prod", lambda x: snp.prod(x, axis=1), lambda x: jnp.prod(x, axis=1), ["z:4,3"]),
    ("reduce_max", lambda x: snp.max(x, axis=1), lambda x: jnp.max(x, axis=1), ["r:3,5"]),
    ("reduce_min", lambda x: snp.min(x, axis=0), lambda x: jnp.min(x, axis=0), ["r:3,5"]),
    ("matmul", lambda x, y: x @ y, lambda x, y: x @ y, ["r:3,4", "r:4,2"]),
    ("dot_general batch",
     lambda x, y: bind1(P["dot_general"], x, y, contracting=((2, 0), (0, 2)),
                        batch=((1,), (1,))),
     lambda x, y: lax.dot_general(x, y, (((2, 0), (0, 2)), ((1,), (1,)))),
     ["r:3,2,4,2", "r:4,2,3,3"]),
    ("reduce_window sum", *_window("sum"), ["r:3,4"]),
    ("reduce_window max", *_window("max"), ["r:3,4"]),
    ("reduce_window min", *_window("min"), ["r:3,4"]),
    # deliberately no derivative (a zero in a window breaks y/x): a clear error, not a
    # wrong gradient
    ("reduce_window prod", _window("prod")[0], None, ["r:3,4"],
     {"raises": "reduce_window_prod .* not supported: a zero in a window"}),
    ("select_and_scatter_add",
     lambda x, s: stablejit.vjp(lambda y: sconv.window_max(y, (2, 2), (2, 2)), x)[1](s)[0],
     lambda x, s: jax.vjp(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                      "VALID"), x)[1](s)[0],
     ["r:4,4", "r:2,2"]),
    ("select_and_scatter_add min padded",
     lambda x, s: stablejit.vjp(lambda y: sconv.window_min(y, (2, 3), (1, 2), "SAME"), x)[1](
         s)[0],
     lambda x, s: jax.vjp(lambda y: lax.reduce_window(y, jnp.inf, lax.min, (2, 3), (1, 2),
                                                      "SAME"), x)[1](s)[0],
     ["r:4,5", "r:4,3"]),
    ("select_and_gather_add",
     lambda x, t: stablejit.jvp(lambda y: sconv.window_max(y, (2, 2), (1, 2), "SAME"), (x,),
                                (t,))[1],
     lambda x, t: jax.jvp(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (2, 2), (1, 2),
                                                      "SAME"), (x,), (t,))[1],
     ["r:4,5", "r:4,5"]),
    ("select_and_gather_add min",
     lambda x, t: stablejit.jvp(lambda y: sconv.window_min(y, (3, 2), (2, 1)), (x,), (t,))[1],
     lambda x, t: jax.jvp(lambda y: lax.reduce_window(y, jnp.inf, lax.min, (3, 2), (2, 1),
                                                      "VALID"), (x,), (t,))[1],
     ["r:5,4", "r:5,4"]),
    ("convolution", lambda x, w: sconv.conv2d(x, w, padding="VALID"),
     lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"),
     ["r:1,2,4,4", "r:3,2,2,2"]),
    ("fft", lambda x: snp.real(snp.fft.fft(x)) + snp.imag(snp.fft.fft(x)) ** 2,
     lambda x: jnp.real(jnp.fft.fft(x)) + jnp.imag(jnp.fft.fft(x)) ** 2, ["r:6"]),
    ("cholesky", lambda x: snp.linalg.cholesky(_spd(snp, x)),
     lambda x: jnp.linalg.cholesky(_spd(jnp, x)), ["r:3,3"]),
    ("triangular_solve",
     lambda a, b: snp.linalg.triangular_solve(snp.tril(a) + 3 * snp.eye(3), b, lower=True),
     lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 3 * jnp.eye(3), b,
                                                    lower=True),
     ["r:3,3", "r:3,2"]),
    ("lu", lambda x: snp.linalg.lu_factor(x + 4 * snp.eye(3))[0],
     lambda x: jax.scipy.linalg.lu_factor(x + 4 * jnp.eye(3))[0], ["r:3,3"]),
    ("qr", lambda x: snp.linalg.qr(x), lambda x: jnp.linalg.qr(x), ["r:4,3"]),
    ("eigh", lambda x: snp.linalg.eigvalsh(_spd(snp, x)),
     lambda x: jnp.linalg.eigvalsh(_spd(jnp, x)), ["r:3,3"]),
    ("eig", lambda x: snp.linalg.eigvals(x + snp.diag(snp.asarray([0.0, 4.0, 8.0]))).real,
     lambda x: jnp.linalg.eigvals(x + jnp.diag(jnp.asarray([0.0, 4.0, 8.0]))).real,
     ["r:3,3"]),
    ("svd", lambda x: snp.linalg.svd(x, compute_uv=False),
     lambda x: jnp.linalg.svd(x, compute_uv=False), ["r:4,3"]),
    ("gather", lambda x: x[np.array([2, 0, 2])], lambda x: x[np.array([2, 0, 2])], ["r:4,3"]),
    ("scatter", lambda x, y: x.at[np.array([1, 3, 1])].add(y),
     lambda x, y: x.at[np.array([1, 3, 1])].add(y), ["r:5,2", "r:3,2"]),
    ("sort", lambda x: snp.sort(x, axis=-1), lambda x: jnp.sort(x, axis=-1), ["r:3,4"]),
    ("top_k", lambda x: snp.top_k(x, 2)[0], lambda x: lax.top_k(x, 2)[0], ["r:3,5"]),
    ("cumsum", lambda x: snp.cumsum(x, axis=1), lambda x: jnp.cumsum(x, axis=1), ["r:3,4"]),
    ("cumprod", lambda x: snp.cumprod(x, axis=0), lambda x: jnp.cumprod(x, axis=0), ["r:3,4"]),
    ("cummax", lambda x: snp.cummax(x, axis=1), lambda x: lax.cummax(x, axis=1), ["r:3,4"]),
    ("cummin", lambda x: snp.cummin(x, axis=1), lambda x: lax.cummin(x, axis=1), ["r:3,4"]),
    ("cond", lambda x: stablejit.cond(snp.sum(x) > 0, lambda a: snp.sin(a) * a,
                                      lambda a: a * 3.0, x),
     lambda x: lax.cond(jnp.sum(x) > 0, lambda a: jnp.sin(a) * a, lambda a: a * 3.0, x),
     ["p:4"]),
    ("fori_loop", _sj_fori, _jax_fori, ["r:4"]),
    # reverse mode through while_loop is a clear error (as in JAX): forward mode only
    ("while_loop", _sj_while, _jax_while, ["r:4"], {"forward_only": True}),
    ("scan", _sj_scan, _jax_scan, ["r:4,2"]),
    ("custom_vjp", _cv(snp.sin), jnp.sin, ["r:5"]),
    ("custom_jvp", _cj(snp.sin), jnp.sin, ["r:5"]),
    ("checkpoint", stablejit.checkpoint(lambda x: snp.sin(snp.sin(x)) * x),
     jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) * x), ["r:5"]),
    ("optimization_barrier", lambda x: bind1(P["optimization_barrier"], x) * x,
     lambda x: lax.optimization_barrier(x) * x, ["r:5"]),
    # (a staircase: finite differences see its steps; its derivative is jax's, which
    # rounds the tangent as the value, so J t and <grad, t> differ by that rounding)
    ("reduce_precision", lambda x: stablejit.lax.reduce_precision(x * x, 5, 10) * x,
     lambda x: lax.reduce_precision(x * x, 5, 10) * x, ["r:5"], {"rounds": True}),
]


def _args(domains, seed):
    rng = np.random.default_rng(seed)
    out = []
    for spec in domains:
        kind, _, shape = spec.partition(":")
        shape = tuple(int(s) for s in shape.split(",")) if shape else ()
        if kind.startswith("c"):
            out.append(np.full(shape, float(kind[1:])))
            continue
        x = rng.standard_normal(shape)
        if kind == "p":
            x = rng.uniform(0.5, 2.0, shape)
        elif kind == "u":
            x = rng.uniform(-0.9, 0.9, shape)
        elif kind == "g":
            x = rng.uniform(1.2, 3.0, shape)
        elif kind == "z":
            x = np.where(rng.uniform(size=shape) < 0.25, 0.0, x)
            x.flat[0] = 0.0
        out.append(np.asarray(x, np.float64))
    return out


def _scalarize(f, xp, weights):
    def loss(*args):
        args = [xp.asarray(a) for a in args]
        leaves, _ = flatten(f(*args)) if xp is snp else jax.tree.flatten(f(*args))
        total = 0.0
        for leaf, w in zip(leaves, weights, strict=True):
            total = total + xp.sum(leaf * w)
        return total
    return loss


def _weights(f_sj, args, seed):
    with stablejit.default_backend("reference"):
        outs = flatten(f_sj(*[snp.asarray(a) for a in args]))[0]
    rng = np.random.default_rng(seed + 100)
    return [rng.standard_normal(np.shape(o)) for o in outs]


def _finite_differences(loss, args, eps=1e-6):
    grads = []
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [x.copy() for x in args]
            lo = [x.copy() for x in args]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            g[idx] = (float(loss(*hi)) - float(loss(*lo))) / (2 * eps)
        grads.append(g)
    return grads


def _check(label, got, want, rtol=2e-5, atol=2e-6, what=""):
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol,
                                   err_msg=f"{label}: {what} gradient of argument {i}")


@pytest.mark.parametrize("entry", [pytest.param(e, id=e[0]) for e in ENTRIES])
def test_gradient(entry):
    label, f_sj, f_jax, domains = entry[:4]
    opts = entry[4] if len(entry) > 4 else {}
    args = _args(domains, seed=len(label))
    weights = _weights(f_sj, args, len(label))
    nums = tuple(range(len(args)))
    loss_sj = _scalarize(f_sj, snp, weights)
    if "raises" in opts:
        return _check_raises(loss_sj, args, nums, opts["raises"])
    if opts.get("forward_only"):
        return _check_forward_only(label, loss_sj, _scalarize(f_jax, jnp, weights), args,
                                   domains)
    with stablejit.default_backend("reference"):
        ref = stablejit.grad(loss_sj, argnums=nums)(*args)
        fd = _finite_differences(loss_sj, args)
    if not opts.get("rounds"):
        _check(label, ref, fd, rtol=1e-5, atol=1e-6,
               what="reference-backend vs finite-difference")
    if f_jax is not None:
        loss_jax = _scalarize(f_jax, jnp, weights)
        with jax.enable_x64(True):
            want = jax.grad(loss_jax, argnums=nums)(*[jnp.asarray(a) for a in args])
        want = [np.asarray(w) for w in want]
        _check(label, ref, want, what="reference-backend vs jax")
    else:
        want = fd
    eager = stablejit.grad(loss_sj, argnums=nums)(*[snp.asarray(a) for a in args])
    _check(label, eager, want, what="eager XLA vs jax")
    with stablejit.lazy():  # recorded on a grad tape (or its traced fallback)
        lazy = stablejit.grad(loss_sj, argnums=nums)(*[snp.asarray(a) for a in args])
    _check(label, lazy, want, what="lazy vs jax")
    jitted = stablejit.jit(stablejit.grad(loss_sj, argnums=nums))(*args)
    _check(label, jitted, want, what="jit vs jax")
    if opts.get("rounds"):
        return
    # forward mode: J t == <grad, t>
    tangents = [t if d[0] != "c" else np.zeros_like(t)
                for t, d in zip(_args(domains, seed=7), domains, strict=True)]
    with stablejit.default_backend("reference"):
        _, jv = stablejit.jvp(loss_sj, tuple(args), tuple(tangents))
    expected_jv = sum(float(np.sum(np.asarray(w) * t))
                      for w, t in zip(ref, tangents, strict=True))
    np.testing.assert_allclose(float(jv), expected_jv, rtol=1e-8, atol=1e-9,
                               err_msg=f"{label}: jvp")


def _check_raises(loss_sj, args, nums, message):
    """A derivative the library deliberately does not support raises NotImplementedError
    with its explanation on every path and in both modes, instead of a wrong gradient."""
    with stablejit.default_backend("reference"):
        with pytest.raises(NotImplementedError, match=message):
            stablejit.grad(loss_sj, argnums=nums)(*args)
        with pytest.raises(NotImplementedError, match=message):
            stablejit.jvp(loss_sj, tuple(args), tuple(args))
    with pytest.raises(NotImplementedError, match=message):
        stablejit.grad(loss_sj, argnums=nums)(*[snp.asarray(a) for a in args])
    with pytest.raises(NotImplementedError, match=message):
        stablejit.jit(stablejit.grad(loss_sj, argnums=nums))(*args)
    with pytest.raises(NotImplementedError, match=message), stablejit.lazy():
        stablejit.grad(loss_sj, argnums=nums)(*[snp.asarray(a) for a in args])


def _check_forward_only(label, loss_sj, loss_jax, args, domains):
    tangents = _args(domains, seed=7)
    eps = 1e-6
    with stablejit.default_backend("reference"):
        _, jv = stablejit.jvp(loss_sj, tuple(args), tuple(tangents))
        steps = [eps * t for t in tangents]
        fd = (float(loss_sj(*[a + s for a, s in zip(args, steps, strict=True)]))
              - float(loss_sj(*[a - s for a, s in zip(args, steps, strict=True)]))) / (2 * eps)
    with jax.enable_x64(True):
        _, want = jax.jvp(loss_jax, tuple(jnp.asarray(a) for a in args),
                          tuple(jnp.asarray(t) for t in tangents))
    np.testing.assert_allclose(float(jv), float(want), rtol=1e-8, err_msg=f"{label}: jvp")
    np.testing.assert_allclose(float(jv), fd, rtol=1e-5, err_msg=f"{label}: jvp vs FD")
    jitted = stablejit.jit(lambda a, t: stablejit.jvp(loss_sj, tuple(a), tuple(t))[1])
    np.testing.assert_allclose(float(jitted(args, tangents)), float(want), rtol=1e-8,
                               err_msg=f"{label}: jitted jvp")
    with pytest.raises(TypeError, match="while_loop"):
        stablejit.grad(loss_sj)(*args)


def test_every_differentiable_primitive_has_an_entry():
    covered = set()

    def walk(fn):
        for op in fn.ops:
            covered.add(op.prim.name)
            for r in op.regions:
                walk(r)

    for _, f_sj, _, domains, *_ in ENTRIES:
        args = [snp.asarray(a) for a in _args(domains, 0)]
        leaves, tree = flatten(tuple(args))
        fn, _, _ = trace_function(f_sj, leaves, tree)
        walk(fn)
    # collectives exist only inside a named vmap or shard_map: tests/host/test_vmap.py
    # and test_shard_map.py differentiate them (and shard_map) against jax; differentiating
    # a callback is an error by design (tests/host/test_callbacks.py); an exported call's
    # derivative is the VJP exported with it (tests/host/test_export.py compares it)
    missing = sorted(p.name for p in P.values()
                     if p.vjp is not NOT_DIFFERENTIABLE and p.name not in covered
                     and p.family not in ("collective", "sharding", "callback", "exported"))
    assert not missing, f"differentiable primitives with no gradient test entry: {missing}"


# ---- the user API: composition, pytrees, options, errors -----------------------------------

def _f(x):
    return snp.sum(snp.sin(x) * x * x)


def _jf(x):
    return jnp.sum(jnp.sin(x) * x * x)


X = np.linspace(-1.0, 2.0, 5).astype(np.float32)


@pytest.mark.parametrize("path", ["eager", "jit", "reference"])
def test_grad_composes(path):
    want1 = np.asarray(jax.grad(_jf)(X))
    want2 = np.asarray(jax.grad(lambda x: jnp.sum(jax.grad(_jf)(x) ** 2))(X))
    wrap = stablejit.jit if path == "jit" else (lambda f: f)
    ctx = stablejit.default_backend("reference") if path == "reference" else _null()
    with ctx:
        x = snp.asarray(X)
        np.testing.assert_allclose(wrap(stablejit.grad(_f))(x), want1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(stablejit.grad(stablejit.jit(_f))(x), want1, rtol=1e-5,
                                   atol=1e-6)
        gg = stablejit.grad(lambda x: snp.sum(stablejit.grad(_f)(x) ** 2))
        np.testing.assert_allclose(wrap(gg)(x), want2, rtol=1e-4, atol=1e-5)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _mlp_loss(params, x, y):
    h = snp.tanh(x @ params["w1"] + params["b"][0])
    return snp.mean((h @ params["w2"] - y) ** 2)


def _jmlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b"][0])
    return jnp.mean((h @ params["w2"] - y) ** 2)


def test_pytrees_argnums_and_aux():
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((3, 4)).astype(np.float32),
              "w2": rng.standard_normal((4, 2)).astype(np.float32),
              "b": [rng.standard_normal(4).astype(np.float32)]}
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal((5, 2)).astype(np.float32)
    want_v, (want_p, want_x) = jax.value_and_grad(_jmlp_loss, argnums=(0, 1))(params, x, y)
    v, (gp, gx) = stablejit.value_and_grad(_mlp_loss, argnums=(0, 1))(params, x, y)
    np.testing.assert_allclose(v, want_v, rtol=1e-5)
    assert set(gp) == {"w1", "w2", "b"} and isinstance(gp["b"], list)
    for k in ("w1", "w2"):
        np.testing.assert_allclose(gp[k], want_p[k], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gp["b"][0], want_p["b"][0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gx, want_x, rtol=1e-4, atol=1e-6)
    # has_aux, and the same under jit
    g, aux = stablejit.jit(stablejit.grad(lambda p: (_mlp_loss(p, x, y), p["w1"] * 2),
                                          has_aux=True))(params)
    np.testing.assert_allclose(aux, params["w1"] * 2)
    np.testing.assert_allclose(g["w2"], want_p["w2"], rtol=1e-4, atol=1e-6)


# How grad splits a call's arguments (autodiff._Args): every argument differentiated (the
# common call, which skips the split), some of them, a negative or reordered argnums, and
# keyword arguments beside all positional ones. (argument values, kwargs, argnums)
_A, _B, _C = (np.linspace(0.5, 1.5, 3, dtype=np.float32) * k for k in (1, 2, 3))
SPLITS = [
    ("one-argument", (_A,), {}, 0),
    ("pytree-argument", ({"w": _A, "v": [_B]},), {}, 0),
    ("all-of-two", (_A, _B), {}, (0, 1)),
    ("first-of-two", (_A, _B), {}, 0),
    ("second-of-two", (_A, _B), {}, 1),
    ("negative", (_A, _B), {}, -1),
    ("reordered", (_A, _B, _C), {}, (2, 0)),
    ("all-positional-and-a-keyword", (_A, _B), {"c": _C}, (0, 1)),
]


def _split_loss(m):
    def loss(a, b=None, c=None):
        if isinstance(a, dict):
            return m.sum(m.sin(a["w"]) * a["v"][0])
        out = m.sum(m.sin(a) * 2.0)
        if b is not None:
            out = out + m.sum(a * b * b)
        if c is not None:
            out = out + m.sum(m.exp(c) * a)
        return out
    return loss


@pytest.mark.parametrize("label,args,kwargs,argnums", SPLITS, ids=[s[0] for s in SPLITS])
@pytest.mark.parametrize("mode", ["eager", "lazy", "jit"])
def test_argument_splits_match_jax(label, args, kwargs, argnums, mode):
    want = jax.grad(_split_loss(jnp), argnums=argnums)(*args, **kwargs)
    grad = stablejit.grad(_split_loss(snp), argnums=argnums)
    if mode == "jit":
        got = stablejit.jit(grad)(*args, **kwargs)
    elif mode == "lazy":
        with stablejit.lazy():
            got = grad(*args, **kwargs)
    else:
        got = grad(*args, **kwargs)
    got_leaves, got_tree = flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree.num_leaves == len(want_leaves), (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


# argnums that name one argument twice: grad gave zeros for the first and the gradient
# for the second, a silent wrong answer (jax fails on them, with an unrelated TypeError
# about None)
DUPLICATE_ARGNUMS = [(0, 0), (1, -1), (0, 1, 0), (np.int64(1), 1)]


@pytest.mark.parametrize("argnums", DUPLICATE_ARGNUMS, ids=str)
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev", "jacfwd",
                                       "hessian"])
def test_argnums_naming_an_argument_twice_is_refused(transform, argnums):
    f = _split_loss(snp)
    with pytest.raises(ValueError, match=r"names argument \d more than once"):
        getattr(stablejit, transform)(f, argnums=argnums)(_A, _B)
    with pytest.raises(ValueError, match=r"names argument \d more than once"):
        stablejit.jit(getattr(stablejit, transform)(f, argnums=argnums))(_A, _B)


@pytest.mark.parametrize("argnums", [0.0, "0", (0, 1.0), None])
def test_argnums_that_are_not_ints_name_the_argument(argnums):
    with pytest.raises(TypeError, match="argnums must be an int or a sequence of ints"):
        stablejit.grad(_split_loss(snp), argnums=argnums)(_A, _B)


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match=r"argument 1 .*int32"):
        stablejit.grad(lambda x, n: snp.sum(x) * n, argnums=1)(X, np.int32(3))
    with pytest.raises(TypeError, match="scalar output"):
        stablejit.grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="has_aux"):
        stablejit.grad(lambda x: (snp.sum(x), x))(X)
    # integer inputs not differentiated are fine
    g = stablejit.grad(lambda x, n: snp.sum(x * n))(X, np.int32(3))
    np.testing.assert_allclose(g, np.full_like(X, 3))


def test_vjp_jvp_and_jacobians_match_jax():
    def f(x, y):
        return snp.sin(x) * y[:, None], snp.sum(x * x)

    def jf(x, y):
        return jnp.sin(x) * y[:, None], jnp.sum(x * x)

    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2)).astype(np.float32)
    y = rng.standard_normal(3).astype(np.float32)
    ct = (rng.standard_normal((3, 2)).astype(np.float32), np.float32(0.7))
    out, fn = stablejit.vjp(f, x, y)
    jout, jfn = jax.vjp(jf, x, y)
    for a, b in zip(fn(ct), jfn(ct), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], jout[1], rtol=1e-6)
    tx, ty = np.ones_like(x), np.arange(3, dtype=np.float32)
    (o1, o2), (t1, t2) = stablejit.jvp(f, (x, y), (tx, ty))
    _, (jt1, jt2) = jax.jvp(jf, (x, y), (tx, ty))
    np.testing.assert_allclose(t1, jt1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t2, jt2, rtol=1e-5, atol=1e-6)

    def g(x):
        return snp.tanh(x) * snp.sum(x ** 3)

    def jg(x):
        return jnp.tanh(x) * jnp.sum(x ** 3)

    v = rng.standard_normal(4).astype(np.float32)
    for sj_t, jax_t in ((stablejit.jacrev, jax.jacrev), (stablejit.jacfwd, jax.jacfwd)):
        np.testing.assert_allclose(sj_t(g)(v), jax_t(jg)(v), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(stablejit.jit(sj_t(g))(v), jax_t(jg)(v), rtol=1e-4,
                                   atol=1e-5)
    h = stablejit.hessian(lambda x: snp.sum(snp.sin(x) * x[::-1]))(v)
    np.testing.assert_allclose(h, jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x[::-1]))(v),
                               rtol=1e-4, atol=1e-5)
    jp = stablejit.jacrev(lambda p: {"a": p["u"] * 2.0})({"u": v})
    assert jp["a"]["u"].shape == (4, 4)


def test_stop_gradient_and_custom_rules():
    g = stablejit.grad(lambda x: snp.sum(x * stablejit.stop_gradient(x)))(X)
    np.testing.assert_allclose(g, X)

    @stablejit.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, ct: (snp.clip(ct, -0.5, 0.5),))
    g = stablejit.jit(stablejit.grad(lambda x: snp.sum(clip_grad(x) * 3.0)))(X)
    np.testing.assert_allclose(g, np.full_like(X, 0.5))
    assert np.allclose(clip_grad(snp.asarray(X)), X)  # outside a trace: just the function

    @stablejit.custom_jvp
    def softplus(x):
        return snp.log1p(snp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * snp.sigmoid(x)

    for d in (stablejit.grad(lambda x: snp.sum(softplus(x))),
              stablejit.jit(stablejit.grad(lambda x: snp.sum(softplus(x))))):
        np.testing.assert_allclose(d(X), 1 / (1 + np.exp(-X)), rtol=1e-5)
    _, t = stablejit.jvp(softplus, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(t, 1 / (1 + np.exp(-X)), rtol=1e-5)


def test_grad_outside_jit_reuses_compiled_program():
    from stablejit import compilation

    f = stablejit.grad(lambda x: snp.sum(snp.exp(x) * 1.5))
    f(X)
    n = compilation.stats["compiled"] + compilation.stats["disk"]
    for _ in range(3):
        np.testing.assert_allclose(f(X), 1.5 * np.exp(X), rtol=1e-6)
    assert compilation.stats["compiled"] + compilation.stats["disk"] == n


def test_a_retraced_loss_builds_its_backward_pass_once(monkeypatch):
    """Eager code re-traces its loss every step (as JAX's eager grad does); the backward
    pass depends only on the traced IR, so an identical trace reuses it."""
    from stablejit import autodiff as ad
    built = []
    real = ad.Linearized
    monkeypatch.setattr(ad, "Linearized", lambda *a: built.append(1) or real(*a))
    x = snp.asarray(np.linspace(-1, 1, 7))
    for _ in range(3):
        g = stablejit.grad(lambda v: snp.sum(snp.sin(v) * 1.25))(x)
        np.testing.assert_allclose(np.asarray(g), np.cos(np.linspace(-1, 1, 7)) * 1.25)
    assert len(built) == 1


@pytest.mark.parametrize("a, b", [(2.0, 3.0), (0.0, -0.0), (1.0, np.nextafter(1.0, 2.0))])
def test_backward_passes_of_traces_that_differ_in_a_constant_are_not_shared(a, b):
    x = snp.asarray(np.linspace(-1, 1, 5))
    for c in (a, b, a):
        g = np.asarray(stablejit.grad(lambda v, c=c: snp.sum(v * c))(x))
        np.testing.assert_array_equal(g, np.full(5, c))
        assert np.all(np.signbit(g) == np.signbit(c))  # -0.0 is not 0.0


# Derivatives where the function has a kink or a tie, against jax.grad: a ported program
# gets JAX's choice of subgradient (an L1 penalty moves zero weights; x % 1 has slope 1 at
# every multiple). Each case: (name, stablejit f, jax f, points).
_KINKS = [
    ("abs", snp.abs, jnp.abs, [0.0, -0.0, 2.0, -2.0]),
    ("sum(abs(x)) * 0.1", lambda x: snp.sum(snp.abs(x)) * 0.1,
     lambda x: jnp.sum(jnp.abs(x)) * 0.1, [0.0, -0.0]),
    ("copysign(x, -1)", lambda x: snp.copysign(x, -1.0), lambda x: jnp.copysign(x, -1.0),
     [0.0, -0.0, 3.0]),
    ("remainder(x, 1)", lambda x: snp.remainder(x, 1.0), lambda x: jnp.remainder(x, 1.0),
     [0.0, -0.0, 1.0, -1.0, 2.0, 0.5]),
    ("remainder(x, -2)", lambda x: snp.remainder(x, -2.0), lambda x: jnp.remainder(x, -2.0),
     [0.0, 4.0, -4.0, 1.0]),
    ("remainder(3, y)", lambda y: snp.remainder(3.0, y), lambda y: jnp.remainder(3.0, y),
     [1.0, 3.0, -1.5, 2.0]),
    ("maximum(x, 0)", lambda x: snp.maximum(x, 0.0), lambda x: jnp.maximum(x, 0.0),
     [0.0, -0.0, 1.0]),
    ("logaddexp(x, 0)", lambda x: snp.logaddexp(x, 0.0), lambda x: jnp.logaddexp(x, 0.0),
     [0.0, -0.0, 1.0, -1.0]),
    ("logaddexp(0, x)", lambda x: snp.logaddexp(0.0, x), lambda x: jnp.logaddexp(0.0, x),
     [0.0, -0.0, 1.0]),
    ("logaddexp2(x, 0)", lambda x: snp.logaddexp2(x, 0.0), lambda x: jnp.logaddexp2(x, 0.0),
     [0.0, 1.0]),
    ("softplus", nn.softplus, jax.nn.softplus, [0.0, -0.0, 2.0]),
    ("relu", nn.relu, jax.nn.relu, [1.0, -1.0]),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in _KINKS])
@pytest.mark.parametrize("path", ["eager", "jit"])
def test_gradient_at_kinks_and_ties_matches_jax(case, path):
    _, f, jf, points = case
    g = stablejit.grad(f) if path == "eager" else stablejit.jit(stablejit.grad(f))
    for p in points:
        want = np.asarray(jax.grad(jf)(jnp.float32(p)))
        got = np.asarray(g(snp.asarray(np.float32(p))))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"at {p!r}")


@pytest.mark.parametrize("values", [[1e-30, 1e-30, 2.0], [1e30, 1e30, 1e-30], [0.0, 0.0, 3.0],
                                    [0.0, 2.0, 3.0, -1.0, 5.0], [2.0]])
def test_prod_gradient_is_the_product_of_the_others(values):
    """prod's derivative was prod / x_i: 0 where the product underflows (the others'
    product 2e-30 is representable) and inf where it overflows (the others' product is
    1). It is now the others' product by a pairwise tree, as in JAX."""
    a = np.asarray(values, np.float32)
    want = np.asarray(jax.grad(jnp.prod)(jnp.asarray(a)))
    for g in (stablejit.grad(snp.prod), stablejit.jit(stablejit.grad(snp.prod))):
        np.testing.assert_allclose(np.asarray(g(snp.asarray(a))), want, rtol=1e-6)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_derivative_at_equal_infinities(name):
    """logaddexp(x, x) = x + log 2 has slope 1 everywhere; at x = +-inf the branch not
    taken leaked a NaN into the derivative (jax gives 2 there)."""
    f = getattr(snp, name)
    for p in (np.inf, -np.inf, 3.0):
        assert float(stablejit.grad(lambda v: f(v, v))(snp.asarray(np.float32(p)))) == 1.0
    assert float(stablejit.grad(lambda v: f(v, 0.0))(snp.asarray(np.float32(np.inf)))) == 1.0


@pytest.mark.parametrize("transform", [stablejit.grad, stablejit.value_and_grad,
                                       stablejit.jacrev, stablejit.jacfwd])
def test_transformed_functions_keep_the_functions_face_and_filter_tracebacks(transform):
    """A transformation made per call (grad(loss) in a step) copies the user's function's
    name, docstring and signature once (api_boundary(..., like=f)), and an error leaving
    it is filtered as at every public boundary."""
    import inspect

    def loss(x, scale=2.0):
        """the loss"""
        return snp.sum(x * scale)

    g = transform(loss)
    assert (g.__name__, g.__doc__, g.__wrapped__) == ("loss", "the loss", loss)
    assert str(inspect.signature(g)) == "(x, scale=2.0)"
    assert g.__stablejit_boundary__
    with pytest.raises(TypeError) as e:
        g(snp.asarray([1, 2]))  # integer input: no gradient
    frames = [f.filename for f in __import__("traceback").extract_tb(e.value.__traceback__)]
    assert not any("/frontend/autodiff.py" in f for f in frames), frames
