"""Differentiation for users: grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian,
stop_gradient, custom_vjp, custom_jvp.

Every transformation is the same three steps:
  1. trace the user's function into an IR Function (a Trace backend, as jit does);
  2. build the transformed computation with compiler/autodiff.py (forward + backward
     ops, or forward ops with tangents) into a Builder;
  3. either run it (outside any trace: compiled with XLA once per structural key and
     device, or interpreted on the reference backend) or, when an argument is traced
     (inside jit, or inside another transformation), build it straight into that trace,
     so jit(grad(f)), grad(grad(f)) and grad(jit(f)) compose.

Only floating-point (and complex) inputs carry gradients: asking grad for an integer or
boolean argument is a TypeError that names the argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from . import numpy as snp
from . import tree
from .compiler import dtypes as dt
from .compiler.autodiff import Linearized, inline, jvp_function, jvp_into, vjp_function
from .compiler.batch_rules import bring
from .compiler.batching import batch_into
from .compiler.builder import Builder
from .compiler.ir import Attrs, Function, Value
from .compiler.ops import Ops
from .compiler.primitives import custom_ad, shape_ops
from .context import current_backend, using_backend
from .dispatch import bind, bind1, pick
from .errors import at_user_line
from .tensor import Tensor
from .tracing import Trace

# ---- tracing and running IR ------------------------------------------------------------


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else snp.asarray(x)


def trace_function(f: Callable, leaves: Sequence[Tensor], in_tree, name: str = "f"):
    """Trace f(*args) where args = unflatten(in_tree, leaves). Returns (Function,
    out_tree, captured tensors). The Function's params are one per leaf, then one per
    captured tensor (closed-over data too large to embed, or values of an outer trace)."""
    trace = Trace(name)
    abstract = [trace.new_arg(t.type, t.weak) for t in leaves]
    try:
        with using_backend(trace):
            out = f(*tree.unflatten(in_tree, abstract))
            out_leaves, out_tree = tree.flatten(out)
            values = [trace.value_of(_as_tensor(x)) for x in out_leaves]
        fn = trace.builder.build(values)
    finally:
        trace.finish()
    return fn, out_tree, [t for t, _ in trace.captured]


def _name(f) -> str:
    n = getattr(f, "__name__", "f")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in n) or "f"


def run_built(name: str, build: Callable[[Builder, list[Value]], list[Value]],
              inputs: Sequence[Tensor]) -> list[Tensor]:
    """Build IR with `build(builder, input values) -> result values` into a Function and
    run it on the inputs' backend: inside a live trace its ops go into that trace;
    otherwise it runs (compiled behind the executable cache, or interpreted on the
    reference backend)."""
    backend = pick(inputs) if inputs else None
    if backend is None or (not isinstance(backend, Trace)
                           and isinstance(current_backend(), Trace)):
        backend = current_backend()
    b = Builder(name)
    params = [b.param(t.type) for t in inputs]
    return backend.run(b.build(build(b, params)), inputs)


def call_function(fn: Function, inputs: Sequence[Tensor]) -> list[Tensor]:
    """Call an IR Function on tensors: inlined into the current trace, or run."""
    return run_built(fn.name, lambda b, vals: inline(b, fn, vals), inputs)


# ---- arguments ---------------------------------------------------------------------------

def _argnums(argnums, nargs: int, what: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(at_user_line(
                f"{what}: argnums {argnums} is out of range for a call with {nargs} "
                f"positional argument(s)"))
    return tuple(i % nargs for i in nums)


class _Args:
    """The flattened positional arguments and which leaves are differentiated."""

    def __init__(self, args, nums: Sequence[int], what: str, check_float: bool = True):
        leaves, self.in_tree = tree.flatten(tuple(args))
        self.leaves = [_as_tensor(x) for x in leaves]
        self.nums = tuple(nums)
        self.ranges = []
        at = 0
        for child in self.in_tree.children:
            self.ranges.append((at, at + child.num_leaves))
            at += child.num_leaves
        self.wrt = []
        for i in self.nums:
            lo, hi = self.ranges[i]
            for j in range(lo, hi):
                t = self.leaves[j]
                if check_float and t.dtype.kind not in "fc":
                    where = "" if hi - lo == 1 and self.in_tree.children[i].kind is None \
                        else f" (leaf {j - lo} of its pytree)"
                    raise TypeError(at_user_line(
                        f"{what} requires floating-point inputs, but argument {i}{where} has "
                        f"dtype {t.dtype.name}. Integer and boolean inputs carry no "
                        f"gradient: convert it with .astype(stablejit.numpy.float32), or "
                        f"leave it out of argnums."))
            self.wrt.extend(range(lo, hi))

    def unflatten(self, values: Sequence, single: bool):
        """Per differentiated argument, its pytree of `values` (one per wrt leaf)."""
        out, at = [], 0
        for i in self.nums:
            lo, hi = self.ranges[i]
            out.append(tree.unflatten(self.in_tree.children[i], values[at:at + hi - lo]))
            at += hi - lo
        return out[0] if single else tuple(out)


def _check_scalar_output(fn: Function, what: str) -> None:
    t = fn.result_types[0]
    if t.shape != ():
        raise TypeError(at_user_line(
            f"{what} requires a function with a scalar output, but it returned shape "
            f"{t.shape}. Reduce it (e.g. .sum()), or use stablejit.vjp / jacrev for "
            f"non-scalar outputs."))
    if t.dtype.kind != "f":
        raise TypeError(at_user_line(
            f"{what} requires a real floating-point output, but the function returned "
            f"dtype {t.dtype.name}"))


def _split_aux(out_tree, has_aux: bool, what: str, scalar: bool = True):
    if not has_aux:
        if out_tree.num_leaves != 1 or out_tree.kind is not None:
            raise TypeError(at_user_line(
                f"{what} requires a function returning one scalar tensor, got a pytree "
                f"{out_tree}; if the extra outputs are auxiliary data, pass has_aux=True"))
        return None
    if out_tree.kind not in (tuple, list) or len(out_tree.children) != 2 or \
            (scalar and out_tree.children[0].kind is not None):
        main = "scalar output" if scalar else "output"
        raise TypeError(at_user_line(
            f"{what}(has_aux=True) requires a function returning a pair ({main}, "
            f"auxiliary data), got a pytree {out_tree}"))
    return out_tree.children[1]


# ---- grad and friends --------------------------------------------------------------------

def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """A function returning (f(*args), gradient of f w.r.t. the argnums arguments); with
    has_aux=True, f returns (value, aux) and this returns ((value, aux), gradient)."""
    single = isinstance(argnums, int)

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        a = _Args(args, _argnums(argnums, len(args), "grad"), "grad")
        fn, out_tree, captured = trace_function(functools.partial(f, **kwargs), a.leaves,
                                                a.in_tree, _name(f))
        aux_tree = _split_aux(out_tree, has_aux, "grad")
        _check_scalar_output(fn, "grad")
        n_out = len(fn.results)

        def build(b, vals):
            lin = Linearized(b, fn, vals, a.wrt)
            seed = Ops(b).const(1, fn.result_types[0].dtype)
            return lin.outs + lin.backward([seed] + [None] * (n_out - 1))

        outs = run_built(f"{_name(f)}_grad", build, a.leaves + captured)
        value, grads = outs[0], a.unflatten(outs[n_out:], single)
        if has_aux:
            return (value, tree.unflatten(aux_tree, outs[1:n_out])), grads
        return value, grads

    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The gradient of scalar-valued f w.r.t. its argnums arguments (pytrees allowed);
    with has_aux=True, f returns (value, aux) and this returns (gradient, aux)."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_f


def vjp(f: Callable, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn) where vjp_fn(cotangent) gives one cotangent per primal.
    vjp_fn recomputes the forward pass (in one compiled program with the backward pass)
    rather than keeping residuals alive."""
    a = _Args(primals, range(len(primals)), "vjp", check_float=False)
    fn, out_tree, captured = trace_function(f, a.leaves, a.in_tree, _name(f))
    if has_aux:
        aux_tree = _split_aux(out_tree, True, "vjp")
        main_tree = out_tree.children[0]
        n_main = 1
    else:
        main_tree, n_main = out_tree, out_tree.num_leaves
    outs = call_function(fn, a.leaves + captured)
    main = tree.unflatten(main_tree, outs[:n_main])
    inputs = a.leaves + captured
    n_res = len(fn.results)

    def vjp_fn(ct):
        ct_leaves, ct_tree = tree.flatten(ct)
        if ct_tree != main_tree:
            raise TypeError(at_user_line(
                f"vjp_fn expects a cotangent with the structure of f's output {main_tree}, "
                f"got {ct_tree}"))
        ct_t = [_as_tensor(c) for c in ct_leaves]
        for c, r in zip(ct_t, fn.result_types[:n_main], strict=True):
            if c.shape != r.shape:
                raise ValueError(at_user_line(
                    f"vjp_fn: cotangent of shape {c.shape} for an output of shape {r.shape}"))

        def build(b, vals):
            ops = Ops(b)
            n = len(inputs)
            cts = [ops.convert(c, r.dtype) for c, r in zip(vals[n:], fn.result_types, strict=True)]
            lin = Linearized(b, fn, vals[:n], a.wrt)
            return lin.backward(cts + [None] * (n_res - n_main))

        grads = run_built(f"{_name(f)}_vjp", build, inputs + ct_t)
        return tuple(a.unflatten(grads, False))

    if has_aux:
        return main, vjp_fn, tree.unflatten(aux_tree, outs[1:])
    return main, vjp_fn


