"""Tensors and programs over several devices.

A tensor that spans devices is an ordinary Tensor of the global type whose data is a
`Shards` (its sharding and one buffer per addressable device, in the sharding's device
order) on the SpmdBackend of those devices. Single-device tensors and their eager path
are untouched: only a tensor made by `device_put(x, NamedSharding(...))` or returned by
a program over several devices lands here.

A program over several devices (jit with shardings, jit of a function with shard_map
or with_sharding_constraint, or an eager op on sharded tensors) is one SpmdProgram: its
IR is emitted with each argument's and result's sharding (Shardy `sdy.sharding`), XLA's
SPMD partitioner splits it, and it runs on every device of the mesh at once. It is
compiled once per tuple of argument shardings.
"""

from __future__ import annotations

import threading

import numpy as np

from . import config, tree
from .backends import ProgramBackend, XlaBackend, native
from .compilation import program_text
from .compiler import dtypes as dt
from .compiler import passes
from .compiler.ir import Function, TensorType
from .compiler.primitives.sharding import program_mesh, sharding_attr, sharding_constraint
from .context import concrete_default
from .dispatch import bind1
from .errors import DeviceMismatchError, at_user_line
from .numpy._operands import as_tensor
from .runtime import buffers, dump
from .runtime.spmd import SpmdExecutable
from .sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    SingleDeviceSharding,
    is_addressable,
    jax_index,
    named_from_hlo,
    prefix_leaves,
    replica_ids,
)
from .tensor import Tensor


class Shards:
    """A sharded tensor's data: its sharding and its addressable devices' buffers."""

    __slots__ = ("sharding", "buffers")

    def __init__(self, sharding, buffers_):
        self.sharding, self.buffers = sharding, tuple(buffers_)


class Shard:
    """One device's block of a tensor, as JAX's: `device`, `index` (the block's tuple of
    slices into the global value, slice(None) where a dimension is not split),
    `replica_id` (which copy of that block: 0 for the first device holding it) and
    `data` (the block, a Tensor on that device)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self) -> str:
        return (f"Shard(device={self.device}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def _addressable(sharding, shape):
    """(device, index) of each addressable device, in the sharding's device order."""
    return [(d, i) for d, i in zip(sharding.device_assignment, sharding.indices(shape),
                                   strict=True) if is_addressable(d)]


def put(array: np.ndarray, sharding) -> Shards:
    """Host data split into per-device buffers as `sharding` lays it out (a 0-d block
    stays 0-d: np.ascontiguousarray would make it 1-d)."""
    return Shards(sharding, [buffers.to_device(np.asarray(array[index], order="C"), d)
                             for d, index in _addressable(sharding, array.shape)])


class SpmdBackend(ProgramBackend):
    """Tensors over a set of devices; their ops and programs are partitioned by XLA."""

    sharded = True

    _instances: dict = {}
    _lock = threading.Lock()

    def __init__(self, devices: tuple):
        super().__init__()
        self.devices = devices
        platform = XlaBackend.for_device(devices[0]).platform
        self.name = f"spmd:{platform}:{len(devices)}"

    @classmethod
    def for_devices(cls, devices) -> SpmdBackend:
        key = tuple(sorted(devices, key=lambda d: d.id))
        b = cls._instances.get(key)
        if b is None:
            with cls._lock:
                b = cls._instances.setdefault(key, cls(key))
        return b

    # ---- programs --------------------------------------------------------------------
    def program(self, fn: Function, *, name: str | None = None, optimize: bool = True,
                in_shardings=None, out_shardings=None, **_) -> SpmdProgram:
        return SpmdProgram(fn, self, name or fn.name, optimize, in_shardings, out_shardings)

    def execute(self, prog: SpmdProgram, tensors) -> list[Tensor]:
        return prog.run(tensors)

    # ---- data ------------------------------------------------------------------------
    def tensor(self, shards: Shards, type: TensorType, weak: bool = False) -> Tensor:
        return Tensor(shards, self, type, weak)

    def from_numpy(self, array, weak: bool = False) -> Tensor:
        """Host data replicated on every device of this backend."""
        a = native(array)
        mesh = Mesh(np.array(self.devices, dtype=object), ("devices",))
        return self.tensor(put(a, NamedSharding(mesh)), TensorType(a.shape, dt.dtype(a.dtype)),
                           weak)

    def to_numpy(self, t: Tensor) -> np.ndarray:
        shards = t._live()
        out = np.empty(t.shape, t.dtype.np)
        seen = np.zeros(t.shape, bool)
        for (_, index), buf in zip(_addressable(shards.sharding, t.shape), shards.buffers,
                                   strict=True):
            if not seen[index].all():
                out[index] = buffers.to_numpy(buf)
                seen[index] = True
        if not seen.all():
            raise ValueError(at_user_line(
                f"this {t.type} tensor has blocks on devices of other processes, so this "
                f"process cannot read all of it; read its addressable_shards, or replicate "
                f"it first (jit with out_shardings=NamedSharding(mesh, P()))"))
        return out

    def describe(self, t: Tensor) -> str:
        shards = t._data
        return self.name if shards is None else f"{self.name} {shards.sharding!r}"

    def block_until_ready(self, t: Tensor) -> None:
        for b in t._live().buffers:
            buffers.block_until_ready(b)

    def adopt(self, t: Tensor) -> Tensor:
        """Host data and single-device tensors are replicated here; a tensor over other
        devices is an error (moving it would hide a copy)."""
        if t._backend.sharded:
            raise DeviceMismatchError(at_user_line(
                f"operands span two device sets ({t._backend.name} and {self.name}); "
                f"move one with stablejit.device_put(x, sharding)"))
        return self.from_numpy(t.numpy(), t.weak)

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


