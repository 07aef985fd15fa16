"""vmap: map a function over an axis of its arguments, as one batched program.

    per_example = stablejit.vmap(grad(loss), in_axes=(None, 0, 0))

The function is traced once for one example (the mapped axes removed from the argument
types); compiler/batching.py then rewrites that IR with a batch axis through every
primitive's batching rule, and the result runs like any other built program: compiled
behind the executable cache, interpreted on the reference backend, or recorded into an
enclosing trace, so vmap composes with jit, grad and itself.

Semantics follow JAX's vmap: in_axes / out_axes are an int, None (not mapped) or a pytree
prefix of the arguments / results; negative axes count from the end; keyword arguments
are mapped over axis 0; `axis_name` names the mapped axis for the collectives in
stablejit.lax (psum, pmean, pmax, pmin, all_gather, axis_index); `axis_size` gives the
size when no argument is mapped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from . import context, tree
from .built import run_built
from .compiler.batch_rules import bring, move_axis
from .compiler.batching import batch_into
from .compiler.ir import TensorType
from .compiler.ops import Ops
from .errors import at_user_line
from .numpy._operands import as_tensor
from .staging import Spec, stage
from .tensor import Tensor
from .tracebacks import api_boundary
from .tracing import Trace


class _NotMapped:
    """None inside an in_axes/out_axes spec (a pytree would read None as an empty node)."""

    def __repr__(self) -> str:
        return "None"


NOT_MAPPED = _NotMapped()


def _spec_tree(spec, what: str):
    """The axes spec as a pytree whose leaves are ints or NOT_MAPPED."""
    if spec is None:
        return NOT_MAPPED
    if isinstance(spec, bool) or not isinstance(spec, (int, tuple, list, dict)) and \
            tree.tree_structure(spec).kind is None:
        raise TypeError(at_user_line(
            f"vmap {what} must be an int, None, or a (nested) tuple/list/dict of them, "
            f"got {spec!r}"))
    if isinstance(spec, int):
        return spec
    if isinstance(spec, dict):
        return {k: _spec_tree(v, what) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(_spec_tree(v, what) for v in spec)
    return tree.tree_map(lambda v: _spec_tree(v, what), spec)


def _expand(spec, value_tree, what: str, path: str) -> list:
    """One axis per leaf of `value_tree` (a TreeDef), from a spec that is a prefix of it."""
    spec_leaves, spec_td = tree.flatten(spec)
    out: list = []
    it = iter(spec_leaves)

    def walk(std, vtd, where):
        if std.kind is None:
            out.extend([next(it)] * vtd.num_leaves)
            return
        if std.kind is not vtd.kind and not (std.kind in (tuple, list)
                                             and vtd.kind in (tuple, list)) \
                or std.aux != vtd.aux or len(std.children) != len(vtd.children):
            raise ValueError(at_user_line(
                f"vmap {what} specification must be a tree prefix of the corresponding "
                f"value: at {where or 'the top'} the spec has structure {std}, the value "
                f"{vtd}"))
        keys = std.aux if std.kind is dict else range(len(std.children))
        for k, sc, vc in zip(keys, std.children, vtd.children, strict=True):
            walk(sc, vc, f"{where}[{k!r}]")

    walk(spec_td, value_tree, path)
    return out


def _leaf_names(in_tree) -> list[str]:
    """A readable name per argument leaf: "argument 1", "argument 0['w']", "keyword x"."""
    names: list[str] = []

    def walk(td, where):
        if td.kind is None:
            names.append(where)
            return
        keys = td.aux if td.kind is dict else range(len(td.children))
        for k, c in zip(keys, td.children, strict=True):
            walk(c, f"{where}[{k!r}]")

    args_td, kwargs_td = in_tree.children
    for i, c in enumerate(args_td.children):
        walk(c, f"argument {i}")
    for k, c in zip(kwargs_td.aux, kwargs_td.children, strict=True):
        walk(c, f"keyword argument {k!r}")
    return names


def _trace(f, specs, in_tree, name, leaves, keep):
    """Stage f for one example: the leaves at `keep` abstract (of `specs`), the others
    the Python values they are."""
    inputs = list(leaves)
    for i, (t, weak) in zip(keep, specs, strict=True):
        inputs[i] = Spec(t, weak)
    s = stage(lambda args, kwargs: f(*args, **kwargs), in_tree, inputs, Trace(name),
              output=lambda leaf, _: as_tensor(leaf), refuse_writes="vmap")
    return s.fn, s.out_tree, s.captured


def vmap(fun: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size: int | None = None,
         spmd_axis_name=None) -> Callable:
    """`fun` mapped over an axis of its arguments, as one batched program (JAX's vmap).

    `fun` is traced once for one example; a compiler pass adds the batch axis to every
    operation, so the result runs as one program (ops that do not depend on the batch
    run once). It composes with jit, grad (both orders), control flow and itself.

    Args:
        fun: the function to map; it takes and returns pytrees of tensors.
        in_axes: which axis of each argument is mapped: an int, None (not mapped: the
            same value for every example) or a pytree prefix of the arguments (a tuple
            with one entry per positional argument). Negative axes count from the end.
            Keyword arguments are mapped over axis 0.
        out_axes: where the batch axis goes in each result: an int, or a pytree prefix
            of the results; None only for results that do not depend on the batch.
        axis_name: a name for the mapped axis, for the collectives of stablejit.lax
            (psum, pmean, pmax, pmin, all_gather, axis_index) inside `fun`.
        axis_size: the batch size, needed only when no argument is mapped.
        spmd_axis_name: accepted for JAX's signature.

    Returns:
        A function with `fun`'s arguments, each mapped argument one axis longer, whose
        results have the batch axis at `out_axes`.

    Raises:
        TypeError: if `fun` is not callable.
        ValueError: when called, if mapped arguments disagree on the batch size, an axis
            is out of range, in_axes is not a prefix of the arguments, or a result that
            depends on the batch has out_axes None; the message names the argument.

    Example:
        >>> f = stablejit.vmap(lambda a, b: snp.dot(a, b), in_axes=(0, None))
        >>> f(snp.asarray([[1.0, 2.0], [3.0, 4.0]]), snp.asarray([1.0, 1.0]))
        Tensor<f32[2] xla:host:0>
        [3., 7.]
        >>> stablejit.vmap(snp.sum, in_axes=1)(snp.asarray([[1, 2], [3, 4]]))
        Tensor<i64[2] xla:host:0>
        [4, 6]

    Implementation notes: the module stablejit.vmap
    (`importlib.import_module("stablejit.vmap")`) and compiler/batching.py.
    """
    if not callable(fun):
        raise TypeError(f"vmap: the first argument must be a function, got {fun!r}")
    if isinstance(in_axes, list):  # JAX reads a top-level list as a tuple of axes
        in_axes = tuple(in_axes)
    in_spec = _spec_tree(in_axes, "in_axes")
    out_spec = _spec_tree(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ValueError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")
    name = getattr(fun, "__name__", "f")

    # name and docs only: fun may be a Jitted, whose state must not be copied here
    @api_boundary
    @functools.wraps(fun, updated=())
    def vmapped(*args, **kwargs):
        leaves, in_tree = tree.flatten((args, kwargs))
        if isinstance(in_spec, tuple) and len(in_spec) != len(args):
            raise ValueError(at_user_line(
                f"vmap in_axes has {len(in_spec)} entries but the function was called with "
                f"{len(args)} positional argument(s); give one axis (or None) per argument"))
        axes = _expand((in_spec, {k: 0 for k in kwargs}), in_tree, "in_axes", "")
        names = _leaf_names(in_tree)
        # unmapped Python values (a size, a flag, a string) reach fun as they are, as in
        # JAX; arrays and mapped values become tensors
        static = [ax is NOT_MAPPED and not isinstance(x, (Tensor, np.ndarray, np.generic))
                  for x, ax in zip(leaves, axes, strict=True)]
        keep = [i for i, s in enumerate(static) if not s]
        tensors = [as_tensor(leaves[i]) for i in keep]
        axes = [axes[i] for i in keep]
        names = [names[i] for i in keep]
        size, first = axis_size, None
        norm_axes = []
        for t, ax, nm in zip(tensors, axes, names, strict=True):
            if ax is NOT_MAPPED:
                norm_axes.append(None)
                continue
            if not -t.ndim <= ax < t.ndim:
                raise ValueError(at_user_line(
                    f"vmap was asked to map {nm} along axis {ax}, but it has rank {t.ndim} "
                    f"(shape {t.shape}); " + (f"pass an axis in [{-t.ndim}, {t.ndim}) for it, "
                    f"or None" if t.ndim else "a scalar has no axis to map: pass None") +
                    " in in_axes to leave it unmapped"))
            ax %= t.ndim
            norm_axes.append(ax)
            n = t.shape[ax]
            if size is None:
                size, first = n, (nm, t.shape, ax)
            elif n != size:
                was = (f"{first[0]} has shape {first[1]} mapped along axis {first[2]}"
                       if first else f"axis_size is {axis_size}")
                raise ValueError(at_user_line(
                    f"vmap got inconsistent sizes for the mapped axes: {was} (size {size}), "
                    f"but {nm} has shape {t.shape} mapped along axis {ax} (size {n}). "
                    f"Give every mapped argument the same size on its mapped axis."))
        if size is None:
            raise ValueError(at_user_line(
                "vmap must map at least one argument (in_axes are all None); pass "
                "axis_size= to say how many times to map"))
        specs = []
        for t, ax in zip(tensors, norm_axes, strict=True):
            shape = t.shape if ax is None else t.shape[:ax] + t.shape[ax + 1:]
            specs.append((TensorType(shape, t.dtype), t.weak))
        with context.binding_axis(axis_name, size):
            fn, out_tree, captured = _trace(fun, specs, in_tree, name, leaves, keep)
        out_axes_list = _expand(out_spec, out_tree, "out_axes", "")
        n_in = len(tensors)

        def build(b, vals):
            ops = Ops(b)
            moved = [v if ax is None else move_axis(ops, v, ax, 0)
                     for v, ax in zip(vals[:n_in], norm_axes, strict=True)]
            flags = [ax is not None for ax in norm_axes] + [False] * len(captured)
            outs, out_b = batch_into(b, fn, moved + list(vals[n_in:]), flags,
                                     (axis_name, size))
            results = []
            for i, (v, is_b, ax) in enumerate(zip(outs, out_b, out_axes_list, strict=True)):
                if ax is NOT_MAPPED:
                    if is_b:
                        raise ValueError(at_user_line(
                            f"vmap has out_axes None for output {i}, but that output "
                            f"depends on the mapped axis; map it (an int in out_axes) or "
                            f"reduce over the batch inside the function (e.g. with "
                            f"stablejit.lax.psum and axis_name)"))
                    results.append(v)
                    continue
                v = bring(ops, v, is_b, size)
                if not -v.type.ndim <= ax < v.type.ndim:
                    raise ValueError(at_user_line(
                        f"vmap out_axes {ax} is out of range for output {i} of rank "
                        f"{v.type.ndim} (shape {v.type.shape})"))
                results.append(move_axis(ops, v, 0, ax))
            return results

        outs = run_built(f"{name}_vmap", build, tensors + captured)
        return tree.unflatten(out_tree, outs)

    return vmapped
