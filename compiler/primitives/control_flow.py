"""Control flow: `cond` (StableHLO if / case), `while` and `scan`, whose bodies are IR
Functions held in `Op.regions`.

Regions are closed: a body reads only its own parameters, so every value a body uses
from outside (a closure in the user's code) is an explicit operand of the op. That keeps
dead-code elimination, CSE and the structural key exact without looking inside bodies.

    cond(index, *args)        regions: one Function per branch, each args -> results.
                              index is bool[] (two branches: [false, true], emitted as
                              stablehlo.if) or i32[] (emitted as stablehlo.case; an
                              out-of-range index runs the last branch, as in StableHLO).
    while(*consts, *carry)    regions: (cond: consts+carry -> bool[],
                                        body: consts+carry -> carry). attr num_consts.
    scan(*consts, *init, *xs) region: body consts+carry+x slices -> carry+y slices.
                              attrs num_consts, num_carry, length, reverse. Results:
                              final carry, then the ys stacked on a new leading axis.
                              Emitted as a stablehlo.while over a counter.

Reverse-mode rules: cond differentiates each branch (autodiff.vjp_function) and runs
the matching one; scan stores the carry of every step and runs a backward scan whose
body is the step's VJP; while has no reverse rule (its trip count is dynamic, so the
steps' values cannot be stored), which the error says. These rules differentiate bodies
with compiler/autodiff.py, so this family sits above autodiff in the import graph (the
first-order families sit below it).
"""

from __future__ import annotations

import numpy as np

from .. import batch_rules as br
from .. import dtypes as dt
from ..autodiff import inline, jvp_function, vjp_function, vjp_into
from ..batching import batch_function, batch_into
from ..builder import Builder
from ..errors import ShapeError
from ..ir import Function, TensorType
from ..ops import Ops
from ..passes.dce import dce
from ..primitive import Primitive
from .reductions import reduce_or

_I32 = TensorType((), dt.int32)
_I64 = TensorType((), dt.int64)
_BOOL = TensorType((), dt.bool_)


def _types(ts) -> str:
    return "(" + ", ".join(str(t) for t in ts) + ")"


def _emit_body(ctx, fn: Function, args) -> list[str]:
    return ctx.emitter.emit_ops(fn, list(args))


def _is_diff(t: TensorType) -> bool:
    return t.dtype.kind in "fc"


# ---- cond ----------------------------------------------------------------------------

def _cond_rule(index, *args, regions=()):
    if index.shape != () or index.dtype not in (dt.bool_, dt.int32):
        raise ShapeError(f"cond: the branch index must be a bool[] or i32[] scalar, got "
                         f"{index}")
    if not regions:
        raise ShapeError("cond: needs at least one branch")
    if index.dtype is dt.bool_ and len(regions) != 2:
        raise ShapeError(f"cond: a boolean predicate needs exactly two branches, got "
                         f"{len(regions)}")
    first = regions[0].result_types
    for i, f in enumerate(regions):
        if f.param_types != tuple(args):
            raise ShapeError(f"cond: branch {i} takes {_types(f.param_types)}, but the "
                             f"operands are {_types(args)}")
        if f.result_types != first:
            raise ShapeError(f"cond: branch {i} returns {_types(f.result_types)}, but "
                             f"branch 0 returns {_types(first)}")
    return tuple(first)


def _cond_emit(ctx, index, *args):
    def region(fn):
        return ctx.region([], lambda: _emit_body(ctx, fn, args))

    branches = ctx.regions
    if ctx.in_types[0].dtype is dt.bool_:  # regions are [false, true]; `if` wants true first
        return ctx.op("stablehlo.if", [index], ctx.out_types,
                      regions=[region(branches[1]), region(branches[0])])
    return ctx.op("stablehlo.case", [index], ctx.out_types,
                  regions=[region(f) for f in branches])


def _cond_ref(index, *args, regions):
    i = int(index)
    if not 0 <= i < len(regions):
        i = len(regions) - 1
    return tuple(regions[i](*args))


def _fill_cts(ops, cts, outs):
    """One cotangent per result: zeros where the cotangent is None."""
    return [c if c is not None else ops.zeros_like(o) for c, o in zip(cts, outs, strict=True)]