def runs_on(fn: Function, backend):
    """The backend that runs `fn` for tensors of `backend`: a program that names a mesh
    (a shard_map, a sharding constraint) runs over that mesh's devices, whichever device
    its inputs are on (they are replicated there), as jit runs it. In a lazy() block it
    runs at once (its inputs are read); a grad tape records it (its derivative runs
    here in turn)."""
    if backend.device_buffers or backend.batches_ops:
        mesh = _mesh_of(fn)
        if mesh is not None:
            return SpmdBackend.for_devices(mesh.devices.flat)
    return backend


# id(fn) -> (fn, its mesh): eager grad runs the same cached derivative every step, and
# walking a large Function's ops each time would cost more than the lookup
_MESHES: dict = {}
_MESHES_KEPT = 512
_MESHES_LOCK = threading.Lock()


def _mesh_of(fn: Function):
    hit = _MESHES.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    mesh = program_mesh(fn)
    with _MESHES_LOCK:
        if len(_MESHES) >= _MESHES_KEPT:  # the oldest goes
            del _MESHES[next(iter(_MESHES))]
        _MESHES[id(fn)] = (fn, mesh)  # holding fn keeps its id from being reused
    return mesh


def _find_mesh(fn: Function, shardings) -> Mesh:
    """The mesh a program runs over: the one its split shardings and its ops name (a
    replicated value fits any mesh over the same devices)."""
    named = [s for s in shardings if isinstance(s, NamedSharding)]
    meshes = {s.mesh for s in named if not s.is_fully_replicated}
    inner = program_mesh(fn)
    if inner is not None:
        meshes.add(inner)
    if not meshes and named:
        meshes = {named[0].mesh}
    if len(meshes) > 1:
        raise ValueError(at_user_line(
            f"one program runs over one mesh; this one names {len(meshes)}: "
            f"{sorted(map(repr, meshes))}. Use one Mesh object for all its shardings"))
    if not meshes:
        raise ValueError(at_user_line(
            "a program over several devices needs a mesh: give jit in_shardings or "
            "out_shardings with NamedShardings, or pass it sharded tensors"))
    return meshes.pop()


