"""Elementwise functions of the namespace, as compositions of primitives.

Integer and boolean inputs to float-only math (sin, exp, sqrt, true division, ...)
become the default float (float32), as in JAX and the array API's guidance.
"""

from __future__ import annotations

import numpy as np

from ..compiler import dtypes as dt
from ..compiler.ir import EMPTY_ATTRS
from ..compiler.registry import ALL as P
from ..dispatch import bind1
from ..errors import at_user_line
from ..tensor import Tensor
from ._core import as_tensor, astype, broadcast_to, full_like_tensor, prepare, to_inexact


def _check_kinds(name: str, dtype: dt.DType, kinds: str, what: str) -> None:
    if dtype.kind not in kinds:
        raise TypeError(at_user_line(f"{name} is only defined for {what} tensors, not "
                                     f"{dtype.name}"))


def _unary(name: str, prim: str, *, inexact: bool = True, kinds: str = "biufc",
           what: str = "numeric"):
    def f(x) -> Tensor:
        x = as_tensor(x)
        _check_kinds(name, x.dtype, kinds, what)
        if inexact:
            x = to_inexact(x)
        return bind1(P[prim], x)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} (primitive {prim})."
    return f


def _binary(name: str, prim_name: str, *, inexact: bool = False, kinds: str = "biufc",
            what: str = "numeric"):
    prim = P[prim_name]

    def f(x, y) -> Tensor:
        if (type(x) is Tensor and type(y) is Tensor and x.type is y.type
                and x._backend is y._backend
                and x.type.dtype.kind in kinds and not (inexact and x.type.dtype.kind in "biu")):
            return x._backend.apply(prim, (x, y), EMPTY_ATTRS)[0]  # same types: no promotion
        (x, y), dtype = prepare(x, y)
        _check_kinds(name, dtype, kinds, what)
        if inexact and not dtype.is_inexact:
            x, y = to_inexact(x), to_inexact(y)
        return bind1(prim, x, y)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting (primitive {prim_name})."
    return f


exp = _unary("exp", "exp")
expm1 = _unary("expm1", "expm1")
log = _unary("log", "log")
log1p = _unary("log1p", "log1p")
sqrt = _unary("sqrt", "sqrt")
rsqrt = _unary("rsqrt", "rsqrt")
cbrt = _unary("cbrt", "cbrt", kinds="biuf", what="real")
sin = _unary("sin", "sin")
cos = _unary("cos", "cos")
tan = _unary("tan", "tan")
tanh = _unary("tanh", "tanh")
sigmoid = _unary("sigmoid", "logistic")

add = _binary("add", "add")
subtract = _binary("subtract", "subtract", kinds="iufc", what="numeric (not boolean)")
multiply = _binary("multiply", "multiply")
maximum = _binary("maximum", "maximum", kinds="biuf", what="real")
minimum = _binary("minimum", "minimum", kinds="biuf", what="real")
arctan2 = _binary("arctan2", "atan2", inexact=True, kinds="biuf", what="real")
atan2 = arctan2
bitwise_and = _binary("bitwise_and", "and", kinds="biu", what="boolean or integer")
bitwise_or = _binary("bitwise_or", "or", kinds="biu", what="boolean or integer")
bitwise_xor = _binary("bitwise_xor", "xor", kinds="biu", what="boolean or integer")
left_shift = _binary("left_shift", "shift_left", kinds="iu", what="integer")
right_shift = _binary("right_shift", "shift_right", kinds="iu", what="integer")
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
equal = _binary("equal", "eq")
not_equal = _binary("not_equal", "ne")
less = _binary("less", "lt", kinds="biuf", what="real")
less_equal = _binary("less_equal", "le", kinds="biuf", what="real")
greater = _binary("greater", "gt", kinds="biuf", what="real")
greater_equal = _binary("greater_equal", "ge", kinds="biuf", what="real")


def negative(x) -> Tensor:
    x = as_tensor(x)
    _check_kinds("negative", x.dtype, "iufc", "numeric (not boolean)")
    return bind1(P["neg"], x)


def positive(x) -> Tensor:
    return as_tensor(x)


def abs(x) -> Tensor:  # noqa: A001 - the array API's name
    x = as_tensor(x)
    if x.dtype.kind in "bu":
        return x
    return bind1(P["abs"], x)


absolute = abs


def sign(x) -> Tensor:
    x = as_tensor(x)
    _check_kinds("sign", x.dtype, "iufc", "numeric")
    if x.dtype.kind == "u":
        return astype(greater(x, 0), x.dtype)
    return bind1(P["sign"], x)


def square(x) -> Tensor:
    x = as_tensor(x)
    return bind1(P["multiply"], x, x)


def reciprocal(x) -> Tensor:
    return divide(1, to_inexact(as_tensor(x)))


def divide(x, y) -> Tensor:
    """True division: integers divide as floats."""
    (x, y), dtype = prepare(x, y)
    if not dtype.is_inexact:
        x, y = to_inexact(x), to_inexact(y)
    return bind1(P["divide"], x, y)


true_divide = divide


