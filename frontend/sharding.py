"""Shardings: how a tensor's elements are laid out over devices (JAX's names).

    mesh = stablejit.sharding.make_mesh((4, 2), ("data", "model"))
    x = stablejit.device_put(np.ones((8, 6)), NamedSharding(mesh, P("data")))
    x.sharding, x.addressable_shards, np.asarray(x)

A Mesh is an n-d array of devices with a name per axis; a PartitionSpec says, per
dimension of a value, which mesh axes split it (None: not split). Every sharding
answers `device_assignment` (all its devices, in partition order) and
`indices(shape)` (the block each of those devices holds); tensors over several
devices (frontend/spmd.py) are built from that alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .errors import at_user_line
from .platforms import default_platform
from .runtime import client as rt_client

__all__ = ["Mesh", "NamedSharding", "P", "PartitionSpec", "SingleDeviceSharding", "make_mesh"]


class Mesh:
    """Devices arranged in a named n-d grid: Mesh(np.array(devices).reshape(4, 2),
    ("data", "model")). Equal meshes have the same devices, shape and names."""

    __slots__ = ("devices", "axis_names", "_key")

    def __init__(self, devices, axis_names):
        devices = np.array(devices, dtype=object)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(at_user_line(
                f"Mesh: {len(axis_names)} axis name(s) {axis_names} for a device array of "
                f"shape {devices.shape}; give one name per axis"))
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(at_user_line(f"Mesh: axis names {axis_names} repeat a name"))
        ids = [(d.client.platform, d.id) for d in devices.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(at_user_line("Mesh: a device appears twice"))
        devices.setflags(write=False)
        self.devices, self.axis_names = devices, axis_names
        self._key = (tuple(ids), devices.shape, axis_names)

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return self.devices.shape

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return self.devices.size

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return "Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape.items()) + ")"


def make_mesh(axis_shapes, axis_names, *, devices=None) -> Mesh:
    """A mesh of the given shape over `devices` (default: every device of the default
    platform, across all processes), in device order."""
    axis_shapes = tuple(axis_shapes)
    if devices is None:
        devices = global_devices()
    n = math.prod(axis_shapes)
    if n > len(devices):
        raise ValueError(at_user_line(
            f"make_mesh: a {axis_shapes} mesh needs {n} devices and there are "
            f"{len(devices)}; on the host CPU set XLA_FLAGS="
            f"--xla_force_host_platform_device_count={n} before the first operation"))
    return Mesh(np.array(list(devices)[:n], dtype=object).reshape(axis_shapes), axis_names)


def global_devices(platform: str | None = None) -> list:
    """The devices of every process (the local ones when there is one process)."""
    return sorted(rt_client.get_client(platform or default_platform()).devices(),
                  key=lambda d: d.id)


class PartitionSpec(tuple):
    """Per dimension, the mesh axis (a name), axes (a tuple of names, major first) or
    None that splits it; dimensions past the end are not split."""

    def __new__(cls, *parts):
        for p in parts:
            if not (p is None or isinstance(p, str) or isinstance(p, tuple)
                    and all(isinstance(a, str) for a in p)):
                raise TypeError(at_user_line(
                    f"PartitionSpec entries are None, a mesh axis name or a tuple of "
                    f"names, not {p!r}"))
        return super().__new__(cls, parts)

    def dims(self, ndim: int) -> tuple[tuple[str, ...], ...]:
        """One tuple of axis names per dimension (the compiler's form)."""
        if len(self) > ndim:
            raise ValueError(at_user_line(
                f"{self!r} names {len(self)} dimensions for a value of rank {ndim}"))
        out = [() if p is None else (p,) if isinstance(p, str) else tuple(p) for p in self]
        named = [a for axes in out for a in axes]
        twice = sorted({a for a in named if named.count(a) > 1})
        if twice:  # (each mesh axis splits one dimension once: jax's DuplicateSpecError)
            raise ValueError(at_user_line(
                f"{self!r} names mesh axis {twice[0]!r} more than once; a mesh axis can split "
                f"one dimension once (to split a dimension over two axes, name them "
                f"together: P(('a', 'b')))"))
        return tuple(out) + ((),) * (ndim - len(self))

    def __repr__(self) -> str:
        return "PartitionSpec(" + ", ".join(map(repr, self)) + ")"


P = PartitionSpec


class NamedSharding:
    """Blocks of a value over `mesh`, as `spec` splits its dimensions."""

    __slots__ = ("mesh", "spec")

    def __init__(self, mesh: Mesh, spec: PartitionSpec | None = None):
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(mesh, Mesh):
            raise TypeError(at_user_line(f"NamedSharding needs a Mesh, not {mesh!r}"))
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        for axes in spec.dims(len(spec)):
            for a in axes:
                if a not in mesh.axis_names:
                    raise ValueError(at_user_line(
                        f"NamedSharding: {spec!r} names axis {a!r}, which {mesh!r} does not "
                        f"have"))
        self.mesh, self.spec = mesh, spec

    @property
    def device_assignment(self) -> tuple:
        return tuple(self.mesh.devices.flat)

    def dims(self, ndim: int):
        return self.spec.dims(ndim)

    def indices(self, shape) -> list[tuple[slice, ...]]:
        """The block of a `shape` value that each device of device_assignment holds."""
        dims = self.dims(len(shape))
        axis = {a: i for i, a in enumerate(self.mesh.axis_names)}
        sizes = self.mesh.axis_sizes
        out = []
        for coord in itertools.product(*map(range, sizes)):
            index = []
            for d, (axes, n) in enumerate(zip(dims, shape, strict=True)):
                f = math.prod(sizes[axis[a]] for a in axes)
                if n % f:
                    raise ValueError(at_user_line(
                        f"{self!r}: dimension {d} of shape {tuple(shape)} (size {n}) does "
                        f"not divide into {f} blocks; pad it to a multiple of {f}"))
                pos = 0
                for a in axes:
                    pos = pos * sizes[axis[a]] + coord[axis[a]]
                index.append(slice(pos * (n // f), (pos + 1) * (n // f)))
            out.append(tuple(index))
        return out

    def devices_indices_map(self, shape) -> dict:
        """Per device, the index of its block as JAX writes it: slice(None) along a
        dimension that is not split."""
        return {d: jax_index(i, self.dims(len(shape)))
                for d, i in zip(self.device_assignment, self.indices(shape), strict=True)}

    def addressable_devices_indices_map(self, shape) -> dict:
        return {d: i for d, i in self.devices_indices_map(shape).items()
                if is_addressable(d)}

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole value: no dimension is split over a mesh
        axis of more than one device (an axis of size 1 splits nothing, as in jax)."""
        sizes = dict(zip(self.mesh.axis_names, self.mesh.axis_sizes, strict=True))
        return all(sizes.get(a, 0) == 1 for p in self.spec if p is not None
                   for a in ((p,) if isinstance(p, str) else p))

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and \
            self.spec.dims(max(len(self.spec), len(other.spec))) == \
            other.spec.dims(max(len(self.spec), len(other.spec)))

    def __hash__(self) -> int:
        spec = list(self.spec)
        while spec and spec[-1] is None:
            spec.pop()
        return hash((self.mesh, PartitionSpec(*spec).dims(len(spec))))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


class SingleDeviceSharding:
    """The whole value on one device."""

    __slots__ = ("device",)

    def __init__(self, device):
        self.device = device

    @property
    def device_assignment(self) -> tuple:
        return (self.device,)

    def indices(self, shape) -> list[tuple[slice, ...]]:
        return [tuple(slice(0, n) for n in shape)]

    def devices_indices_map(self, shape) -> dict:
        return {self.device: (slice(None),) * len(shape)}

    addressable_devices_indices_map = devices_indices_map

    is_fully_replicated = True

    def __eq__(self, other) -> bool:
        return isinstance(other, SingleDeviceSharding) and self.device == other.device

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device})"


def is_addressable(device) -> bool:
    return device.process_index == device.client.process_index()


def jax_index(index: tuple[slice, ...], dims) -> tuple[slice, ...]:
    """A block's index as JAX's Shard.index writes it: slice(None) along the dimensions
    no mesh axis splits (`dims`: one tuple of axis names per dimension)."""
    return tuple(i if axes else slice(None) for i, axes in zip(index, dims, strict=True))


def replica_ids(indices) -> list[int]:
    """Per block (in device order), how many devices before it hold the same block: JAX's
    replica_id (0 for the first copy)."""
    seen: dict = {}
    out = []
    for index in indices:
        key = tuple((i.start, i.stop, i.step) for i in index)
        out.append(seen.get(key, 0))
        seen[key] = out[-1] + 1
    return out


def named_from_hlo(hlo_sharding, mesh: Mesh, shape) -> NamedSharding | None:
    """The NamedSharding over `mesh` that lays out a `shape` value as XLA's
    `hlo_sharding` does (devices in mesh order), or None when none does. Small meshes
    and ranks only: it tries each way of giving the mesh axes to dimensions."""
    want = _hlo_indices(hlo_sharding, mesh.size, shape)
    ndim, names = len(shape), mesh.axis_names
    for choice in itertools.product(range(ndim + 1), repeat=len(names)):
        for order in itertools.permutations(names):
            dims = [[] for _ in range(ndim)]
            for a in order:
                d = choice[names.index(a)]
                if d < ndim:
                    dims[d].append(a)
            spec = PartitionSpec(*[tuple(d) if d else None for d in dims])
            try:
                if NamedSharding(mesh, spec).indices(shape) == want:
                    return NamedSharding(mesh, _trim(spec))
            except ValueError:
                continue
    return None


def _trim(spec: PartitionSpec) -> PartitionSpec:
    parts = [p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in spec]
    while parts and parts[-1] is None:
        parts.pop()
    return PartitionSpec(*parts)


def _hlo_indices(hlo, n_devices: int, shape) -> list[tuple[slice, ...]]:
    """Per logical device id, the block an HloSharding gives it."""
    full = tuple(slice(0, n) for n in shape)
    if hlo.is_replicated() or not shape:
        return [full] * n_devices
    dims = list(hlo.tile_assignment_dimensions())
    ids = list(hlo.tile_assignment_devices())
    out: list = [None] * n_devices
    for k, coord in enumerate(itertools.product(*map(range, dims))):
        out[ids[k]] = tuple(slice(c * (n // t), (c + 1) * (n // t))
                            for c, n, t in zip(coord, shape, dims, strict=False))
    return out


def prefix_leaves(spec, treedef, what: str) -> list:
    """One entry of `spec` per leaf of `treedef`: spec is a tree prefix of the value
    (tuples, lists and dicts of shardings, PartitionSpecs or None)."""
    if type(spec) not in (tuple, list, dict):  # a PartitionSpec is one entry
        return [spec] * treedef.num_leaves
    if treedef.kind is None:
        raise ValueError(at_user_line(f"{what}: {spec!r} is a container where the value is "
                                      f"one tensor"))
    if isinstance(spec, dict):
        keys = list(treedef.aux) if treedef.kind is dict else None
        if keys is None or sorted(spec) != sorted(keys):
            raise ValueError(at_user_line(
                f"{what}: the keys of {sorted(spec)} do not match the value's structure"))
        spec = [spec[k] for k in keys]
    if len(spec) != len(treedef.children):
        raise ValueError(at_user_line(
            f"{what}: {len(spec)} entries for a value with {len(treedef.children)} parts; "
            f"give one per part, or a single entry for all"))
    out: list = []
    for s, child in zip(spec, treedef.children, strict=True):
        out += prefix_leaves(s, child, what)
    return out


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