class SpmdProgram:
    """An IR Function run over every device of a mesh, compiled per tuple of argument
    shardings. `in_shardings` / `out_shardings` (one per param / result, None: the
    argument's own / XLA's choice) come from jit's options."""

    def __init__(self, fn: Function, backend: SpmdBackend, name: str, optimize: bool,
                 in_shardings, out_shardings):
        self.fn, self.backend, self.name = fn, backend, name
        self.optimize = optimize
        self.in_shardings = tuple(in_shardings or (None,) * len(fn.params))
        self.out_shardings = tuple(out_shardings or (None,) * len(fn.results))
        self.result_types = fn.result_types
        self._compiled: dict = {}
        self._lock = threading.Lock()

    def shardings_for(self, tensors) -> tuple:
        """The sharding each argument is passed in: jit's in_sharding, else a sharded
        tensor's own, else replicated (decided once the mesh is known)."""
        out = []
        for want, t in zip(self.in_shardings, tensors, strict=True):
            if want is None and t._backend.sharded:
                want = t._data.sharding
            out.append(want)
        return tuple(out)

    def compiled(self, shardings: tuple):
        entry = self._compiled.get(shardings)
        if entry is None:
            with self._lock:
                entry = self._compiled.get(shardings) or self._compile(shardings)
                self._compiled[shardings] = entry
        return entry

    def _compile(self, shardings: tuple):
        fn = self.fn
        mesh = _find_mesh(fn, shardings + self.out_shardings)
        replicated = NamedSharding(mesh, PartitionSpec())
        ins = tuple(s if isinstance(s, NamedSharding) and s.mesh == mesh else replicated
                    for s in shardings)
        opt = passes.optimize(fn, check=config.verify()) if self.optimize else fn
        text = program_text(
            opt, module_name=self.name, mesh=mesh,
            arg_shardings=[sharding_attr(s.dims(p.type.ndim)) for s, p in
                           zip(ins, fn.params, strict=True)],
            result_shardings=[None if s is None else sharding_attr(s.dims(t.ndim))
                              for s, t in zip(self.out_shardings, fn.result_types,
                                              strict=True)])
        exe = SpmdExecutable.compile(text, mesh.devices.flat, len(fn.params), len(fn.results))
        outs = []
        for s, hlo, t in zip(self.out_shardings, exe.output_shardings(), fn.result_types,
                             strict=True):
            if s is None:
                s = named_from_hlo(hlo, mesh, t.shape) or replicated
            outs.append(s)
        directory = config.dump_to()
        if directory:  # the shardings asked for and got, and the collectives XLA inserted
            dump.write_dump(directory, self.name, {
                "ir.txt": str(opt), "stablehlo.mlir": text, "hlo.txt": exe.optimized_hlo(),
                "json": dump.metadata_json({
                    "name": self.name, "mesh": repr(mesh), "devices": len(exe.devices),
                    "in_shardings": list(map(repr, ins)), "out_shardings": list(map(repr, outs)),
                    "seconds": exe.compile_seconds})})
        return exe, ins, tuple(outs)

    def stablehlo(self, shardings: tuple) -> str:
        return self.compiled(shardings)[0].stablehlo

    def run(self, tensors) -> list[Tensor]:
        exe, ins, outs = self.compiled(self.shardings_for(tensors))
        args = [_shards_as(t, s).buffers for t, s in zip(tensors, ins, strict=True)]
        results = exe.run(args, [(p.type.shape, p.type.dtype.np) for p in self.fn.params])
        backend = SpmdBackend.for_devices(exe.devices)
        return [backend.tensor(Shards(s, bufs), t)
                for bufs, s, t in zip(results, outs, self.result_types, strict=True)]


def _shards_as(t: Tensor, sharding) -> Shards:
    """t's data laid out as `sharding` (through the host when it is laid out otherwise)."""
    if t._backend.sharded:
        shards = t._live()
        have = shards.sharding
        if have == sharding or have.is_fully_replicated and sharding.is_fully_replicated \
                and have.device_assignment == sharding.device_assignment:
            return shards
    return put(t.numpy(), sharding)


# ---- device_put and the Tensor's sharding ----------------------------------------------

def device_put(x, device=None):
    """x (a tensor, array or pytree of them) placed as `device` says: a Sharding
    (NamedSharding over several devices, SingleDeviceSharding), a PJRT device, or None
    for the default device. A pytree of shardings matching x places each leaf.

    Example:
        >>> x = stablejit.device_put(np.arange(3.0), stablejit.devices()[0])
        >>> x
        Tensor<f64[3] xla:host:0>
        [0., 1., 2.]
    """
    if isinstance(device, (tuple, list, dict)):
        return tree.tree_map(lambda leaf, s: _put_one(leaf, s), x, device)
    return tree.tree_map(lambda leaf: _put_one(leaf, device), x)