def floor_divide(x, y) -> Tensor:
    (x, y), dtype = prepare(x, y)
    _check_kinds("floor_divide", dtype, "iuf", "real")
    if dtype.kind == "f":
        return bind1(P["floor"], bind1(P["divide"], x, y))
    if dtype.kind == "u":
        return bind1(P["divide"], x, y)
    # C division truncates; step down when the signs differ and it was inexact
    q = bind1(P["divide"], x, y)
    r = bind1(P["remainder"], x, y)
    zero = full_like_tensor(0, x)
    adjust = bitwise_and(not_equal(r, zero), not_equal(less(r, zero), less(y, zero)))
    return where(adjust, subtract(q, 1), q)


def remainder(x, y) -> Tensor:
    """Python/NumPy modulo: the result takes the divisor's sign."""
    (x, y), dtype = prepare(x, y)
    _check_kinds("remainder", dtype, "iuf", "real")
    r = bind1(P["remainder"], x, y)
    if dtype.kind == "u":
        return r
    zero = full_like_tensor(0, x)
    adjust = bitwise_and(not_equal(r, zero), not_equal(less(r, zero), less(y, zero)))
    return where(adjust, add(r, y), r)


mod = remainder


def fmod(x, y) -> Tensor:
    (x, y), dtype = prepare(x, y)
    return bind1(P["remainder"], x, y)


def power(x, y) -> Tensor:
    if isinstance(y, int) and not isinstance(y, bool) and isinstance(x, Tensor) and 0 <= y <= 4:
        # small integer powers as multiplications: exact, and what XLA would do anyway
        if y == 0:
            return full_like_tensor(1, x)
        out = x
        for _ in range(y - 1):
            out = multiply(out, x)
        return out
    (x, y), dtype = prepare(x, y)
    if dtype.kind == "b":
        x, y = astype(x, dt.int64), astype(y, dt.int64)
    return bind1(P["power"], x, y)


pow = power  # noqa: A001 - the array API's name


def floor(x) -> Tensor:
    x = as_tensor(x)
    return x if x.dtype.kind in "biu" else bind1(P["floor"], x)


def ceil(x) -> Tensor:
    x = as_tensor(x)
    return x if x.dtype.kind in "biu" else bind1(P["ceil"], x)


def trunc(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return x
    return where(less(x, 0), ceil(x), floor(x))


fix = trunc


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return x
    if x.dtype.is_complex:
        return bind1(P["complex"], round(real(x), decimals), round(imag(x), decimals))
    if decimals == 0:
        return bind1(P["round"], x)
    scale = 10.0 ** decimals
    return divide(bind1(P["round"], multiply(x, scale)), scale)


around = round


def isfinite(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(True, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    return bind1(P["is_finite"], x)


def isnan(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_or(isnan(real(x)), isnan(imag(x)))
    return bind1(P["ne"], x, x)


def isinf(x) -> Tensor:
    x = as_tensor(x)
    if x.dtype.kind in "biu":
        return full_like_tensor(False, astype(x, dt.bool_))
    if x.dtype.is_complex:
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return equal(abs(x), np.inf)


def logical_not(x) -> Tensor:
    return bind1(P["not"], astype(as_tensor(x), dt.bool_))


def logical_and(x, y) -> Tensor:
    return bitwise_and(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def logical_or(x, y) -> Tensor:
    return bitwise_or(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def logical_xor(x, y) -> Tensor:
    return bitwise_xor(astype(as_tensor(x), dt.bool_), astype(as_tensor(y), dt.bool_))


def invert(x) -> Tensor:
    x = as_tensor(x)
    _check_kinds("invert", x.dtype, "biu", "boolean or integer")
    return bind1(P["not"], x)


bitwise_not = bitwise_invert = invert


def log2(x) -> Tensor:
    x = to_inexact(as_tensor(x))
    return divide(log(x), float(np.log(2)))


def log10(x) -> Tensor:
    x = to_inexact(as_tensor(x))
    return divide(log(x), float(np.log(10)))


def exp2(x) -> Tensor:
    x = to_inexact(as_tensor(x))
    return power(full_like_tensor(2, x), x)


def real(x) -> Tensor:
    x = as_tensor(x)
    return bind1(P["real"], x) if x.dtype.is_complex else x


def imag(x) -> Tensor:
    x = as_tensor(x)
    return bind1(P["imag"], x) if x.dtype.is_complex else full_like_tensor(0, x)


def conj(x) -> Tensor:
    x = as_tensor(x)
    return bind1(P["conj"], x) if x.dtype.is_complex else x


conjugate = conj


def where(condition, x=None, y=None) -> Tensor:
    """Elementwise choice; `where(condition)` alone is `nonzero(condition)`."""
    if x is None and y is None:
        from ._indexing import nonzero

        return nonzero(condition)
    c = astype(as_tensor(condition), dt.bool_)
    (x, y), _ = prepare(x, y)
    c, x, y = _broadcast3(c, x, y)
    return bind1(P["select"], c, x, y)


def _broadcast3(c, x, y):
    from ._core import broadcast_shapes

    shape = broadcast_shapes(c.shape, x.shape, y.shape)
    return broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape)


def clip(x, min=None, max=None) -> Tensor:  # noqa: A002
    x = as_tensor(x)
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x
