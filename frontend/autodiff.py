"""Differentiation for users: grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev,
hessian, stop_gradient. (custom_vjp, custom_jvp and checkpoint: custom_derivatives.py.)

Every transformation is the same three steps:
  1. trace the user's function into an IR Function (a Trace backend, as jit does);
  2. build the transformed computation with compiler/autodiff.py (forward + backward
     ops, or forward ops with tangents) into a Builder;
  3. either run it (outside any trace: compiled with XLA once per structural key and
     device, or interpreted on the reference backend) or, when an argument is traced
     (inside jit, or inside another transformation), build it straight into that trace,
     so jit(grad(f)), grad(grad(f)) and grad(jit(f)) compose.
grad and value_and_grad called eagerly on one device or in a lazy() block record step 1
on a GradTape instead (grad_tape.py): the tape is the structural key, so step 1's IR
and 2 are made once per distinct tape; what a tape cannot record falls back to here.

As in JAX, only the differentiated arguments (argnums) are traced as variables. Array
arguments outside argnums are traced as non-differentiated inputs (so one compiled
program serves every batch); every other argument (Python numbers, bools, strings, None,
any object) and every keyword argument that is not an array reaches the function as the
Python value it is, so `if flag:` and `range(n)` on them work.

Only floating-point (and complex) inputs carry gradients: asking grad for an integer or
boolean argument is a TypeError that names the argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from . import grad_tape, recorder_native, tree
from . import numpy as snp
from .built import built_function, call_function, run_built, run_function
from .compiler import dtypes as dt
from .compiler.autodiff import Linearized, inline, jvp_function, jvp_into, vjp_function
from .compiler.batch_rules import bring
from .compiler.batching import batch_into
from .compiler.ir import Function, Value
from .compiler.ops import Ops
from .compiler.primitives import custom_ad, shape_ops
from .context import stack
from .dispatch import bind1
from .errors import at_user_line
from .grad_checks import argnums_tuple, check_scalar_output, dtype_message, split_aux
from .grad_tape import GradTape, NeedsTrace, ValueRead, tape_backend
from .spmd import runs_on
from .staging import stage_with_values
from .tensor import Tensor
from .tracebacks import _wraps, api_boundary, filter_exception
from .tracing import refuse_written_arguments

# ---- tracing and running IR ------------------------------------------------------------


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else snp.asarray(x)


def trace_function(f: Callable, leaves: Sequence[Tensor], in_tree, name: str = "f",
                   what: str = "grad", needs_values: bool = False):
    """Stage f(*args), args = unflatten(in_tree, leaves), for the transformation `what`
    (named in errors): (Function, out_tree, captured tensors); see
    staging.stage_with_values."""
    s = stage_with_values(f, in_tree, leaves, name, what, needs_values,
                          output=lambda leaf, trace: _as_tensor(leaf))
    return s.fn, s.out_tree, s.captured


def ir_name(f) -> str:
    """f's name as an IR function name (letters, digits and _)."""
    return _ir_name(str(getattr(f, "__name__", "f")))