def _cond_vjp(ops, cts, primals, outs, *, regions):
    index, *args = primals
    wrt = [i for i, a in enumerate(args) if _is_diff(a.type)]
    if not wrt or all(c is None for c in cts):
        return (None,) * len(primals)
    nres = len(outs)
    grad_fns = []
    for f in regions:
        g = vjp_function(f, wrt, name=f"{f.name}_vjp")  # (args, cts) -> (results, grads)
        grad_fns.append(dce(Function(g.name, g.params, g.ops, g.results[nres:])))
    grads = ops.bind_many(cond, index, *args, *_fill_cts(ops, cts, outs), regions=grad_fns)
    result: list = [None] * len(primals)
    for i, g in zip(wrt, grads, strict=True):
        result[1 + i] = g
    return tuple(result)


def _cond_jvp(ops, tangents, primals, outs, *, regions):
    index, *args = primals
    wrt = [i for i, a in enumerate(args) if tangents[1 + i] is not None and _is_diff(a.type)]
    if not wrt:
        return (None,) * len(outs)
    fns = [jvp_function(f, wrt, name=f"{f.name}_jvp") for f in regions]
    res = ops.bind_many(cond, index, *args, *[tangents[1 + i] for i in wrt], regions=fns)
    n = len(outs)
    return tuple(t if _is_diff(o.type) else None for t, o in zip(res[n:], outs, strict=True))


cond = Primitive("cond", _cond_rule, _cond_emit, _cond_ref, vjp=_cond_vjp, jvp=_cond_jvp,
                 multiple_results=True, family="control_flow")

# ---- while ---------------------------------------------------------------------------


def _while_rule(*operands, num_consts, regions=()):
    if len(regions) != 2:
        raise ShapeError("while: needs two regions, the condition and the body")
    cond_fn, body_fn = regions
    carry = operands[num_consts:]
    if cond_fn.param_types != tuple(operands):
        raise ShapeError(f"while: the condition takes {_types(cond_fn.param_types)}, but the "
                         f"operands are {_types(operands)}")
    if cond_fn.result_types != (_BOOL,):
        raise ShapeError(f"while: the condition must return one bool[] scalar, it returns "
                         f"{_types(cond_fn.result_types)}")
    if body_fn.param_types != tuple(operands):
        raise ShapeError(f"while: the body takes {_types(body_fn.param_types)}, but the "
                         f"operands are {_types(operands)}")
    if body_fn.result_types != tuple(carry):
        raise ShapeError(f"while: the body returns {_types(body_fn.result_types)}, but the "
                         f"loop carry is {_types(carry)}")
    return tuple(carry)


def _while_emit(ctx, *operands):
    nc = ctx.attrs["num_consts"]
    cond_fn, body_fn = ctx.regions
    types = list(ctx.in_types)

    def body(*args):
        return list(args[:nc]) + _emit_body(ctx, body_fn, args)

    outs = ctx.op("stablehlo.while", list(operands), types,
                  regions=[ctx.region(types, lambda *a: _emit_body(ctx, cond_fn, a)),
                           ctx.region(types, body)])
    return outs[nc:]


def _while_ref(*operands, num_consts, regions):
    cond_fn, body_fn = regions
    consts, carry = list(operands[:num_consts]), list(operands[num_consts:])
    while bool(cond_fn(*consts, *carry)[0]):
        carry = list(body_fn(*consts, *carry))
    return tuple(carry)


def _while_vjp(ops, cts, primals, outs, **attrs):
    loc = ops.loc
    where = f" (the loop at {loc.file}:{loc.line})" if loc.line else ""
    raise TypeError(
        f"reverse-mode differentiation (grad, vjp) through while_loop is not supported"
        f"{where}: its trip count is only known at run time, so the values of its steps "
        f"cannot be stored for the backward pass. Use stablejit.fori_loop with Python int "
        f"bounds or stablejit.scan (both differentiable), as in JAX; forward mode (jvp) "
        f"works through while_loop.")


