"""One program over several processes (and machines), as jax.distributed:

    stablejit.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)
    mesh = stablejit.sharding.make_mesh((stablejit.device_count(),), ("data",))

After `initialize` (before any other operation) the host platform's devices are those
of every process; meshes span them, and a jitted or shard_mapped program over such a
mesh runs in every process at once, each on its own devices' shards (build those with
stablejit.make_array_from_process_local_data). The runtime side is
runtime/distributed.py.
"""

from __future__ import annotations

from .runtime import distributed as rt

__all__ = ["initialize", "is_initialized", "process_count", "process_index", "shutdown"]


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               local_device_count: int | None = None, timeout_seconds: int = 300) -> None:
    """Join the run whose process 0 serves coordination at `coordinator_address`
    (host:port). Every process calls it with the same address and num_processes and
    its own process_id; local_device_count sets how many host CPU devices this process
    has (default: XLA_FLAGS' --xla_force_host_platform_device_count, else 1)."""
    if not 0 <= process_id < num_processes:
        raise ValueError(f"process_id {process_id} is outside 0..{num_processes - 1}")
    rt.initialize(coordinator_address, num_processes, process_id,
                  local_device_count=local_device_count, timeout_seconds=timeout_seconds)


def shutdown() -> None:
    """Leave the distributed runtime (jax.distributed.shutdown); a no-op without
    `initialize`. Later operations see this process's devices only."""
    rt.shutdown()


def is_initialized() -> bool:
    """Whether `initialize` has joined this process to a run (and `shutdown` not left)."""
    return rt.state.client is not None


def process_index() -> int:
    """This process's index in the run (0 without initialize)."""
    return rt.state.process_id


def process_count() -> int:
    """How many processes the run has (1 without initialize)."""
    return rt.state.num_processes


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
