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

from .. import batch_rules as br
from ..autodiff import inline, vjp_into
from ..batching import batch_function, batch_into, batched_type
from ..builder import Builder
from ..ops import Ops
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

# ---- batching rules -------------------------------------------------------------------
# The calls stay calls: every region is batched (batching.batch_function), so grad of
# vmap and vmap of grad both still run the user's rules, as JAX's custom_vjp / custom_jvp
# batching does. A result is batched when the primal or the rule's version of it is
# (forced on both, so the regions agree on its type). The size comes from ops.axis: a
# collective in a region calls these rules even when no operand is batched.

stop_gradient.batch = br.elementwise(stop_gradient)


def _outs_batched(regions_out_batched) -> list[bool]:
    return [any(bs) for bs in zip(*regions_out_batched, strict=True)]


def _custom_vjp_batch(ops, operands, batched, *, out_types, n_args, regions, **attrs):
    fun, fwd, bwd = regions
    n, k = ops.axis[1], len(out_types)
    batched, axis = list(batched), ops.axis
    _, fun_b = batch_function(fun, batched, n, axis=axis)
    _, fwd_b = batch_function(fwd, batched, n, axis=axis)
    out_b = _outs_batched([fun_b, fwd_b[:k]])
    fun_n, _ = batch_function(fun, batched, n, force=out_b, axis=axis)
    fwd_n, fwd_b = batch_function(fwd, batched, n, force=out_b + [False] * (len(fwd_b) - k),
                                  axis=axis)
    bwd_n = _batch_bwd(bwd, fwd_b[k:] + out_b + batched[n_args:], batched[:n_args], n, axis)
    types = tuple(batched_type(t, n) if b else t for t, b in zip(out_types, out_b, strict=True))
    return ops.bind_many(custom_vjp_call, *operands, out_types=types, n_args=n_args,
                         regions=(fun_n, fwd_n, bwd_n), **attrs)


def _batch_bwd(bwd, batched, args_batched, n, axis):
    """bwd batched, giving each argument's cotangent that argument's batching: summed
    over the batch for an argument every example shares (its cotangent is the sum of the
    examples' cotangents), broadcast where the cotangent does not depend on the batch."""
    b = Builder(f"{bwd.name}_batched")
    params = [b.param(batched_type(p.type, n) if pb else p.type)
              for p, pb in zip(bwd.params, batched, strict=True)]
    outs, outs_b = batch_into(b, bwd, params, batched, axis or (None, n))
    ops = Ops(b)
    grads = []
    for g, gb, ab in zip(outs, outs_b, args_batched, strict=True):
        if gb and not ab:
            g = ops.reduce_sum(g, (0,))
        grads.append(br.bring(ops, g, gb, n) if ab else g)
    return b.build(grads)


custom_vjp_call.batch = _custom_vjp_batch


def _custom_jvp_batch(ops, operands, batched, *, out_types, n_args, regions, **attrs):
    fun, rule = regions
    n, k = ops.axis[1], len(out_types)
    batched, axis = list(batched), ops.axis
    # the rule's tangents have their arguments' types, so their batching
    rule_in = batched[:n_args] * 2 + batched[n_args:]
    _, fun_b = batch_function(fun, batched, n, axis=axis)
    _, rule_b = batch_function(rule, rule_in, n, axis=axis)
    out_b = _outs_batched([fun_b, rule_b[:k], rule_b[k:]])
    fun_n, _ = batch_function(fun, batched, n, force=out_b, axis=axis)
    rule_n, _ = batch_function(rule, rule_in, n, force=out_b * 2, axis=axis)
    types = tuple(batched_type(t, n) if b else t for t, b in zip(out_types, out_b, strict=True))
    return ops.bind_many(custom_jvp_call, *operands, out_types=types, n_args=n_args,
                         regions=(fun_n, rule_n), **attrs)


custom_jvp_call.batch = _custom_jvp_batch

PRIMITIVES = [stop_gradient, custom_vjp_call, custom_jvp_call]