def _while_jvp(ops, tangents, primals, outs, *, num_consts, regions):
    cond_fn, body_fn = regions
    nc = num_consts
    consts, carry = primals[:nc], primals[nc:]
    # every float carry gets a tangent (it may become nonzero inside the loop); consts
    # only where one is given
    wc = [i for i in range(nc) if tangents[i] is not None and _is_diff(consts[i].type)]
    wk = [i for i, v in enumerate(carry) if _is_diff(v.type)]
    if not wk:
        return (None,) * len(outs)
    t_consts = [tangents[i] for i in wc]
    t_carry = [tangents[nc + i] if tangents[nc + i] is not None else ops.zeros_like(carry[i])
               for i in wk]
    jb = jvp_function(body_fn, wc + [nc + i for i in wk], name=f"{body_fn.name}_jvp")
    # jb params: consts, carry, t_consts, t_carry -> carry, one tangent per carry result
    p = jb.params
    nk = len(carry)
    c_par, k_par = p[:nc], p[nc:nc + nk]
    tc_par, tk_par = p[nc + nk:nc + nk + len(wc)], p[nc + nk + len(wc):]
    body_results = list(jb.results[:nk]) + [jb.results[nk + i] for i in wk]
    new_body = Function(jb.name, [*c_par, *tc_par, *k_par, *tk_par], jb.ops, body_results)
    b = Builder(f"{cond_fn.name}_jvp")
    cp = [b.param(v.type) for v in consts]
    for v in t_consts:
        b.param(v.type)
    kp = [b.param(v.type) for v in carry]
    for v in t_carry:
        b.param(v.type)
    new_cond = b.build(inline(b, cond_fn, cp + kp))
    res = ops.bind_many(while_, *consts, *t_consts, *carry, *t_carry,
                        num_consts=nc + len(wc), regions=(new_cond, new_body))
    out: list = [None] * len(outs)
    for j, i in enumerate(wk):
        out[i] = res[nk + j]
    return tuple(out)


while_ = Primitive("while", _while_rule, _while_emit, _while_ref, vjp=_while_vjp,
                   jvp=_while_jvp, multiple_results=True, family="control_flow")

# ---- scan ----------------------------------------------------------------------------


def _scan_rule(*operands, num_consts, num_carry, length, reverse, regions=()):
    if len(regions) != 1:
        raise ShapeError("scan: needs exactly one region, the body")
    (body,) = regions
    nc, nk = num_consts, num_carry
    consts, carry, xs = operands[:nc], operands[nc:nc + nk], operands[nc + nk:]
    for i, x in enumerate(xs):
        if x.ndim < 1 or x.shape[0] != length:
            raise ShapeError(f"scan: scanned operand {i} has type {x}, but its leading axis "
                             f"must have the scan length {length}")
    slices = tuple(TensorType(x.shape[1:], x.dtype) for x in xs)
    expected = tuple(consts) + tuple(carry) + slices
    if body.param_types != expected:
        raise ShapeError(f"scan: the body takes {_types(body.param_types)}, but consts, carry "
                         f"and slices are {_types(expected)}")
    outs = body.result_types
    if outs[:nk] != tuple(carry):
        raise ShapeError(f"scan: the body returns carry {_types(outs[:nk])}, but the loop "
                         f"carry is {_types(carry)}")
    return tuple(carry) + tuple(TensorType((length, *y.shape), y.dtype) for y in outs[nk:])


def _scan_emit(ctx, *operands):
    a = ctx.attrs
    nc, nk, length, reverse = a["num_consts"], a["num_carry"], a["length"], a["reverse"]
    (body,) = ctx.regions
    in_types = list(ctx.in_types)
    nx = len(in_types) - nc - nk
    y_types = list(ctx.out_types[nk:])
    ys0 = [ctx.constant(0, t.dtype, t.shape) for t in y_types]
    if length == 0:  # no step runs (and no slice of an empty axis may be written)
        return [*operands[nc:nc + nk], *ys0]
    zero = ctx.constant(0, dt.int64)
    state_types = [_I64, *in_types, *y_types]

    def cond_region(i, *rest):
        n = ctx.constant(length, dt.int64)
        return ctx.op("stablehlo.compare", [i, n], [_BOOL],
                      "comparison_direction = #stablehlo<comparison_direction LT>, "
                      "compare_type = #stablehlo<comparison_type SIGNED>")

    def body_region(i, *rest):
        zero = ctx.constant(0, dt.int64)  # made inside: regions use only their own values
        consts, carry = rest[:nc], rest[nc:nc + nk]
        xs, ys = rest[nc + nk:nc + nk + nx], rest[nc + nk + nx:]
        idx = i
        if reverse:
            last = ctx.constant(length - 1, dt.int64)
            idx = ctx.op("stablehlo.subtract", [last, i], [_I64])[0]
        slices = []
        for x, t in zip(xs, in_types[nc + nk:], strict=True):
            starts = [idx] + [zero] * (t.ndim - 1)
            one = TensorType((1, *t.shape[1:]), t.dtype)
            s = ctx.dynamic_slice(x, starts, one)
            slices.append(ctx.op("stablehlo.reshape", [s], [TensorType(t.shape[1:],
                                                                      t.dtype)])[0])
        res = _emit_body(ctx, body, [*consts, *carry, *slices])
        new_ys = []
        for buf, y, t in zip(ys, res[nk:], y_types, strict=True):
            y1 = ctx.op("stablehlo.reshape", [y], [TensorType((1, *t.shape[1:]), t.dtype)])[0]
            starts = [idx] + [zero] * (t.ndim - 1)
            new_ys.append(ctx.op("stablehlo.dynamic_update_slice", [buf, y1, *starts],
                                 [t])[0])
        one = ctx.constant(1, dt.int64)
        i1 = ctx.op("stablehlo.add", [i, one], [_I64])[0]
        return [i1, *consts, *res[:nk], *xs, *new_ys]

    outs = ctx.op("stablehlo.while", [zero, *operands, *ys0], state_types,
                  regions=[ctx.region(state_types, cond_region),
                           ctx.region(state_types, body_region)])
    return outs[1 + nc:1 + nc + nk] + outs[1 + len(in_types):]


