"""The reference interpreter runs small IR functions with NumPy."""

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.interpreter import interpret
from stablejit.compiler.ir import Literal, TensorType
from stablejit.compiler.registry import ALL


def T(shape, dtype=dt.float32):
    return TensorType(shape, dtype)


def test_softmax_like_function():
    b = Builder("softmax")
    x = b.param(T((2, 3)))
    (m,) = b.bind(ALL["reduce_max"], [x], {"axes": (1,)})
    (mb,) = b.bind(ALL["broadcast_in_dim"], [m], {"shape": (2, 3), "broadcast_dimensions": (0,)})
    (d,) = b.bind(ALL["subtract"], [x, mb])
    (e,) = b.bind(ALL["exp"], [d])
    (s,) = b.bind(ALL["reduce_sum"], [e], {"axes": (1,)})
    (sb,) = b.bind(ALL["broadcast_in_dim"], [s], {"shape": (2, 3), "broadcast_dimensions": (0,)})
    (out,) = b.bind(ALL["divide"], [e, sb])
    fn = b.build([out, m])
    a = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 10.0]], np.float32)
    got, mx = interpret(fn, [a])
    want = np.exp(a - a.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == np.float32 and mx.tolist() == [3.0, 10.0]


def test_constants_iota_and_conversion():
    b = Builder()
    (i,) = b.bind(ALL["iota"], [], {"shape": (4,), "dtype": dt.int32, "dimension": 0})
    (c,) = b.bind(ALL["constant"], [], {"value": Literal(np.int32(3))})
    (cb,) = b.bind(ALL["broadcast_in_dim"], [c], {"shape": (4,), "broadcast_dimensions": ()})
    (p,) = b.bind(ALL["multiply"], [i, cb])
    (f,) = b.bind(ALL["convert"], [p], {"dtype": dt.bfloat16})
    (out,) = interpret(b.build([f]), [])
    assert out.dtype == dt.bfloat16.np and out.astype(np.float32).tolist() == [0, 3, 6, 9]


def test_results_may_be_parameters_and_repeat():
    b = Builder()
    x = b.param(T((2,)))
    a, c = interpret(b.build([x, x]), [np.array([1.0, 2.0])])
    assert a.dtype == np.float32 and a.tolist() == c.tolist() == [1.0, 2.0]


def test_wrong_argument_count_is_an_error():
    b = Builder("g")
    b.param(T((2,)))
    with pytest.raises(TypeError, match="g takes 1 arguments, got 0"):
        interpret(b.build([]), [])
