"""gather and scatter primitives: every update computation and layout run three ways
(jit, eager XLA, reference) against an independent NumPy loop; the emitted StableHLO
parses and verifies; shape errors name the problem; out-of-range semantics (gather
clamps, scatter drops) and the vjp rules against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.compiler.builder import Builder
from stablejit.compiler.emitter import emit_module
from stablejit.compiler.errors import ShapeError
from stablejit.compiler.ir import Attrs, TensorType
from stablejit.compiler.registry import ALL

from tests.support.compare import assert_close
from tests.support.mlir_check import parse_and_verify
from tests.support.runners import PATHS, run_primitive

rng = np.random.default_rng(0)
X = rng.normal(size=(5, 4)).astype(np.float32)

def loop_gather(x, idx, sizes, start_map, collapsed):
    """StableHLO gather for index_vector_dim = last, offset dims after the batch dims."""
    out = []
    for vec in idx.reshape(-1, idx.shape[-1]):
        start = [0] * x.ndim
        for k, d in enumerate(start_map):
            start[d] = min(max(int(vec[k]), 0), x.shape[d] - sizes[d])
        win = x[tuple(slice(s, s + n) for s, n in zip(start, sizes, strict=True))]
        out.append(win.reshape([n for d, n in enumerate(sizes) if d not in collapsed]))
    return np.stack(out).reshape(idx.shape[:-1] + out[0].shape)

def loop_scatter(x, idx, upd, kind, start_map, inserted):
    out = x.copy()
    nb = idx.ndim - 1
    wshape = upd.shape[nb:]
    sizes, it = [], iter(wshape)
    for d in range(x.ndim):
        sizes.append(1 if d in inserted else next(it))
    for b, vec in zip(np.ndindex(*idx.shape[:-1]), idx.reshape(-1, idx.shape[-1]), strict=True):
        start = [0] * x.ndim
        for k, d in enumerate(start_map):
            start[d] = int(vec[k])
        if any(s < 0 or s + n > m for s, n, m in zip(start, sizes, x.shape, strict=True)):
            continue  # XLA drops windows that leave the operand
        region = tuple(slice(s, s + n) for s, n in zip(start, sizes, strict=True))
        u = upd[b].reshape(sizes)
        f = {"set": lambda a, c: c, "add": np.add, "mul": np.multiply, "min": np.minimum,
             "max": np.maximum}[kind]
        out[region] = f(out[region], u)
    return out

GATHER_CASES = [
    # rows of a matrix, with out-of-range and negative starts (clamped)
    (np.array([[1], [4], [9], [-2]], np.int32), (1, 4), (0,), (0,)),
    # single elements by (row, col)
    (np.array([[1, 2], [4, 0], [3, 3]], np.int64), (1, 1), (0, 1), (0, 1)),
    # 2x3 windows, start map reversed, nothing collapsed
    (np.array([[[1, 2]], [[0, 3]]], np.int32), (2, 3), (1, 0), ()),
]

@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_three_ways_matches_a_loop(case):
    idx, sizes, start_map, collapsed = GATHER_CASES[case]
    nb = idx.ndim - 1
    n_off = len(sizes) - len(collapsed)
    attrs = dict(offset_dims=tuple(range(nb, nb + n_off)), collapsed_slice_dims=collapsed,
                 start_index_map=start_map, index_vector_dim=nb, slice_sizes=sizes)
    want = loop_gather(X, idx, sizes, start_map, collapsed)
    for path in PATHS:
        (got,) = run_primitive(ALL["gather"], [X, idx], attrs, path)
        assert_close(got, want, msg=f"gather via {path}")

@pytest.mark.parametrize("kind", ["set", "add", "mul", "min", "max"])
def test_scatter_every_update_computation_three_ways(kind):
    # repeated rows accumulate (set uses unique rows: the winner is unspecified in XLA),
    # row 7 and row -1 are out of range and dropped
    rows = [1, 3, 0, 7, -1] if kind == "set" else [1, 4, 1, 7, -1]
    idx = np.array(rows, np.int32)[:, None]
    upd = rng.normal(size=(5, 4)).astype(np.float32)
    attrs = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                 scatter_dims_to_operand_dims=(0,), index_vector_dim=1, kind=kind)
    want = loop_scatter(X, idx, upd, kind, (0,), (0,))
    for path in PATHS:
        (got,) = run_primitive(ALL["scatter"], [X, idx, upd], attrs, path)
        assert_close(got, want, msg=f"scatter {kind} via {path}")

def test_scatter_of_windows_and_integer_dtypes():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    idx = np.array([[0, 1], [2, 4], [3, 5]], np.int32)  # last window leaves x: dropped
    upd = np.arange(12, dtype=np.int32).reshape(3, 2, 2)
    attrs = dict(update_window_dims=(1, 2), inserted_window_dims=(),
                 scatter_dims_to_operand_dims=(0, 1), index_vector_dim=1, kind="add")
    want = loop_scatter(x, idx, upd, "add", (0, 1), ())
    for path in PATHS:
        (got,) = run_primitive(ALL["scatter"], [x, idx, upd], attrs, path)
        np.testing.assert_array_equal(got, want)

def _module(name, operands, attrs):
    b = Builder(name)
    params = [b.param(TensorType(np.shape(o), stablejit.dtypes.dtype(np.asarray(o).dtype)))
              for o in operands]
    return emit_module(b.build(b.bind(ALL[name], params, Attrs(attrs))))

def test_emitted_gather_and_scatter_parse_and_verify():
    text = _module("gather", [X, np.zeros((3, 1), np.int32)], dict(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
        index_vector_dim=1, slice_sizes=(1, 4)))
    assert '"stablehlo.gather"' in text and "#stablehlo.gather<" in text
    parse_and_verify(text)
    for kind in ("set", "add", "mul", "min", "max"):
        text = _module("scatter", [X, np.zeros((3, 1), np.int32),
                                   np.zeros((3, 4), np.float32)], dict(
            update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,), index_vector_dim=1, kind=kind))
        assert '"stablehlo.scatter"' in text
        parse_and_verify(text)

def T(shape, dtype=stablejit.dtypes.float32):
    return TensorType(shape, dtype)

def test_shape_errors_name_the_problem():
    i32 = stablejit.dtypes.int32
    g = ALL["gather"].shape_rule
    with pytest.raises(ShapeError, match="integer dtype"):
        g(T((5, 4)), T((3, 1)), offset_dims=(1,), collapsed_slice_dims=(0,),
          start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 4))
    with pytest.raises(ShapeError, match="slice size 5 on axis 1"):
        g(T((5, 4)), T((3, 1), i32), offset_dims=(1,), collapsed_slice_dims=(0,),
          start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 5))
    with pytest.raises(ShapeError, match="collapsed axis 1 must have slice size 1"):
        g(T((5, 4)), T((3, 1), i32), offset_dims=(1,), collapsed_slice_dims=(1,),
          start_index_map=(0,), index_vector_dim=1, slice_sizes=(2, 4))
    s = ALL["scatter"].shape_rule
    with pytest.raises(ShapeError, match="updates have dtype int32"):
        s(T((5, 4)), T((3, 1), i32), T((3, 4), i32), update_window_dims=(1,),
          inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
          kind="add")
    with pytest.raises(ShapeError, match="scatter dimensions"):
        s(T((5, 4)), T((3, 1), i32), T((2, 4)), update_window_dims=(1,),
          inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
          kind="add")
    with pytest.raises(ShapeError, match="unknown update computation"):
        s(T((5, 4)), T((3, 1), i32), T((3, 4)), update_window_dims=(1,),
          inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
          kind="sub")

# ---- derivative rules against jax ---------------------------------------------------------

def _grads(f_sj, f_jax, *args):
    g = stablejit.grad(f_sj, argnums=tuple(range(len(args))))(*[snp.asarray(a) for a in args])
    want = jax.grad(f_jax, argnums=tuple(range(len(args))))(*args)
    for a, b in zip(g, want, strict=True):
        assert_close(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)

W = rng.normal(size=(5, 4)).astype(np.float32)


def WT():
    return snp.asarray(W)  # a Tensor: inside stablejit.grad, mix tensors with tensors

def test_gather_vjp_is_a_scatter_add():
    idx = np.array([1, 4, 1, -2])  # repeated and negative
    _grads(lambda x: snp.sum(x[snp.asarray(idx)] * snp.asarray(W[:4])),
           lambda x: jnp.sum(x[jnp.asarray(idx)] * W[:4]), X)


def test_gather_vjp_flows_to_the_element_a_clamped_index_read():
    # x[9] on 5 rows reads row 4 (clamped), so row 4 gets that cotangent. (jax drops it:
    # its x[i] promises in-bounds indices and transposes to a dropping scatter.)
    idx = np.array([1, 9])
    w = W[:2]
    g = stablejit.grad(lambda x: snp.sum(x[snp.asarray(idx)] * snp.asarray(w)))(
        snp.asarray(X))
    want = np.zeros_like(X)
    np.add.at(want, np.clip(idx, 0, 4), w)
    assert_close(np.asarray(g), want)


@pytest.mark.parametrize("method", ["add", "set", "min", "max", "multiply"])
def test_scatter_vjps_match_jax(method):
    idx = np.array([1, 3, 0] if method in ("set", "multiply") else [1, 4, 1, 7])
    u = rng.normal(size=(len(idx), 4)).astype(np.float32)
    kw = {"unique_indices": True} if method == "multiply" else {}
    def f_sj(x, u):
        return snp.sum(getattr(x.at[snp.asarray(idx)], method)(u, **kw) * WT())

    def f_jax(x, u):
        return jnp.sum(getattr(x.at[jnp.asarray(idx)], method)(u, **kw) * W)

    _grads(f_sj, f_jax, X, u)

def test_scatter_multiply_gradient_with_repeated_indices_says_what_to_do():
    idx = snp.asarray(np.array([1, 1]))
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        stablejit.grad(lambda x, u: snp.sum(x.at[idx].multiply(u)), argnums=(0, 1))(
            snp.asarray(X), snp.asarray(np.ones((2, 4), np.float32)))

def test_scatter_add_gradient_ignores_dropped_updates():
    idx = np.array([0, 9])  # 9 is dropped: its update gets no gradient
    u = np.ones((2, 4), np.float32)
    g = stablejit.grad(lambda u: snp.sum(snp.asarray(X).at[snp.asarray(idx)].add(u) * WT()))(
        snp.asarray(u))
    want = np.stack([W[0], np.zeros(4, np.float32)])
    assert_close(np.asarray(g), want)

def test_every_indexing_primitive_has_a_vjp():
    for name in ("gather", "scatter"):
        assert callable(ALL[name].vjp)

