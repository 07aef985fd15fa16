"""stablejit.vmap of programs built on gather/scatter, dynamic indexing, sort, top_k,
scans, convolution, pooling (and its derivatives) and FFTs, against jax.vmap of the
same program, eagerly and under jit. Indices differ per example and some leave the
operand, so clamping (gather, dynamic_slice) and dropping (scatter) are checked too."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from jax import lax

from tests.support.compare import assert_close

B = 4
rng = np.random.default_rng(0)
X = rng.standard_normal((B, 5, 3)).astype(np.float32)
X0 = X[0]
ROWS = np.array([[0, 4], [2, 1], [3, 3], [1, 0]], np.int32)       # per example
ROWS_OUT = np.array([[0, 7], [-2, 1], [3, 5], [9, -1]], np.int32)   # some out of range
I = np.array([0, 3, 4, 2], np.int32)                               # a scalar per example
U = rng.standard_normal((B, 2, 3)).astype(np.float32)
S = rng.standard_normal((B, 6, 7)).astype(np.float32)
IMG = rng.standard_normal((B, 2, 2, 7, 6)).astype(np.float32)      # per example NCHW
KER = rng.standard_normal((B, 6, 2, 3, 2)).astype(np.float32)      # per example OIHW
KER_G = rng.standard_normal((B, 6, 1, 3, 2)).astype(np.float32)    # 2 feature groups
SIG = rng.standard_normal((B, 3, 8)).astype(np.float32)
CSIG = (SIG + 1j * rng.standard_normal((B, 3, 8))).astype(np.complex64)
DN = ("NCHW", "OIHW", "NCHW")


def _same(make):
    """One program for both libraries: make(numpy namespace) -> function."""
    return make(snp), make(jnp)


def _conv(groups=1, batch_groups=1, padding=((1, 0), (0, 1))):
    g = {"feature_group_count": groups, "batch_group_count": batch_groups}

    def ours(x, w):
        return sj.conv.conv_general(x, w, (2, 1), padding, dimension_numbers=DN, **g)

    def theirs(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), padding, dimension_numbers=DN, **g)
    return ours, theirs


def _pool_pair():
    return (lambda x: sj.conv.max_pool(x, (2, 2), (1, 2), "SAME"),
            lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 1, 2),
                                        "SAME"))


def _pool_grad():
    ours, theirs = _pool_pair()
    return (sj.grad(lambda x: (ours(x) ** 2).sum()),
            jax.grad(lambda x: (theirs(x) ** 2).sum()))


def _pool_jvp():
    ours, theirs = _pool_pair()
    return (lambda x, t: sj.jvp(ours, (x,), (t,))[1],
            lambda x, t: jax.jvp(theirs, (x,), (t,))[1])


def _conv_kernel_grad(groups):
    """Per-example gradients of a loss with respect to a shared kernel."""
    ours, theirs = _conv(groups)
    return (sj.grad(lambda w, x: (ours(x, w) ** 2).sum()),
            jax.grad(lambda w, x: (theirs(x, w) ** 2).sum()))


def _conv_input_grad(groups):
    ours, theirs = _conv(groups)
    return (sj.grad(lambda x, w: (ours(x, w) ** 2).sum()),
            jax.grad(lambda x, w: (theirs(x, w) ** 2).sum()))


# (label, (ours, theirs), args, vmap keyword arguments)
PROGRAMS = [
    ("take_rows", _same(lambda m: lambda x, i: m.asarray(x)[i]), (X, ROWS), {}),
    ("take_rows_shared_x", _same(lambda m: lambda x, i: m.asarray(x)[i]), (X0, ROWS),
     {"in_axes": (None, 0)}),
    ("take_rows_shared_idx", _same(lambda m: lambda x, i: m.asarray(x)[i]), (X, ROWS[0]),
     {"in_axes": (0, None)}),
    ("take_clamped", _same(lambda m: lambda x, i: m.take(x, i, axis=0, mode="clip")),
     (X, ROWS_OUT), {}),
    ("take_along_axis", _same(lambda m: lambda x, i: m.take_along_axis(x, i, axis=0)),
     (X, np.argsort(X, axis=1).astype(np.int32)), {}),
    ("dynamic_index", _same(lambda m: lambda x, i: m.asarray(x)[i]), (X, I), {}),
    ("dynamic_index_shared_x", _same(lambda m: lambda x, i: m.asarray(x)[i] * 2), (X0, I),
     {"in_axes": (None, 0)}),
    ("dynamic_set", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].set(u[0])), (X, I, U), {}),
    ("dynamic_set_shared_x", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].set(u[0])),
     (X0, I, U), {"in_axes": (None, 0, 0)}),
    ("scatter_add", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].add(u)), (X, ROWS, U), {}),
    ("scatter_add_dropped", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].add(u, mode="drop")),
     (X, ROWS_OUT, U), {}),
    ("scatter_shared_x", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].add(u)), (X0, ROWS, U),
     {"in_axes": (None, 0, 0)}),
    ("scatter_shared_idx", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].max(u)),
     (X, ROWS[0], U), {"in_axes": (0, None, 0)}),
    ("scatter_shared_updates", _same(lambda m: lambda x, i, u: m.asarray(x).at[i].set(u)),
     (X, ROWS, U[0]), {"in_axes": (0, 0, None)}),
    ("sort_last", _same(lambda m: lambda s: m.sort(s, axis=-1)), (S,), {}),
    ("sort_first", _same(lambda m: lambda s: m.sort(s, axis=0)), (S,), {"in_axes": 1}),
    ("argsort", _same(lambda m: lambda s: m.argsort(s, axis=0)), (S,), {}),
    ("top_k", (lambda s: snp.top_k(s, 3), lambda s: tuple(lax.top_k(s, 3))), (S,), {}),
    ("cumsum", _same(lambda m: lambda s: m.cumsum(s, axis=0)), (S,), {}),
    ("cumsum_out_axis", _same(lambda m: lambda s: m.cumsum(s, axis=1)), (S,),
     {"out_axes": -1}),
    ("cummax", (lambda s: snp.cummax(s, axis=1), lambda s: lax.cummax(s, axis=1)), (S,), {}),
    ("cumprod", (lambda s: snp.cumprod(s, axis=0), lambda s: lax.cumprod(s, axis=0)), (S,),
     {"in_axes": 2}),
    ("conv_both", _conv(), (IMG, KER), {}),
    ("conv_input", _conv(), (IMG, KER[0]), {"in_axes": (0, None)}),
    ("conv_kernel", _conv(), (IMG[0], KER), {"in_axes": (None, 0)}),
    ("conv_groups_both", _conv(2), (IMG, KER_G), {}),
    ("conv_groups_kernel", _conv(2), (IMG[0], KER_G), {"in_axes": (None, 0)}),
    ("conv_batch_groups_both", _conv(batch_groups=2), (IMG, KER), {}),
    ("conv_batch_groups_input", _conv(batch_groups=2), (IMG, KER[0]), {"in_axes": (0, None)}),
    ("conv_batch_groups_kernel", _conv(batch_groups=2), (IMG[0], KER),
     {"in_axes": (None, 0)}),
    ("conv_kernel_grad", _conv_kernel_grad(1), (KER[0], IMG), {"in_axes": (None, 0)}),
    ("conv_groups_kernel_grad", _conv_kernel_grad(2), (KER_G[0], IMG),
     {"in_axes": (None, 0)}),
    ("conv_groups_input_grad", _conv_input_grad(2), (IMG, KER_G), {}),
    ("max_pool", _pool_pair(), (IMG,), {}),
    ("max_pool_grad", _pool_grad(), (IMG,), {}),
    ("max_pool_jvp", _pool_jvp(), (IMG, IMG[::-1].copy()), {}),
    ("max_pool_jvp_shared_x", _pool_jvp(), (IMG[0], IMG), {"in_axes": (None, 0)}),
    ("fft", _same(lambda m: lambda c: m.fft.fft(c)), (CSIG,), {}),
    ("rfftn", _same(lambda m: lambda s: m.fft.rfftn(s)), (SIG,), {"in_axes": 2}),
    ("fft2", _same(lambda m: lambda c: m.fft.fft2(c)), (CSIG,), {"in_axes": 1}),
    ("irfft", _same(lambda m: lambda c: m.fft.irfft(c, n=8)), (CSIG[..., :5],), {}),
]


def _close(got, want):
    g_leaves, g_tree = jax.tree_util.tree_flatten(jax.tree_util.tree_map(np.asarray, got))
    w_leaves, w_tree = jax.tree_util.tree_flatten(jax.tree_util.tree_map(np.asarray, want))
    assert g_tree == w_tree, (g_tree, w_tree)
    for g, w in zip(g_leaves, w_leaves, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert_close(g, w.astype(g.dtype) if w.dtype.kind == g.dtype.kind else w,
                     rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("label,fns,args,kw", PROGRAMS, ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_vmap_matches_jax(label, fns, args, kw, jit):
    ours, theirs = sj.vmap(fns[0], **kw), jax.vmap(fns[1], **kw)
    if jit:
        ours = sj.jit(ours)
    _close(ours(*args), theirs(*args))


NESTED = [
    ("take", _same(lambda m: lambda x, i: x[i]),
     (rng.standard_normal((3, B, 5, 2)).astype(np.float32),
      rng.integers(-1, 6, (B, 3, 4)).astype(np.int32)), (0, 1)),
    ("scatter_add", _same(lambda m: lambda x, i, u: x.at[i].add(u)),
     (rng.standard_normal((3, B, 5)).astype(np.float32),
      rng.integers(0, 5, (B, 3, 2)).astype(np.int32),
      rng.standard_normal((3, B, 2)).astype(np.float32)), (0, 1, 0)),
    ("dynamic_index", _same(lambda m: lambda x, i: x[i]),
     (X, rng.integers(-2, 7, (3, B)).astype(np.int32)), (None, 0)),
    ("conv", _conv(2), (IMG[:3, :, None].repeat(2, 2), KER_G[:3]), (2, None)),
]


@pytest.mark.parametrize("label,fns,args,outer", NESTED, ids=[p[0] for p in NESTED])
def test_nested_vmap_matches_jax(label, fns, args, outer):
    """vmap of vmap: the inner rule sees operands that already carry a batch axis."""
    ours = sj.jit(sj.vmap(sj.vmap(fns[0]), in_axes=outer))
    theirs = jax.vmap(jax.vmap(fns[1]), in_axes=outer)
    _close(ours(*args), theirs(*args))
