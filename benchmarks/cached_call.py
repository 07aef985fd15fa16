"""Where a cached jit call's time goes: the native call and the Python one.

    python benchmarks/cached_call.py

Times, in alternating batches in one process, the cached call of x+y on f32[4] with
positional tensors and with a tuple of them: natively (stablejit._fastcall), on the
Python path (as STABLEJIT_NATIVE=0), jax.jit's, and PJRT's execute with the C++ result
handlers (the floor under both); then each piece of the Python path on its own (the
profile docs/native.md quotes). Medians in ns.
"""

from __future__ import annotations

import operator
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("STABLEJIT_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import stablejit  # noqa: E402
import stablejit.numpy as snp  # noqa: E402
from common import paired_per_call  # noqa: E402
from stablejit import debugging, fastcall, tree  # noqa: E402
from stablejit.jit import Jitted  # noqa: E402
from stablejit.tensor import Tensor  # noqa: E402


def main() -> None:
    x4 = np.arange(4, dtype=np.float32)
    sx, sy = snp.asarray(x4), snp.asarray(x4 + 1)
    jx, jy = jnp.asarray(x4), jnp.asarray(x4 + 1)
    f = stablejit.jit(lambda a, b: a + b)
    g = stablejit.jit(lambda p: p[0] + p[1])
    j = jax.jit(lambda a, b: a + b)
    f(sx, sy), g((sx, sy)), j(jx, jy)
    entry = next(iter(f._fast.values()))
    prog, bufs = entry.prog, [sx._data, sy._data]
    native = fastcall.available()
    python = fastcall.python_call(Jitted)
    calls = {"jax.jit(x, y)": lambda: j(jx, jy),
             "PJRT execute + result handlers": lambda: prog.execute(bufs)
             .consume_with_handlers(prog.handlers),
             "python path f(x, y)": lambda: python(f, sx, sy),
             "python path g((x, y))": lambda: python(g, (sx, sy))}
    if native:
        calls["native f(x, y)"] = lambda: f(sx, sy)
        calls["native g((x, y))"] = lambda: g((sx, sy))
    fast_leaf = operator.attrgetter("type", "weak", "_backend", "_view")
    data_of = operator.attrgetter("_data")
    args = (sx, sy)
    key = tuple(map(fast_leaf, args))
    out = prog.execute(bufs).consume_with_handlers(prog.handlers)[0]
    pieces = {"debugging.active()": debugging.active,
              "all(map(Tensor.__instancecheck__, args))":
                  lambda: all(map(Tensor.__instancecheck__, args)),
              "key tuple(map(_fast_leaf, args))": lambda: tuple(map(fast_leaf, args)),
              "dict lookup": lambda: f._fast.get(key),
              "buffers list(map(_data_of, args))": lambda: list(map(data_of, args)),
              "output Tensor(...)": lambda: Tensor(out, entry.backend, entry.out_types[0],
                                                   entry.out_weak[0]),
              "tree.fast_flatten((args,))": lambda: tree.fast_flatten((args,)),
              "an empty lambda (subtract)": lambda: None}
    print(f"stablejit {stablejit.__version__}, jax {jax.__version__} "
          f"({jax.devices()[0].platform}); native call built: {native}")
    for title, table in (("calls", calls), ("pieces of the Python path", pieces)):
        times = paired_per_call(list(table.values()), inner=2000)
        print(f"\n{title:45s} {'ns':>8s}")
        for name, t in zip(table, times, strict=True):
            print(f"{name:45s} {t * 1e9:8.0f}")


if __name__ == "__main__":
    main()
