"""User control over how a function is differentiated: custom_vjp and custom_jvp (rules
the user writes) and checkpoint / remat (recompute in the backward pass instead of
storing).

Inside a trace (jit, grad, a control-flow body ...) a call records one op (see
compiler/primitives/custom_ad.py) whose region is the function itself. A custom rule
rides along as a `custom_ad.Rule` and is traced only when the op is differentiated, as
in JAX: a forward-only jit never runs it, and a rule may call the custom function
itself. Outside any trace the function just runs.

Arguments at `nondiff_argnums` reach the function and its rules as the Python values
they are (functions, numbers, settings), as in JAX: fwd and the jvp rule get them in
their positions, bwd gets them first, then the residuals and the output cotangent.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence

from . import numpy as snp
from . import tree, writes
from .autodiff import ir_name, trace_function
from .compiler.autodiff import DifferentiationError
from .compiler.ir import Attrs, Literal
from .compiler.primitives import custom_ad, shape_ops
from .context import current_backend
from .dispatch import bind, pick
from .errors import EscapedTracerError, at_user_line, user_location
from .staging import Spec, TransformTrace, stage
from .tensor import Tensor
from .tracebacks import api_boundary

__all__ = ["custom_vjp", "custom_jvp", "checkpoint", "remat"]


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else snp.asarray(x)


def _live_trace(leaves):
    """The trace these tensors (or the current computation) belong to, or None."""
    b = pick(leaves) if leaves else None
    if b is not None and b.stages:
        return b
    b = current_backend()
    b.needs_staging("a custom derivative rule")  # grad's tape: grad stages it instead
    return b if b.stages else None


class _Same:
    """An unhashable static argument in a rule's key: equal only to itself."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def _static_key(static: dict) -> tuple:
    out = []
    for i, v in sorted(static.items()):
        try:
            hash(v)
        except TypeError:
            v = _Same(v)
        out.append((i, type(v), v))
    return tuple(out)


# ---- tracing a rule ------------------------------------------------------------------------

class _RuleTrace(TransformTrace):
    """The trace of a user's rule, made when its call is differentiated, usually after
    the trace that called the function has ended: concrete tensors the rule closes over
    become constants, traced ones cannot be reached."""

    def __init__(self, name: str, owner: str):
        super().__init__(name, "grad")
        self.owner = owner

    def _capture(self, t: Tensor):
        v = self._captured_ids.get(id(t))
        if v is not None:
            return v
        if not t._backend.concrete:
            raise _rule_closure_error(self.builder.name, self.owner)
        writes.note_read(t)
        v, = self.builder.bind(shape_ops.constant, (), Attrs({"value": Literal(t.numpy())}),
                               user_location())
        self._embedded.append(t)
        self._captured_ids[id(t)] = v
        return v


def _rule_closure_error(rule: str, owner: str) -> DifferentiationError:
    return DifferentiationError(at_user_line(
        f"the rule {rule} of {owner} uses a traced tensor that it closes over (a value "
        f"computed inside jit, grad or another transformation). Rules are traced when "
        f"{owner} is differentiated and cannot reach such values then: pass the value to "
        f"{owner} as an argument (and to bwd through the residuals)."))


def _trace_rule(f: Callable, specs, name: str, owner: str):
    """Stage f(*flat tensors of `specs` (type, weak)) -> flat tensors into a Function."""
    flat = tree.flatten(tuple(range(len(specs))))[1]
    try:
        return stage(lambda *xs: tuple(f(*xs)), flat, [Spec(t, w) for t, w in specs],
                     _RuleTrace(name, owner), output=_rule_output).fn
    except EscapedTracerError:  # a value of a trace that ended before the rule was traced
        raise _rule_closure_error(name, owner) from None


def _rule_output(leaf, trace) -> Tensor:
    return _as_tensor(leaf)


