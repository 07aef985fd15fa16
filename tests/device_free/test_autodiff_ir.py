"""The VJP/JVP transforms on IR Functions, checked with the reference interpreter (no
device): results against finite differences, the shape of the transformed IR, and the
errors for primitives without rules."""

from __future__ import annotations

import numpy as np
import pytest
from stablejit.compiler import Builder, interpret
from stablejit.compiler import dtypes as dt
from stablejit.compiler.autodiff import (
    DifferentiationError,
    Linearized,
    jvp_function,
    vjp_function,
)
from stablejit.compiler.ir import TensorType
from stablejit.compiler.ops import Ops
from stablejit.compiler.passes import optimize, verify
from stablejit.compiler.primitive import Primitive
from stablejit.compiler.primitives import elementwise as ew

F64 = dt.float64


def _mlp():
    """f(x, w, n) = sum(tanh(x @ w) * sin(x @ w)) * n   (n: an integer count)"""
    b = Builder("mlp")
    o = Ops(b)
    x = b.param(TensorType((3, 4), F64))
    w = b.param(TensorType((4, 2), F64))
    n = b.param(TensorType((), dt.int32))
    h = o.dot_general(x, w, ((1,), (0,)))
    y = o.reduce_sum(o.mul(o.bind(ew.tanh, h), o.bind(ew.sin, h)), (0, 1))
    return b.build([o.mul(y, o.convert(n, F64))])


def _args(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), np.int32(3)]


def _fd(fn, args, i, eps=1e-6):
    g = np.zeros_like(args[i])
    for idx in np.ndindex(args[i].shape):
        hi, lo = [np.array(a, copy=True) for a in args], [np.array(a, copy=True) for a in args]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        g[idx] = (interpret(fn, hi)[0] - interpret(fn, lo)[0]) / (2 * eps)
    return g


def test_vjp_function_matches_finite_differences():
    fn = _mlp()
    g = vjp_function(fn, wrt=[0, 1])
    verify(g)
    assert g.param_types == fn.param_types + fn.result_types
    args = _args()
    value, gx, gw = interpret(g, args + [np.float64(1.0)])
    np.testing.assert_allclose(value, interpret(fn, args)[0])
    np.testing.assert_allclose(gx, _fd(fn, args, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, _fd(fn, args, 1), rtol=1e-6, atol=1e-8)
    # a cotangent scales the gradient linearly
    _, gx2, _ = interpret(g, args + [np.float64(-2.5)])
    np.testing.assert_allclose(gx2, -2.5 * gx, rtol=1e-12)


def test_jvp_function_matches_directional_derivative():
    fn = _mlp()
    j = jvp_function(fn, wrt=[0, 1])
    verify(j)
    args = _args()
    rng = np.random.default_rng(1)
    tx, tw = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    value, tangent = interpret(j, args + [tx, tw])
    eps = 1e-6
    hi = interpret(fn, [args[0] + eps * tx, args[1] + eps * tw, args[2]])[0]
    lo = interpret(fn, [args[0] - eps * tx, args[1] - eps * tw, args[2]])[0]
    np.testing.assert_allclose(tangent, (hi - lo) / (2 * eps), rtol=1e-6)


def test_only_active_values_get_backward_ops():
    """Differentiating w.r.t. w only: no cotangent is built for x's side of the graph,
    and the integer param gets no derivative ops at all."""
    fn = _mlp()
    g_all = optimize(vjp_function(fn, wrt=[0, 1]))
    g_w = optimize(vjp_function(fn, wrt=[1]))
    assert len(g_w.ops) < len(g_all.ops)
    dots = [op for op in g_w.ops if op.prim.name == "dot_general"]
    assert len(dots) == 2  # forward, and one transpose for w (none for x)


def test_several_backward_passes_share_one_forward_copy():
    fn = _mlp()
    b = Builder("two")
    params = [b.param(p.type) for p in fn.params]
    lin = Linearized(b, fn, params, wrt=[0])
    n_forward = len(b.ops)
    o = Ops(b)
    g1 = lin.backward([o.const(1.0, F64)])
    g2 = lin.backward([o.const(2.0, F64)])
    assert n_forward == len(fn.ops)
    out = interpret(b.build([g1[0], g2[0]]), _args())
    np.testing.assert_allclose(out[1], 2 * out[0], rtol=1e-12)


def test_non_differentiable_ops_give_zero_and_missing_rules_are_errors():
    b = Builder("f")
    o = Ops(b)
    x = b.param(TensorType((4,), F64))
    y = o.reduce_sum(o.mul(o.bind(ew.floor, x), x), (0,))  # floor: zero derivative
    g = vjp_function(b.build([y]))
    xs = np.array([0.5, 1.5, -2.2, 3.7])
    np.testing.assert_allclose(interpret(g, [xs, np.float64(1)])[1], np.floor(xs))

    nodiff = Primitive("test_no_rule", lambda x: x, lambda ctx, x: x, lambda x: x)
    b = Builder("g")
    x = b.param(TensorType((2,), F64))
    y = b.bind(nodiff, [x])[0]
    with pytest.raises(DifferentiationError, match="test_no_rule.*stop_gradient"):
        vjp_function(b.build([y]))


def test_second_derivative_by_differentiating_the_vjp():
    b = Builder("cube")
    o = Ops(b)
    x = b.param(TensorType((3,), F64))
    y = o.reduce_sum(o.mul(o.mul(x, x), o.bind(ew.sin, x)), (0,))
    fn = b.build([y])
    g = vjp_function(fn)            # (x, ct) -> (y, dy/dx)
    b2 = Builder("gsum")
    o2 = Ops(b2)
    x2 = b2.param(TensorType((3,), F64))
    from stablejit.compiler.autodiff import inline
    _, dx = inline(b2, g, [x2, o2.const(1.0, F64)])
    hfn = vjp_function(b2.build([o2.reduce_sum(dx, (0,))]))  # d/dx sum(dy/dx)
    xs = np.array([0.3, -1.2, 2.0])
    got = interpret(hfn, [xs, np.float64(1.0)])[1]
    want = 2 * np.sin(xs) + 4 * xs * np.cos(xs) - xs * xs * np.sin(xs)  # diag of Hessian
    np.testing.assert_allclose(got, want, rtol=1e-10)