def _put_one(x, target):
    if isinstance(target, NamedSharding):
        if isinstance(x, Tensor) and x._backend.sharded and \
                x._live().sharding == target:
            return x
        a = native(np.asarray(x))
        t = TensorType(a.shape, dt.dtype(a.dtype))
        target.indices(a.shape)  # checks that the blocks divide evenly
        backend = SpmdBackend.for_devices(target.device_assignment)
        return backend.tensor(put(a, target), t, isinstance(x, Tensor) and x.weak)
    if isinstance(target, SingleDeviceSharding):
        target = target.device
    backend = XlaBackend.for_device(target) if target is not None else None
    if backend is None:
        backend = concrete_default()
    if isinstance(x, Tensor) and x._backend is backend:
        return x
    return backend.from_numpy(np.asarray(x), isinstance(x, Tensor) and x.weak)


def _sharding(t: Tensor):
    """A tensor's sharding: where its data lives (None for traced or reference data)."""
    b = t._backend
    if b.sharded:
        return t._live().sharding
    if b.device_buffers:
        return SingleDeviceSharding(b.device)
    return None


def _addressable_shards(t: Tensor) -> list[Shard]:
    """The blocks on this process's devices, in the sharding's device order."""
    b = t._backend
    if b.sharded:
        shards = t._live()
        sharding = shards.sharding
        indices = sharding.indices(t.shape)
        dims = sharding.dims(t.ndim)
        out = []
        for d, index, replica, buf in zip(
                sharding.device_assignment, indices, replica_ids(indices),
                _buffers_by_device(sharding, shards), strict=True):
            if buf is None:  # a device of another process
                continue
            shape = tuple(len(range(*i.indices(n))) for i, n in zip(index, t.shape,
                                                                    strict=True))
            data = Tensor(buf, XlaBackend.for_device(d), TensorType(shape, t.dtype), t.weak)
            out.append(Shard(d, jax_index(index, dims), replica, data))
        return out
    if b.device_buffers:
        return [Shard(b.device, (slice(None),) * t.ndim, 0, t)]
    if b.batches_ops:  # in a lazy() block: its device's (not a grad tape's)
        return [Shard(b.device, (slice(None),) * t.ndim, 0, t)]
    raise TypeError(at_user_line(
        f"a {t.type} tensor on {b.name} has no device shards (it is traced, or on the "
        f"reference backend); read addressable_shards of a tensor on a device, outside "
        f"jit and grad"))


def _buffers_by_device(sharding, shards: Shards) -> list:
    """One entry per device of the sharding: its buffer, or None on another process."""
    bufs = iter(shards.buffers)
    return [next(bufs) if is_addressable(d) else None for d in sharding.device_assignment]


Tensor.sharding = property(_sharding)
Tensor.addressable_shards = property(_addressable_shards)


def make_array_from_single_device_arrays(shape, sharding, arrays) -> Tensor:
    """The global tensor of `shape` laid out as `sharding` whose addressable blocks are
    `arrays` (single-device tensors, one per addressable device, in any order)."""
    by_device = {a.device: a for a in arrays}
    placed = _addressable(sharding, tuple(shape))
    missing = [d for d, _ in placed if d not in by_device]
    if missing:
        raise ValueError(at_user_line(
            f"make_array_from_single_device_arrays: no array for device(s) {missing}; give "
            f"one per addressable device of the sharding"))
    first = by_device[placed[0][0]]
    bufs = []
    for d, index in placed:
        a = by_device[d]
        want = tuple(len(range(*i.indices(n))) for i, n in zip(index, shape, strict=True))
        if a.shape != want or a.dtype != first.dtype:
            raise ValueError(at_user_line(
                f"make_array_from_single_device_arrays: the array on {d} is {a.type}, its "
                f"block of a {tuple(shape)} value is {first.dtype.name}{list(want)}"))
        bufs.append(a._live())
    return SpmdBackend.for_devices(sharding.device_assignment).tensor(
        Shards(sharding, bufs), TensorType(tuple(shape), first.dtype))


