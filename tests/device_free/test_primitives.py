"""Primitive definitions: every rule present, shape rules reject bad operands with a
message naming the operand, and reference rules agree with independent NumPy
expectations over the example table (no device needed)."""

import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.errors import ShapeError
from stablejit.compiler.interpreter import run_op
from stablejit.compiler.ir import Attrs, Op, TensorType, Value
from stablejit.compiler.primitive import NOT_DIFFERENTIABLE, Primitive
from stablejit.compiler.registry import ALL, FAMILIES

from tests.support.compare import assert_close
from tests.support.prim_table import PRIM_TABLE

F32 = dt.float32


def T(shape, dtype=F32):
    return TensorType(shape, dt.dtype(dtype))


# ---- completeness ------------------------------------------------------------------------

def test_every_primitive_has_shape_emit_and_reference_rules():
    missing = [(name, rule) for name, p in ALL.items()
               for rule in ("shape_rule", "emit", "reference") if not callable(getattr(p, rule))]
    assert not missing, f"primitives lacking rules: {missing}"


def test_every_primitive_is_collected_once_under_its_name():
    names = [p.name for fam in FAMILIES for p in fam.PRIMITIVES]
    assert len(names) == len(set(names)), "a primitive is listed twice"
    assert sorted(names) == sorted(ALL)
    for name, p in ALL.items():
        assert isinstance(p, Primitive) and p.name == name and p.family


def test_every_primitive_has_a_vjp_rule_or_is_marked_not_differentiable():
    """A primitive whose outputs carry a gradient needs a VJP rule; one whose outputs do
    not (comparisons, integer results) says so with NOT_DIFFERENTIABLE."""
    bad = sorted(n for n, p in ALL.items()
                 if not (p.vjp is NOT_DIFFERENTIABLE or callable(p.vjp)))
    assert not bad, f"primitives with neither a vjp rule nor NOT_DIFFERENTIABLE: {bad}"


def test_example_table_covers_every_primitive():
    """The emitter and host tests run each primitive from PRIM_TABLE (tests/support/prim_table/);
    a new primitive needs an entry in its family's TABLE there."""
    # collectives only mean something inside a vmap or shard_map with their axis name:
    # they are tested batched, in tests/host/test_vmap.py, and over devices (with the
    # sharding family) in tests/host/test_sharding*.py
    missing = sorted(n for n in set(ALL) - set(PRIM_TABLE)
                     if ALL[n].family not in ("collective", "sharding"))
    assert not missing, (f"add example cases to the family TABLE in tests/support/prim_table/ "
                         f"for: {missing}")
    unknown = sorted(set(PRIM_TABLE) - set(ALL))
    assert not unknown, f"PRIM_TABLE names unknown primitives: {unknown}"
    for name, spec in PRIM_TABLE.items():
        assert list(spec.cases()), f"{name} has no example case"


# ---- reference rules against independent expectations ----------------------------------

CASES = [(name, case) for name, spec in PRIM_TABLE.items() for case in spec.cases()]