@functools.lru_cache(maxsize=4096)  # (grad of a loss asks for it every step)
def _ir_name(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "f"


# ---- arguments ---------------------------------------------------------------------------

_ARRAYS = (Tensor, np.ndarray)


class _Args:
    """A call's arguments split three ways: the leaves of the differentiated arguments
    (`nums`), traced and differentiated; the array leaves of the other arguments and
    keyword arguments, traced as non-differentiated inputs; and every other leaf, which
    reaches the function as the Python value it is.

    leaves: the traced tensors (differentiated ones first); wrt: their indices that are
    differentiated."""

    def __init__(self, args, kwargs, nums: Sequence[int], what: str,
                 dtype_kinds: str | None = "fc"):
        self.args, self.nums = tuple(args), tuple(nums)
        self.diff_trees, diff = [], []
        for i in self.nums:
            leaves, td = tree.flatten(self.args[i])
            leaves = [x if type(x) is Tensor else _as_tensor(x) for x in leaves]
            if dtype_kinds is not None:
                for j, t in enumerate(leaves):
                    if t.type.dtype.kind not in dtype_kinds:
                        raise TypeError(at_user_line(dtype_message(what, i, j, td, t,
                                                                    dtype_kinds)))
            self.diff_trees.append((td, len(leaves)))
            diff.extend(leaves)
        self.wrt = list(range(len(diff)))
        others = [a for i, a in enumerate(self.args) if i not in self.nums]
        if not kwargs and all(type(a) is Tensor for a in others):
            # grad(loss)(params, x, y): each other argument is one traced leaf as it is
            # (rest_tree None), with no pytree to flatten or rebuild
            self.rest, self.rest_tree, self.array_at = others, None, range(len(others))
            self.leaves = diff + others
            return
        self.rest, self.rest_tree = tree.flatten((others, dict(kwargs)))
        self.array_at = [j for j, x in enumerate(self.rest) if isinstance(x, _ARRAYS)]
        self.leaves = diff + [_as_tensor(self.rest[j]) for j in self.array_at]

    def call(self, f: Callable) -> Callable:
        """f as a function of the traced leaves, with every other argument in place."""
        n = len(self.wrt)
        if self.rest_tree is None and len(self.nums) == 1:  # grad's common call
            i, td = self.nums[0], self.diff_trees[0][0]

            def call_one(*xs):
                args = list(xs[n:])
                args.insert(i, tree.unflatten(td, xs[:n]))
                return f(*args)
            return call_one

        def call_f(*xs):
            rest = list(self.rest)
            for j, x in zip(self.array_at, xs[n:], strict=True):
                rest[j] = x
            others, kwargs = (rest, {}) if self.rest_tree is None else \
                tree.unflatten(self.rest_tree, rest)
            others = iter(others)
            diff, at = {}, 0
            for i, (td, k) in zip(self.nums, self.diff_trees, strict=True):
                diff[i] = tree.unflatten(td, xs[at:at + k])
                at += k
            args = [diff[i] if i in diff else next(others) for i in range(len(self.args))]
            return f(*args, **kwargs)

        return call_f

    def trace(self, f: Callable, what: str, needs_values: bool = False):
        """(Function, out_tree, captured) of f traced on the leaves."""
        flat = tree.flatten(tuple(self.leaves))[1]
        return trace_function(self.call(f), self.leaves, flat, ir_name(f), what,
                              needs_values)

    def unflatten(self, values: Sequence, single: bool):
        """Per differentiated argument, its pytree of `values` (one per wrt leaf)."""
        out, at = [], 0
        for td, k in self.diff_trees:
            out.append(tree.unflatten(td, values[at:at + k]))
            at += k
        return out[0] if single else tuple(out)


# ---- grad and friends --------------------------------------------------------------------

def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False):
    """A function returning (f(*args), gradient of f w.r.t. the argnums arguments); with
    has_aux=True, f returns (value, aux) and this returns ((value, aux), gradient).
    With holomorphic=True, f maps complex inputs to a complex scalar and the gradient is
    its complex derivative (as in JAX).

    Example:
        >>> loss = lambda p, x: snp.sum((x * p['w'] + p['b']) ** 2)
        >>> params = {'w': snp.asarray(2.0), 'b': snp.asarray(1.0)}
        >>> value, grads = stablejit.value_and_grad(loss)(params, snp.asarray([1.0, 2.0]))
        >>> value
        Tensor<f32[] xla:host:0>
        34.
        >>> grads['w'], grads['b']
        (Tensor<f32[] xla:host:0>
        26., Tensor<f32[] xla:host:0>
        16.)
    """
    return _grad_fn(f, argnums, has_aux, holomorphic, value=True)


def _grad_fn(f: Callable, argnums, has_aux: bool, holomorphic: bool, value: bool):
    """grad(f) (value=False) or value_and_grad(f) as one closure that is its own boundary
    (api_boundary's try written in): a training step makes one and calls it once."""
    def vg(*args, **kwargs):
        try:
            done = None  # (a tape's NeedsTrace: f ran there, and runs next traced)
            if type(argnums) is int and not kwargs and 0 <= argnums < len(args):
                done = _tape_one(f, args, argnums, has_aux, holomorphic)
            if done is None or isinstance(done, NeedsTrace):
                done = _vg_rest(f, argnums, has_aux, holomorphic, done, args, kwargs)
            return done if value else ((done[1], done[0][1]) if has_aux else done[1])
        except Exception as e:
            filter_exception(e)
            raise
    _wraps(vg, f)
    vg.__stablejit_boundary__ = True
    return vg


