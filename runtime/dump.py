"""STABLEJIT_DUMP_TO: write what each compilation produced to a directory.

Each compilation writes `<pid>.<n>.<name>.<ext>` files: our IR before and after the
passes (ir-before.txt, ir.txt), the StableHLO text (stablehlo.mlir), XLA's optimised
HLO (hlo.txt) and a JSON of metadata (json). The numbering is per process, so several
processes can share one directory.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time

_counter = 0
_lock = threading.Lock()


def metadata_json(metadata: dict) -> str:
    return json.dumps({**metadata, "time": time.time(), "pid": os.getpid()}, indent=2,
                      default=str)


def write_dump(directory: str, name: str, files: dict[str, str]) -> str:
    """Write <pid>.<n>.<name>.<ext> for each ext -> text of `files`; return the prefix."""
    global _counter
    with _lock:
        _counter += 1
        n = _counter
    os.makedirs(directory, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80] or "fn"
    prefix = os.path.join(directory, f"{os.getpid()}.{n:04d}.{safe}")
    for ext, text in files.items():
        with open(f"{prefix}.{ext}", "w") as f:
            f.write(text)
    return prefix