def make_array_from_process_local_data(sharding, local_data, global_shape=None) -> Tensor:
    """The global tensor whose blocks on this process's devices come from `local_data`,
    this process's contiguous part of it (data parallelism: its rows of the batch).
    global_shape defaults to local_data's, scaled along each dimension by how many
    distinct parts the processes' devices hold there."""
    local = native(np.asarray(local_data))
    if global_shape is None:
        global_shape = _global_shape(sharding, local.shape)
    placed = _addressable(sharding, tuple(global_shape))
    origin = [min(i[d].start for _, i in placed) for d in range(local.ndim)]
    bufs = []
    for d, index in placed:
        block = tuple(slice(i.start - o, i.stop - o) for i, o in zip(index, origin,
                                                                     strict=True))
        bufs.append(buffers.to_device(np.asarray(local[block], order="C"), d))
    return SpmdBackend.for_devices(sharding.device_assignment).tensor(
        Shards(sharding, bufs), TensorType(tuple(global_shape), dt.dtype(local.dtype)))


def _global_shape(sharding, local_shape) -> tuple:
    """Per dimension: local size times (all blocks / blocks held here)."""
    probe = tuple(n * sharding.mesh.size for n in local_shape)  # divisible by any split
    every = sharding.indices(probe)
    here = [i for d, i in zip(sharding.device_assignment, every, strict=True)
            if is_addressable(d)]
    out = []
    for dim, n in enumerate(local_shape):
        total = len({i[dim].start for i in every})
        mine = len({i[dim].start for i in here})
        out.append(n * total // mine)
    return tuple(out)


# ---- jit's options and with_sharding_constraint ----------------------------------------

def _shardings_in(spec) -> list:
    if type(spec) in (tuple, list):
        return [s for x in spec for s in _shardings_in(x)]
    if isinstance(spec, dict):
        return [s for x in spec.values() for s in _shardings_in(x)]
    if spec is None:
        return []
    if isinstance(spec, PartitionSpec):
        raise TypeError(at_user_line(
            f"jit shardings are Sharding objects; wrap {spec!r} as NamedSharding(mesh, "
            f"{spec!r})"))
    return [spec]


def backend_for(in_shardings, out_shardings) -> SpmdBackend:
    """The backend of a jit given shardings: the devices of the first NamedSharding."""
    named = [s for s in _shardings_in(in_shardings) + _shardings_in(out_shardings)
             if isinstance(s, NamedSharding)]
    if not named:
        raise TypeError(at_user_line(
            "jit in_shardings / out_shardings need at least one NamedSharding (the mesh to "
            "run over)"))
    return SpmdBackend.for_devices(named[0].device_assignment)


def jit_program(fn: Function, arg_tree, out_tree, in_shardings, out_shardings, backend,
                name: str) -> SpmdProgram:
    """jit's program over several devices: one sharding (or None) per parameter (jit's
    in_shardings are per positional argument; captured tensors keep their own) and per
    result."""
    args_tree = arg_tree.children[0]
    ins = [None] * len(fn.params)
    if in_shardings is not None:
        spec = in_shardings if type(in_shardings) in (tuple, list) else \
            (in_shardings,) * len(args_tree.children)
        ins[:args_tree.num_leaves] = prefix_leaves(tuple(spec), args_tree, "in_shardings")
    outs = None if out_shardings is None else prefix_leaves(out_shardings, out_tree,
                                                            "out_shardings")
    if not backend.sharded:
        backend = SpmdBackend.for_devices(program_mesh(fn).devices.flat)
    return backend.program(fn, name=name, in_shardings=ins, out_shardings=outs)


def with_sharding_constraint(x, shardings):
    """x laid out as `shardings` says (a NamedSharding, or a pytree of them matching x):
    inside jit a constraint XLA's partitioner keeps; outside, device_put."""
    leaves, td = tree.flatten(x)
    wanted = prefix_leaves(shardings, td, "with_sharding_constraint")
    out = []
    for leaf, s in zip(leaves, wanted, strict=True):
        if not isinstance(s, NamedSharding):
            raise TypeError(at_user_line(
                f"with_sharding_constraint needs NamedShardings, got {s!r}"))
        t = as_tensor(leaf)
        if t._backend.concrete:
            out.append(_put_one(t, s))
        else:
            out.append(bind1(sharding_constraint, t, mesh=s.mesh, spec=s.dims(t.ndim)))
    return tree.unflatten(td, out)
