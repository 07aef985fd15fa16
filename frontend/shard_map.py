"""shard_map: write the per-device program yourself, with explicit collectives.

    mesh = stablejit.sharding.make_mesh((8,), ("i",))

    @stablejit.jit
    def step(x):
        return stablejit.shard_map(lambda b: stablejit.lax.psum(b.sum(), "i"), mesh=mesh,
                                   in_specs=P("i"), out_specs=P())(x)

The function runs once per device of `mesh` on that device's block of each argument
(in_specs says how arguments are split); out_specs says how the blocks it returns make
the global results. Inside, stablejit.lax's collectives (psum, pmean, pmax, pmin,
all_gather, all_to_all, ppermute, axis_index, psum_scatter) name mesh axes. Called
outside jit it compiles and runs like a jitted function; it composes with grad, vjp,
jvp, vmap, the jacobians and checkpoint, eagerly as under jit (a derivative that holds
a shard_map runs over its mesh: built.run_function asks spmd.runs_on).
"""

from __future__ import annotations

import contextlib
import functools

from . import context, tree
from .compiler.ir import Attrs, TensorType
from .compiler.primitives import sharding as sh
from .control_flow import _as_tensor, _trace
from .dispatch import bind
from .errors import at_user_line
from .jit import jit
from .sharding import Mesh, PartitionSpec, prefix_leaves
from .tracebacks import api_boundary


def _specs(spec_leaves, types, what: str):
    out = []
    for i, (s, t) in enumerate(zip(spec_leaves, types, strict=True)):
        if s is None:
            s = PartitionSpec()
        if not isinstance(s, PartitionSpec):
            raise TypeError(at_user_line(
                f"shard_map {what}: entry {i} is {s!r}; use a PartitionSpec (P('x'), P())"))
        out.append(s.dims(len(t.shape)))
    return tuple(out)


def shard_map(f, mesh: Mesh, in_specs, out_specs, *, check_rep=None, check_vma=None):
    """f over the devices of `mesh` (see the module docstring). check_rep / check_vma
    are accepted for jax compatibility; replication is not checked."""
    if not isinstance(mesh, Mesh):
        raise TypeError(at_user_line(f"shard_map needs a stablejit.sharding.Mesh, not "
                                     f"{mesh!r}"))

    @api_boundary
    def mapped(*args):
        # a program over a mesh cannot join grad's tape, which runs on one device: grad
        # then stages the function, where the shard_map is one op of the derivative
        context.current_backend().needs_staging("shard_map")
        if context.current_backend().concrete:
            # eagerly: a jitted call of the op (jit runs it over the mesh). The jitted
            # function binds; it is never `mapped` itself, which would decide the same
            # again wherever jit calls its function inline
            return _jitted(bind_op)(*args)
        return bind_op(*args)

    def bind_op(*args):
        leaves, in_tree = tree.flatten(args)
        tensors = [_as_tensor(x) for x in leaves]
        dims = _specs(prefix_leaves(tuple(in_specs) if isinstance(in_specs, list)
                                    else in_specs, in_tree, "in_specs"),
                      [t.type for t in tensors], "in_specs")
        blocks = [(TensorType(sh.local_shape(t.shape, d, mesh, f"shard_map argument {i}"),
                              t.dtype), t.weak)
                  for i, (t, d) in enumerate(zip(tensors, dims, strict=True))]
        with _mesh_axes(mesh):
            body = _trace(f, in_tree, blocks, f"shard_map_{getattr(f, '__name__', 'f')}")
        out_dims = _specs(prefix_leaves(out_specs, body.out_tree, "out_specs"),
                          body.fn.result_types, "out_specs")
        outs = bind(sh.shard_map, (*tensors, *body.captured), Attrs({
            "mesh": mesh,
            "in_specs": dims + tuple(((),) * t.ndim for t in body.captured),
            "out_specs": out_dims}), regions=(body.fn,))
        for o, w in zip(outs, body.out_weak, strict=True):
            o.weak = w
        return tree.unflatten(body.out_tree, list(outs))

    functools.update_wrapper(bind_op, f)
    functools.update_wrapper(mapped, f)
    return mapped


@functools.lru_cache(maxsize=256)
def _jitted(bind_op):
    return jit(bind_op)


@contextlib.contextmanager
def _mesh_axes(mesh: Mesh):
    """While the body is traced its mesh axes are named axes for stablejit.lax."""
    with contextlib.ExitStack() as stack:
        for name, size in mesh.shape.items():
            stack.enter_context(context.binding_axis(name, size))
        yield
