"""User errors: each says what was wrong, names the user's file:line and says what to do."""

import inspect
import re

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import (
    EscapedTracerError,
    MustCompileError,
    ShapeError,
    TracerBoolConversionError,
    TracerConversionError,
)

HERE = __file__


def line_of(fn, marker):
    """The line number in this file of the source line of fn containing marker."""
    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if marker in line:
            return start + i
    raise AssertionError(marker)


def assert_names_line(err, fn, marker):
    msg = str(err.value)
    assert f"{HERE}:{line_of(fn, marker)}" in msg, msg


def x3():
    return snp.asarray(np.arange(3, dtype=np.float32))


def test_if_on_traced_value():
    def f(x):
        if x.sum() > 0:  # MARK
            return x
        return -x
    with pytest.raises(TracerBoolConversionError) as e:
        stablejit.jit(f)(x3())
    assert_names_line(e, f, "# MARK")
    assert "where" in str(e.value) and "stablejit.cond" in str(e.value)
    assert "static" in str(e.value)


@pytest.mark.parametrize("conv", [int, float])
def test_int_float_of_traced_value(conv):
    def f(x):
        return x * conv(x[0])  # MARK
    with pytest.raises(TracerConversionError) as e:
        stablejit.jit(f)(x3())
    assert_names_line(e, f, "# MARK")
    assert f"{conv.__name__}()" in str(e.value) and "static_argnums" in str(e.value)


@pytest.mark.parametrize("conv,error,hint", [
    (bool, ValueError, "snp.any(x) or snp.all(x)"), (int, TypeError, "x[0]"),
    (float, TypeError, "snp.sum(x)"), (complex, TypeError, "x[0]")])
@pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
def test_python_scalar_of_a_tensor_of_several_elements(conv, error, hint, shape):
    """bool(), int(), float() and complex() of a tensor without exactly one element raise
    NumPy's exception class, with the shape, the user's line and what to write instead
    (they said "item() needs ...", which the user never called)."""
    x = snp.zeros(shape)

    def f():
        return conv(x)  # MARK
    with np.errstate(all="ignore"), pytest.raises(error):
        conv(np.zeros(shape))
    with pytest.raises(error) as e:
        f()
    assert_names_line(e, f, "# MARK")
    assert str(shape) in str(e.value) and hint in str(e.value) and "item()" not in str(e.value)


def test_escaped_tracer():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x

    stablejit.jit(f)(x3())

    def use():
        return leaked[0] + 1  # MARK
    with pytest.raises(EscapedTracerError) as e:
        use()
    assert_names_line(e, use, "# MARK")
    assert "Return it from the jitted function" in str(e.value)


def test_shape_mismatch_in_binary_op_names_both_shapes():
    def f():
        return snp.ones((2, 3)) + snp.ones((4,))  # MARK
    with pytest.raises(ValueError) as e:
        f()
    assert_names_line(e, f, "# MARK")
    assert "(2, 3)" in str(e.value) and "(4,)" in str(e.value)
    assert "broadcast" in str(e.value)
    with pytest.raises(ValueError) as e:
        stablejit.jit(lambda a, b: a * b)(snp.ones((2, 3)), snp.ones((2,)))
    assert "(2, 3)" in str(e.value) and "(2,)" in str(e.value)


def test_boolean_mask_under_jit_must_compile_error():
    def f(x):
        return x[x > 1]  # MARK
    with pytest.raises(MustCompileError) as e:
        stablejit.jit(f)(x3())
    assert_names_line(e, f, "# MARK")
    assert "where(mask, x, 0)" in str(e.value) and "static shapes" in str(e.value)


def test_reshape_to_wrong_size():
    def f():
        return snp.reshape(snp.ones((2, 3)), (4, 2))  # MARK
    with pytest.raises((ValueError, ShapeError)) as e:
        f()
    assert_names_line(e, f, "# MARK")
    assert "(2, 3)" in str(e.value) and "(4, 2)" in str(e.value)


@pytest.mark.parametrize("shape", [(4, 2), (4, 2.0), (2.0, 4), (8.0,), (-2, 4)])
def test_a_reshape_seen_before_checks_its_shape_as_the_first_time(shape):
    """reshape keeps the Attrs of int shapes it has made: a later call with a float
    dimension equal to a kept one (4.0 == 4), or with another tensor of the wrong size,
    still raises as NumPy does, at the user's line."""
    snp.reshape(snp.ones(8), (4, 2))  # the shapes are kept now
    snp.reshape(snp.ones(8), (8,))

    def f():
        return snp.reshape(snp.ones((2, 3)), shape)  # MARK
    with pytest.raises((TypeError, ValueError)) as e:
        f()
    assert_names_line(e, f, "# MARK")
    if any(type(d) is float for d in shape):
        assert e.type is TypeError and "integer" in str(e.value)


def test_bad_axis():
    def f():
        return snp.sum(snp.ones((2, 3)), axis=2)  # MARK
    with pytest.raises(np.exceptions.AxisError) as e:
        f()
    assert_names_line(e, f, "# MARK")
    assert "axis 2" in str(e.value) and "dimension 2" in str(e.value)


def test_wrong_dtype_for_bitwise_op():
    def f():
        return snp.bitwise_and(snp.ones(3), snp.ones(3))  # MARK
    with pytest.raises(TypeError) as e:
        f()
    assert_names_line(e, f, "# MARK")
    assert "bitwise_and" in str(e.value) and "float32" in str(e.value)
    assert "boolean or integer" in str(e.value)

    def g(x):
        return x << 1.5  # MARK
    with pytest.raises(TypeError) as e:
        stablejit.jit(g)(snp.asarray(np.arange(3)))
    assert_names_line(e, g, "# MARK")


def test_primitive_shape_errors_under_jit_name_the_user_line():
    from stablejit.compiler.registry import ALL
    from stablejit.dispatch import bind1

    def f(x):
        return bind1(ALL["reshape"], x, shape=(5,))  # MARK
    with pytest.raises(ShapeError) as e:
        stablejit.jit(f)(x3())
    assert_names_line(e, f, "# MARK")
    assert "3 elements" in str(e.value) and "5 elements" in str(e.value)


def test_locations_carry_the_column_of_the_call():
    """Two calls on one line get two locations: the StableHLO names each one's column."""
    def f(x):
        return snp.sin(x) + snp.cos(x)  # two calls, one line

    text = stablejit.jit(f).lower(np.ones(3, np.float32)).as_text()
    line = f.__code__.co_firstlineno + 1
    source = open(__file__).read().splitlines()[line - 1]
    cols = {source.index("snp.sin") + 1, source.index("snp.cos") + 1}
    found = {int(c) for c in re.findall(rf'test_errors.py":{line}:(\d+)', text)}
    assert cols <= found, (cols, found)
