"""Example cases of stop_gradient, the calls with user-written derivative rules (emission
and the reference run `fun`; the rule rides along as an attribute), checkpoint and
optimization_barrier."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt
from stablejit.compiler.primitives import elementwise as ew
from stablejit.compiler.primitives.custom_ad import Rule

from tests.support.dtype_groups import INEXACT
from tests.support.prim_table.spec import (
    JoinedSpec,
    PrimSpec,
    region,
    tensor_type,
    values,
)


def _custom_jvp_make(d, rng):
    """f(x) = sin(x) * c with c captured; the rule gives cos(x) * t * c."""
    x, c = values(d, rng), values(d, rng)
    t = tensor_type(x)
    fun = region("f", [t, t], lambda o, x, c: [o.mul(o.bind(ew.sin, x), c)])
    rule = region("f_jvp", [t, t], lambda o, x, tx: [
        o.bind(ew.sin, x), o.mul(o.bind(ew.cos, x), tx)])
    return [x, c], {"out_types": (t,), "n_args": 1,
                    "rule": Rule("f", ("f", t), lambda: (rule,))}, (fun,)


def _custom_jvp_pair_make(d, rng):
    """Two arguments, two outputs, nothing captured."""
    x, y = values(d, rng), values(d, rng)
    t = tensor_type(x)
    fun = region("g", [t, t], lambda o, x, y: [o.mul(x, y), o.add(x, y)])
    rule = region("g_jvp", [t] * 4, lambda o, x, y, tx, ty: [
        o.mul(x, y), o.add(x, y), o.add(o.mul(tx, y), o.mul(x, ty)), o.add(tx, ty)])
    return [x, y], {"out_types": (t, t), "n_args": 2,
                    "rule": Rule("g", ("g", t), lambda: (rule,))}, (fun,)


def _custom_vjp_make(d, rng):
    """f(x, y) = x * y; fwd keeps x and y, bwd gives (ct * y, ct * x)."""
    x, y = values(d, rng), values(d, rng)
    t = tensor_type(x)
    fun = region("f", [t, t], lambda o, x, y: [o.mul(x, y)])
    fwd = region("f_fwd", [t, t], lambda o, x, y: [o.mul(x, y), x, y])
    bwd = region("f_bwd", [t, t, t], lambda o, x, y, ct: [o.mul(ct, y), o.mul(ct, x)])
    return [x, y], {"out_types": (t,), "n_args": 2,
                    "rule": Rule("f", ("f", t), lambda: (fwd, bwd))}, (fun,)


def _custom_vjp_captured_make(d, rng):
    """f(x) = (exp(x) * c, x) with c captured; one residual."""
    x, c = values(d, rng), values(d, rng)
    t = tensor_type(x)
    fun = region("h", [t, t], lambda o, x, c: [o.mul(o.bind(ew.exp, x), c), x])
    fwd = region("h_fwd", [t], lambda o, x: [o.bind(ew.exp, x), x, o.bind(ew.exp, x)])
    bwd = region("h_bwd", [t] * 3, lambda o, r, ct0, ct1: [o.add(o.mul(ct0, r), ct1)])
    return [x, c], {"out_types": (t, t), "n_args": 1,
                    "rule": Rule("h", ("h", t), lambda: (fwd, bwd))}, (fun,)


def _checkpoint_make(d, rng):
    """f(x, y) = sin(x) * y, recomputed in the backward pass."""
    x, y = values(d, rng), values(d, rng)
    t = tensor_type(x)
    fun = region("f", [t, t], lambda o, x, y: [o.mul(o.bind(ew.sin, x), y)])
    return [x, y], {"prevent_cse": True}, (fun,)


TABLE = {
    "stop_gradient": PrimSpec(INEXACT, lambda d, rng: ([values(d, rng)], {}), lambda x: x),
    "custom_jvp_call": JoinedSpec(
        unary=PrimSpec((dt.float32, dt.float64), _custom_jvp_make,
                       lambda x, c, **attrs: np.sin(x) * c),
        pair=PrimSpec((dt.float32,), _custom_jvp_pair_make,
                      lambda x, y, **attrs: (x * y, x + y))),
    "custom_vjp_call": JoinedSpec(
        product=PrimSpec((dt.float32, dt.float64), _custom_vjp_make,
                         lambda x, y, **attrs: x * y),
        captured=PrimSpec((dt.float32,), _custom_vjp_captured_make,
                          lambda x, c, **attrs: (np.exp(x) * c, x))),
    "checkpoint": PrimSpec((dt.float32, dt.float64), _checkpoint_make,
                           lambda x, y, **attrs: np.sin(x) * y),
    "optimization_barrier": PrimSpec(INEXACT, lambda d, rng: (
        [values(d, rng), values(d, rng)], {}), lambda x, y: (x, y)),
}
