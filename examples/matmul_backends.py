"""A {10000,784} . {784,10} matrix product on each way stablejit can run it.

The same product the Nx backend comparison uses: on the NumPy reference backend,
the eager XLA device backend (one compiled op, cached), and jit. Prints the median of
several runs of each; the first call (which compiles) is reported separately.
"""

import time

import numpy as np
import stablejit
import stablejit.numpy as snp


def timed(fn, repeat=20):
    t0 = time.perf_counter()
    fn().block_until_ready()
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn().block_until_ready()
        times.append(time.perf_counter() - t0)
    return first, float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((10_000, 784), dtype=np.float32)
    b = rng.standard_normal((784, 10), dtype=np.float32)
    expected = a @ b

    ref_a, ref_b = (stablejit.backend_copy(snp.asarray(v), "reference") for v in (a, b))
    xla_a, xla_b = snp.asarray(a), snp.asarray(b)
    matmul_jit = stablejit.jit(lambda x, y: x @ y)

    rows = [
        ("reference (NumPy)", lambda: ref_a @ ref_b),
        ("xla eager", lambda: xla_a @ xla_b),
        ("xla jit", lambda: matmul_jit(xla_a, xla_b)),
    ]
    print(f"{'backend':<20}{'first call':>14}{'median':>12}   max |error|")
    for name, fn in rows:
        first, median = timed(fn)
        err = np.max(np.abs(np.asarray(fn()) - expected))
        print(f"{name:<20}{first * 1e3:>11.2f} ms{median * 1e3:>9.3f} ms   {err:.2e}")


if __name__ == "__main__":
    main()