def _vg_rest(f: Callable, argnums, has_aux: bool, holomorphic: bool, done, args, kwargs):
    """value_and_grad(f)(*args, **kwargs) past the tape call: `done` is None where f has
    not run, or the NeedsTrace its tape stopped with."""
    a = _Args(args, kwargs, argnums_tuple(argnums, len(args), "grad"), "grad",
              "c" if holomorphic else "fc")
    backend = tape_backend(a.leaves) if done is None else None
    if backend is not None:
        n = len(a.wrt)
        done = _on_tape(backend, a.leaves[:n], a.leaves[n:], a.call(f), f, has_aux,
                        holomorphic)
        if not isinstance(done, NeedsTrace):
            outs, n_out, aux_tree = done
            return _value_and_grads(a, outs, n_out, aux_tree, isinstance(argnums, int))
    # a tape that stopped at a value read goes straight to the valued staging: the
    # Python runs twice in all (tape, then values), never three times
    fn, out_tree, captured = a.trace(f, "grad", needs_values=isinstance(done, ValueRead))
    aux_tree = split_aux(out_tree, has_aux, "grad")
    check_scalar_output(fn.result_types[0], "grad", holomorphic)
    n_out = len(fn.results)
    build = _vg_builder(fn, a.wrt)
    outs = run_built(f"{ir_name(f)}_grad", build, a.leaves + captured,
                     key=("grad", fn.key(), tuple(a.wrt)))
    return _value_and_grads(a, outs, n_out, aux_tree, isinstance(argnums, int))


def _value_and_grads(a: _Args, outs, n_out: int, aux_tree, single: bool):
    """value_and_grad's result from its Function's outputs: f's outputs (the value,
    then any aux leaves), then one gradient per differentiated leaf."""
    value, grads = outs[0], a.unflatten(outs[n_out:], single)
    if aux_tree is not None:
        return (value, tree.unflatten(aux_tree, outs[1:n_out])), grads
    return value, grads


def _vg_builder(fn: Function, wrt):
    """build(builder, params) for run_built: f's outputs, then the gradients of its
    first (scalar) output w.r.t. the params in `wrt`."""
    n_out = len(fn.results)

    def build(b, vals):
        lin = Linearized(b, fn, vals, wrt)
        seed = Ops(b).const(1, fn.result_types[0].dtype)
        return lin.outs + lin.backward([seed] + [None] * (n_out - 1))
    return build


def _python_tape_one(f: Callable, args: tuple, i: int, has_aux: bool, holomorphic: bool):
    """value_and_grad(f)(*args) w.r.t. args[i] on a tape, without _Args, when every
    argument's leaf is a Tensor (grad(loss)(params, x, y): a training step's call): its
    result, or the tape's NeedsTrace; None for any other call (f has not run).
    (recorder.c's tape_one does these steps in C, calling this for whatever it leaves.)"""
    leaves, td = tree.flatten(args[i])
    kinds = "c" if holomorphic else "fc"
    for t in leaves:
        if type(t) is not Tensor or t.type.dtype.kind not in kinds:
            return None
    rest = list(args[:i] + args[i + 1:])
    if not all(type(t) is Tensor for t in rest):
        return None
    backend = tape_backend(leaves + rest)
    if backend is None:
        return None
    n = len(leaves)

    def call(*xs):
        return f(*xs[n:n + i], tree.unflatten(td, xs[:n]), *xs[n + i:])
    done = _on_tape(backend, leaves, rest, call, f, has_aux, holomorphic)
    if isinstance(done, NeedsTrace):
        return done
    outs, n_out, aux_tree = done  # (as _value_and_grads, for one argument's tree)
    grads = tree.unflatten(td, outs[n_out:])
    if aux_tree is not None:
        return (outs[0], tree.unflatten(aux_tree, outs[1:n_out])), grads
    return outs[0], grads


def _on_tape(backend, diff: list, rest: list, call: Callable, f: Callable, has_aux: bool,
             holomorphic: bool):
    """value_and_grad recorded on a GradTape (grad_tape.py), `call(*diff, *rest)` being f
    on the differentiated and the other traced leaves: (outputs, n_out, aux tree), or
    the NeedsTrace that stopped it (f then runs on the traced path). The derivative is
    built once per tape key (run_built's cache) and runs where the tape's inputs are."""
    tape = GradTape(backend)
    s = stack()
    try:
        xs = tape.leaves(diff)
        if rest:
            xs += rest
        before = [x._data for x in xs]  # (the leaves are Tensors)
        s.append(tape)  # (using_backend(tape), written out: grad pushes one per call)
        try:
            results, out_tree = _tape_results(call(*xs), xs, before)
        finally:
            s.pop()
        slots = tape.slots(results)
    except NeedsTrace as e:
        return e
    finally:
        tape.recording = False  # its tensors are escaped tracers from now on
    return _tape_finish(tape, f, slots, out_tree, len(diff), has_aux, holomorphic)


