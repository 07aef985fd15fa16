"""The StableHLO emitter: every primitive's one-op module parses and verifies with
jaxlib's MLIR bindings, locations carry the user's file and line, and constants of every
dtype (NaN, inf, -0.0 included) are written exactly."""

import re

import ml_dtypes
import numpy as np
import pytest
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.emitter import dense_text, emit_module
from stablejit.compiler.ir import Literal, Location, TensorType
from stablejit.compiler.registry import ALL

from tests.support.dtype_groups import DTYPES
from tests.support.mlir_check import parse_and_verify
from tests.support.prim_table import PRIM_TABLE


def one_op_module(name, operands, attrs, loc=None, regions=()):
    b = Builder(name)
    params = [b.param(TensorType(np.shape(o), dt.dtype(np.asarray(o).dtype)))
              for o in operands]
    kw = {"loc": loc} if loc is not None else {}
    results = b.bind(ALL[name], params, attrs, regions=regions, **kw)
    fn = b.build(results)
    return fn, emit_module(fn)


CASES = [(name, case) for name, spec in PRIM_TABLE.items() for case in spec.cases()]


@pytest.mark.parametrize("name,case", CASES, ids=[f"{n}-{c.label}" for n, c in CASES])
def test_every_primitive_emits_a_module_that_parses_and_verifies(name, case):
    fn, text = one_op_module(name, case.operands, case.attrs, regions=case.regions)
    parse_and_verify(text)
    assert "func.func public @main" in text
    for t in fn.param_types + fn.result_types:
        assert t.mlir() in text, f"{t.mlir()} missing from\n{text}"


def test_every_primitive_has_an_emitter_case():
    # collectives and shardings are emitted only over a mesh: tests/host/test_sharding*.py
    emitted = {n for n, p in ALL.items() if p.family not in ("collective", "sharding")}
    assert emitted <= {name for name, _ in CASES}, sorted(emitted - {n for n, _ in CASES})


def test_locations_carry_the_users_file_and_line():
    loc = Location("/home/me/model.py", 42, 7, "f")
    _, text = one_op_module("add", [np.ones(3, np.float32)] * 2, {}, loc)
    assert 'loc("add"("/home/me/model.py":42:7))' in text, text
    m = parse_and_verify(text)
    # MLIR keeps the location: printing with debug info shows the file and line
    printed = m.operation.get_asm(enable_debug_info=True)
    assert "model.py" in printed and ":42:7" in printed, printed


def test_location_with_quotes_and_backslashes_is_escaped():
    loc = Location('C:\\work\\my "model".py', 3)
    _, text = one_op_module("neg", [np.ones(2, np.float32)], {}, loc)
    parse_and_verify(text)


def test_unknown_location_falls_back_to_the_primitive_name():
    _, text = one_op_module("exp", [np.ones(2, np.float32)], {})
    assert 'loc("exp")' in text
    parse_and_verify(text)


def test_emitted_text_names_the_stablehlo_ops():
    _, text = one_op_module("reduce_sum", [np.ones((2, 3), np.float32)], {"axes": (1,)})
    assert '"stablehlo.reduce"' in text and '"stablehlo.add"' in text
    assert "dimensions = array<i64: 1>" in text
    _, text = one_op_module("shift_right", [np.ones(2, np.uint8)] * 2, {})
    assert "shift_right_logical" in text
    _, text = one_op_module("shift_right", [np.ones(2, np.int8)] * 2, {})
    assert "shift_right_arithmetic" in text
    _, text = one_op_module("lt", [np.ones(2, np.uint16)] * 2, {})
    assert "comparison_type UNSIGNED" in text and "comparison_direction LT" in text


def test_donation_writes_aliasing_attributes():
    b = Builder("f")
    x = b.param(TensorType((3,), dt.float32))
    (y,) = b.bind(ALL["neg"], [x])
    text = emit_module(b.build([y]), donated=[0])
    assert "tf.aliasing_output = 0 : i32" in text
    parse_and_verify(text)


# ---- constants ------------------------------------------------------------------------

def _constant_module(array):
    return one_op_module("constant", [], {"value": Literal(array)})


SPECIAL = {
    "f": [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-3],
    "c": [0, -0.0 + 1j, 1.5 - 2j, complex(np.inf, 1), complex(np.nan, -np.inf), 3j],
    "i": None, "u": None, "b": [True, False, True],
}


def _example(d):
    if d.kind in "iu":
        info = np.iinfo(d.np)
        return np.array([info.min, info.max, 0, 1, 7], d.np)
    return np.array(SPECIAL[d.kind], d.np)


def _decode_dense(text, d, shape):
    """The array a dense<...> literal stands for (hex form or a splat)."""
    m = re.search(r'dense<"0x([0-9A-F]+)">', text)
    if m:
        raw = bytes.fromhex(m.group(1))
        return np.frombuffer(raw, dtype=d.np.newbyteorder("<")).reshape(shape)
    return None


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.short)
def test_constants_of_every_dtype_parse_and_keep_their_bits(d):
    a = _example(d)
    _, text = _constant_module(a)
    parse_and_verify(text)
    decoded = _decode_dense(text, d, a.shape)
    if decoded is not None:  # byte-exact: compare the bit patterns (NaN, -0.0 included)
        assert decoded.tobytes() == a.astype(d.np.newbyteorder("<")).tobytes()
    else:
        assert d is dt.bool_, text
        assert "dense<[true, false, true]>" in text


@pytest.mark.parametrize("d", [dt.float16, dt.bfloat16, dt.float32, dt.float64,
                               dt.complex64, dt.complex128], ids=lambda d: d.short)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, -0.0, 0.1, 65504.0])
def test_splat_constants_round_trip(d, value):
    a = np.full((2, 2), value, d.np) if d.kind == "f" else np.full((2, 2), complex(value, value),
                                                                    d.np)
    _, text = _constant_module(a)
    parse_and_verify(text)
    lit = re.search(r"value = dense<([^>]*)>", text).group(1)
    # parse the element back: hex bit patterns for non-finite values, decimal otherwise
    parts = lit.strip("()").split(", ") if d.kind == "c" else [lit]
    part_dtype = dt.real_dtype(d).np
    for p in parts:
        if p.startswith("0x"):
            bits = np.array(int(p, 16), dtype=f"u{part_dtype.itemsize}")
            back = bits.view(part_dtype)
        else:
            back = np.array(float(p), dtype=part_dtype)
        want = np.array(value, dtype=part_dtype)
        assert back.tobytes() == want.tobytes() or (np.isnan(back) and np.isnan(want)), (
            f"{p} reads back as {back!r}, wrote {want!r}")


def test_scalar_and_empty_constants():
    for a in (np.float32(3.5), np.zeros((0, 3), np.float32), np.array(7, np.int64),
              np.array(True), np.array(ml_dtypes.bfloat16(1.25))):
        _, text = _constant_module(np.asarray(a))
        parse_and_verify(text)


def test_dense_text_forms():
    assert dense_text(np.array(2.0, np.float32), dt.float32) == "dense<2.0>"
    assert dense_text(np.array([1, 1], np.int8), dt.int8) == "dense<1>"
    assert dense_text(np.array([True, False]), dt.bool_) == "dense<[true, false]>"
    assert dense_text(np.array([1, 2], np.int16), dt.int16) == 'dense<"0x01000200">'
    assert dense_text(np.array(np.inf, np.float32), dt.float32) == "dense<0x7F800000>"
