"""STABLEJIT_DUMP_TO: write what each compilation produced to a directory."""

from __future__ import annotations

import json
import os
import re
import threading
import time

_counter = 0
_lock = threading.Lock()


def dump_dir() -> str | None:
    return os.environ.get("STABLEJIT_DUMP_TO") or None


def write_dump(directory: str, name: str, *, ir: str, stablehlo: str, hlo: str,
               metadata: dict) -> str:
    """Write <n>.<name>.{ir.txt,stablehlo.mlir,hlo.txt,json}; return the path prefix."""
    global _counter
    with _lock:
        _counter += 1
        n = _counter
    os.makedirs(directory, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80] or "fn"
    prefix = os.path.join(directory, f"{os.getpid()}.{n:04d}.{safe}")
    files = {"ir.txt": ir, "stablehlo.mlir": stablehlo, "hlo.txt": hlo,
             "json": json.dumps({**metadata, "time": time.time()}, indent=2, default=str)}
    for ext, text in files.items():
        with open(f"{prefix}.{ext}", "w") as f:
            f.write(text)
    return prefix
