"""Automatic differentiation as IR transforms: reverse mode (VJP) and forward mode (JVP).

Both run the one environment-walking loop (compiler/walk.py, shared with the
interpreter and the emitter), writing new ops into a Builder through each primitive's rule:

    reverse  copy the forward ops, then walk them backwards, accumulating one cotangent
             per value and calling `prim.vjp(ops, cts, primals, outs, **attrs)`;
    forward  walk the ops forwards, carrying one tangent per value and calling
             `prim.jvp(ops, tangents, primals, outs, **attrs)`. A primitive with no jvp
             rule gets one from its vjp rule: a vjp rule is linear in the cotangents, so
             transposing it (reverse mode over the rule itself, with the tangents as its
             cotangents) gives the Jacobian-vector product.

The rule contract is the one in compiler/ops.py, plus one case: a vjp rule may give a
DifferentiationError in place of an operand's cotangent when it cannot differentiate
with respect to that operand (a custom rule and a tensor its function closes over); it
is raised only if that operand is actually being differentiated. Ops with regions
(control flow, custom derivative calls) also get their region Functions as `regions=`
(as the interpreter does), so their rules can differentiate the bodies with
`vjp_function` / `jvp_function` or build into the current builder with `vjp_into` /
`jvp_into`.

Only floating-point and complex values carry derivatives. Values computed only from
non-differentiated inputs ("inactive" values) get no cotangent, so their backward ops
are never built. A primitive marked NOT_DIFFERENTIABLE produces inactive results (a
zero derivative, as JAX does for sign, floor, comparisons ...).

Entry points:
    inline(builder, fn, args) -> outs                       copy fn's ops into builder
    vjp_into(builder, fn, args, cts, wrt) -> (outs, grads)  forward + backward in builder
    Linearized(builder, fn, args, wrt).backward(cts)        several backward passes over
                                                            one forward copy (jacrev)
    jvp_into(builder, fn, args, tangents) -> (outs, tangents_out)
    vjp_function(fn, wrt) -> Function                       standalone, for region bodies
    jvp_function(fn, wrt) -> Function
"""

from __future__ import annotations

from collections.abc import Sequence

from .builder import Builder
from .ir import Function, Location, Op, TensorType, Value
from .ops import Ops
from .primitive import NOT_DIFFERENTIABLE
from .walk import walk


class DifferentiationError(TypeError):
    """A primitive on the differentiated path has no derivative rule."""


def is_differentiable_type(t: TensorType) -> bool:
    return t.dtype.kind in "fc"


def inline(builder: Builder, fn: Function, args: Sequence[Value],
           env: dict[Value, Value] | None = None, loc: Location | None = None
           ) -> list[Value]:
    """Append fn's ops to `builder` with fn's params bound to `args`; return its results.
    `env`, when given, receives every value of fn mapped to its copy; `loc`, when given,
    is the location of every copied op (the line that called a cached function).

    The walk written out for copying (traces inline cached functions at every call):
    the ops keep their result types, so no shape rule runs."""
    if len(args) != len(fn.params):
        raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    env = {} if env is None else env
    env.update(zip(fn.params, args, strict=True))
    ops = builder.ops
    for op in fn.ops:
        results = tuple([Value(r.type) for r in op.results])
        ops.append(Op(op.prim, tuple([env[v] for v in op.operands]), op.attrs, results,
                      op.loc if loc is None else loc, op.regions))
        env.update(zip(op.results, results, strict=False))  # same length
    return [env[r] for r in fn.results]


def _copier(builder: Builder, loc: Location | None = None):
    """The walk's rule that copies an op into `builder` with new operands."""
    def copy(op: Op, operands: list[Value]) -> tuple[Value, ...]:
        return builder.bind(op.prim, operands, op.attrs, op.loc if loc is None else loc,
                            op.regions, out_types=op.result_types)
    return copy


def _rule_kwargs(op: Op) -> dict:
    kwargs = dict(op.attrs)
    if op.regions:
        kwargs["regions"] = op.regions
    return kwargs