@pytest.mark.parametrize("name,case", CASES, ids=[f"{n}-{c.label}" for n, c in CASES])
def test_reference_rule_matches_numpy(name, case):
    prim = ALL[name]
    params = [Value(T(np.shape(o), np.asarray(o).dtype)) for o in case.operands]
    attrs = Attrs(case.attrs)
    out_types = prim.infer(tuple(v.type for v in params), attrs, case.regions)
    op = Op(prim, tuple(params), attrs, tuple(Value(t) for t in out_types),
            regions=case.regions)
    got = run_op(op, [np.asarray(o) for o in case.operands])
    expected = case.expected(*case.operands, **case.attrs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e, t in zip(got, expected, out_types, strict=True):
        assert g.dtype == t.dtype.np and g.shape == t.shape
        assert_close(g, np.asarray(e).astype(t.dtype.np), t.dtype, check_dtype=True,
                     msg=f"{name} {case.label}")


# ---- shape rules ---------------------------------------------------------------------------

def _infer(name, *types, **attrs):
    return ALL[name].infer(tuple(types), Attrs(attrs))


def test_elementwise_shape_rules():
    assert _infer("add", T((2, 3)), T((2, 3))) == (T((2, 3)),)
    assert _infer("abs", T((4,), "complex64")) == (T((4,), "float32"),)
    assert _infer("is_finite", T((4,), "float16")) == (T((4,), "bool"),)
    assert _infer("lt", T((4,), "int8"), T((4,), "int8")) == (T((4,), "bool"),)
    assert _infer("convert", T((2,), "int8"), dtype=dt.bfloat16) == (T((2,), "bfloat16"),)
    assert _infer("complex", T((2,)), T((2,))) == (T((2,), "complex64"),)
    assert _infer("select", T((), "bool"), T((3,)), T((3,))) == (T((3,)),)


@pytest.mark.parametrize("name,types,attrs,words", [
    ("add", [T((2, 3)), T((3, 2))], {}, ["(2, 3)", "(3, 2)", "operand 1"]),
    ("add", [T((2,)), T((2,), "int32")], {}, ["float32", "int32"]),
    ("and", [T((2,)), T((2,))], {}, ["and", "float32", "boolean or integer"]),
    ("sin", [T((2,), "int32")], {}, ["sin", "int32", "floating-point"]),
    ("shift_left", [T((2,)), T((2,))], {}, ["integer"]),
    ("lt", [T((2,), "complex64"), T((2,), "complex64")], {}, ["complex", "order"]),
    ("select", [T((2,)), T((2,)), T((2,))], {}, ["predicate", "boolean"]),
    ("clamp", [T((3,)), T((2,)), T(())], {}, ["lower bound"]),
    ("convert", [T((2,), "complex64")], {"dtype": dt.float32}, ["imaginary"]),
    ("bitcast_convert", [T((3,), "int32")], {"dtype": dt.float64},
     ["(3,)", "last dimension", "2 elements", "bit widths"]),
    ("bitcast_convert", [T((2,), "bool")], {"dtype": dt.uint8}, ["non-boolean"]),
    ("clz", [T((2,))], {}, ["float32", "integer"]),
    ("reduce_precision", [T((2,), "int32")], {"exponent_bits": 5, "mantissa_bits": 10},
     ["int32", "floating-point"]),
    ("reduce_precision", [T((2,))], {"exponent_bits": 0, "mantissa_bits": 10},
     ["exponent_bits=0"]),
    ("reshape", [T((2, 3))], {"shape": (4, 2)}, ["(2, 3)", "6 elements", "8 elements"]),
    ("transpose", [T((2, 3))], {"permutation": (0, 0)}, ["permutation"]),
    ("broadcast_in_dim", [T((3,))], {"shape": (2, 4), "broadcast_dimensions": (1,)},
     ["(3,)", "(2, 4)"]),
    ("slice", [T((4,))], {"start": (1,), "limit": (6,), "strides": (1,)}, ["axis 0"]),
    ("dynamic_slice", [T((4,)), T((), "float32")], {"sizes": (2,)}, ["start index 0"]),
    ("concatenate", [T((2, 3)), T((2, 4))], {"dimension": 0}, ["operand 1", "(2, 4)"]),
    ("pad", [T((2,)), T((), "int32")], {"low": (0,), "high": (0,), "interior": (0,)},
     ["padding value"]),
    ("reverse", [T((2,))], {"axes": (1,)}, ["axis 1"]),
    ("iota", [], {"shape": (3,), "dtype": dt.bool_, "dimension": 0}, ["bool"]),
    ("reduce_sum", [T((2, 3))], {"axes": (2,)}, ["axis 2", "(2, 3)"]),
    ("reduce_sum", [T((2, 3))], {"axes": (0, 0)}, ["repeated"]),
    ("reduce_max", [T((2,), "complex64")], {"axes": (0,)}, ["complex64"]),
    ("argmax", [T((0, 3))], {"axis": 0, "index_dtype": dt.int32}, ["empty"]),
    ("dot_general", [T((2, 3)), T((4, 5))], {"contracting": ((1,), (0,)), "batch": ((), ())},
     ["contracting", "(2, 3)", "(4, 5)"]),
    ("dot_general", [T((2, 3)), T((3,), "int32")],
     {"contracting": ((1,), (0,)), "batch": ((), ())}, ["float32", "int32"]),
])
def test_shape_rules_reject_bad_operands_with_a_clear_message(name, types, attrs, words):
    with pytest.raises(ShapeError) as info:
        _infer(name, *types, **attrs)
    msg = str(info.value)
    assert name.split("_")[0] in msg or name in msg, msg
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"


def test_shape_rules_of_shape_ops():
    assert _infer("slice", T((10,)), start=(1,), limit=(8,), strides=(3,)) == (T((3,)),)
    assert _infer("pad", T((2, 3)), T(()), low=(1, -1), high=(0, 2), interior=(1, 0)) == (
        T((4, 4)),)
    assert _infer("dot_general", T((2, 3, 4)), T((2, 4, 5)), contracting=((2,), (1,)),
                  batch=((0,), (0,))) == (T((2, 3, 5)),)
    assert _infer("dynamic_slice", T((5, 6)), T((), "int32"), T((), "int32"),
                  sizes=(2, 3)) == (T((2, 3)),)
    assert _infer("argmin", T((3, 5)), axis=1, index_dtype=dt.int64) == (T((3,), "int64"),)
