"""Several processes as one program: PJRT's distributed runtime (jaxlib's coordination
service and client) and a host CPU client that spans every process, with gloo
collectives over TCP, as jax builds it (jax._src.distributed, xla_bridge.make_cpu_client).

Process 0 runs the coordination service; every process connects a client to it, and
the host client made with that client sees the devices of all processes (its own are
the addressable ones). Programs over several devices then run in every process at
once, each process passing its own devices' shards.
"""

from __future__ import annotations

import atexit

from jaxlib import _jax

from . import client as rt_client


class State:
    __slots__ = ("service", "client", "process_id", "num_processes")

    def __init__(self):
        self.service = self.client = None
        self.process_id, self.num_processes = 0, 1


state = State()


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               local_device_count: int | None = None, timeout_seconds: int = 300,
               heartbeat_timeout_seconds: int = 100) -> None:
    """Join the run coordinated at `coordinator_address` (host:port; process 0 serves
    it there) and make the host client over all processes' devices."""
    if state.client is not None:
        raise RuntimeError("stablejit.distributed.initialize was already called in this "
                           "process; call it once, at the top of the program")
    if process_id == 0:
        state.service = _jax.get_distributed_runtime_service(
            coordinator_address, num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=timeout_seconds)
    dist = _jax.get_distributed_runtime_client(
        coordinator_address, process_id, init_timeout=timeout_seconds, use_compression=True,
        heartbeat_timeout=heartbeat_timeout_seconds)
    dist.connect()
    cpu = _jax.get_tfrt_cpu_client(
        asynchronous=True, distributed_client=dist, node_id=process_id,
        num_nodes=num_processes, collectives=_jax.make_gloo_tcp_collectives(
            distributed_client=dist), num_devices=local_device_count)
    rt_client.install("host", cpu)
    state.client, state.process_id, state.num_processes = dist, process_id, num_processes
    # leaving without shutdown makes the others' clients see a dead task and abort
    atexit.register(shutdown)


def shutdown() -> None:
    """Leave the run: the client's shutdown waits for every process (a barrier), then
    process 0 stops the service."""
    if state.client is not None:
        state.client.shutdown()
    if state.service is not None:
        state.service.shutdown()
    state.service = state.client = None
