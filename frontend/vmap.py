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
from .autodiff import run_built
from .compiler.batch_rules import bring, move_axis
from .compiler.batching import batch_into
from .compiler.ir import TensorType
from .compiler.ops import Ops
from .context import using_backend
from .errors import at_user_line
from .numpy._operands import as_tensor
from .tensor import Tensor
from .tracebacks import api_boundary
from .tracing import Trace, refuse_written_arguments


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
    """Trace f for one example: the leaves at `keep` abstract (of `specs`), the others
    the Python values they are."""
    trace = Trace(name)
    abstract = list(leaves)
    for i, (t, weak) in zip(keep, specs, strict=True):
        abstract[i] = trace.new_arg(t, weak)
    before = [getattr(a, "_data", None) for a in abstract]
    try:
        with using_backend(trace):
            args, kwargs = tree.unflatten(in_tree, abstract)
            out = f(*args, **kwargs)
            refuse_written_arguments(abstract, before, "vmap")
            out_leaves, out_tree = tree.flatten(out)
            values = [trace.value_of(as_tensor(x)) for x in out_leaves]
        fn = trace.builder.build(values)
    finally:
        trace.finish()
    return fn, out_tree, [t for t, _ in trace.captured]


def vmap(fun: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size: int | None = None,
         spmd_axis_name=None) -> Callable:
    """fun mapped over an axis of its arguments (JAX's vmap); see the module docstring."""
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
                    f"(shape {t.shape}); pass an axis in [{-t.ndim}, {t.ndim}) for it, or "
                    f"None in in_axes to leave it unmapped"))
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