def jvp(f: Callable, primals: Sequence, tangents: Sequence):
    """(f(*primals), J(primals) @ tangents), with tangents structured like primals."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(at_user_line("jvp: primals and tangents must be tuples or lists"))
    a = _Args(tuple(primals), range(len(primals)), "jvp", check_float=False)
    t_leaves, t_tree = tree.flatten(tuple(tangents))
    if t_tree != a.in_tree:
        raise TypeError(at_user_line(
            f"jvp: tangents have structure {t_tree}, primals have {a.in_tree}"))
    ts = [_as_tensor(t) for t in t_leaves]
    for t, p in zip(ts, a.leaves, strict=True):
        if t.shape != p.shape:
            raise ValueError(at_user_line(
                f"jvp: tangent of shape {t.shape} for a primal of shape {p.shape}"))
    fn, out_tree, captured = trace_function(f, a.leaves, a.in_tree, _name(f))
    n = len(a.leaves)

    def build(b, vals):
        ops = Ops(b)
        tangents = [ops.convert(t, p.type.dtype) if p.type.dtype.kind in "fc" else None
                    for t, p in zip(vals[n + len(captured):], vals[:n], strict=True)]
        outs, t_out = jvp_into(b, fn, vals[:n + len(captured)],
                               tangents + [None] * len(captured))
        return outs + [t if t is not None else ops.zeros_like(o)
                       for t, o in zip(t_out, outs, strict=True)]

    res = run_built(f"{_name(f)}_jvp", build, a.leaves + captured + ts)
    k = len(fn.results)
    return tree.unflatten(out_tree, res[:k]), tree.unflatten(out_tree, res[k:])


# ---- Jacobians -----------------------------------------------------------------------------
# One batched pass, as JAX builds them: the vjp (jacrev) or jvp (jacfwd) of f, batched by
# compiler/batching.py over the standard basis of all outputs (inputs), in one program.


def _basis(ops: Ops, sizes: Sequence[int], types, dtype_of) -> list[Value]:
    """The rows of the identity of size sum(sizes), split into one block per type and
    shaped (rows, *type.shape): the batched one-hot cotangents (tangents)."""
    total = sum(sizes)
    rows = ops.iota((total, total), dt.int32, 0)
    cols = ops.iota((total, total), dt.int32, 1)
    eye = ops.eq(rows, cols)
    out, at = [], 0
    for n, t in zip(sizes, types, strict=True):
        block = ops.bind(shape_ops.slice_, eye, start=(0, at), limit=(total, at + n),
                         strides=(1, 1))
        out.append(ops.reshape(ops.convert(block, dtype_of(t)), (total, *t.shape)))
        at += n
    return out


def _rows(ops: Ops, v: Value, at: int, n: int) -> Value:
    """Rows at..at+n of a batched value (batch axis first)."""
    shape = v.type.shape
    return ops.bind(shape_ops.slice_, v, start=(at,) + (0,) * (len(shape) - 1),
                    limit=(at + n,) + tuple(shape[1:]), strides=(1,) * len(shape))


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by reverse mode: f's vjp batched over the standard basis of its
    outputs (one program). Each output leaf of shape O gets, per argument leaf of shape
    I, an O + I array; the structure is f's output structure of argnums structures."""
    single = isinstance(argnums, int)

    @functools.wraps(f)
    def jacrev_f(*args, **kwargs):
        a = _Args(args, _argnums(argnums, len(args), "jacrev"), "jacrev")
        fn, out_tree, captured = trace_function(functools.partial(f, **kwargs), a.leaves,
                                                a.in_tree, _name(f))
        aux_tree = _split_aux(out_tree, True, "jacrev", scalar=False) if has_aux else None
        main_tree = out_tree.children[0] if has_aux else out_tree
        n_main, n_res = main_tree.num_leaves, len(fn.results)
        in_types = [fn.params[i].type for i in a.wrt]
        out_types = fn.result_types[:n_main]
        sizes = [t.size for t in out_types]
        total = sum(sizes)

        def build(b, vals):
            ops = Ops(b)
            bwd = vjp_function(fn, a.wrt)
            n_p = len(fn.params)
            if total == 0:
                outs = inline(b, fn, vals)
                return outs + [ops.const(0, it.dtype, (*ot.shape, *it.shape))
                               for ot in out_types for it in in_types]
            cts = _basis(ops, sizes, out_types, lambda t: t.dtype)
            cts += [ops.const(0, t.dtype, t.shape) for t in fn.result_types[n_main:]]
            flags = [False] * n_p + [True] * n_main + [False] * (n_res - n_main)
            res, res_b = batch_into(b, bwd, list(vals) + cts, flags, (None, total))
            outs, grads = res[:n_res], res[n_res:]
            grads = [bring(ops, g, gb, total) for g, gb in zip(grads, res_b[n_res:],
                                                                 strict=True)]
            results, at = list(outs), 0
            for ot, n in zip(out_types, sizes, strict=True):
                for g, it in zip(grads, in_types, strict=True):
                    results.append(ops.reshape(_rows(ops, g, at, n), (*ot.shape, *it.shape)))
                at += n
            return results

        outs = run_built(f"{_name(f)}_jacrev", build, a.leaves + captured)
        n_w = len(in_types)
        per_out = [a.unflatten(outs[n_res + j * n_w: n_res + (j + 1) * n_w], single)
                   for j in range(n_main)]
        jac = tree.unflatten(main_tree, per_out)
        if has_aux:
            return jac, tree.unflatten(aux_tree, outs[n_main:n_res])
        return jac

    return jacrev_f


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by forward mode: f's jvp batched over the standard basis of the
    differentiated inputs (one program); same layout as jacrev."""
    single = isinstance(argnums, int)

    @functools.wraps(f)
    def jacfwd_f(*args, **kwargs):
        a = _Args(args, _argnums(argnums, len(args), "jacfwd"), "jacfwd")
        fn, out_tree, captured = trace_function(functools.partial(f, **kwargs), a.leaves,
                                                a.in_tree, _name(f))
        aux_tree = _split_aux(out_tree, True, "jacfwd", scalar=False) if has_aux else None
        main_tree = out_tree.children[0] if has_aux else out_tree
        n_main, n_res = main_tree.num_leaves, len(fn.results)
        in_types = [fn.params[i].type for i in a.wrt]
        sizes = [t.size for t in in_types]
        total = sum(sizes)

        def build(b, vals):
            ops = Ops(b)
            if total == 0:
                outs = inline(b, fn, vals)
                return outs + [ops.const(0, ot.dtype, (*ot.shape, *it.shape))
                               for ot in fn.result_types[:n_main] for it in in_types]
            fwd = jvp_function(fn, a.wrt)
            tangents = _basis(ops, sizes, in_types, lambda t: t.dtype)
            flags = [False] * len(fn.params) + [True] * len(in_types)
            res, res_b = batch_into(b, fwd, list(vals) + tangents, flags, (None, total))
            outs, t_out = res[:n_res], res[n_res:]
            results = list(outs)
            for j in range(n_main):
                ot = fn.result_types[j]
                t = bring(ops, t_out[j], res_b[n_res + j], total)
                at = 0
                for it, n in zip(in_types, sizes, strict=True):
                    block = ops.reshape(_rows(ops, t, at, n), (*it.shape, *ot.shape))
                    k = len(it.shape)
                    perm = list(range(k, k + len(ot.shape))) + list(range(k))
                    results.append(ops.transpose(block, perm))
                    at += n
            return results

        outs = run_built(f"{_name(f)}_jacfwd", build, a.leaves + captured)
        n_w = len(in_types)
        per_out = [a.unflatten(outs[n_res + j * n_w: n_res + (j + 1) * n_w], single)
                   for j in range(n_main)]
        jac = tree.unflatten(main_tree, per_out)
        if has_aux:
            return jac, tree.unflatten(aux_tree, outs[n_main:n_res])
        return jac

    return jacfwd_f


def hessian(f: Callable, argnums: int | Sequence[int] = 0):
    """The Hessian of scalar f: jacfwd(jacrev(f))."""
    return jacfwd(jacrev(f, argnums), argnums)


# ---- stop_gradient, custom rules ---------------------------------------------------------

def stop_gradient(x):
    """x, through which no gradient flows (applied to every leaf of a pytree)."""
    def stop(t):
        t = _as_tensor(t)
        if t.dtype.kind not in "fc":
            return t
        return bind1(custom_ad.stop_gradient, t)
    return tree.tree_map(stop, x)


def _live_trace(leaves):
    """The trace these tensors (or the current computation) belong to, or None."""
    b = pick(leaves) if leaves else None
    if isinstance(b, Trace):
        return b
    b = current_backend()
    return b if isinstance(b, Trace) else None


def _region(f, leaves, in_tree, name):
    """Trace f into a region Function; returns (fn, out_tree, captured)."""
    return trace_function(f, leaves, in_tree, name)


def _with_params(fn: Function, n_lead: int, captures: list, all_caps: list,
                 name: str) -> Function:
    """fn's first n_lead params, then one param per tensor of all_caps (fn uses those of
    `captures`, matched by identity)."""
    b = Builder(name)
    lead = [b.param(p.type) for p in fn.params[:n_lead]]
    caps = [b.param(t.type) for t in all_caps]
    index = {id(t): i for i, t in enumerate(all_caps)}
    args = lead + [caps[index[id(t)]] for t in captures]
    return b.build(inline(b, fn, args))


def _merge_caps(*cap_lists) -> list:
    out, seen = [], set()
    for caps in cap_lists:
        for t in caps:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


class _CustomRule:
    """Shared calling convention of custom_vjp and custom_jvp: outside any trace (or when
    f is called from inside its own rule) f runs plainly; inside a trace the subclass's
    _bind records f together with its rule."""

    def __init__(self, fun: Callable):
        self.fun = fun
        self._tracing_rule = False
        functools.update_wrapper(self, fun)

    def __call__(self, *args):
        leaves, in_tree = tree.flatten(tuple(args))
        leaves = [_as_tensor(x) for x in leaves]
        backend = _live_trace(leaves)
        if backend is None or self._tracing_rule:
            return self.fun(*args)
        self._tracing_rule = True
        try:
            return self._bind(args, leaves, in_tree, backend)
        finally:
            self._tracing_rule = False


class custom_vjp(_CustomRule):
    """A function with a user-written reverse-mode rule:

        @stablejit.custom_vjp
        def f(x, y): ...
        def f_fwd(x, y): return f(x, y), residuals      # residuals: a pytree of tensors
        def f_bwd(residuals, g): return (gx, gy)         # one cotangent per argument
        f.defvjp(f_fwd, f_bwd)

    Outside any trace it just calls f. Tensors the functions close over get no gradient.
    """

    def __init__(self, fun: Callable):
        super().__init__(fun)
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> custom_vjp:
        self.fwd, self.bwd = fwd, bwd
        return self

    def _bind(self, args, leaves, in_tree, backend):
        if self.fwd is None:
            raise TypeError(at_user_line(
                f"custom_vjp function {self.__name__} has no rule: call .defvjp(fwd, bwd)"))
        name = _name(self.fun)
        fun, out_tree, caps_f = _region(self.fun, leaves, in_tree, name)
        fwd, fwd_tree, caps_w = _region(self.fwd, leaves, in_tree, f"{name}_fwd")
        if fwd_tree.kind not in (tuple, list) or len(fwd_tree.children) != 2 or \
                fwd_tree.children[0] != out_tree:
            raise TypeError(at_user_line(
                f"custom_vjp fwd of {name} must return (output, residuals) with the output "
                f"structured as f's ({out_tree}), got {fwd_tree}"))
        k = out_tree.num_leaves
        res_tree = fwd_tree.children[1]
        res_types = fwd.result_types[k:]
        trace = Trace(f"{name}_bwd")
        res_args = [trace.new_arg(t) for t in res_types]
        ct_args = [trace.new_arg(t) for t in fun.result_types]
        try:
            with using_backend(trace):
                gs = self.bwd(tree.unflatten(res_tree, res_args),
                              tree.unflatten(out_tree, ct_args))
                if not isinstance(gs, (tuple, list)) or len(gs) != len(args):
                    raise TypeError(at_user_line(
                        f"custom_vjp bwd of {name} must return a tuple with one cotangent "
                        f"per argument ({len(args)}), got {type(gs).__name__}"))
                g_vals = []
                flat = []
                for g, child in zip(gs, in_tree.children, strict=True):
                    if g is None:
                        flat.extend([None] * child.num_leaves)
                    else:
                        flat.extend(tree.flatten(g)[0])
                for g, t in zip(flat, leaves, strict=True):
                    if g is None:
                        g_vals.append(trace.value_of(_zeros(t, trace)))
                    else:
                        g_vals.append(trace.value_of(_as_tensor(g)))
            bwd = trace.builder.build(g_vals)
        finally:
            trace.finish()
        caps_b = [t for t, _ in trace.captured]
        all_caps = _merge_caps(caps_f, caps_w, caps_b)
        n = len(leaves)
        regions = (_with_params(fun, n, caps_f, all_caps, name),
                   _with_params(fwd, n, caps_w, all_caps, f"{name}_fwd"),
                   _with_params(bwd, len(res_types) + k, caps_b, all_caps, f"{name}_bwd"))
        attrs = Attrs({"out_types": tuple(fun.result_types), "n_args": n})
        outs = bind(custom_ad.custom_vjp_call, leaves + all_caps, attrs, backend=backend,
                    regions=regions)
        return tree.unflatten(out_tree, outs)


def _zeros(t: Tensor, trace: Trace) -> Tensor:
    with using_backend(trace):
        return snp.zeros(t.shape, t.dtype)


class custom_jvp(_CustomRule):
    """A function with a user-written forward-mode rule:

        @stablejit.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), t * df(x)

    Reverse mode transposes the rule, so it must be linear in the tangents (as in JAX).
    """

    def __init__(self, fun: Callable):
        super().__init__(fun)
        self.jvp = None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def _bind(self, args, leaves, in_tree, backend):
        if self.jvp is None:
            raise TypeError(at_user_line(
                f"custom_jvp function {self.__name__} has no rule: use @f.defjvp"))
        name = _name(self.fun)
        fun, out_tree, caps_f = _region(self.fun, leaves, in_tree, name)
        n = len(leaves)
        rule = self.jvp

        def jvp_flat(*xs):
            p = tree.unflatten(in_tree, xs[:n])
            t = tree.unflatten(in_tree, xs[n:])
            out, t_out = rule(tuple(p), tuple(t))
            return out, t_out

        jfn, j_tree, caps_j = _region(jvp_flat, leaves + leaves, tree.flatten(
            tuple(leaves + leaves))[1], f"{name}_jvp")
        if j_tree.kind not in (tuple, list) or len(j_tree.children) != 2 or \
                j_tree.children[0] != out_tree or j_tree.children[1] != out_tree:
            raise TypeError(at_user_line(
                f"custom_jvp rule of {name} must return (output, output tangent), each "
                f"structured as f's output ({out_tree}); got {j_tree}"))
        all_caps = _merge_caps(caps_f, caps_j)
        regions = (_with_params(fun, n, caps_f, all_caps, name),
                   _with_params(jfn, 2 * n, caps_j, all_caps, f"{name}_jvp"))
        attrs = Attrs({"out_types": tuple(fun.result_types), "n_args": n})
        outs = bind(custom_ad.custom_jvp_call, leaves + all_caps, attrs, backend=backend,
                    regions=regions)
        return tree.unflatten(out_tree, outs)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian",
           "stop_gradient", "custom_vjp", "custom_jvp", "trace_function", "run_built",
           "call_function"]
