"""Timing helpers shared by the benchmarks: medians of repeated batches, ratio tables."""

from __future__ import annotations

import time

import numpy as np


def per_call(fn, *, inner: int = 100, repeat: int = 15, warmup: int = 3) -> float:
    """Median seconds per call of fn() over `repeat` batches of `inner` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return float(np.median(times))


def paired_per_call(fns, *, inner: int = 100, repeat: int = 21, warmup: int = 3
                    ) -> list[float]:
    """Median seconds per call of each of fns, measured in alternating batches of `inner`
    calls, so that a busy machine slows all of them alike."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            ts.append((time.perf_counter() - t0) / inner)
    return [float(np.median(ts)) for ts in times]


def once_each(make, *, repeat: int = 7) -> float:
    """Median seconds of make()() where make builds a fresh thing to time each round."""
    times = []
    for _ in range(repeat):
        f = make()
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def table(title: str, rows: list[tuple]) -> None:
    """rows: (name, stablejit seconds, peer name, peer seconds, target ratio or None)."""
    print(f"\n{title}")
    print(f"{'case':<44}{'stablejit':>12}{'peer':>26}{'ratio':>8}{'target':>9}")
    for name, ours, peer_name, peer, target in rows:
        ratio = ours / peer
        mark = "" if target is None else ("  ok" if ratio <= target else "  MISS")
        tgt = "" if target is None else f"<={target:.1f}x"
        print(f"{name:<44}{fmt(ours):>12}{peer_name + ' ' + fmt(peer):>26}{ratio:>7.2f}x"
              f"{tgt:>9}{mark}")


def digits_setup(batch: int = 32):
    """examples/digits_mlp.py as a module, with the first `batch` samples as tensors, an
    adam optimizer, its initial parameters and state: (digits, x, y, opt, params, state)
    (benchmarks/lazy.py and recorder.py time its training step)."""
    import importlib.util
    import pathlib

    import stablejit.numpy as snp
    from stablejit import nn
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "digits_mlp.py"
    spec = importlib.util.spec_from_file_location("digits_mlp", path)
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    x, y, _, _ = digits.load()
    x, y = snp.asarray(x[:batch]), snp.asarray(y[:batch])
    opt = nn.adam(2e-3)
    params = digits.init_params(np.random.default_rng(0), (64, 128, 10))
    return digits, x, y, opt, params, opt.init(params)