def _no_rule(op: Op, mode: str) -> DifferentiationError:
    where = f" (used at {op.loc.file}:{op.loc.line})" if op.loc.line else ""
    return DifferentiationError(
        f"cannot differentiate through primitive {op.prim.name!r}{where}: it has no {mode} "
        f"rule yet. Wrap the computation in stablejit.stop_gradient if no gradient should "
        f"flow through it, or give it a rule with stablejit.custom_vjp.")


class Linearized:
    """The forward ops of `fn` copied into `builder`, ready for backward passes.

    wrt: indices of the params to differentiate with respect to (default: all params
    with a floating-point or complex type).
    """

    def __init__(self, builder: Builder, fn: Function, args: Sequence[Value],
                 wrt: Sequence[int] | None = None):
        self.builder, self.fn = builder, fn
        if wrt is None:
            wrt = [i for i, p in enumerate(fn.params) if is_differentiable_type(p.type)]
        self.wrt = tuple(wrt)
        self.env: dict[Value, Value] = {}
        self.outs = inline(builder, fn, args, self.env)
        # which values depend (differentiably) on the wrt params
        active = {fn.params[i] for i in self.wrt if is_differentiable_type(fn.params[i].type)}
        self.active_ops: list[Op] = []
        for op in fn.ops:
            if op.prim.vjp is NOT_DIFFERENTIABLE:
                continue
            if any(v in active for v in op.operands):
                self.active_ops.append(op)
                active.update(r for r in op.results if is_differentiable_type(r.type))
        self.active = active

    def backward(self, cts: Sequence[Value | None]) -> list[Value]:
        """Cotangents of the wrt params given one cotangent per result of fn (None: zero).
        A param that no cotangent reaches gets zeros."""
        fn, env, active = self.fn, self.env, self.active
        acc: dict[Value, Value] = {}
        base = Ops(self.builder)
        for r, ct in zip(fn.results, cts, strict=True):
            if ct is not None and r in active:
                _accumulate(base, acc, r, ct)
        for op in reversed(self.active_ops):
            if not any(r in acc for r in op.results):
                continue
            rule = op.prim.vjp
            if rule is None:
                raise _no_rule(op, "vjp")
            cts_op = tuple(acc.pop(r, None) for r in op.results)
            in_cts = rule(Ops(self.builder, op.loc), cts_op,
                          tuple(env[v] for v in op.operands),
                          tuple(env[r] for r in op.results), **_rule_kwargs(op))
            for v, c in zip(op.operands, in_cts, strict=True):
                if isinstance(c, DifferentiationError):
                    if v in active:
                        raise c
                    continue
                if c is not None and v in active:
                    if c.type != v.type:
                        raise AssertionError(
                            f"vjp rule of {op.prim.name} gave a cotangent of type {c.type} "
                            f"for an operand of type {v.type}")
                    _accumulate(base, acc, v, c)
        grads = []
        for i in self.wrt:
            p = fn.params[i]
            g = acc.get(p)
            grads.append(g if g is not None else base.zeros_like(env[p]))
        return grads


def _accumulate(ops: Ops, acc: dict, v: Value, ct: Value) -> None:
    prev = acc.get(v)
    acc[v] = ct if prev is None else ops.add(prev, ct)


def vjp_into(builder: Builder, fn: Function, args: Sequence[Value],
             cts: Sequence[Value | None], wrt: Sequence[int] | None = None
             ) -> tuple[list[Value], list[Value]]:
    """Build fn's forward and backward pass into `builder`. Returns (fn's results,
    cotangents of the `wrt` params)."""
    lin = Linearized(builder, fn, args, wrt)
    return lin.outs, lin.backward(cts)


def vjp_function(fn: Function, wrt: Sequence[int] | None = None,
                 name: str | None = None) -> Function:
    """A Function (fn's params..., one cotangent per fn result...) -> (fn's results...,
    cotangents of the `wrt` params...). Cotangents of non-float results are ignored.

    Used for region bodies (cond branches, loop bodies): differentiate the body once
    and call the result as a region of the transformed op."""
    b = Builder(name or f"{fn.name}_vjp")
    args = [b.param(p.type) for p in fn.params]
    cts = [b.param(r.type) for r in fn.results]
    outs, grads = vjp_into(b, fn, args, cts, wrt)
    return b.build(outs + grads)


