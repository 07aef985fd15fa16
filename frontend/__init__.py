"""stablejit: numerical Python traced into a typed IR, compiled with XLA through
StableHLO and PJRT.

    import stablejit
    import stablejit.numpy as snp

    @stablejit.jit
    def f(x, y):
        return snp.sum(x + y * 2.0)
"""

from . import (
    checkpoint_policies,
    config,
    conv,
    debug,
    distributed,
    example_libraries,
    experimental,
    export,
    lax,
    nn,
    numpy,
    numpy_composed,
    random,
    scipy,
    sharding,
    tree,
    tree_util,
)
from . import tracebacks as _tracebacks
from .abstract import ClosedIR, eval_shape, make_jaxpr
from .aot import Compiled, Lowered
from .api import (
    backend_copy,
    backend_transfer,
    block_until_ready,
    deallocate,
    default_backend,
    default_device,
    device_get,
    resolve_backend,
    set_default_backend,
)
from .autodiff import (
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
)
from .backends import REFERENCE, ReferenceBackend, XlaBackend
from .batches import to_batched
from .caches import clear_caches
from .callbacks import ShapeDtypeStruct, hook, io_callback, pure_callback
from .compiler import dtypes
from .compiler.errors import ShapeError
from .context import set_default_platform
from .control_flow import cond, fori_loop, scan, switch, while_loop
from .custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat
from .debugging import disable_jit
from .distributed import process_count, process_index
from .errors import (
    DeletedTensorError,
    DeviceMismatchError,
    EscapedTracerError,
    MustCompileError,
    StablejitError,
    TracerBoolConversionError,
    TracerConversionError,
)
from .errors import at_user_line as _at_user_line
from .experimental import enable_x64
from .jit import Jitted, RecompileWarning, jit
from .lazy import lazy
from .platforms import default_platform
from .pmap import pmap
from .runtime import client as _rt_client
from .runtime.client import configure as configure_client
from .shard_map import shard_map
from .sharding import NamedSharding, P, make_mesh
from .spmd import (
    device_put,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from .stream import Stream, StreamError, stream, stream_is_cached
from .tensor import Tensor
from .tree import register_dataclass, register_pytree_node, tree_map
from .vmap import vmap

Array = Tensor  # jax.Array's name: annotations and isinstance (traced tensors too)

__version__ = "0.1.0"


def devices(backend: str | None = None) -> list:
    """The devices of a platform (default: the default platform), of every process;
    jax's platform names ("cpu", "gpu") are taken too (jax.devices)."""
    return sharding.global_devices(config.platform_name(backend))


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """The devices of a platform this process drives (jax.local_devices); process_index
    (or host_id) may only name this process. A platform name first, as
    local_devices("host"), is taken as the backend."""
    if isinstance(process_index, str):
        backend, process_index = process_index, None
    index = process_index if process_index is not None else host_id
    if index is not None and index != distributed.process_index():
        raise ValueError(_at_user_line(
            f"local_devices: process {index} is not this process "
            f"({distributed.process_index()}); each process sees its own devices only"))
    return _rt_client.devices(config.platform_name(backend) or default_platform())


def device_count(backend: str | None = None) -> int:
    """How many devices a platform has (default: the default platform), over every
    process (jax.device_count)."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many devices of a platform this process drives (jax.local_device_count)."""
    return len(local_devices(backend=backend))

numpy_composed.install()  # vectorize, i0, kaiser ...: built on vmap and scipy

__all__ = [
    "to_batched",
    "pmap",
    "example_libraries",
    "checkpoint_policies",
    "NamedSharding",
    "P",
    "make_mesh",
    "RecompileWarning",
    "Stream",
    "StreamError",
    "stream",
    "stream_is_cached",
    "numpy",
    "lax",
    "tree",
    "tree_util",
    "backend_copy",
    "backend_transfer",
    "deallocate",
    "default_backend",
    "resolve_backend",
    "set_default_backend",
    "REFERENCE",
    "ReferenceBackend",
    "XlaBackend",
    "dtypes",
    "ShapeError",
    "DeletedTensorError",
    "DeviceMismatchError",
    "EscapedTracerError",
    "MustCompileError",
    "StablejitError",
    "TracerBoolConversionError",
    "TracerConversionError",
    "Compiled",
    "Jitted",
    "Lowered",
    "jit",
    "default_platform",
    "set_default_platform",
    "configure_client",
    "Tensor",
    "register_dataclass",
    "register_pytree_node",
    "tree_map",
    "devices",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "jacfwd",
    "jacrev",
    "jacobian",
    "hessian",
    "stop_gradient",
    "custom_vjp",
    "custom_jvp",
    "checkpoint",
    "remat",
    "linearize",
    "nn",
    "cond",
    "switch",
    "while_loop",
    "fori_loop",
    "scan",
    "random",
    "vmap",
    "lazy",
    "debug",
    "hook",
    "io_callback",
    "pure_callback",
    "ShapeDtypeStruct",
    "disable_jit",
    "config",
    "sharding",
    "device_put",
    "shard_map",
    "distributed",
    "process_index",
    "process_count",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "local_devices",
    "device_count",
    "local_device_count",
    "Array",
    "ClosedIR",
    "block_until_ready",
    "clear_caches",
    "default_device",
    "device_get",
    "eval_shape",
    "make_jaxpr",
    "enable_x64",
]

# The one place the namespaces' functions become public boundaries, whose errors reach
# the user without stablejit's frames and whose results follow their inputs' backend
# (tracebacks.py). Tensor's operators and methods were bound to the plain functions when
# stablejit.numpy was imported (no extra frame on the hot path); tree's functions stay
# plain too (jit's fast path calls them). Elementwise functions and reductions make no
# constants of their own (their results follow their operands through dispatch): no check.
_tracebacks.wrap_namespaces(
    numpy, numpy.linalg, numpy.fft, nn, nn.initializers, random, scipy.special,
    scipy.stats, scipy.linalg, debug,
    follow=lambda f: not f.__module__.endswith(("._elementwise", "._elementwise_more",
                                                 "._reductions")))
# (the top level moves tensors between backends by name: only control flow follows)
# tree's aliases (tree_map ...) stay the plain functions of stablejit.tree, as tree's do
_tracebacks.wrap_namespace(globals(), follow=lambda f: f.__module__.endswith(".control_flow"),
                           only=lambda f: not f.__module__.endswith(".tree"))
# lax's elementwise operations stay plain: lax.reduce and reduce_window know lax.add,
# lax.max ... passed as computations by identity
_tracebacks.wrap_namespace(
    vars(lax), follow=lambda f: f.__module__.endswith((".control_flow", ".higher_order")),
    only=lambda f: not f.__module__.endswith((".lax._operands", ".lax.elementwise")))
