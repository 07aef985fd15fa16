"""stablejit.runtime: PJRT clients, devices, buffers, executables, caches and dumps.
Knows nothing of tracing."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # before jaxlib loads: no INFO lines


from . import buffers, client
from .cache import SingleFlightCache
from .client import PLATFORMS, PlatformError, configure, default_device, devices, get_client
from .executable import CompileError, Executable

__all__ = ["buffers", "client", "SingleFlightCache", "PLATFORMS", "PlatformError", "configure",
           "default_device", "devices", "get_client", "CompileError", "Executable"]