def jvp_into(builder: Builder, fn: Function, args: Sequence[Value],
             tangents: Sequence[Value | None]) -> tuple[list[Value], list[Value | None]]:
    """Build fn's forward pass with tangents into `builder`. `tangents` has one entry per
    param (None: zero). Returns (results, result tangents, None where zero)."""
    tan: dict[Value, Value] = {p: t for p, t in zip(fn.params, tangents, strict=True)
                               if t is not None and is_differentiable_type(p.type)}

    copy = _copier(builder)

    def forward(op: Op, primals: list[Value]) -> tuple[Value, ...]:
        outs = copy(op, primals)
        if op.prim.vjp is NOT_DIFFERENTIABLE or op.prim.jvp is NOT_DIFFERENTIABLE:
            return outs
        t_in = tuple(tan.get(v) for v in op.operands)
        if all(t is None for t in t_in):
            return outs
        if op.prim.jvp is not None:
            t_out = op.prim.jvp(Ops(builder, op.loc), t_in, tuple(primals), outs,
                                **_rule_kwargs(op))
        elif op.prim.vjp is not None:
            t_out = _jvp_by_transposition(builder, op, t_in, tuple(primals), outs)
        else:
            raise _no_rule(op, "jvp or vjp")
        for r, t in zip(op.results, t_out, strict=True):
            if t is not None and is_differentiable_type(r.type):
                tan[r] = t
        return outs

    outs = walk(fn, args, forward)
    return outs, [tan.get(r) for r in fn.results]


def _jvp_by_transposition(builder: Builder, op: Op, t_in, primals, outs) -> list[Value | None]:
    """J t from the vjp rule: the rule maps result cotangents to operand cotangents
    linearly (its matrix is J^T), so reverse mode over the rule with `t_in` as the
    cotangents of its outputs yields J t as the cotangents of its inputs."""
    b = Builder(f"{op.prim.name}_vjp_rule")
    p_params = [b.param(v.type) for v in primals]
    o_params = [b.param(v.type) for v in outs]
    ct_params = [b.param(v.type) for v in outs]
    in_cts = op.prim.vjp(Ops(b, op.loc), tuple(ct_params), tuple(p_params), tuple(o_params),
                         **_rule_kwargs(op))
    for c, t in zip(in_cts, t_in, strict=True):
        if isinstance(c, DifferentiationError) and t is not None:
            raise c
    keep = [i for i, c in enumerate(in_cts) if c is not None and t_in[i] is not None
            and not isinstance(c, DifferentiationError)]
    if not keep:
        return [None] * len(outs)
    rule_fn = b.build([in_cts[i] for i in keep])
    ops = Ops(builder, op.loc)
    zeros = [ops.zeros_like(o) for o in outs]
    n = len(primals) + len(outs)
    wrt = [n + i for i, o in enumerate(outs) if is_differentiable_type(o.type)]
    _, grads = vjp_into(builder, rule_fn, [*primals, *outs, *zeros],
                        [t_in[i] for i in keep], wrt)
    result: list[Value | None] = [None] * len(outs)
    diff_outs = (i for i, o in enumerate(outs) if is_differentiable_type(o.type))
    for i, g in zip(diff_outs, grads, strict=True):
        result[i] = g
    return result


def jvp_function(fn: Function, wrt: Sequence[int] | None = None,
                 name: str | None = None) -> Function:
    """A Function (fn's params..., one tangent per `wrt` param...) -> (fn's results...,
    one tangent per result...), zero tangents written as zeros."""
    if wrt is None:
        wrt = [i for i, p in enumerate(fn.params) if is_differentiable_type(p.type)]
    b = Builder(name or f"{fn.name}_jvp")
    args = [b.param(p.type) for p in fn.params]
    tangents: list[Value | None] = [None] * len(fn.params)
    for i in wrt:
        tangents[i] = b.param(fn.params[i].type)
    outs, t_out = jvp_into(b, fn, args, tangents)
    ops = Ops(b)
    return b.build(outs + [t if t is not None else ops.zeros_like(o)
                           for t, o in zip(t_out, outs, strict=True)])


__all__ = ["DifferentiationError", "Linearized", "inline", "vjp_into", "vjp_function",
           "jvp_into", "jvp_function", "is_differentiable_type"]