def _pair(out, what: str, owner: str, first, second):
    """Check that a rule returned a pair whose halves flatten to `first` / `second`
    (TreeDefs; None: any) and return the two leaf lists."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(at_user_line(
            f"{what} of {owner} must return a pair, got {type(out).__name__}"))
    (a, ta), (b, tb) = tree.flatten(out[0]), tree.flatten(out[1])
    for got, want, half in ((ta, first, "first"), (tb, second, "second")):
        if want is not None and got != want:
            raise TypeError(at_user_line(
                f"{what} of {owner} must return a pair whose {half} element is structured "
                f"as {owner}'s output ({want}), got {got}"))
    return a, b, tb


def _like(g, t, what: str, owner: str, i: int) -> Tensor:
    """A rule's derivative g for a value of type t: same shape required, dtype converted."""
    g = _as_tensor(g)
    if g.shape != t.shape:
        raise ValueError(at_user_line(
            f"{what} of {owner} gave a derivative of shape {g.shape} for leaf {i}, whose "
            f"shape is {t.shape}; they must match"))
    return g if g.dtype == t.dtype else snp.astype(g, t.dtype)


# ---- custom_vjp and custom_jvp -------------------------------------------------------------

class _Custom:
    """Calling convention shared by custom_vjp and custom_jvp."""

    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        self.fun = fun
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else \
            tuple(nondiff_argnums)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
            raise TypeError(at_user_line(
                f"{self.kind}: nondiff_argnums must be ints, got {nondiff_argnums!r}"))
        self.nondiff_argnums = nums
        functools.update_wrapper(self, fun)

    def _positional(self, args, kwargs) -> tuple:
        """The arguments as a tuple, keywords resolved through fun's signature (as JAX)."""
        if not kwargs:
            return tuple(args)
        try:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(at_user_line(f"{self.kind} function {ir_name(self.fun)}: {e}")) \
                from None
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(at_user_line(
                f"{self.kind} function {ir_name(self.fun)} has keyword-only parameters "
                f"{sorted(bound.kwargs)}; custom rules take positional arguments"))
        return tuple(bound.args)

    def __call__(self, *args, **kwargs):
        args = self._positional(args, kwargs)
        n = len(args)
        for i in self.nondiff_argnums:
            if not -n <= i < n:
                raise ValueError(at_user_line(
                    f"{self.kind} function {ir_name(self.fun)}: nondiff_argnums "
                    f"{self.nondiff_argnums} is out of range for a call with {n} arguments"))
        static = {i % n: args[i] for i in self.nondiff_argnums}
        diff = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree.flatten(diff)
        tensors = [_as_tensor(x) for x in leaves]
        backend = _live_trace(tensors)
        if backend is None:
            return self.fun(*args)
        name = ir_name(self.fun)
        fun, out_tree, caps = trace_function(
            lambda *d: self.fun(*_merge(static, d)), tensors, in_tree, name, self.kind)
        call = _Call(self, name, static, in_tree, tensors, out_tree, fun.result_types)
        attrs = Attrs({"out_types": tuple(fun.result_types), "n_args": len(tensors),
                       "rule": call.rule()})
        outs = bind(self.primitive, tensors + caps, attrs, backend=backend, regions=(fun,))
        return tree.unflatten(out_tree, outs)


def _merge(static: dict, diff: Sequence) -> list:
    """The full positional arguments from the static ones (by position) and the rest."""
    diff = list(diff)
    rest = iter(diff)
    return [static[i] if i in static else next(rest) for i in range(len(static) + len(diff))]


