"""Compiled programs: StableHLO text in, a loaded PJRT executable out."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

import numpy as np
from jaxlib import _jax

from .buffers import result_handler
from .client import platform_of
from .custom_calls import prepare


def compile_options(device) -> _jax.CompileOptions:
    """Options for a single-device program on `device`. The device assignment must be
    explicit: without it XLA assigns the program to device 0 of the client. Made once
    per device (PJRT copies them; making them took a sixth of a millisecond, a seventh
    of a cached program's load, paid for every new operand shape of an eager op)."""
    opts = _OPTIONS.get(device)
    if opts is None:
        opts = _jax.CompileOptions()
        opts.device_assignment = _jax.DeviceAssignment.create(np.array([[device.id]]))
        _OPTIONS[device] = opts
    return opts


_OPTIONS: dict = {}  # device -> its single-device CompileOptions


def hlo_before_optimizations(stablehlo: str) -> str:
    """XLA's HLO for StableHLO text, as XLA sees it before running its passes."""
    comp = _jax.mlir.mlir_module_to_xla_computation(stablehlo, use_tuple_args=False,
                                                    return_tuple=False)
    return comp.as_hlo_text()


def _parse(stablehlo: str):
    """The text as an MLIR module: the only form PJRT takes together with host
    callbacks."""
    # jaxlib's MLIR context with the StableHLO dialects registered; loaded on first use
    from jax._src.interpreters import mlir  # noqa: PLC0415 - heavy, needed only here
    from jax._src.lib.mlir import ir  # noqa: PLC0415

    with mlir.make_ir_context():
        return ir.Module.parse(stablehlo)


class CompileError(RuntimeError):
    """XLA rejected a program. The message keeps XLA's own text."""


class Executable:
    """A program compiled for one device."""

    __slots__ = ("loaded", "stablehlo", "device", "compile_seconds", "source", "_execute")

    def __init__(self, loaded, stablehlo: str, device, compile_seconds: float = 0.0,
                 source: str = "compiled"):
        self.loaded = loaded
        self.stablehlo = stablehlo
        self.device = device
        self.compile_seconds = compile_seconds
        self.source = source  # "compiled" or "disk"
        self._execute = loaded.execute_sharded

    @classmethod
    def compile(cls, stablehlo: str, device, *, options: _jax.CompileOptions | None = None,
                host_callbacks: Sequence = ()) -> Executable:
        """Compile for `device`; `host_callbacks` are the Python functions the program's
        callback custom calls name by position."""
        t0 = time.perf_counter()
        client = device.client
        prepare(stablehlo, platform_of(device))
        devices = _jax.DeviceList((device,))
        try:
            if host_callbacks:
                loaded = client.compile_and_load(_parse(stablehlo), devices,
                                                 options or compile_options(device),
                                                 host_callbacks=list(host_callbacks))
            else:
                loaded = client.compile_and_load(stablehlo, devices,
                                                 options or compile_options(device))
        except Exception as e:  # XLA reports parse and compile failures as runtime errors
            raise CompileError(f"XLA could not compile the program for {device}: {e}") from None
        return cls(loaded, stablehlo, device, time.perf_counter() - t0)

    @classmethod
    def deserialize(cls, data: bytes, stablehlo: str, device, *,
                    options: _jax.CompileOptions | None = None) -> Executable:
        """Load an executable that `serialize()` wrote (for `device`'s client)."""
        t0 = time.perf_counter()
        prepare(stablehlo, platform_of(device))
        loaded = device.client.deserialize_executable(data, _jax.DeviceList((device,)),
                                                      options or compile_options(device))
        return cls(loaded, stablehlo, device, time.perf_counter() - t0, source="disk")

    def result_handlers(self, results: Sequence[tuple]) -> list:
        """For outputs of these (shape, NumPy dtype)s, what `run` hands PJRT so that it
        returns the output buffers itself (in C++, with no Python per output)."""
        return [result_handler(tuple(shape), dtype, self.device) for shape, dtype in results]

    def launcher(self, callbacks: Sequence = ()):
        """The callable that starts a run: execute(buffers) -> results, whose
        `consume_with_handlers(handlers)` gives the output buffers (callers on a hot path
        keep both). A program that calls Python functions (`callbacks`: the host
        callbacks it names) runs to completion instead, so that their output and errors
        happen during the call."""
        return _synchronous(self._execute, callbacks) if callbacks else self._execute

    @property
    def code_bytes(self) -> int:
        """The size of the compiled code (0 where the plugin does not report it)."""
        try:
            return self.loaded.get_compiled_memory_stats().generated_code_size_in_bytes
        except Exception:  # not every plugin reports memory stats
            return 0

    def run(self, buffers: Sequence, handlers: Sequence) -> list:
        """Execute on device buffers; returns output buffers at once (async). `handlers`
        comes from result_handlers(), built once per program rather than per call."""
        return self._execute(buffers).consume_with_handlers(handlers)

    @property
    def platform(self) -> str:
        return platform_of(self.device)

    def optimized_hlo(self) -> str:
        return self.loaded.hlo_modules()[0].to_string()

    def cost_analysis(self) -> dict:
        """XLA's estimate: flops, transcendentals, bytes accessed."""
        raw = self.loaded.cost_analysis()
        raw = raw[0] if isinstance(raw, list) else raw
        return {k: float(v) for k, v in dict(raw).items()}

    def memory_analysis(self) -> dict:
        """Sizes in bytes of arguments, outputs, temporaries, aliased buffers and code."""
        s = self.loaded.get_compiled_memory_stats()
        return {"argument_bytes": s.argument_size_in_bytes,
                "output_bytes": s.output_size_in_bytes,
                "temp_bytes": s.temp_size_in_bytes,
                "alias_bytes": s.alias_size_in_bytes,
                "generated_code_bytes": s.generated_code_size_in_bytes}

    def serialize(self) -> bytes:
        return self.loaded.client.serialize_executable(self.loaded)


class _Finished:
    """The results of a run that calls Python functions: consuming them waits for the
    run to complete (see _synchronous)."""

    __slots__ = ("results", "callbacks")

    def __init__(self, results, callbacks):
        self.results, self.callbacks = results, callbacks

    def consume_with_handlers(self, handlers):
        with _raising_callback_errors(self.callbacks):
            arrays = self.results.consume_with_handlers(handlers)
            for a in arrays:
                a.block_until_ready()
        return arrays


def _synchronous(execute, callbacks):
    """Run a program that calls Python functions to completion, so that what a callback
    prints happens during the call, and an exception a callback raised is raised here,
    at the caller's line, with the callback's own traceback."""
    def run(buffers):
        for cb in callbacks:
            cb.error = None
        with _raising_callback_errors(callbacks):
            return _Finished(execute(buffers), callbacks)
    return run


@contextlib.contextmanager
def _raising_callback_errors(callbacks):
    """Re-raise the exception a callback raised in place of XLA's report of it."""
    try:
        yield
    except Exception as e:
        raised = next((cb.error for cb in callbacks if cb.error is not None), None)
        if raised is None:
            raise
        raise raised.with_traceback(raised.__traceback__) from e
