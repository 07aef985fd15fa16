"""The IR: types, attributes, literals, the printer, the structural key, the builder and
the verifier."""

import pickle

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.errors import VerifyError
from stablejit.compiler.ir import (
    UNKNOWN,
    Attrs,
    Function,
    Literal,
    Location,
    Op,
    TensorType,
    Value,
    format_function,
    literal,
)
from stablejit.compiler.passes import verify
from stablejit.compiler.registry import ALL

F32 = dt.float32


def T(shape, dtype=F32):
    return TensorType(shape, dt.dtype(dtype))


def test_tensor_type_basics():
    t = T((2, 3))
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6
    assert str(t) == "f32[2,3]"
    assert t.mlir() == "tensor<2x3xf32>"
    assert T(()).mlir() == "tensor<f32>" and T((), "bool").mlir() == "tensor<i1>"
    assert T((4,), "complex128").mlir() == "tensor<4xcomplex<f64>>"
    assert T((1,), "uint16").mlir() == "tensor<1xui16>"
    assert T([2, 3]) == t and hash(T([2, 3])) == hash(t)
    assert T((2, 3), "float64") != t and t.with_dtype(dt.int8) == T((2, 3), "int8")
    assert pickle.loads(pickle.dumps(t)) == t


def test_dtype_lookup_and_short_names():
    assert dt.dtype("f32") is dt.float32 and dt.dtype(np.int16) is dt.int16
    assert dt.dtype(float) is dt.float32 and dt.dtype(int) is dt.int64
    assert [d.short for d in dt.ALL] == ["pred", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                         "u64", "f16", "bf16", "f32", "f64", "c64", "c128"]
    with pytest.raises(TypeError, match="no dtype"):
        dt.dtype("float128")


def test_attrs_are_immutable_hashable_and_order_independent():
    a = Attrs({"b": (1, 2), "a": dt.int32})
    b = Attrs({"a": dt.int32, "b": (1, 2)})
    assert a == b and hash(a) == hash(b)
    assert dict(a) == {"a": dt.int32, "b": (1, 2)}
    assert Attrs({"b": (1, 3), "a": dt.int32}) != a
    with pytest.raises(TypeError):
        a["c"] = 1
    assert repr(a) == "{a=i32, b=(1, 2)}"


def test_literals_compare_by_dtype_shape_and_bits():
    x = Literal(np.array([1.0, np.nan], np.float32))
    assert x == Literal(np.array([1.0, np.nan], np.float32))  # NaN-safe: compared bitwise
    assert x != Literal(np.array([1.0, np.nan], np.float64))
    assert Literal(np.zeros(3)) != Literal(np.zeros((3, 1)))
    assert Literal(np.array(0.0)) != Literal(np.array(-0.0))
    big = np.arange(1000.0)
    assert Literal(big) == Literal(big.copy()) and hash(Literal(big)) == hash(Literal(big))
    assert not x.array.flags.writeable
    assert literal(3, dt.int8).array.dtype == np.int8


def _trace_like(scale=2.0, axis=1, loc=UNKNOWN):
    """Build f(x, y) = sum(x * scale + y, axis) the way a trace would."""
    b = Builder("f")
    x = b.param(T((2, 3)))
    y = b.param(T((2, 3)))
    (c,) = b.bind(ALL["constant"], [], {"value": Literal(np.float32(scale))}, loc)
    (cb,) = b.bind(ALL["broadcast_in_dim"], [c], {"shape": (2, 3), "broadcast_dimensions": ()},
                   loc)
    (m,) = b.bind(ALL["multiply"], [x, cb], loc=loc)
    (a,) = b.bind(ALL["add"], [m, y], loc=loc)
    (s,) = b.bind(ALL["reduce_sum"], [a], {"axes": (axis,)}, loc)
    return b.build([s])