class _Call:
    """One call of a custom function: what its lazily traced rule needs to know."""

    def __init__(self, owner: _Custom, name, static, in_tree, tensors, out_tree, out_types):
        self.owner, self.name, self.static = owner, name, static
        self.in_tree, self.out_tree, self.out_types = in_tree, out_tree, tuple(out_types)
        self.specs = [(t.type, t.weak) for t in tensors]
        self.static_values = [static[i] for i in sorted(static)]

    def rule(self) -> custom_ad.Rule:
        o = self.owner
        rules = (o.fwd, o.bwd) if isinstance(o, custom_vjp) else (o.jvp,)
        key = (o, rules, self.in_tree, tuple(self.specs), _static_key(self.static))
        build = self.vjp_regions if isinstance(o, custom_vjp) else self.jvp_regions
        return custom_ad.Rule(self.name, key, build)

    def args(self, leaves) -> list:
        return _merge(self.static, tree.unflatten(self.in_tree, leaves))

    def vjp_regions(self):
        o, name, n = self.owner, self.name, len(self.specs)
        k = self.out_tree.num_leaves
        res_tree = []

        def fwd(*xs):
            outs, res, tr = _pair(o.fwd(*self.args(xs)), "custom_vjp fwd", name,
                                  self.out_tree, None)
            for i, (out, t) in enumerate(zip(outs, self.out_types, strict=True)):
                if _as_tensor(out).shape != t.shape:  # (jax refuses them too)
                    raise ValueError(at_user_line(
                        f"custom_vjp fwd of {name} returns an output of shape "
                        f"{_as_tensor(out).shape} for leaf {i}, where {name} returns shape "
                        f"{t.shape}: fwd's first element must be {name}'s output"))
            res_tree.append(tr)
            return outs + res

        fwd_fn = _trace_rule(fwd, self.specs, f"{name}_fwd", name)
        res_types = fwd_fn.result_types[k:]

        def bwd(*xs):
            res = tree.unflatten(res_tree[0], xs[:len(res_types)])
            cts = tree.unflatten(self.out_tree, xs[len(res_types):])
            gs = o.bwd(*self.static_values, res, cts)
            n_args = len(self.in_tree.children)
            if not isinstance(gs, (tuple, list)) or len(gs) != n_args:
                raise TypeError(at_user_line(
                    f"custom_vjp bwd of {name} must return a tuple with one cotangent per "
                    f"differentiated argument ({n_args}), got {_describe(gs)}"))
            flat = []
            for j, (g, child) in enumerate(zip(gs, self.in_tree.children, strict=True)):
                if g is None:
                    flat.extend([None] * child.num_leaves)
                    continue
                g_leaves, g_tree = tree.flatten(g)
                if g_tree != child:
                    raise TypeError(at_user_line(
                        f"custom_vjp bwd of {name} returned a cotangent structured as "
                        f"{g_tree} for argument {j}, which is structured as {child}"))
                flat.extend(g_leaves)
            return [snp.zeros(t.shape, t.dtype) if g is None or t.dtype.kind not in "fc"
                    else _like(g, t, "custom_vjp bwd", name, i)
                    for i, (g, (t, _)) in enumerate(zip(flat, self.specs, strict=True))]

        bwd_specs = [(t, False) for t in (*res_types, *self.out_types)]
        bwd_fn = _trace_rule(bwd, bwd_specs, f"{name}_bwd", name)
        assert len(bwd_fn.results) == n
        return fwd_fn, bwd_fn

    def jvp_regions(self):
        o, name, n = self.owner, self.name, len(self.specs)

        def rule(*xs):
            primals = tree.unflatten(self.in_tree, xs[:n])
            tangents = tree.unflatten(self.in_tree, xs[n:])
            outs, t_outs, _ = _pair(o.jvp(*self.static_values, primals, tangents),
                                    "custom_jvp rule", name, self.out_tree, self.out_tree)
            return list(outs) + [_like(t, ty, "custom_jvp rule", name, i)
                                 for i, (t, ty) in enumerate(zip(t_outs, self.out_types,
                                                                 strict=True))]

        specs = self.specs + [(t, False) for t, _ in self.specs]
        return (_trace_rule(rule, specs, f"{name}_jvp", name),)


def _describe(x) -> str:
    return f"a {type(x).__name__} of length {len(x)}" if isinstance(x, (tuple, list)) else \
        type(x).__name__


class custom_vjp(_Custom):
    """A function with a user-written reverse-mode rule, as JAX's:

        @stablejit.custom_vjp                   # or custom_vjp(f, nondiff_argnums=(0,))
        def f(x, y): ...
        def f_fwd(x, y): return f(x, y), residuals      # residuals: a pytree of tensors
        def f_bwd(residuals, g): return (gx, gy)         # one cotangent per argument
        f.defvjp(f_fwd, f_bwd)

    With nondiff_argnums, bwd takes those arguments first and returns cotangents for the
    others only. Outside any trace it just calls f; fwd and bwd are traced only when f is
    differentiated. Differentiating with respect to a tensor f closes over is an error:
    pass it as an argument.

    Example:
        >>> @stablejit.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> _ = clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (snp.clip(g, -1, 1),))
        >>> stablejit.grad(lambda x: 5.0 * clip_gradient(x))(snp.asarray(2.0))
        Tensor<f32[] xla:host:0>
        1.
    """

    kind = "custom_vjp"
    primitive = custom_ad.custom_vjp_call

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> custom_vjp:
        self.fwd, self.bwd = fwd, bwd
        return self

    @api_boundary
    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise TypeError(at_user_line(
                f"custom_vjp function {self.__name__} has no rule: call .defvjp(fwd, bwd)"))
        return super().__call__(*args, **kwargs)