def _scan_ref(*operands, num_consts, num_carry, length, reverse, regions):
    (body,) = regions
    nc, nk = num_consts, num_carry
    consts, carry, xs = operands[:nc], list(operands[nc:nc + nk]), operands[nc + nk:]
    ys: list = [None] * length
    for k in range(length):
        i = length - 1 - k if reverse else k
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry, ys[i] = list(out[:nk]), out[nk:]
    if not length:  # nothing to stack: the body's result types give the empty ys
        return (*carry, *[np.zeros((0, *t.shape), t.dtype.np)
                          for t in body.fn.result_types[nk:]])
    return (*carry, *[np.stack([y[j] for y in ys]) for j in range(len(ys[0]))])


def _scan_vjp(ops, cts, primals, outs, *, num_consts, num_carry, length, reverse, regions):
    (body,) = regions
    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    if all(c is None for c in cts):
        return (None,) * len(primals)
    # forward again, keeping the carry that enters every step (the residuals)
    bp = body.params
    keep = Function(f"{body.name}_keep", bp, body.ops,
                    [*body.results, *bp[nc:nc + nk]])
    fwd = ops.bind_many(scan, *primals, num_consts=nc, num_carry=nk, length=length,
                        reverse=reverse, regions=(keep,))
    carries = fwd[len(outs):]
    # backward: consts, carry (const cotangents so far, carry cotangent), scanned
    # (x slices, step carries, y cotangents) -> carry, scanned (x cotangents)
    dc = [i for i, v in enumerate(consts) if _is_diff(v.type)]
    dk = [i for i, v in enumerate(init) if _is_diff(v.type)]
    dx = [i for i, v in enumerate(xs) if _is_diff(v.type)]
    y_outs = outs[nk:]
    ct_carry = [cts[i] if cts[i] is not None else ops.zeros_like(outs[i]) for i in dk]
    ct_ys = [cts[nk + j] if cts[nk + j] is not None else ops.zeros_like(y)
             for j, y in enumerate(y_outs)]
    ct_consts0 = [ops.zeros_like(consts[i]) for i in dc]

    b = Builder(f"{body.name}_bwd")
    p_consts = [b.param(v.type) for v in consts]
    p_acc = [b.param(consts[i].type) for i in dc]
    p_ctk = [b.param(init[i].type) for i in dk]
    p_x = [b.param(TensorType(x.type.shape[1:], x.type.dtype)) for x in xs]
    p_k = [b.param(v.type) for v in init]
    p_cty = [b.param(TensorType(y.type.shape[1:], y.type.dtype)) for y in y_outs]
    bops = type(ops)(b, ops.loc)
    step_cts = [p_ctk[dk.index(i)] if i in dk else None for i in range(nk)] + p_cty
    wrt = dc + [nc + i for i in dk] + [nc + nk + i for i in dx]
    _, grads = vjp_into(b, body, [*p_consts, *p_k, *p_x], step_cts, wrt)
    g_c, g_k, g_x = grads[:len(dc)], grads[len(dc):len(dc) + len(dk)], grads[len(dc) + len(dk):]
    acc = [bops.add(a, g) for a, g in zip(p_acc, g_c, strict=True)]
    bwd_fn = b.build([*acc, *g_k, *g_x])
    bwd = ops.bind_many(scan, *consts, *ct_consts0, *ct_carry, *xs, *carries, *ct_ys,
                        num_consts=nc, num_carry=len(dc) + len(dk), length=length,
                        reverse=not reverse, regions=(bwd_fn,))
    result: list = [None] * len(primals)
    for j, i in enumerate(dc):
        result[i] = bwd[j]
    for j, i in enumerate(dk):
        result[nc + i] = bwd[len(dc) + j]
    for j, i in enumerate(dx):
        result[nc + nk + i] = bwd[len(dc) + len(dk) + j]
    return tuple(result)


