"""Primitives that exist for differentiation.

    stop_gradient         the identity, with no derivative
    custom_vjp_call       calls region 0 (fun); its vjp runs the user's fwd (outputs and
                          residuals) and bwd (residuals and output cotangents to argument
                          cotangents), both given by the `rule` attribute
    custom_jvp_call       calls region 0 (fun); its jvp runs the user's rule (args and
                          tangents to outputs and output tangents), given by `rule`; its
                          vjp transposes that rule (it is linear in the tangents)
    checkpoint            calls region 0 (fun); its vjp computes fun's forward again from
                          the arguments (behind an optimization_barrier, so XLA cannot
                          merge the recomputation with the first forward) instead of
                          keeping fun's intermediates alive until the backward pass
    optimization_barrier  the identity on any number of operands, which XLA may not
                          move computations across or merge with computations outside

Operands of the call primitives are the arguments (`n_args`) followed by tensors `fun`
closed over. A custom rule only speaks of the arguments, so differentiating with
respect to a closed-over tensor is an error that says to pass it as an argument.

The user's rules are traced only when the call is differentiated: the `rule` attribute
is a `Rule`, which builds its Functions on first use (a rule may call the custom
function itself, as JAX's examples do; the inner call is again a call with a rule that
is traced only if it is differentiated in turn). Rule region layouts:
    custom_vjp:  fwd: args -> (outs, residuals);  bwd: (residuals, cts) -> arg cotangents
    custom_jvp:  jvp: (args, tangents) -> (outs, output tangents)
Emission and the reference rule run `fun` in place.
"""

from __future__ import annotations

from collections.abc import Callable

from ..autodiff import DifferentiationError, inline, jvp_into, vjp_into
from ..batch_rules import batch_size, bring_all
from ..batching import batch_function, batched_type
from ..errors import ShapeError
from ..ir import Function
from ..primitive import NOT_DIFFERENTIABLE, Primitive

stop_gradient = Primitive("stop_gradient", lambda x: x, lambda ctx, x: x, lambda x: x,
                          vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, family="autodiff")
stop_gradient.batch = lambda ops, operands, batched: (ops.bind(stop_gradient, *operands),)


class Rule:
    """A user-written derivative rule as an attribute: `build()` traces it into its
    region Functions on first use. Equal rules (same `key`: the custom function, its
    rule functions and the argument signature) give equal programs, so the key, not
    the object, goes into the structural key of the IR."""

    __slots__ = ("name", "key", "_build", "_regions")

    def __init__(self, name: str, key, build: Callable[[], tuple]):
        self.name, self.key, self._build, self._regions = name, key, build, None

    def regions(self) -> tuple:
        if self._regions is None:
            self._regions = tuple(self._build())
        return self._regions

    def __eq__(self, other) -> bool:
        return isinstance(other, Rule) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"rule<{self.name}>"


def _call_rule(*in_types, out_types, n_args, rule=None, regions=()):
    if len(regions) != 1:
        raise ShapeError("a call needs exactly one region, the function it calls")
    if regions[0].param_types != tuple(in_types):
        raise ShapeError(f"the called function takes {regions[0].param_types}, but the "
                         f"operands are {tuple(in_types)}")
    return tuple(out_types)


def _call_emit(ctx, *names):
    return ctx.emitter.emit_ops(ctx.regions[0], list(names))


def _call_ref(*xs, out_types, n_args, rule=None, regions):
    return tuple(regions[0](*xs))


def _all_batched(fn: Function, n: int, axis) -> Function:
    """fn with every param and every result batched (a leading axis of n)."""
    return batch_function(fn, [True] * len(fn.params), n, force=[True] * len(fn.results),
                          axis=axis)[0]


def _call_batcher(prim: Primitive):
    """The batching rule of a call with a rule: every operand batched (unbatched ones are
    broadcast, so a batched cotangent reaching one sums over the batch through the
    broadcast), and so every region: fun now, the rule's regions when (if) the batched
    call is differentiated."""
    def batch(ops, operands, batched, *, out_types, n_args, rule, regions):
        n = batch_size(operands, batched)
        operands = bring_all(ops, operands, batched)

        def rule_regions():
            return tuple(_all_batched(f, n, ops.axis) for f in rule.regions())

        return ops.bind_many(prim, *operands, regions=(_all_batched(regions[0], n, ops.axis),),
                             out_types=tuple(batched_type(t, n) for t in out_types),
                             n_args=n_args,
                             rule=Rule(rule.name, ("batched", rule.key, n, ops.axis),
                                       rule_regions))
    return batch


def closure_error(kind: str, name: str) -> DifferentiationError:
    """Returned by a rule in place of a closed-over operand's cotangent: autodiff raises
    it only if that operand is being differentiated."""
    return DifferentiationError(
        f"differentiation reached a value that the {kind} function {name!r} closes over. "
        f"Its custom rule only says how to differentiate {name} with respect to its "
        f"arguments, so this gradient would silently be zero: pass the value to {name} "
        f"as an argument (and give its cotangent in the rule).")


def _fill(ops, values, like):
    return [v if v is not None else ops.zeros_like(o) for v, o in zip(values, like, strict=True)]


def _custom_vjp_vjp(ops, cts, primals, outs, *, out_types, n_args, rule, regions):
    fwd, bwd = rule.regions()
    k = len(out_types)
    residuals = inline(ops.builder, fwd, primals[:n_args])[k:]
    grads = inline(ops.builder, bwd, [*residuals, *_fill(ops, cts, outs)])
    err = closure_error("custom_vjp", rule.name)
    return (*grads, *[err] * (len(primals) - n_args))


custom_vjp_call = Primitive("custom_vjp_call", _call_rule, _call_emit, _call_ref,
                            vjp=_custom_vjp_vjp, multiple_results=True, family="autodiff")
custom_vjp_call.batch = _call_batcher(custom_vjp_call)


def _custom_jvp_jvp(ops, tangents, primals, outs, *, out_types, n_args, rule, regions):
    if any(t is not None for t in tangents[n_args:]):
        raise closure_error("custom_jvp", rule.name)
    (jvp,) = rule.regions()
    args = primals[:n_args]
    ts = _fill(ops, tangents[:n_args], args)
    return tuple(inline(ops.builder, jvp, [*args, *ts])[len(out_types):])


def _custom_jvp_vjp(ops, cts, primals, outs, *, out_types, n_args, rule, regions):
    # the user's rule maps tangents to output tangents linearly: transpose it
    (jvp,) = rule.regions()
    args = primals[:n_args]
    zeros = [ops.zeros_like(a) for a in args]
    _, grads = vjp_into(ops.builder, jvp, [*args, *zeros],
                        [None] * len(out_types) + list(cts), wrt=range(n_args, 2 * n_args))
    err = closure_error("custom_jvp", rule.name)
    return (*grads, *[err] * (len(primals) - n_args))


custom_jvp_call = Primitive("custom_jvp_call", _call_rule, _call_emit, _call_ref,
                            vjp=_custom_jvp_vjp, jvp=_custom_jvp_jvp, multiple_results=True,
                            family="autodiff")
custom_jvp_call.batch = _call_batcher(custom_jvp_call)


# ---- rematerialisation -------------------------------------------------------------------

def _barrier_emit(ctx, *names):
    return ctx.op("stablehlo.optimization_barrier", list(names), ctx.out_types)


def _barrier_vjp(ops, cts, primals, outs):
    return tuple(cts)


optimization_barrier = Primitive(
    "optimization_barrier", lambda *ts: tuple(ts), _barrier_emit, lambda *xs: tuple(xs),
    vjp=_barrier_vjp, jvp=lambda ops, ts, primals, outs: tuple(ts), multiple_results=True,
    family="autodiff")
optimization_barrier.batch = lambda ops, operands, batched: ops.bind_many(
    optimization_barrier, *operands)


def _checkpoint_rule(*in_types, prevent_cse, regions=()):
    if len(regions) != 1 or regions[0].param_types != tuple(in_types):
        raise ShapeError(f"checkpoint: needs one region taking the operands "
                         f"{tuple(in_types)}")
    return tuple(regions[0].result_types)


def _checkpoint_vjp(ops, cts, primals, outs, *, prevent_cse, regions):
    (fun,) = regions
    if all(c is None for c in cts):
        return (None,) * len(primals)
    args, cts = primals, _fill(ops, cts, outs)
    if prevent_cse:
        # the barrier ties the recomputation to the cotangents: it runs in the backward
        # pass, after the first forward's intermediates are freed, and is never merged
        # with them
        held = ops.bind_many(optimization_barrier, *args, *cts)
        args, cts = held[:len(args)], held[len(args):]
    wrt = [i for i, p in enumerate(fun.params) if p.type.dtype.kind in "fc"]
    _, grads = vjp_into(ops.builder, fun, args, cts, wrt)
    result: list = [None] * len(primals)
    for i, g in zip(wrt, grads, strict=True):
        result[i] = g
    return tuple(result)


def _checkpoint_jvp(ops, tangents, primals, outs, *, prevent_cse, regions):
    _, t_out = jvp_into(ops.builder, regions[0], primals, tangents)
    return tuple(t_out)


def _checkpoint_batch(ops, operands, batched, *, prevent_cse, regions):
    fun, _ = batch_function(regions[0], batched, batch_size(operands, batched),
                            axis=ops.axis)
    return ops.bind_many(checkpoint, *operands, prevent_cse=prevent_cse, regions=(fun,))


checkpoint = Primitive("checkpoint", _checkpoint_rule, _call_emit,
                       lambda *xs, prevent_cse, regions: tuple(regions[0](*xs)),
                       vjp=_checkpoint_vjp, jvp=_checkpoint_jvp, batch=_checkpoint_batch,
                       multiple_results=True, family="autodiff")

PRIMITIVES = [stop_gradient, custom_vjp_call, custom_jvp_call, optimization_barrier,
              checkpoint]