class custom_jvp(_Custom):
    """A function with a user-written forward-mode rule, as JAX's:

        @stablejit.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), t * df(x)

    or one rule per argument: f.defjvps(lambda t, ans, x: t * df(x)). With
    nondiff_argnums the rule takes those arguments first. Reverse mode transposes the
    rule, so it must be linear in the tangents (as in JAX). The rule is traced only when
    f is differentiated.

    Example:
        >>> @stablejit.custom_jvp
        ... def softplus(x):
        ...     return snp.log1p(snp.exp(x))
        >>> @softplus.defjvp
        ... def softplus_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return softplus(x), t * stablejit.nn.sigmoid(x)
        >>> stablejit.grad(softplus)(snp.asarray(0.0))
        Tensor<f32[] xla:host:0>
        0.5
    """

    kind = "custom_jvp"
    primitive = custom_ad.custom_jvp_call

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `jvp_i(tangent_i, primal_out, *primals)` -> its part
        of the output tangent (None: that argument contributes nothing); the output
        tangent is their sum."""
        if self.nondiff_argnums:
            raise TypeError(at_user_line("custom_jvp: defjvps cannot be used with "
                                         "nondiff_argnums; use defjvp"))

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(at_user_line(
                    f"custom_jvp {self.__name__}: defjvps got {len(jvps)} rule(s) for a "
                    f"call with {len(primals)} argument(s)"))
            out = self(*primals)
            t_out = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None:
                    continue
                part = rule(t, out, *primals)
                t_out = part if t_out is None else tree.tree_map(lambda a, b: a + b,
                                                                 t_out, part)
            if t_out is None:
                t_out = tree.tree_map(snp.zeros_like, out)
            return out, t_out

        self.defjvp(jvp)

    @api_boundary
    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise TypeError(at_user_line(
                f"custom_jvp function {self.__name__} has no rule: use @f.defjvp"))
        return super().__call__(*args, **kwargs)


# ---- checkpoint ----------------------------------------------------------------------------

def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True, policy=None,
               static_argnums: int | Sequence[int] = ()):
    """fun, whose intermediates are not stored for the backward pass: reverse mode
    computes fun's forward pass again from its inputs (as JAX's checkpoint / remat),
    trading compute for memory. Usable as @checkpoint or checkpoint(f, ...).

    static_argnums: arguments passed as Python values (e.g. a loop count), as in JAX;
    the others are traced. prevent_cse=True (the default) puts the recomputation behind
    an optimization barrier so XLA cannot merge it with the first forward pass.
    policy (stablejit.checkpoint_policies has jax's) is accepted for JAX compatibility
    and ignored: everything inside fun is recomputed (JAX's default, nothing saveable);
    values and gradients do not depend on it.

    Example:
        >>> f = stablejit.checkpoint(lambda x: x ** 3 + 2.0 * x)
        >>> stablejit.grad(f)(snp.asarray(2.0))
        Tensor<f32[] xla:host:0>
        14.
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    del policy  # documented above: everything is recomputed
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @api_boundary
    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        n = len(args)
        static = {i % n: args[i] for i in nums if -n <= i < n}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree.flatten((dyn, kwargs))
        tensors = [_as_tensor(x) for x in leaves]
        backend = _live_trace(tensors)
        if backend is None:
            return fun(*args, **kwargs)

        def call(d, kw):
            return fun(*_merge(static, d), **kw)

        fn, out_tree, caps = trace_function(call, tensors, in_tree, ir_name(fun), "checkpoint")
        outs = bind(custom_ad.checkpoint, tensors + caps,
                    Attrs({"prevent_cse": bool(prevent_cse)}), backend=backend,
                    regions=(fn,))
        return tree.unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint
