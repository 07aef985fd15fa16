"""Linear algebra, FFT and convolution: stablejit.jit against jax.jit and NumPy (host CPU).

    python benchmarks/linalg_fft_conv.py [--sizes 200 1000] [--rounds 9] [--only eigh,conv]
                                         [--blas-threads 1]

Cases: eigh, svd (full matrices, as numpy.linalg.svd's default) and solve (one right-hand
side) of float32 n x n matrices; a 3x3 convolution layer with bias and relu (batch 32,
64 -> 64 channels, 32x32 images, NHWC/HWIO, SAME padding); a complex64 FFT of 2**20 points
and a float32 RFFT of 2**20 points. Both jitted sides compile the same computation; the
NumPy column runs the same operation eagerly (no NumPy convolution).

Each case times `--rounds` batches of calls, alternating stablejit and jax batch by batch
in a rotating order (so a busy machine slows both alike), then NumPy's batches on their own
(NumPy links its own OpenBLAS, whose spinning threads would slow the LAPACK calls of the
other two), and prints the medians. A call waits for
its result. The ratio is stablejit / peer: lower is better; the target is 1.2x of jax.

On a machine busy with other work, multithreaded OpenBLAS (which the LAPACK calls run on)
spin-waits for descheduled threads and single calls can vary 100-fold;
--blas-threads N sets OPENBLAS_NUM_THREADS/OMP_NUM_THREADS/MKL_NUM_THREADS before anything
loads, for all three sides alike.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
if "--blas-threads" in sys.argv[:-1]:  # must be set before numpy/jaxlib load OpenBLAS
    _n = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _n

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import stablejit  # noqa: E402
import stablejit.numpy as snp  # noqa: E402
from common import per_call, table  # noqa: E402
from jax import lax  # noqa: E402
from stablejit import conv  # noqa: E402

TARGET = 1.2


def _wait(out):
    for leaf in jax.tree_util.tree_leaves(out):
        leaf.block_until_ready()


def _ready(fn, *args):
    return lambda: _wait(fn(*args))


def _numpy_call(fn, *args):
    return lambda: fn(*args)


def compare(calls: dict, rounds: int) -> dict:
    """{name: median seconds per call}, timing the callables batch by batch in turn."""
    for f in calls.values():  # compile, warm caches
        f(), f()
    one = {k: per_call(f, inner=1, repeat=3, warmup=0) for k, f in calls.items()}
    inner = {k: max(1, int(0.15 / max(t, 1e-7))) for k, t in one.items()}
    times = {k: [] for k in calls}
    names = list(calls)
    for r in range(rounds):  # rotate who goes first: BLAS threads spin on after a call
        for k in names[r % len(names):] + names[:r % len(names)]:
            times[k].append(per_call(calls[k], inner=inner[k], repeat=1, warmup=0))
    return {k: float(np.median(v)) for k, v in times.items()}


def linalg_cases(n: int, rng):
    a = rng.standard_normal((n, n)).astype(np.float32)
    sym = (a + a.T) / 2
    well = (a + n * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n,)).astype(np.float32)
    s_sym, s_a, s_well, s_b = (snp.asarray(v) for v in (sym, a, well, b))
    j_sym, j_a, j_well, j_b = (jnp.asarray(v) for v in (sym, a, well, b))
    yield (f"eigh {n}x{n} f32", _ready(stablejit.jit(snp.linalg.eigh), s_sym),
           _ready(jax.jit(jnp.linalg.eigh), j_sym), _numpy_call(np.linalg.eigh, sym))
    yield (f"svd {n}x{n} f32", _ready(stablejit.jit(snp.linalg.svd), s_a),
           _ready(jax.jit(jnp.linalg.svd), j_a), _numpy_call(np.linalg.svd, a))
    yield (f"solve {n}x{n} f32, one rhs", _ready(stablejit.jit(snp.linalg.solve), s_well, s_b),
           _ready(jax.jit(jnp.linalg.solve), j_well, j_b),
           _numpy_call(np.linalg.solve, well, b))


def conv_case(rng):
    x = rng.standard_normal((32, 32, 32, 64)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
    bias = rng.standard_normal((64,)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def ours(x, w, b):
        return stablejit.nn.relu(conv.conv2d(x, w, padding="SAME", layout=dn) + b)

    def theirs(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
        return jax.nn.relu(y + b)

    s_args = [snp.asarray(v) for v in (x, w, bias)]
    j_args = [jnp.asarray(v) for v in (x, w, bias)]
    got = np.asarray(stablejit.jit(ours)(*s_args))
    want = np.asarray(jax.jit(theirs)(*j_args))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    yield ("conv 3x3 64->64 +bias+relu, 32x32x32 NHWC", _ready(stablejit.jit(ours), *s_args),
           _ready(jax.jit(theirs), *j_args), None)


def fft_cases(rng):
    n = 1 << 20
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    r = rng.standard_normal(n).astype(np.float32)
    yield ("fft 2^20 complex64", _ready(stablejit.jit(snp.fft.fft), snp.asarray(z)),
           _ready(jax.jit(jnp.fft.fft), jnp.asarray(z)), _numpy_call(np.fft.fft, z))
    yield ("rfft 2^20 float32", _ready(stablejit.jit(snp.fft.rfft), snp.asarray(r)),
           _ready(jax.jit(jnp.fft.rfft), jnp.asarray(r)), _numpy_call(np.fft.rfft, r))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[200, 1000])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--only", default="", help="comma-separated name prefixes, e.g. eigh,conv")
    ap.add_argument("--blas-threads", type=int, default=None,
                    help="OpenBLAS/OpenMP threads for LAPACK calls (default: theirs)")
    args = ap.parse_args(argv)
    only = [p for p in args.only.split(",") if p]
    rng = np.random.default_rng(0)

    def cases():
        for n in args.sizes:
            yield from linalg_cases(n, rng)
        yield from conv_case(rng)
        yield from fft_cases(rng)

    jax_rows, np_rows = [], []
    t0 = time.perf_counter()
    for name, ours, theirs, numpy_fn in cases():
        if only and not any(name.startswith(p) for p in only):
            continue
        t = compare({"stablejit": ours, "jax": theirs}, args.rounds)
        jax_rows.append((name, t["stablejit"], "jax", t["jax"], TARGET))
        if numpy_fn is not None:  # apart: NumPy's own OpenBLAS threads would fight jaxlib's
            t.update(compare({"numpy": numpy_fn}, args.rounds))
            np_rows.append((name, t["stablejit"], "numpy", t["numpy"], None))
        print(f"  measured {name} ({time.perf_counter() - t0:.0f} s)", flush=True)
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"host CPU, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, BLAS "
          f"threads {blas}; median of {args.rounds} alternating batches")
    table("stablejit.jit vs jax.jit", jax_rows)
    table("stablejit.jit vs numpy", np_rows)


if __name__ == "__main__":
    main()
