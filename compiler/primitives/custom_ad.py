"""Primitives that exist for differentiation.

    stop_gradient     the identity, with no derivative
    custom_vjp_call   calls region 0 (fun); its vjp runs region 1 (fwd: the outputs and
                      residuals) and region 2 (bwd: residuals and output cotangents to
                      argument cotangents), both written by the user
    custom_jvp_call   calls region 0 (fun); its jvp runs region 1 (the user's rule: args
                      and tangents to outputs and output tangents); its vjp transposes
                      that rule (it is linear in the tangents)

Operands of the call primitives are the arguments (`n_args`) followed by tensors the
user's functions closed over; closed-over tensors get no gradient. Region layouts:
    fun: (args, captures) -> outs
    fwd: (args, captures) -> (outs, residuals)
    bwd: (residuals, output cotangents, captures) -> one cotangent per arg
    jvp: (args, tangents, captures) -> (outs, output tangents)
Emission and the reference rule run `fun` in place (the other regions are only for the
derivative rules and are never emitted).
"""

from __future__ import annotations

from ..autodiff import inline, vjp_into
from ..primitive import NOT_DIFFERENTIABLE, Primitive

stop_gradient = Primitive("stop_gradient", lambda x: x, lambda ctx, x: x, lambda x: x,
                          vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, family="autodiff")


def _call_rule(*in_types, out_types, n_args, regions=()):
    return tuple(out_types)


def _call_emit(ctx, *names):
    return ctx.emitter.emit_ops(ctx.regions[0], list(names))


def _call_ref(*xs, out_types, n_args, regions):
    return tuple(regions[0](*xs))


def _custom_vjp_vjp(ops, cts, primals, outs, *, out_types, n_args, regions):
    _, fwd, bwd = regions
    k = len(out_types)
    residuals = inline(ops.builder, fwd, primals)[k:]
    cts = [c if c is not None else ops.zeros_like(o) for c, o in zip(cts, outs, strict=True)]
    grads = inline(ops.builder, bwd, [*residuals, *cts, *primals[n_args:]])
    return (*grads, *[None] * (len(primals) - n_args))


custom_vjp_call = Primitive("custom_vjp_call", _call_rule, _call_emit, _call_ref,
                            vjp=_custom_vjp_vjp, multiple_results=True, family="autodiff")


def _custom_jvp_jvp(ops, tangents, primals, outs, *, out_types, n_args, regions):
    args, caps = primals[:n_args], primals[n_args:]
    ts = [t if t is not None else ops.zeros_like(a) for t, a in zip(tangents, args, strict=True)]
    return tuple(inline(ops.builder, regions[1], [*args, *ts, *caps])[len(out_types):])


def _custom_jvp_vjp(ops, cts, primals, outs, *, out_types, n_args, regions):
    # the user's rule maps tangents to output tangents linearly: transpose it
    args, caps = primals[:n_args], primals[n_args:]
    zeros = [ops.zeros_like(a) for a in args]
    _, grads = vjp_into(ops.builder, regions[1], [*args, *zeros, *caps],
                        [None] * len(out_types) + list(cts),
                        wrt=range(n_args, 2 * n_args))
    return (*grads, *[None] * len(caps))


custom_jvp_call = Primitive("custom_jvp_call", _call_rule, _call_emit, _call_ref,
                            vjp=_custom_jvp_vjp, jvp=_custom_jvp_jvp, multiple_results=True,
                            family="autodiff")

PRIMITIVES = [stop_gradient, custom_vjp_call, custom_jvp_call]