def test_structural_key_is_equal_for_the_same_computation():
    f1 = _trace_like()
    f2 = _trace_like(loc=Location("/elsewhere.py", 10))  # locations do not count
    assert f1.key() == f2.key()
    assert f1.structural_hash() == f2.structural_hash()
    assert len(f1.structural_hash()) == 32


def test_structural_key_differs_for_different_attrs_or_constants():
    base = _trace_like().structural_hash()
    assert _trace_like(axis=0).structural_hash() != base
    assert _trace_like(scale=3.0).structural_hash() != base


def test_structural_key_sees_operand_order_and_types():
    def f(order, dtype=F32):
        b = Builder("g")
        x, y = b.param(T((2,), dtype)), b.param(T((2,), dtype))
        (r,) = b.bind(ALL["subtract"], [x, y] if order else [y, x])
        return b.build([r])
    assert f(True).key() == f(True).key()
    assert f(True).key() != f(False).key()
    assert f(True).key() != f(True, dt.float64).key()


def test_printer_shows_ops_types_attrs_and_locations():
    loc = Location("/home/me/project/model.py", 12)
    text = format_function(_trace_like(loc=loc))
    lines = text.splitlines()
    assert lines[0] == "func @f(%0: f32[2,3], %1: f32[2,3]) -> (f32[2]) {"
    assert "= multiply(%0, %3) : f32[2,3]" in text
    assert "reduce_sum(%5) {axes=(1,)} : f32[2]" in text
    assert "# project/model.py:12" in text
    assert lines[-2].strip() == "return %6" and lines[-1] == "}"
    assert str(_trace_like()) == format_function(_trace_like())


def test_builder_infers_result_types_from_shape_rules():
    b = Builder()
    x = b.param(T((4, 5), "int8"))
    (r,) = b.bind(ALL["reduce_max"], [x], {"axes": (0,)})
    assert r.type == T((5,), "int8")
    (c,) = b.bind(ALL["convert"], [r], {"dtype": dt.bfloat16})
    fn = b.build([c])
    assert fn.result_types == (T((5,), "bfloat16"),) and len(fn.ops) == 2
    verify(fn)


# ---- verifier --------------------------------------------------------------------------

def test_verifier_accepts_a_well_formed_function():
    assert verify(_trace_like()) is not None


def test_verifier_catches_use_before_definition():
    x = Value(T((3,)))
    later = Value(T((3,)))
    out = Value(T((3,)))
    ops = [Op(ALL["add"], (x, later), Attrs(), (out,)),
           Op(ALL["neg"], (x,), Attrs(), (later,))]
    fn = Function("bad", [x], ops, [out])
    with pytest.raises(VerifyError, match="operand 1 is used before it is defined") as e:
        verify(fn)
    assert "op 0 (add)" in str(e.value), f"{e.value}\n{fn}"


def test_verifier_catches_redefinition_and_undefined_results():
    x = Value(T((3,)))
    ops = [Op(ALL["neg"], (x,), Attrs(), (x,))]
    with pytest.raises(VerifyError, match="redefines"):
        verify(Function("bad", [x], ops, [x]))
    with pytest.raises(VerifyError, match="result 0 is not defined"):
        verify(Function("bad", [x], [], [Value(T((3,)))]))


def test_verifier_catches_wrong_result_types():
    x = Value(T((3,)))
    wrong = Value(T((3,), "float64"))
    fn = Function("bad", [x], [Op(ALL["exp"], (x,), Attrs(), (wrong,))], [wrong])
    with pytest.raises(VerifyError, match="shape rule gives") as e:
        verify(fn)
    assert "f64[3]" in str(e.value) and "f32[3]" in str(e.value), str(fn)


def test_verifier_reports_shape_rule_rejections():
    x, y = Value(T((3,))), Value(T((4,)))
    out = Value(T((3,)))
    fn = Function("bad", [x, y], [Op(ALL["add"], (x, y), Attrs(), (out,))], [out])
    with pytest.raises(VerifyError, match="shape rule rejects"):
        verify(fn)
