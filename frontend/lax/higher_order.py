"""lax's functions of functions: map, associative_scan and custom_root."""

from __future__ import annotations

import builtins
from collections.abc import Callable

from .. import control_flow as _cf
from .. import numpy as snp
from .. import tree
from ..autodiff import jvp as _jvp
from ..autodiff import stop_gradient
from ..compiler import dtypes as dt
from ..compiler.primitives.custom_ad import optimization_barrier as _barrier
from ..control_flow import scan
from ..dispatch import bind
from ..errors import at_user_line
from ..numpy._operands import as_tensor
from .elementwise import add, bitwise_or
from .shapes import _axis, concatenate, pad, rev, slice_in_dim


def map(f: Callable, xs, *, batch_size: int | None = None):
    """[f(x) for x in xs] along the leading axis of every leaf, as one scan. batch_size
    is accepted for JAX's signature; the results do not depend on it."""
    if not callable(f):
        raise TypeError(at_user_line(f"lax.map: f must be a function (a def or a lambda), "
                                     f"got {type(f).__name__} {f!r:.40}"))
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan with an associative fn(a, b) applied elementwise along `axis`, in
    O(log n) parallel steps (Blelloch; the same combination order as JAX's, so the same
    rounding). elems is a pytree of tensors with one length along axis."""
    flat, td = tree.flatten(elems)
    flat = [as_tensor(e) for e in flat]
    if not flat:
        raise ValueError(at_user_line("lax.associative_scan: elems has no tensors"))
    axis = _axis(axis, flat[0].ndim)
    n = flat[0].shape[axis]
    if builtins.any(e.shape[axis] != n for e in flat):
        raise ValueError(at_user_line(
            f"lax.associative_scan: all elems need the same length along axis {axis}, got "
            f"shapes {[e.shape for e in flat]}"))
    if reverse:
        flat = [rev(e, (axis,)) for e in flat]

    def combine(a, b):
        # fn must keep its inputs' structure, shapes and dtypes (JAX's version fails
        # inside, or returns a wrong result, when it does not)
        leaves, out_td = tree.flatten(fn(tree.unflatten(td, a), tree.unflatten(td, b)))
        out = [as_tensor(c) for c in leaves]
        _cf.check_elements("lax.associative_scan", "fn", "elems", td, [x.type for x in a],
                           out_td, [c.type for c in out], [c.weak for c in out])
        return out

    def part(e, start, limit, stride=1):
        return slice_in_dim(e, start, limit, stride, axis)

    def interleave(a, b):
        even = a.shape[axis] == b.shape[axis]
        pa, pb = [(0, 0, 0)] * a.ndim, [(0, 0, 0)] * b.ndim
        pa[axis], pb[axis] = (0, 1 if even else 0, 1), (1, 0 if even else 1, 1)
        zero_a, zero_b = snp.zeros((), a.dtype), snp.zeros((), b.dtype)
        op = bitwise_or if a.dtype is dt.bool_ else add
        return op(pad(a, zero_a, pa), pad(b, zero_b, pb))

    def scan_(es):
        m = es[0].shape[axis]
        if m < 2:
            return es
        odd = scan_(combine([part(e, 0, -1, 2) for e in es],
                            [part(e, 1, None, 2) for e in es]))
        firsts = [part(e, 0, -1) for e in odd] if m % 2 == 0 else odd
        even = combine(firsts, [part(e, 2, None, 2) for e in es])
        even = [concatenate([part(e, 0, 1), r], axis) for e, r in zip(es, even, strict=True)]
        return [interleave(a, b) for a, b in zip(even, odd, strict=True)]

    out = scan_(flat)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return tree.unflatten(td, out)


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """x = solve(f, initial_guess), a root of f, differentiated implicitly (as JAX's
    lax.custom_root): derivatives do not flow through the solver's iterations but follow
    dx = -J^-1 (df at fixed x), with tangent_solve(g, y) solving the linear g(x) = y for
    g the linearisation of f at the root. Only the closed-over values of f get
    gradients, not initial_guess.

    As in JAX, f, solve and tangent_solve must return initial_guess's pytree structure
    (f's is found by tracing it, before solve runs); their dtypes are not checked."""
    g_leaves, g_tree = tree.flatten(initial_guess)
    g_leaves = [as_tensor(x) for x in g_leaves]
    f_tree = _cf._trace(f, g_tree, [(x.type, x.weak) for x in g_leaves], "custom_root_f",
                        spread=False).out_tree
    _cf.check_structure("custom_root", "f", f_tree, "initial_guess", g_tree)
    guess = tree.map(stop_gradient, initial_guess)
    found = solve(f, guess)
    if has_aux and not (isinstance(found, (tuple, list)) and len(found) == 2):
        raise TypeError(at_user_line(
            f"custom_root: with has_aux=True, solve must return a pair (root, aux), it "
            f"returns {tree.structure(found)!r} (as in jax.lax.custom_root)"))
    root, aux = found if has_aux else (found, None)
    _cf.check_structure("custom_root", "solve", tree.structure(root), "initial_guess",
                        g_tree)
    root = tree.map(stop_gradient, root)

    def linearized(v):
        return _jvp(f, (root,), (v,))[1]

    # one implicit-function step: value zero (f(root) = 0 up to the solver's residual,
    # which is removed), derivative -J^-1 df
    step = tangent_solve(linearized, f(root))
    _cf.check_structure("custom_root", "tangent_solve", tree.structure(step),
                        "initial_guess", g_tree)
    correction = tree.map(lambda s: stop_gradient(s) - s, step)
    out = tree.map(lambda r, c: r + c, root, correction)
    return (out, aux) if has_aux else out


def optimization_barrier(operand):
    """operand (any pytree of tensors) unchanged, behind a barrier that XLA may not move
    computation across (stablehlo.optimization_barrier): with jax.checkpoint, a way to
    keep a recomputation from being merged into the forward pass. Differentiable and
    batched as the identity."""
    leaves, td = tree.flatten(operand)
    if not leaves:
        return operand
    return tree.unflatten(td, list(bind(_barrier, tuple(as_tensor(v) for v in leaves))))