def _scan_jvp(ops, tangents, primals, outs, *, num_consts, num_carry, length, reverse,
              regions):
    (body,) = regions
    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    tc = [i for i in range(nc) if tangents[i] is not None and _is_diff(consts[i].type)]
    tk = [i for i, v in enumerate(init) if _is_diff(v.type)]
    tx = [i for i, v in enumerate(xs) if tangents[nc + nk + i] is not None
          and _is_diff(v.type)]
    if not tc and not tx and all(tangents[nc + i] is None for i in tk):
        return (None,) * len(outs)
    wrt = tc + [nc + i for i in tk] + [nc + nk + i for i in tx]
    jb = jvp_function(body, wrt, name=f"{body.name}_jvp")
    p, r = jb.params, jb.results
    n = len(body.params)
    t_par = p[n:]
    tc_par, tk_par, tx_par = t_par[:len(tc)], t_par[len(tc):len(tc) + len(tk)], \
        t_par[len(tc) + len(tk):]
    nres = len(body.results)
    ny = nres - nk
    res_t = r[nres:]
    params = [*p[:nc], *tc_par, *p[nc:nc + nk], *tk_par, *p[nc + nk:n], *tx_par]
    results = [*r[:nk], *[res_t[i] for i in tk], *r[nk:nres], *res_t[nk:]]
    new_body = Function(jb.name, params, jb.ops, results)
    t_init = [tangents[nc + i] if tangents[nc + i] is not None else ops.zeros_like(init[i])
              for i in tk]
    res = ops.bind_many(scan, *consts, *[tangents[i] for i in tc], *init, *t_init, *xs,
                        *[tangents[nc + nk + i] for i in tx], num_consts=nc + len(tc),
                        num_carry=nk + len(tk), length=length, reverse=reverse,
                        regions=(new_body,))
    out: list = [None] * len(outs)
    for j, i in enumerate(tk):
        out[i] = res[nk + j]
    base = nk + len(tk) + ny
    for j in range(ny):
        if _is_diff(outs[nk + j].type):
            out[nk + j] = res[base + j]
    return tuple(out)


scan = Primitive("scan", _scan_rule, _scan_emit, _scan_ref, vjp=_scan_vjp, jvp=_scan_jvp,
                 multiple_results=True, family="control_flow")

# ---- batching rules -------------------------------------------------------------------
# Bodies are batched with batching.batch_function (axis=ops.axis, so collectives inside
# see their vmap axis; a body's collective makes the transform call these rules even
# when no operand is batched, hence the size from ops.axis). A loop carry's batching is
# a fixed point: a carry is batched when its initial value is or when the body makes it
# so, which may batch other carries on the next step; at most one more pass per carry
# reaches it.


def _union(a, b) -> list[bool]:
    return [x or y for x, y in zip(a, b, strict=True)]


def _select_batched(ops, pred, on_true, on_false):
    """Per example: on_true where pred[i] (pred: bool[N], values batched on axis 0)."""
    p = ops.broadcast(pred, on_true.type.shape, (0,))
    return ops.select(p, on_true, on_false)


def _cond_batch(ops, operands, batched, *, regions):
    index, *args = operands
    n = ops.axis[1]
    args_b = list(batched[1:])
    if batched[0]:
        # each example picks its own branch: run every branch batched, then select (as
        # JAX does); an index out of range picks the last branch, as cond does
        results = []
        for f in regions:
            outs, outs_b = batch_into(ops.builder, f, args, args_b, ops.axis)
            results.append([br.bring(ops, v, b, n) for v, b in zip(outs, outs_b, strict=True)])
        if index.type.dtype is dt.bool_:
            on_false, on_true = results
            return tuple(_select_batched(ops, index, t, f)
                         for t, f in zip(on_true, on_false, strict=True))
        picked = results[-1]
        for i in range(len(regions) - 2, -1, -1):
            hit = ops.eq(index, ops.const(i, dt.int32, (n,)))
            picked = [_select_batched(ops, hit, v, p)
                      for v, p in zip(results[i], picked, strict=True)]
        return tuple(picked)
    outs_b = [False] * len(regions[0].results)
    for f in regions:
        outs_b = _union(outs_b, batch_function(f, args_b, n, axis=ops.axis)[1])
    branches = tuple(batch_function(f, args_b, n, force=outs_b, axis=ops.axis)[0]
                     for f in regions)
    return ops.bind_many(cond, index, *args, regions=branches)