def _tape_results(out, xs: list, before: list):
    """(result tensors, output tree) of f's output `out` on a tape, once f is seen to
    have left its arguments alone (`before`: each argument's _data when f was called)."""
    out_leaves, out_tree = ([out], tree.LEAF) if type(out) is Tensor \
        else tree.flatten(out)
    for x, d in zip(xs, before, strict=True):
        if x._data is not d:
            refuse_written_arguments(xs, before, "grad")
    return [x if type(x) is Tensor else _as_tensor(x) for x in out_leaves], out_tree


def _tape_finish(tape: GradTape, f: Callable, slots: tuple, out_tree, n_diff: int,
                 has_aux: bool, holomorphic: bool):
    """A recorded tape's derivative run on its inputs: (outputs, n_out, aux tree)."""
    aux_tree = None if out_tree is tree.LEAF and not has_aux else \
        split_aux(out_tree, has_aux, "grad")  # (a scalar: the common result)
    check_scalar_output(tape.result_type(slots[0]), "grad", holomorphic)
    fn = tape.last_derivative(n_diff, holomorphic)  # (a loop's step: the last tape's)
    if fn is None:
        def build(b, vals):  # only when the key is new: the tape replayed into IR
            return _vg_builder(tape.forward(slots), list(range(n_diff)))(b, vals)
        fn = built_function(f"{ir_name(f)}_grad", build, tape.inputs(),
                            ("grad tape", tape.key(), n_diff, holomorphic))
        tape.remember(n_diff, holomorphic, fn)
    return run_function(fn, tape.inputs()), len(slots), aux_tree


# grad's first try (value_and_grad_f): recorder.c's tape_one where the extension is built
# (it calls _python_tape_one while the Python path is on), else the Python one
_tape_one = recorder_native.tape_one(globals(), vars(grad_tape), tape_backend, runs_on,
                                     tree.flatten, tree.unflatten, tree.LEAF,
                                     NeedsTrace) or _python_tape_one


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False):
    """The gradient of scalar-valued f w.r.t. its argnums arguments (pytrees allowed);
    with has_aux=True, f returns (value, aux) and this returns (gradient, aux). Other
    arguments reach f as they are (see the module docstring).

    Example:
        >>> f = lambda x: snp.sum(x ** 3)
        >>> stablejit.grad(f)(snp.asarray([1.0, 2.0]))
        Tensor<f32[2] xla:host:0>
        [ 3., 12.]
        >>> stablejit.grad(lambda w, b: w * 3.0 + b, argnums=(0, 1))(2.0, 1.0)
        (Tensor<f32[] xla:host:0>
        3., Tensor<f32[] xla:host:0>
        1.)
    """
    return _grad_fn(f, argnums, has_aux, holomorphic, value=False)


# (they only make a boundary: the namespace leaves them unwrapped, one frame less a step)
grad.__stablejit_boundary__ = value_and_grad.__stablejit_boundary__ = True


