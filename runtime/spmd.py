"""Programs over several devices: StableHLO text with sharding annotations in, one
executable that runs on every device of its device assignment out.

XLA's SPMD partitioner (Shardy, reading the `sdy.*` annotations in the text) splits the
program into one per device and inserts the collectives. Arguments and results are
lists of per-device buffers in device-assignment order, addressable devices only (in a
multi-process run each process holds its own devices' shards).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from jaxlib import _hlo, _jax

from .buffers import aval
from .executable import CompileError


def spmd_options(device_ids: Sequence[int]) -> _jax.CompileOptions:
    """Options for one program partitioned over `device_ids` (partition i runs on
    device_ids[i]), as jax sets them for jit with shardings."""
    opts = _jax.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = len(device_ids)
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    opts.device_assignment = _jax.DeviceAssignment.create(
        np.asarray(device_ids, dtype=np.int64).reshape(1, -1))
    return opts


class SpmdExecutable:
    """A program compiled for the devices of a device assignment."""

    __slots__ = ("loaded", "stablehlo", "devices", "compile_seconds", "num_results",
                 "spans_processes", "_in_shardings", "_execute")

    def __init__(self, loaded, stablehlo: str, devices: tuple, compile_seconds: float,
                 num_args: int, num_results: int):
        self.loaded, self.stablehlo, self.devices = loaded, stablehlo, devices
        self.compile_seconds, self.num_results = compile_seconds, num_results
        device_list = _jax.DeviceList(devices)
        # execute_sharded takes global arrays; their sharding only has to name the
        # devices and the layout XLA chose for each parameter
        self._in_shardings = [_jax.GSPMDSharding(device_list, s) for s in _or_replicated(
            loaded.get_parameter_shardings(), num_args)]
        self._execute = loaded.execute_sharded
        # over several processes each run finishes before the next starts: back-to-back
        # asynchronous runs let gloo's collectives of two runs meet and fail
        self.spans_processes = len(loaded.local_devices()) < len(devices)

    @classmethod
    def compile(cls, stablehlo: str, devices: Sequence, num_args: int, num_results: int,
                ) -> SpmdExecutable:
        """The program compiled for `devices`, once per process: several jit objects (or
        grad's fresh ones each step) of one program share it, as single-device programs
        share theirs (kept in memory only; the disk cache holds single-device programs)."""
        devices = tuple(devices)
        key = (stablehlo, devices, num_args, num_results)
        with _MEMO_LOCK:
            exe = _MEMO.get(key)
            if exe is not None:
                _MEMO.move_to_end(key)
                return exe
        exe = cls._compile(stablehlo, devices, num_args, num_results)
        with _MEMO_LOCK:
            exe = _MEMO.setdefault(key, exe)  # (another thread's, where it won the race)
            while len(_MEMO) > _MEMO_SIZE:
                _MEMO.popitem(last=False)
        return exe

    @classmethod
    def _compile(cls, stablehlo: str, devices: tuple, num_args: int, num_results: int,
                 ) -> SpmdExecutable:
        t0 = time.perf_counter()
        client = devices[0].client
        opts = spmd_options([d.id for d in devices])
        try:
            loaded = client.compile_and_load(stablehlo, _jax.DeviceList(devices), opts)
        except Exception as e:  # XLA reports parse and partitioning failures as errors
            raise CompileError(f"XLA could not compile the program for {len(devices)} "
                               f"devices: {e}") from None
        return cls(loaded, stablehlo, devices, time.perf_counter() - t0, num_args,
                   num_results)

    def output_shardings(self) -> list:
        """XLA's sharding of each result (HloSharding), as the partitioner chose it."""
        return [s if isinstance(s, _hlo.HloSharding) else _hlo.HloSharding.from_proto(s)
                for s in _or_replicated(self.loaded.get_output_shardings(),
                                        self.num_results)]

    def run(self, args: Sequence[tuple], shapes: Sequence) -> list[list]:
        """Execute; args[i] is parameter i's per-device buffers, shapes[i] its global
        (shape, NumPy dtype). Returns each result's per-device buffers (async)."""
        arrays = [_jax.ArrayImpl(aval(shape, dtype), sharding, list(bufs), True, True)
                  for bufs, (shape, dtype), sharding in zip(args, shapes, self._in_shardings,
                                                            strict=True)]
        outs = self._execute(arrays).disassemble_into_single_device_arrays()
        if self.spans_processes:
            for bufs in outs:
                for b in bufs:
                    b.block_until_ready()
        return outs

    def optimized_hlo(self) -> str:
        return self.loaded.hlo_modules()[0].to_string()



# (StableHLO text, devices, arity) -> SpmdExecutable, least recently used first
_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 64


def _or_replicated(shardings, n: int) -> list:
    """XLA reports no shardings for a program over one device: all are replicated."""
    return list(shardings) if shardings is not None else [_hlo.HloSharding.replicate()] * n
