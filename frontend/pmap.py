"""pmap: jax.pmap, a function mapped over the leading (or in_axes) axis of its arguments
with one device per element, written as a shard_map over a one-axis mesh of the first
n devices (n = the mapped axis's length).

Each device runs `fun` on its element (the mapped axis removed); collectives name the
mesh axis by `axis_name`, as in jax. The results are sharded over those devices. It
composes with grad, vmap and jit as shard_map does, and compiles once per signature.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence

from . import numpy as snp
from . import sharding, tree
from .errors import at_user_line
from .jit import jit
from .shard_map import shard_map
from .sharding import Mesh, PartitionSpec
from .tracebacks import api_boundary

_UNNAMED = "_pmap_axis"  # (the mesh axis when the user names none)


def _axes_per_leaf(axes, args, what: str) -> list:
    """in_axes (a prefix of args' structure) as one entry per leaf of args."""
    leaves, td = tree.flatten(args)
    if isinstance(axes, int) or axes is None:
        return [axes] * len(leaves)
    return sharding.prefix_leaves(tuple(axes) if isinstance(axes, list) else axes, td, what)


def pmap(fun: Callable, axis_name=None, *, in_axes=0, out_axes=0,
         static_broadcasted_argnums: int | Sequence[int] = (), devices=None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums=()) -> Callable:
    """fun mapped over an axis of its arguments with one device per element (jax.pmap).

    Args:
        fun: the function of one element; it may use the collectives (lax.psum ...)
            over axis_name.
        axis_name: the name collectives use for the mapped axis.
        in_axes, out_axes: which axis of each argument / result is mapped (an int, None
            for not mapped, or a pytree prefix of them), as vmap's.
        static_broadcasted_argnums: arguments passed to every device as Python values
            (hashable; a new value compiles again).
        devices: the devices to use (default: the first n of stablejit.devices()).
        backend: the platform of those devices (default: the default platform).
        axis_size: the mapped length where no argument is mapped.
        donate_argnums: accepted for jax's signature (nothing is donated).

    The mapped axis must not be longer than the devices there are: on the host, ask
    for more with XLA_FLAGS=--xla_force_host_platform_device_count=N before the first
    operation, or use vmap (one device, the same values).

    Example:
        >>> f = stablejit.pmap(lambda x: x / stablejit.lax.psum(x, "i"), axis_name="i")
        >>> f(snp.asarray([1.0]))
        Tensor<f32[1] spmd:host:1 NamedSharding(mesh=Mesh('i': 1), spec=PartitionSpec('i'))>
        [1.]
    """
    del donate_argnums
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums,
                                                         int) else tuple(
        static_broadcasted_argnums)
    name = _UNNAMED if axis_name is None else axis_name

    def per_device(static_values, devs: tuple):
        mesh = Mesh(list(devs), (name,))
        # out_axes as shard_map's out_specs: the same pytree prefix, a spec per entry
        out_specs = tree.map(lambda a: PartitionSpec() if a is None else PartitionSpec(name),
                             out_axes, is_leaf=lambda a: a is None)

        def run(*args):
            leaves, td = tree.flatten(args)
            in_leaves = _axes_per_leaf(in_axes, args, "pmap in_axes")
            # the mapped axis first, so that the mesh splits it; unmapped leaves replicated
            front = [snp.moveaxis(x, a, 0) if a is not None else x
                     for x, a in zip(leaves, in_leaves, strict=True)]
            specs = tuple(PartitionSpec(name) if a is not None else PartitionSpec()
                          for a in in_leaves)

            def block(*blocks):  # one device's element: the block's length-1 axis dropped
                one = [b[0] if a is not None else b
                       for b, a in zip(blocks, in_leaves, strict=True)]
                call_args = list(tree.unflatten(td, one))
                for i, v in sorted(static_values):
                    call_args.insert(i, v)
                out = fun(*call_args)
                outs = _axes_per_leaf(out_axes, out, "pmap out_axes")
                out_leaves, out_td = tree.flatten(out)
                return tree.unflatten(out_td, [
                    snp.expand_dims(o, 0) if a is not None else snp.asarray(o)
                    for o, a in zip(out_leaves, outs, strict=True)])

            outs = shard_map(block, mesh, in_specs=specs, out_specs=out_specs)(*front)
            axes = _axes_per_leaf(out_axes, outs, "pmap out_axes")
            out_leaves, out_td = tree.flatten(outs)
            return tree.unflatten(out_td, [snp.moveaxis(o, 0, a) if a is not None else o
                                           for o, a in zip(out_leaves, axes, strict=True)])
        return jit(run)

    compiled: dict = {}

    @api_boundary
    @functools.wraps(fun)
    def mapped(*args):
        static_values = tuple((i % max(len(args), 1), args[i]) for i in static
                              if -len(args) <= i < len(args))
        static_at = {j for j, _ in static_values}
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_at)
        n = _mapped_size(dynamic, in_axes, axis_size)
        devs = tuple(devices) if devices is not None else tuple(
            sharding.global_devices(backend)[:n])
        if len(devs) < n:
            raise ValueError(at_user_line(
                f"pmap: the mapped axis has length {n} but only {len(devs)} device(s) are "
                f"available; on the host, set XLA_FLAGS=--xla_force_host_platform_device_"
                f"count={n} before the first operation, or use vmap (one device, the same "
                f"values)"))
        if len(devs) != n:
            raise ValueError(at_user_line(
                f"pmap: {len(devs)} devices were given for a mapped axis of length {n}"))
        key = (static_values, devs)
        try:
            f = compiled.get(key)
        except TypeError:
            raise ValueError(at_user_line(
                f"pmap: the static arguments {[v for _, v in static_values]!r} must be "
                f"hashable (each value compiles its own program); pass arrays as dynamic "
                f"arguments")) from None
        if f is None:
            f = compiled[key] = per_device(static_values, devs)
        return f(*dynamic)
    return mapped


def _mapped_size(args, in_axes, axis_size) -> int:
    leaves = tree.leaves(args)
    axes = _axes_per_leaf(in_axes, args, "pmap in_axes")
    sizes = {snp.shape(x)[operator.index(a)] for x, a in zip(leaves, axes, strict=True)
             if a is not None}
    if len(sizes) > 1:
        raise ValueError(at_user_line(
            f"pmap: the mapped axes have different lengths {sorted(sizes)}; map arguments "
            f"of one length (in_axes=None for those that are not mapped)"))
    if not sizes:
        if axis_size is None:
            raise ValueError(at_user_line(
                "pmap: no argument is mapped (in_axes all None); give axis_size"))
        return int(axis_size)
    return sizes.pop()


__all__ = ["pmap"]
