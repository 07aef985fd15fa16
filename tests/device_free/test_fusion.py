"""The fusion pass: cluster counts on small programs, as the rules in
compiler/passes/fusion.py (`_joins`) say, and the clusters shown in the IR text."""

import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.ir import TensorType
from stablejit.compiler.ops import Ops
from stablejit.compiler.passes import optimize
from stablejit.compiler.passes.fusion import cluster_count, fuse, partition
from stablejit.compiler.primitives import elementwise as ew
from stablejit.compiler.primitives import reductions

T = TensorType((8, 8), dt.float32)


def _build(body, n_params=3):
    b = Builder("f")
    params = [b.param(T) for _ in range(n_params)]
    outs = body(Ops(b), *params)
    return b.build(list(outs) if isinstance(outs, (tuple, list)) else [outs])


def _sum_of_fma(o, x, y, z):
    return o.reduce_sum(o.add(x, o.mul(y, z)), (0, 1))


def _matmul_between_chains(o, x, w, _):
    a = o.bind(ew.tanh, o.mul(x, o.const(2.0, dt.float32, (8, 8))))
    return o.add(o.bind(ew.exp, o.dot_general(a, w, ((1,), (0,)))), o.const(1.0, dt.float32,
                                                                         (8, 8)))


def _softmax(o, x, _, __):
    e = o.bind(ew.exp, x)
    s = o.reduce_sum(e, (1,))
    return o.div(e, o.broadcast(s, (8, 8), (0,)))


def _long_chain(o, x, y, _):
    v = x
    for i in range(30):
        v = o.mul(o.add(v, y), o.const(1.0 + i / 100, dt.float32, (8, 8)))
    return v


def _shared_result(o, x, _, __):
    a = o.mul(x, x)
    return [a, o.add(a, x)]


def _two_reductions(o, x, y, _):
    return [o.reduce_sum(o.mul(x, y), (0,)), o.bind(reductions.reduce_max, o.add(x, y),
                                                     axes=(1,))]


CASES = [
    ("reduce_sum(x + y*z) is one kernel", _sum_of_fma, 1),
    ("a matmul between two elementwise chains makes three", _matmul_between_chains, 3),
    ("softmax: exp, the sum, the division", _softmax, 3),
    ("30 elementwise ops with constants are one kernel", _long_chain, 1),
    ("a result that is also used roots its own cluster", _shared_result, 2),
    ("two reductions of two chains", _two_reductions, 2),
]


@pytest.mark.parametrize("label,body,count", CASES, ids=[c[0] for c in CASES])
def test_cluster_counts(label, body, count):
    fn = _build(body)
    assert cluster_count(fuse(fn)) == count, str(fuse(fn))


def test_fusion_does_not_change_the_program():
    fn = _build(_matmul_between_chains)
    fused = fuse(fn)
    assert fused.ops == fn.ops and fused.key() == fn.key()


def test_clusters_are_numbered_in_program_order_and_shown_in_the_ir_text():
    fn = fuse(optimize(_build(_matmul_between_chains)))
    assert fn.clusters == tuple(partition(fn))
    first_seen = []
    for c in fn.clusters:
        if c not in first_seen:
            first_seen.append(c)
    assert first_seen == sorted(first_seen)
    assert "# cluster 0" in str(fn) and "# cluster 2" in str(fn)


def test_the_fusion_pass_is_a_report_not_a_compile_step():
    """XLA fuses kernels and a lazy graph compiles whole, so no clusters decide what
    runs: the default pipeline leaves them out and explain/dumps make them."""
    from stablejit.compiler.passes import DEFAULT_PIPELINE, optimize
    assert fuse not in DEFAULT_PIPELINE
    fn = _build(_softmax)
    assert optimize(fn).clusters is None
    assert fuse(optimize(fn)).clusters == tuple(partition(optimize(fn)))