cond.batch = _cond_batch


def _fixed_point(run, carry_b) -> list[bool]:
    """Iterate `run(carry_b) -> body's carry batching` until no carry becomes batched."""
    carry_b = list(carry_b)
    while True:
        new = _union(carry_b, run(carry_b))
        if new == carry_b:
            return carry_b
        carry_b = new


def _while_batch(ops, operands, batched, *, num_consts, regions):
    cond_fn, body_fn = regions
    nc, n, axis = num_consts, ops.axis[1], ops.axis
    consts_b = list(batched[:nc])
    carry_b = _fixed_point(
        lambda kb: batch_function(body_fn, consts_b + kb, n, axis=axis)[1], batched[nc:])
    _, (pred_b,) = batch_function(cond_fn, consts_b + carry_b, n, axis=axis)
    if pred_b:  # lanes stop at different steps: every carry is per example
        carry_b = [True] * len(carry_b)
    in_b = consts_b + carry_b
    operands = [br.bring(ops, v, was, n) if b else v
                for v, b, was in zip(operands, in_b, batched, strict=True)]
    body_n, _ = batch_function(body_fn, in_b, n, force=carry_b, axis=axis)
    cond_n, _ = batch_function(cond_fn, in_b, n, axis=axis)
    if pred_b:
        cond_n, body_n = _while_masked(cond_n, body_n, nc)
    return ops.bind_many(while_, *operands, num_consts=nc, regions=(cond_n, body_n))


def _while_masked(cond_n: Function, body_n: Function, nc: int) -> tuple[Function, Function]:
    """A batched predicate (bool[N]): loop while any lane's is true, and update only the
    lanes whose predicate is still true (the others keep their final carry), as JAX."""
    b = Builder(f"{cond_n.name}_any")
    ps = [b.param(p.type) for p in cond_n.params]
    (pred,) = inline(b, cond_n, ps)
    any_ = Ops(b).bind(reduce_or, pred, axes=(0,))
    new_cond = b.build([any_])
    b = Builder(f"{body_n.name}_masked")
    ps = [b.param(p.type) for p in body_n.params]
    ops = Ops(b)
    (pred,) = inline(b, cond_n, ps)
    new = inline(b, body_n, ps)
    new_body = b.build([_select_batched(ops, pred, v, old)
                        for v, old in zip(new, ps[nc:], strict=True)])
    return new_cond, new_body


while_.batch = _while_batch


def _scan_batch(ops, operands, batched, *, num_consts, num_carry, regions, **attrs):
    (body,) = regions
    nc, nk, n, axis = num_consts, num_carry, ops.axis[1], ops.axis
    consts_b, xs_b = list(batched[:nc]), list(batched[nc + nk:])
    carry_b = _fixed_point(
        lambda kb: batch_function(body, consts_b + kb + xs_b, n, axis=axis)[1][:nk],
        batched[nc:nc + nk])
    in_b = consts_b + carry_b + xs_b
    ny = len(body.results) - nk
    body_n, out_b = batch_function(body, in_b, n, force=carry_b + [False] * ny, axis=axis)
    consts = operands[:nc]
    init = [br.bring(ops, v, was, n) if b else v
            for v, b, was in zip(operands[nc:nc + nk], carry_b, batched[nc:nc + nk], strict=True)]
    # scan walks axis 0 of xs, so their batch axis goes to 1 (axis 0 of each slice)
    xs = [br.move_axis(ops, x, 0, 1) if b else x
          for x, b in zip(operands[nc + nk:], xs_b, strict=True)]
    outs = ops.bind_many(scan, *consts, *init, *xs, num_consts=nc, num_carry=nk,
                         regions=(body_n,), **attrs)  # length, reverse ... unchanged
    ys = [br.move_axis(ops, y, 1, 0) if b else y
          for y, b in zip(outs[nk:], out_b[nk:], strict=True)]
    return (*outs[:nk], *ys)


scan.batch = _scan_batch

PRIMITIVES = [cond, while_, scan]