def vjp(f: Callable, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn) where vjp_fn(cotangent) gives one cotangent per primal.
    A primal that is a Python int or bool reaches f as that value (so range(n) works)
    and gets a zero cotangent. vjp_fn recomputes the forward pass (in one compiled
    program with the backward pass) rather than keeping residuals alive.

    Example:
        >>> y, f_vjp = stablejit.vjp(snp.sin, snp.asarray([0.0, 1.0]))
        >>> f_vjp(snp.ones(2))
        (Tensor<f32[2] xla:host:0>
        [1.       , 0.5403023],)
    """
    nums = [i for i, p in enumerate(primals) if type(p) not in (bool, int)]
    a = _Args(primals, {}, nums, "vjp", dtype_kinds=None)
    fn, out_tree, captured = a.trace(f, "vjp")
    main_tree, aux_tree = _main_and_aux(out_tree, has_aux, "vjp")  # any pytree, as jax's
    n_main = main_tree.num_leaves
    outs = call_function(fn, a.leaves + captured)
    main = tree.unflatten(main_tree, outs[:n_main])
    inputs = a.leaves + captured
    n_res = len(fn.results)

    @api_boundary
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
            cts = [ops.convert(c, r.dtype)
                   for c, r in zip(vals[n:], fn.result_types[:n_main], strict=True)]
            lin = Linearized(b, fn, vals[:n], a.wrt)
            return lin.backward(cts + [None] * (n_res - n_main))

        grads = iter(a.unflatten(run_built(f"{ir_name(f)}_vjp", build, inputs + ct_t), False))
        return tuple(snp.zeros_like(snp.asarray(p)) if type(p) in (bool, int) else next(grads)
                     for p in primals)

    if has_aux:
        return main, vjp_fn, tree.unflatten(aux_tree, outs[n_main:])
    return main, vjp_fn


def _jvp_parts(f: Callable, primals: Sequence, what: str):
    if not isinstance(primals, (tuple, list)):
        raise TypeError(at_user_line(f"{what}: primals must be a tuple or list"))
    a = _Args(tuple(primals), {}, range(len(primals)), what, dtype_kinds=None)
    fn, out_tree, captured = a.trace(f, what)
    return a, fn, out_tree, captured


def _tangent_tensors(a: _Args, tangents, what: str) -> list[Tensor]:
    if not isinstance(tangents, (tuple, list)):
        raise TypeError(at_user_line(f"{what}: tangents must be a tuple or list"))
    t_leaves, t_tree = tree.flatten(tuple(tangents))
    p_tree = tree.flatten(tuple(a.args))[1]
    if t_tree != p_tree:
        raise TypeError(at_user_line(
            f"{what}: tangents have structure {t_tree}, primals have {p_tree}"))
    ts = [_as_tensor(t) for t in t_leaves]
    for t, p in zip(ts, a.leaves, strict=True):
        if t.shape != p.shape:
            raise ValueError(at_user_line(
                f"{what}: tangent of shape {t.shape} for a primal of shape {p.shape}"))
    return ts


def _run_jvp(name: str, fn: Function, leaves, captured, ts, primal_out: bool,
             n_tan: int | None = None):
    """fn's tangent outputs (its first n_tan: has_aux's aux has none), after its outputs
    when primal_out, for tangents ts."""
    n = len(leaves)

    def build(b, vals):
        ops = Ops(b)
        tangents = [ops.convert(t, p.type.dtype) if p.type.dtype.kind in "fc" else None
                    for t, p in zip(vals[n + len(captured):], vals[:n], strict=True)]
        outs, t_out = jvp_into(b, fn, vals[:n + len(captured)],
                               tangents + [None] * len(captured))
        t_out = [t if t is not None else ops.zeros_like(o)
                 for t, o in zip(t_out, outs, strict=True)][:n_tan]
        return outs + t_out if primal_out else t_out

    return run_built(name, build, list(leaves) + list(captured) + list(ts))


def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """(f(*primals), J(primals) @ tangents), with tangents structured like primals; with
    has_aux, f returns (output, aux) and jvp returns (output, tangent, aux), as JAX's.

    Example:
        >>> stablejit.jvp(lambda x: x ** 2, (snp.asarray(3.0),), (snp.asarray(1.0),))
        (Tensor<f32[] xla:host:0>
        9., Tensor<f32[] xla:host:0>
        6.)
    """
    a, fn, out_tree, captured = _jvp_parts(f, primals, "jvp")
    main_tree, aux_tree = _main_and_aux(out_tree, has_aux, "jvp")
    ts = _tangent_tensors(a, tangents, "jvp")
    n, k = main_tree.num_leaves, len(fn.results)
    res = _run_jvp(f"{ir_name(f)}_jvp", fn, a.leaves, captured, ts, True, n)
    out = tree.unflatten(main_tree, res[:n]), tree.unflatten(main_tree, res[k:])
    return (*out, tree.unflatten(aux_tree, res[n:k])) if has_aux else out


def _main_and_aux(out_tree, has_aux: bool, what: str):
    """(the tree of f's output, of its aux) for has_aux=True; (the output's, None)."""
    if not has_aux:
        return out_tree, None
    return out_tree.children[0], split_aux(out_tree, True, what, scalar=False)


def linearize(f: Callable, *primals, has_aux: bool = False):
    """(f(*primals), f_jvp) where f_jvp(*tangents) gives J(primals) @ tangents, as JAX's
    linearize (with has_aux, f returns (output, aux): (output, f_jvp, aux)). f is traced
    once; each f_jvp call runs the tangent program (which recomputes what it needs of
    the forward pass inside the same compiled program).

    Example:
        >>> y, f_jvp = stablejit.linearize(snp.sin, snp.asarray(0.0))
        >>> f_jvp(snp.asarray(2.0))
        Tensor<f32[] xla:host:0>
        2.
    """
    a, fn, out_tree, captured = _jvp_parts(f, primals, "linearize")
    main_tree, aux_tree = _main_and_aux(out_tree, has_aux, "linearize")
    outs, n = call_function(fn, a.leaves + captured), main_tree.num_leaves

    @api_boundary
    def f_jvp(*tangents):
        ts = _tangent_tensors(a, tangents, "linearize")
        res = _run_jvp(f"{ir_name(f)}_linearized", fn, a.leaves, captured, ts, False, n)
        return tree.unflatten(main_tree, res)

    out = tree.unflatten(main_tree, outs[:n])
    return (out, f_jvp, tree.unflatten(aux_tree, outs[n:])) if has_aux else (out, f_jvp)


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


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):
    """The Jacobian by reverse mode: f's vjp batched over the standard basis of its
    outputs (one program). Each output leaf of shape O gets, per argument leaf of shape
    I, an O + I array; the structure is f's output structure of argnums structures.
    holomorphic=True: complex inputs, and the Jacobian of complex derivatives.

    Example:
        >>> stablejit.jacrev(lambda x: x ** 2)(snp.asarray([1.0, 2.0, 3.0]))
        Tensor<f32[3,3] xla:host:0>
        [[2., 0., 0.],
         [0., 4., 0.],
         [0., 0., 6.]]
    """
    single = isinstance(argnums, int)

    def jacrev_f(*args, **kwargs):
        a = _Args(args, kwargs, argnums_tuple(argnums, len(args), "jacrev"), "jacrev",
                  "c" if holomorphic else "fc")
        fn, out_tree, captured = a.trace(f, "jacrev")
        aux_tree = split_aux(out_tree, True, "jacrev", scalar=False) if has_aux else None
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

        outs = run_built(f"{ir_name(f)}_jacrev", build, a.leaves + captured)
        n_w = len(in_types)
        per_out = [a.unflatten(outs[n_res + j * n_w: n_res + (j + 1) * n_w], single)
                   for j in range(n_main)]
        jac = tree.unflatten(main_tree, per_out)
        if has_aux:
            return jac, tree.unflatten(aux_tree, outs[n_main:n_res])
        return jac

    return api_boundary(jacrev_f, like=f)


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):
    """The Jacobian by forward mode: f's jvp batched over the standard basis of the
    differentiated inputs (one program); same layout as jacrev.

    Example:
        >>> stablejit.jacfwd(lambda x: snp.stack([x[0] * x[1], x[1]]))(snp.asarray([2.0, 3.0]))
        Tensor<f32[2,2] xla:host:0>
        [[3., 2.],
         [0., 1.]]
    """
    single = isinstance(argnums, int)

    def jacfwd_f(*args, **kwargs):
        a = _Args(args, kwargs, argnums_tuple(argnums, len(args), "jacfwd"), "jacfwd",
                  "c" if holomorphic else "fc")
        fn, out_tree, captured = a.trace(f, "jacfwd")
        aux_tree = split_aux(out_tree, True, "jacfwd", scalar=False) if has_aux else None
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

        outs = run_built(f"{ir_name(f)}_jacfwd", build, a.leaves + captured)
        n_w = len(in_types)
        per_out = [a.unflatten(outs[n_res + j * n_w: n_res + (j + 1) * n_w], single)
                   for j in range(n_main)]
        jac = tree.unflatten(main_tree, per_out)
        if has_aux:
            return jac, tree.unflatten(aux_tree, outs[n_main:n_res])
        return jac

    return api_boundary(jacfwd_f, like=f)


jacobian = jacrev  # JAX's alias


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False):
    """The Hessian of scalar f: jacfwd(jacrev(f)), with JAX's has_aux and holomorphic.

    Example:
        >>> stablejit.hessian(lambda x: x[0] ** 2 * x[1])(snp.asarray([1.0, 2.0]))
        Tensor<f32[2,2] xla:host:0>
        [[4., 2.],
         [2., 0.]]
    """
    return jacfwd(jacrev(f, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ---- stop_gradient -----------------------------------------------------------------------

def stop_gradient(x):
    """x, through which no gradient flows (applied to every leaf of a pytree).

    Example:
        >>> stablejit.grad(lambda x: x * stablejit.stop_gradient(x))(snp.asarray(3.0))
        Tensor<f32[] xla:host:0>
        3.
    """
    def stop(t):
        t = _as_tensor(t)
        if t.dtype.kind not in "fc":
            return t
        return bind1(custom_ad.stop_gradient, t)
    return tree.tree_map(stop, x)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "hessian", "stop_gradient", "trace_function", "run_built", "call_function"]
