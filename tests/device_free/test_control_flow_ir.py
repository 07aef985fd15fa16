"""The control-flow primitives without a device: shape rules check their regions, the
reference interpreter runs them, the passes keep them, and the emitted StableHLO parses
and verifies with jaxlib's MLIR bindings."""

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler import passes
from stablejit.compiler.builder import Builder
from stablejit.compiler.emitter import emit_module
from stablejit.compiler.errors import ShapeError
from stablejit.compiler.interpreter import interpret
from stablejit.compiler.ir import TensorType
from stablejit.compiler.ops import Ops
from stablejit.compiler.primitives import control_flow as cf

from tests.support.mlir_check import parse_and_verify
from tests.support.prim_table.spec import region

F32 = TensorType((3,), dt.float32)
S32 = TensorType((), dt.float32)
I32 = TensorType((), dt.int32)
I64 = TensorType((), dt.int64)
BOOL = TensorType((), dt.bool_)


def test_cond_if_and_case_interpret_emit_and_verify():
    neg = region("neg", [F32], lambda o, x: [o.neg(x)])
    dbl = region("dbl", [F32], lambda o, x: [o.add(x, x)])
    sq = region("sq", [F32], lambda o, x: [o.mul(x, x)])
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for index_type, regions in ((BOOL, (neg, dbl)), (I32, (neg, dbl, sq))):
        b = Builder("main")
        i, v = b.param(index_type), b.param(F32)
        fn = b.build(b.bind(cf.cond, (i, v), regions=regions))
        passes.verify(fn)
        text = emit_module(passes.optimize(fn, check=True))
        parse_and_verify(text)
        assert ("stablehlo.if" if index_type is BOOL else "stablehlo.case") in text
        for k in range(-1, len(regions) + 1):
            want = [-x, 2 * x, x * x][k if 0 <= k < len(regions) else len(regions) - 1]
            got = interpret(fn, [np.asarray(k, index_type.dtype.np), x])[0]
            np.testing.assert_array_equal(got, want)


def test_while_interpret_emit_and_verify():
    cond_fn = region("c", [S32, I64, F32], lambda o, s, i, x: [o.lt(i, o.const(5, dt.int64))])
    body = region("b", [S32, I64, F32],
                  lambda o, s, i, x: [o.add(i, o.const(1, dt.int64)),
                                      o.mul(x, o.broadcast(s, (3,), ()))])
    b = Builder("main")
    s, i, x = b.param(S32), b.param(I64), b.param(F32)
    fn = b.build(b.bind(cf.while_, (s, i, x), {"num_consts": 1}, regions=(cond_fn, body)))
    parse_and_verify(emit_module(passes.optimize(fn, check=True)))
    i_out, x_out = interpret(fn, [np.float32(2), np.int64(0), np.ones(3, np.float32)])
    assert i_out == 5 and np.array_equal(x_out, np.full(3, 32, np.float32))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_interpret_emit_and_verify(reverse):
    body = region("s", [S32, S32, S32],  # const w, carry c, slice x -> c', y
                  lambda o, w, c, x: [o.add(o.mul(c, w), x), o.mul(c, x)])
    b = Builder("main")
    w, c, xs = b.param(S32), b.param(S32), b.param(TensorType((4,), dt.float32))
    fn = b.build(b.bind(cf.scan, (w, c, xs), {"num_consts": 1, "num_carry": 1, "length": 4,
                                             "reverse": reverse}, regions=(body,)))
    text = emit_module(passes.optimize(fn, check=True))
    parse_and_verify(text)
    assert "stablehlo.while" in text
    xv = np.array([1, 2, 3, 4], np.float32)
    c_out, ys = interpret(fn, [np.float32(0.5), np.float32(1), xv])
    cc, want = np.float32(1), np.zeros(4, np.float32)
    for k in (reversed(range(4)) if reverse else range(4)):
        want[k] = cc * xv[k]
        cc = cc * np.float32(0.5) + xv[k]
    assert c_out == cc and np.array_equal(ys, want)


def test_shape_rules_check_regions():
    f = region("f", [F32], lambda o, x: [x])
    g = region("g", [F32], lambda o, x: [o.convert(x, dt.float64)])
    with pytest.raises(ShapeError, match="branch 1 returns"):
        cf.cond.infer((BOOL, F32), {}, (f, g))
    with pytest.raises(ShapeError, match="exactly two branches"):
        cf.cond.infer((BOOL, F32), {}, (f, f, f))
    with pytest.raises(ShapeError, match="index"):
        cf.cond.infer((F32, F32), {}, (f, f))
    with pytest.raises(ShapeError, match="branch 0 takes"):
        cf.cond.infer((I32, S32), {}, (f, f))
    c = region("c", [F32], lambda o, x: [o.const(True, dt.bool_)])
    with pytest.raises(ShapeError, match="body returns"):
        cf.while_.infer((F32,), {"num_consts": 0}, (c, g))
    with pytest.raises(ShapeError, match="scan length"):
        cf.scan.infer((F32,), {"num_consts": 0, "num_carry": 0, "length": 4,
                               "reverse": False}, (f,))


def test_passes_keep_region_ops_and_cse_tells_bodies_apart():
    neg = region("neg", [F32], lambda o, x: [o.neg(x)])
    dbl = region("dbl", [F32], lambda o, x: [o.add(x, x)])
    b = Builder("main")
    p, x = b.param(BOOL), b.param(F32)
    (r1,) = b.bind(cf.cond, (p, x), regions=(neg, dbl))
    (r2,) = b.bind(cf.cond, (p, x), regions=(neg, dbl))  # the same: CSE merges it
    (r3,) = b.bind(cf.cond, (p, x), regions=(dbl, neg))  # different bodies: kept
    b.bind(cf.cond, (p, x), regions=(dbl, dbl))  # unused: DCE drops it
    fn = passes.optimize(b.build([Ops(b).add(Ops(b).add(r1, r2), r3)]), check=True)
    assert sum(op.prim is cf.cond for op in fn.ops) == 2
