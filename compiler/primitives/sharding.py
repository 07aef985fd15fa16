"""Multi-device programs: sharding constraints and shard_map, and the Shardy (`sdy`)
text XLA's SPMD partitioner reads.

A mesh here is any object with `axis_names` and `axis_sizes` (the frontend's Mesh);
the compiler never looks at its devices. A sharding spec is one tuple of mesh axis
names per dimension of the value (() for a dimension that is not split).

    sharding_constraint(x)   x, laid out as `spec` says (sdy.sharding_constraint)
    shard_map(*xs)           regions: (body,). The body runs once per device on that
                             device's block of each operand (in_specs) and its results
                             are reassembled by out_specs (sdy.manual_computation).
                             Collectives in the body (collectives.py) name mesh axes.

The reference rule simulates the devices: the body is batched over every mesh axis
(the collectives' batching rules are their meaning across devices) and run on the
stacked blocks. An output replicated over an axis (out_spec does not name it) is read
from the device at index 0 of that axis; the vjp rule follows the same convention.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import dtypes as dt
from ..autodiff import is_differentiable_type, vjp_into
from ..batch_rules import bring
from ..batching import batch_function
from ..builder import Builder
from ..errors import ShapeError
from ..interpreter import interpret
from ..ir import Function, TensorType
from ..ops import Ops
from ..primitive import Primitive
from . import collectives

MESH = "mesh"  # the one mesh symbol of a program


# ---- Shardy text ---------------------------------------------------------------------

def dims_text(spec) -> str:
    """`[{"x"}, {}]`: the axes each dimension is split over."""
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}"
                           for axes in spec) + "]"


def sharding_attr(spec) -> str:
    """The `#sdy.sharding` of a value (function arguments, results, constraints)."""
    return f"#sdy.sharding<@{MESH}, {dims_text(spec)}>"


def _per_value(specs) -> str:
    return ("#sdy.sharding_per_value<[" +
            ", ".join(f"<@{MESH}, {dims_text(s)}>" for s in specs) + "]>")


def program_mesh(fn: Function):
    """The mesh the ops of `fn` (and of their regions) name, or None."""
    for op in fn.ops:
        mesh = op.attrs.get("mesh") if op.prim.family == "sharding" else None
        if mesh is not None:
            return mesh
        for r in op.regions:
            mesh = program_mesh(r)
            if mesh is not None:
                return mesh
    return None


# ---- shapes of blocks ------------------------------------------------------------------

def _factors(spec, mesh) -> list[int]:
    size = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    return [math.prod(size[a] for a in axes) for axes in spec]


def _check_spec(spec, mesh, ndim: int, what: str) -> None:
    if len(spec) != ndim:
        raise ShapeError(f"{what}: the sharding names {len(spec)} dimension(s) for a value "
                         f"of rank {ndim}")
    used = [a for axes in spec for a in axes]
    for a in used:
        if a not in mesh.axis_names:
            raise ShapeError(f"{what}: mesh axis {a!r} is not one of the mesh's axes "
                             f"{tuple(mesh.axis_names)}")
    if len(set(used)) != len(used):
        raise ShapeError(f"{what}: a mesh axis is used twice in {spec}")


def local_shape(shape, spec, mesh, what: str) -> tuple[int, ...]:
    """The shape of one device's block of a value of `shape`."""
    _check_spec(spec, mesh, len(shape), what)
    out = []
    for i, (n, f) in enumerate(zip(shape, _factors(spec, mesh), strict=True)):
        if n % f:
            raise ShapeError(f"{what}: dimension {i} of size {n} does not divide into {f} "
                             f"blocks (mesh axes {spec[i]}); pad it to a multiple of {f}")
        out.append(n // f)
    return tuple(out)


# ---- sharding_constraint ---------------------------------------------------------------

def _constraint_rule(x, *, mesh, spec):
    _check_spec(spec, mesh, x.ndim, "with_sharding_constraint")
    return x


def _constraint_batch(ops, xs, batched, *, mesh, spec):
    (x,), (b,) = xs, batched
    return (ops.bind(sharding_constraint, x, mesh=mesh, spec=(((),) + spec) if b else spec),)


sharding_constraint = Primitive(
    "sharding_constraint", _constraint_rule,
    lambda ctx, x: ctx.op("sdy.sharding_constraint", [x], ctx.out_types,
                          f"sharding = {sharding_attr(ctx.attrs['spec'])}"),
    lambda x, *, mesh, spec: x,
    vjp=lambda ops, cts, primals, outs, *, mesh, spec: (
        ops.bind(sharding_constraint, cts[0], mesh=mesh, spec=spec),),
    batch=_constraint_batch, family="sharding")


# ---- shard_map -------------------------------------------------------------------------

def _shard_map_rule(*xs, mesh, in_specs, out_specs, regions):
    (body,) = regions
    if not len(xs) == len(in_specs) == len(body.params):
        raise ShapeError(f"shard_map: {len(xs)} operand(s), {len(in_specs)} in_specs and a "
                         f"body of {len(body.params)} parameter(s) must agree")
    for i, (x, spec, p) in enumerate(zip(xs, in_specs, body.params, strict=True)):
        block = TensorType(local_shape(x.shape, spec, mesh, f"shard_map argument {i}"),
                           x.dtype)
        if block != p.type:
            raise ShapeError(f"shard_map: argument {i} of type {x} has blocks {block}, the "
                             f"body takes {p.type}")
    if len(out_specs) != len(body.results):
        raise ShapeError(f"shard_map: {len(out_specs)} out_specs for {len(body.results)} "
                         f"result(s)")
    outs = []
    for i, (r, spec) in enumerate(zip(body.result_types, out_specs, strict=True)):
        _check_spec(spec, mesh, r.ndim, f"shard_map result {i}")
        outs.append(TensorType([n * f for n, f in zip(r.shape, _factors(spec, mesh),
                                                      strict=True)], r.dtype))
    return tuple(outs)


def _manual_region(ctx, body: Function) -> str:
    """The body as the region of sdy.manual_computation (terminated by sdy.return)."""
    e = ctx.emitter
    args = [e.fresh("%a") for _ in body.params]
    for a, p in zip(args, body.params, strict=True):
        e.type_of[a] = p.type
    with e.block() as lines:
        results = e.emit_ops(body, args)
        ctx.op("sdy.return", list(results), [])
    head = ", ".join(f"{a}: {p.type.mlir()}" for a, p in zip(args, body.params, strict=True))
    return f"{{\n{e.indent}^bb0({head}):\n" + "\n".join(lines) + f"\n{e.indent}}}"


def _shard_map_emit(ctx, *xs):
    mesh = ctx.attrs["mesh"]
    e = ctx.emitter
    outer, e.mesh = e.mesh, mesh  # collectives in the body read their replica groups here
    try:
        region = _manual_region(ctx, ctx.regions[0])
    finally:
        e.mesh = outer
    manual = ", ".join(f'"{a}"' for a in mesh.axis_names)
    attrs = (f"in_shardings = {_per_value(ctx.attrs['in_specs'])}, "
             f"manual_axes = #sdy<manual_axes{{{manual}}}>, "
             f"out_shardings = {_per_value(ctx.attrs['out_specs'])}")
    return ctx.op("sdy.manual_computation", list(xs), ctx.out_types, attrs, regions=[region])


def _blocks(spec, mesh, shape):
    """For each device (mesh coordinates, row-major), the slices of its block."""
    axis = {a: i for i, a in enumerate(mesh.axis_names)}
    factors = _factors(spec, mesh)
    for coord in itertools.product(*map(range, mesh.axis_sizes)):
        index = []
        for axes, n, f in zip(spec, shape, factors, strict=True):
            pos = 0
            for a in axes:  # the first axis named is the major one
                pos = pos * mesh.axis_sizes[axis[a]] + coord[axis[a]]
            index.append(slice(pos * (n // f), (pos + 1) * (n // f)))
        yield coord, tuple(index)


def _shard_map_ref(*xs, mesh, in_specs, out_specs, regions):
    body = regions[0].fn
    stacked = []
    for x, spec, p in zip(xs, in_specs, body.params, strict=True):
        s = np.empty(tuple(mesh.axis_sizes) + p.type.shape, x.dtype)
        for coord, index in _blocks(spec, mesh, x.shape):
            s[coord] = x[index]
        stacked.append(s)
    fn = body  # batched over the innermost mesh axis first: params get (*sizes, *block)
    for name, size in reversed(list(zip(mesh.axis_names, mesh.axis_sizes, strict=True))):
        fn, _ = batch_function(fn, [True] * len(fn.params), size,
                               force=[True] * len(fn.results), axis=(name, size))
    outs = interpret(fn, stacked)
    results = []
    for o, spec, r in zip(outs, out_specs, body.results, strict=True):
        shape = [n * f for n, f in zip(r.type.shape, _factors(spec, mesh), strict=True)]
        g = np.empty(shape, o.dtype)
        # in reverse, so that the device at index 0 of a replicated axis writes last
        for coord, index in reversed(list(_blocks(spec, mesh, shape))):
            g[index] = o[coord]
        results.append(g)
    return tuple(results)


def _unnamed(spec, mesh) -> list[str]:
    named = {a for axes in spec for a in axes}
    return [a for a in mesh.axis_names if a not in named]


def _shard_map_vjp(ops, cts, primals, outs, *, mesh, in_specs, out_specs, regions):
    """Another shard_map: the body's vjp, per device. A replicated output's cotangent
    goes to the device at index 0 of each axis it is replicated over (the one the
    result is read from); a replicated input's cotangent sums over those axes."""
    (body,) = regions
    cts = [ct if ct is not None else ops.zeros_like(o) for ct, o in zip(cts, outs,
                                                                         strict=True)]
    b = Builder(f"{body.name}_vjp")
    xs = [b.param(p.type) for p in body.params]
    cs = [b.param(r.type) for r in body.results]
    o = Ops(b)
    for i, spec in enumerate(out_specs):
        for a in _unnamed(spec, mesh):
            if not is_differentiable_type(cs[i].type):
                continue
            first = o.eq(o.bind(collectives.axis_index, axis_name=a), o.const(0, dt.int32))
            mask = o.broadcast(o.convert(first, cs[i].type.dtype), cs[i].type.shape, ())
            cs[i] = o.mul(cs[i], mask)
    wrt = [i for i, p in enumerate(body.params) if is_differentiable_type(p.type)]
    _, grads = vjp_into(b, body, xs, cs, wrt)
    for k, i in enumerate(wrt):
        for a in _unnamed(in_specs[i], mesh):
            grads[k] = o.bind(collectives.psum, grads[k], axis_name=a)
    fn = b.build(grads)
    got = ops.bind_many(shard_map, *primals, *cts, mesh=mesh,
                        in_specs=tuple(in_specs) + tuple(out_specs),
                        out_specs=tuple(in_specs[i] for i in wrt), regions=(fn,))
    out = [None] * len(primals)
    for i, g in zip(wrt, got, strict=True):
        out[i] = g
    return tuple(out)


def _shard_map_batch(ops, xs, batched, *, mesh, in_specs, out_specs, regions):
    """vmap of shard_map: the body batched, the batch axis split over no mesh axis."""
    size = ops.axis[1]
    xs = [bring(ops, x, b, size) for x, b in zip(xs, batched, strict=True)]
    body, _ = batch_function(regions[0], [True] * len(xs), size,
                             force=[True] * len(regions[0].results), axis=ops.axis)
    return ops.bind_many(shard_map, *xs, mesh=mesh,
                         in_specs=tuple(((),) + s for s in in_specs),
                         out_specs=tuple(((),) + s for s in out_specs), regions=(body,))


shard_map = Primitive("shard_map", _shard_map_rule, _shard_map_emit, _shard_map_ref,
                      vjp=_shard_map_vjp, batch=_shard_map_batch, multiple_results=True,
                      family="sharding")

PRIMITIVES = [sharding_constraint, shard_map]
