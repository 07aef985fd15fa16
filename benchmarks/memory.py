"""Host memory (RSS) while one jitted function is compiled for 1,000 distinct shapes,
and while eager ops run on as many shapes: the executable cache must level off under
its bound (STABLEJIT_EXECUTABLE_CACHE_ENTRIES / _BYTES) instead of growing for ever.

    python benchmarks/memory.py [N]

Prints RSS after every 100 shapes, and the growth over the last half of the run.
"""

from __future__ import annotations

import os
import resource
import sys
import warnings

import numpy as np


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def main(n: int = 1000) -> None:
    os.environ.setdefault("STABLEJIT_CACHE", "0")  # measure compilation, not the disk cache
    import stablejit
    import stablejit.numpy as snp

    warnings.simplefilter("ignore", stablejit.RecompileWarning)  # retracing is the point

    @stablejit.jit
    def f(x):
        return snp.tanh(x * 2.0 + 1.0).sum()

    f(np.zeros(1, np.float32))
    start = rss_mib()
    marks = {}
    print(f"jit of one function over {n} shapes (start {start:.0f} MiB):")
    for i in range(1, n + 1):
        f(np.zeros(i, np.float32)).block_until_ready()
        if i % 100 == 0:
            marks[i] = rss_mib()
            print(f"  {i:5d} shapes: RSS {marks[i]:7.1f} MiB (+{marks[i] - start:.1f})")
    half = marks[n // 2 // 100 * 100] if n >= 200 else start
    print(f"growth over the second half: {marks[n] - half:+.1f} MiB "
          f"({(marks[n] - half) / (n - n // 2) * 1024:.0f} KiB per shape)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
