"""Moving tensors between backends and devices, and choosing the default backend (and
jax's names for these: device_get, block_until_ready, default_device)."""

from __future__ import annotations

import contextlib

from . import config, context, tree
from .backends import REFERENCE, XlaBackend
from .errors import at_user_line
from .lazy_backend import LazyBackend
from .platforms import default_platform
from .runtime import buffers
from .tensor import Tensor


def resolve_backend(spec):
    """A backend from a spec: a backend object, "reference", "xla", "xla:cuda",
    "xla:host:1", "lazy" / "lazy:cuda" (lazy recording for that device), a PJRT device,
    or a Tensor (its backend)."""
    if spec is None:
        return context.current_backend()
    if isinstance(spec, Tensor):
        return spec._backend
    if isinstance(spec, str):
        parts = spec.split(":")
        if parts[0] == "reference" and len(parts) == 1:
            return REFERENCE
        lazy = parts[0] == "lazy"
        if lazy:
            parts = parts[1:] if parts[1:2] == ["xla"] else ["xla", *parts[1:]]
        if parts[0] == "xla" and len(parts) <= 3:
            platform = parts[1] if len(parts) > 1 else default_platform()
            device_id = int(parts[2]) if len(parts) > 2 else None
            device = XlaBackend.for_platform(platform, device_id)
            return LazyBackend.for_target(device) if lazy else device
        raise ValueError(f"unknown backend {spec!r}; use 'reference', 'xla', 'xla:PLATFORM', "
                         f"'xla:PLATFORM:DEVICE_ID', or 'lazy' / 'lazy:PLATFORM' for lazy "
                         f"recording")
    if hasattr(spec, "apply") and hasattr(spec, "from_numpy"):
        return spec
    if hasattr(spec, "client") and hasattr(spec, "platform"):  # a PJRT device
        return XlaBackend.for_device(spec)
    raise TypeError(f"cannot use {spec!r} as a backend")


def backend_copy(t: Tensor, backend=None) -> Tensor:
    """A copy of t on `backend` (default: the current default backend); t stays valid."""
    target = resolve_backend(backend)
    t._live()
    if target.device_buffers and t._backend.device_buffers:
        return Tensor(buffers.copy_to(t._data, target.device) if t._backend is not target
                      else buffers.copy(t._data), target, t.type, t.weak)
    if not t._backend.concrete or not target.concrete:
        raise TypeError("backend_copy works on concrete tensors, not inside a trace")
    if t._backend is target and target.deferred:
        return target.copy(t)  # a lazy tensor: no graph run, no trip through the host
    return target.from_numpy(t.numpy(), t.weak)


def backend_transfer(t: Tensor, backend=None) -> Tensor:
    """Move t to `backend` and free the source: using t afterwards raises an error.
    Transferring to the backend t is already on returns t itself."""
    target = resolve_backend(backend)
    if t._backend is target:
        t._live()  # a deleted tensor stays an error
        return t
    out = backend_copy(t, target)
    deallocate(t)
    return out


def deallocate(t: Tensor) -> None:
    """Free t's device memory now; later use of t raises a clear error."""
    if t._data is not None and t._backend.device_buffers:
        buffers.delete(t._data)
    t._data = None


def set_default_backend(backend) -> None:
    """Make `backend` the default for new tensors and eager ops, for the whole process
    (`default_backend(...)` does it for a `with` block): a name such as "xla:host:0",
    "xla:cuda:1", "reference" or "lazy", or a backend object.

    Raises:
        ValueError: if the name names no backend or device."""
    context.set_global_default(resolve_backend(backend))


_JAX_NAMES = {"host": "cpu", "cuda": "gpu", "rocm": "gpu", "tpu": "tpu"}


def default_backend(backend=None):
    """`with stablejit.default_backend("reference"): ...` — new tensors (and ops
    without tensor operands) in the block use this backend. Called with no argument, as
    jax.default_backend(): the default platform as jax names it ("cpu", "gpu", "tpu").

    Example:
        >>> stablejit.default_backend()
        'cpu'
    """
    if backend is None:
        return _JAX_NAMES[default_platform()]
    return _default_backend_block(backend)


@contextlib.contextmanager
def _default_backend_block(backend):
    with context.using_default(resolve_backend(backend)) as b:
        yield b


# ---- jax's names -----------------------------------------------------------------------------

def device_get(x):
    """x (a pytree) with every tensor read back to a NumPy array (waiting for it); other
    leaves are returned as they are (jax.device_get).

    Example:
        >>> stablejit.device_get({'w': snp.ones(2)})
        {'w': array([1., 1.], dtype=float32)}
    """
    return tree.tree_map(lambda v: v.numpy() if isinstance(v, Tensor) else v, x)


def block_until_ready(x):
    """Wait until every tensor of the pytree x is computed; returns x
    (jax.block_until_ready). Leaves that are not tensors are left alone.

    Example:
        >>> stablejit.block_until_ready(snp.ones(2) * 3)
        Tensor<f32[2] xla:host:0>
        [3., 3.]
    """
    for v in tree.leaves(x):
        if isinstance(v, Tensor):
            v.block_until_ready()
    return x


# jax's platform names for ours
_JAX_PLATFORMS = {"cpu": "host", "gpu": "cuda"}


@contextlib.contextmanager
def default_device(device):
    """`with stablejit.default_device(stablejit.devices("host")[0]): ...` — new tensors
    and jitted calls without tensor arguments in the block run on `device` (a device,
    or a platform name: "host" / "cpu", "cuda" / "gpu", "rocm", "tpu"); None changes
    nothing (jax.default_device). Tensors made elsewhere stay where they are."""
    if device is None:
        yield
        return
    with default_backend(_device_spec(device, "default_device")):
        yield


def _device_spec(device, what: str):
    """A backend spec for a device or a platform name (jax's "cpu" and "gpu" too)."""
    if isinstance(device, str):
        return f"xla:{_JAX_PLATFORMS.get(device, device)}"
    if hasattr(device, "client") and hasattr(device, "platform"):
        return device
    raise TypeError(at_user_line(
        f"{what}: expected a device (from stablejit.devices()) or a platform name, got "
        f"{type(device).__name__} {device!r:.60}"))


def _set_default_device(device) -> None:
    """config.update("jax_default_device", device) (or "default_device"): new tensors
    and jitted calls without tensor arguments run on `device` from now on, as jax's
    setting; None goes back to the default platform's first device."""
    if device is None:
        context.set_global_default(None)  # made again from the platform when next asked
        return
    set_default_backend(_device_spec(device, "config.update('jax_default_device')"))


config.on_update("default_device", _set_default_device)
