"""lazy()'s early start on and off, for the MLP and digits steps of benchmarks/lazy.py.

    python benchmarks/lazy_early_start.py          # STABLEJIT_PLATFORM=cuda on a GPU

With the early start on (a backend's _start_at lowered to LazyBackend._START_AT), a
Function of that many ops or more (grad's derivative, a jitted update) starts the
pending graph at once; by default it is off and a step is one program (docs/native.md,
"One program per step"). This times each step in lazy() both ways, plain eager and
under jit, in alternating batches in one process (medians per call, microseconds).
"""

from __future__ import annotations

import numpy as np
import stablejit
import stablejit.numpy as snp
from common import digits_setup, paired_per_call
from lazy import mlp_step
from stablejit.lazy_backend import LazyBackend

ON, OFF = LazyBackend._START_AT, 1 << 62


def _lazy(backend, start_at, step, read):
    def run():
        backend._start_at = start_at
        with stablejit.lazy():
            out = step()
        read(out).block_until_ready()
    return run


def main() -> None:
    backend = stablejit.lazy().backend
    default = backend._start_at
    rng = np.random.default_rng(0)
    params = [snp.asarray(rng.standard_normal((64, 128)).astype(np.float32) * 0.1),
              snp.zeros(128), snp.asarray(rng.standard_normal((128, 10)).astype(np.float32)
                                          * 0.1), snp.zeros(10)]
    xb = snp.asarray(rng.standard_normal((128, 64)).astype(np.float32))
    yb = snp.asarray(rng.integers(0, 10, 128).astype(np.int32))

    def mlp(p, x, y):
        g = stablejit.grad(mlp_step(snp, p, x, y))(p)
        return [a - 0.1 * b for a, b in zip(p, g, strict=True)]

    digits, dx, dy, opt, dparams, dstate = digits_setup()

    def adam(p, s, x, y):
        loss, grads = stablejit.value_and_grad(digits.loss_fn)(p, x, y)
        p, s = opt.update(grads, s, p)
        return p, s, loss

    cases = [("MLP step (SGD)", lambda: mlp(params, xb, yb), lambda o: o[0],
              stablejit.jit(mlp), (params, xb, yb)),
             ("digits step (adam)", lambda: adam(dparams, dstate, dx, dy), lambda o: o[2],
              digits.make_train_step(opt), (dparams, dstate, dx, dy))]
    print(f"{stablejit.devices()[0]}: default _start_at {default}")
    print(f"{'step':20s} {'early start':>12s} {'one program':>12s} {'not lazy':>10s} "
          f"{'jit':>8s}")
    try:
        for name, step, read, jitted, args in cases:
            times = paired_per_call(
                [_lazy(backend, ON, step, read), _lazy(backend, OFF, step, read),
                 lambda s=step, r=read: r(s()).block_until_ready(),
                 lambda j=jitted, a=args, r=read: r(j(*a)).block_until_ready()], inner=10)
            print(f"{name:20s} " + " ".join(f"{1e6 * t:{w}.1f}" for t, w in
                                            zip(times, (12, 12, 10, 8), strict=True)))
    finally:
        backend._start_at = default


if __name__ == "__main__":
    main()
