"""Sort of 1M float32, gather and scatter-add of 1M indices, cumsum of 1M: stablejit.jit
vs jax.jit vs NumPy on the default device. Median times and ratios (target: stablejit
within 1.2x of jax).

    python benchmarks/indexing_sort.py
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import stablejit
import stablejit.numpy as snp

from benchmarks.common import fmt, per_call

N = 1 << 20


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=N).astype(np.float32)
    idx = rng.integers(0, N, N).astype(np.int32)
    upd = rng.normal(size=N).astype(np.float32)
    sx, si, su = snp.asarray(x), snp.asarray(idx), snp.asarray(upd)
    jx, ji, ju = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(upd)

    cases = {
        "sort 1M f32": (lambda x, i, u: snp.sort(x), lambda x, i, u: jnp.sort(x),
                        lambda: np.sort(x)),
        "gather 1M": (lambda x, i, u: x[i], lambda x, i, u: x[i], lambda: x[idx]),
        "scatter-add 1M": (lambda x, i, u: x.at[i].add(u), lambda x, i, u: x.at[i].add(u),
                           lambda: np.add.at(x.copy(), idx, upd)),
        "cumsum 1M": (lambda x, i, u: snp.cumsum(x), lambda x, i, u: jnp.cumsum(x),
                      lambda: np.cumsum(x)),
    }
    print(f"{'case':<16}{'stablejit':>12}{'jax':>12}{'numpy':>12}{'sj/jax':>9}")
    for name, (f_sj, f_jax, f_np) in cases.items():
        sj = stablejit.jit(f_sj)
        jj = jax.jit(f_jax)
        t_sj = per_call(lambda sj=sj: sj(sx, si, su).block_until_ready(), inner=5, repeat=9)
        t_jax = per_call(lambda jj=jj: jj(jx, ji, ju).block_until_ready(), inner=5,
                         repeat=9)
        t_np = per_call(f_np, inner=2, repeat=5)
        np.testing.assert_allclose(np.asarray(sj(sx, si, su)), np.asarray(jj(jx, ji, ju)),
                                   rtol=1e-4, atol=1e-3)
        print(f"{name:<16}{fmt(t_sj):>12}{fmt(t_jax):>12}{fmt(t_np):>12}"
              f"{t_sj / t_jax:>8.2f}x")


if __name__ == "__main__":
    main()
