"""The special values (C99 Annex G, as the array API standard and NumPy give them) of the
complex elementwise functions, composed around XLA's complex functions.

XLA's complex functions ignore the sign of zero (acos(2.5-0j) lands on the wrong side of
its branch cut, sinh(-0j) is +0j) and give nan+nanj for most infinite or NaN parts. Every
function here is conjugate-symmetric (f(conj z) = conj f(z)); sinh, tanh, asinh, atanh are
also odd and cosh even. So XLA evaluates f on the operand folded into the first quadrant
(|re|, |im|; only |im| for the others), the standard's first-quadrant special cases replace
its result where they apply, and the operand's sign bits reflect the result back. sin,
cos, tan, asin and atan are their hyperbolic partners at i*z, as in C99 and NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..compiler import dtypes as dt
from ..compiler.primitives import elementwise as ew
from ..dispatch import bind1
from ..tensor import Tensor
from ._operands import full_like_tensor

_INT_OF_WIDTH = {32: dt.int32, 64: dt.int64}


def _const(value: float, like: Tensor) -> Tensor:
    return full_like_tensor(value, like)


def _signbit(x: Tensor) -> Tensor:
    bits = bind1(ew.bitcast_convert, x, dtype=_INT_OF_WIDTH[x.dtype.bits])
    return bind1(ew.lt, bits, _const(0, bits))


def _negate_where(cond: Tensor, x: Tensor) -> Tensor:
    return bind1(ew.select, cond, bind1(ew.neg, x), x)


def _is(x: Tensor, value: float) -> Tensor:
    return bind1(ew.eq, x, _const(value, x))


def _nan(x: Tensor) -> Tensor:
    return bind1(ew.ne, x, x)


def _inf(x: Tensor) -> Tensor:  # either infinity
    return _is(bind1(ew.abs_, x), math.inf)


def _finite(x: Tensor) -> Tensor:
    return bind1(ew.is_finite, x)


def _finite_nonzero(x: Tensor) -> Tensor:  # XLA gives huge finite parts a finite result
    return _and(_finite(x), bind1(ew.ne, x, _const(0, x)))


def _nonfinite(x: Tensor) -> Tensor:
    return bind1(ew.not_, _finite(x))


def _and(a: Tensor, b: Tensor) -> Tensor:
    return bind1(ew.and_, a, b)


def _or(a: Tensor, b: Tensor) -> Tensor:
    return bind1(ew.or_, a, b)


def _zero_times(trig):
    """+0 * trig(y): the signed zero C99 gives for sinh's real part (cosh's imaginary
    part) on the imaginary axis, where XLA gives +0."""
    return lambda x, y: bind1(ew.multiply, x, bind1(trig, y))


# A rule: (where(x, y), re, im) on the folded operand x + iy (x >= +0 too for odd and
# even functions); re and im are constants, functions of (x, y), or None to keep XLA's
# part. Later rules override earlier ones where both apply.
Part = Callable[[Tensor, Tensor], Tensor]
Rule = tuple[Part, float | Part | None, float | Part | None]

_RULES: dict[str, tuple[str, list[Rule]]] = {
    "exp": ("conj", [
        (lambda x, y: _and(_is(x, -math.inf), _nonfinite(y)), 0.0, 0.0),
        (lambda x, y: _and(_is(x, math.inf), _nonfinite(y)), math.inf, math.nan),
        (lambda x, y: _and(_nan(x), _is(y, 0)), math.nan, 0.0),
    ]),
    "expm1": ("conj", [  # NumPy's expm1 gives nan+nanj for most of these
        (lambda x, y: _and(_is(x, 0), _is(y, 0)), 0.0, 0.0),
        (lambda x, y: _and(_is(x, math.inf), _is(y, 0)), math.inf, 0.0),
        (lambda x, y: _and(_nan(x), _is(y, 0)), math.nan, 0.0),
        (lambda x, y: _and(_is(x, -math.inf), _nonfinite(y)), -1.0, 0.0),
        (lambda x, y: _and(_is(x, math.inf), _nonfinite(y)), math.inf, math.nan),
    ]),
    "log": ("conj", [
        (lambda x, y: _or(_and(_inf(x), _nan(y)), _and(_nan(x), _inf(y))), math.inf, math.nan),
    ]),
    "log1p": ("conj", [
        (lambda x, y: _or(_and(_inf(x), _nan(y)), _and(_nan(x), _inf(y))), math.inf, math.nan),
    ]),
    "sqrt": ("conj", [
        (lambda x, y: _and(_is(x, math.inf), _nan(y)), math.inf, math.nan),
        (lambda x, y: _and(_is(x, -math.inf), _nan(y)), math.nan, math.inf),
        (lambda x, y: _is(y, math.inf), math.inf, math.inf),
    ]),
    "cosh": ("even", [
        (lambda x, y: _and(_is(x, 0), _finite(y)), None, _zero_times(ew.sin)),
        (lambda x, y: _and(_is(x, 0), _nonfinite(y)), math.nan, 0.0),
        (lambda x, y: _and(_inf(x), _nonfinite(y)), math.inf, math.nan),
    ]),
    "sinh": ("odd", [
        (lambda x, y: _and(_is(x, 0), _finite(y)), _zero_times(ew.cos), None),
        (lambda x, y: _and(_is(x, 0), _nonfinite(y)), 0.0, math.nan),
        (lambda x, y: _and(_inf(x), _nonfinite(y)), math.inf, math.nan),
    ]),
    "tanh": ("odd", [
        (lambda x, y: _and(_is(x, 0), _nonfinite(y)), 0.0, math.nan),
        # the standard's 1 + 0j for every finite y >= 0 (C99 and NumPy give
        # 1 + i*0*sin(2y), whose zero is -0 where sin(2y) < 0)
        (lambda x, y: _and(_inf(x), _finite(y)), 1.0, 0.0),
    ]),
    "asinh": ("odd", [
        (lambda x, y: _and(_nan(x), _is(y, 0)), math.nan, 0.0),
        # XLA gives a huge finite part a finite result beside a NaN one
        (lambda x, y: _or(_and(_finite(x), _nan(y)), _and(_nan(x), _finite_nonzero(y))),
         math.nan, math.nan),
    ]),
    "atanh": ("odd", [
        (lambda x, y: _or(_nan(y), _and(_nan(x), _finite(y))), math.nan, math.nan),
        (lambda x, y: _and(_nan(y), _or(_is(x, 0), _inf(x))), 0.0, math.nan),
        (lambda x, y: _and(_nan(x), _inf(y)), 0.0, math.pi / 2),
    ]),
    "acos": ("conj", [
        (lambda x, y: _and(_finite_nonzero(x), _nan(y)), math.nan, math.nan),
        (lambda x, y: _and(_is(x, 0), _nan(y)), math.pi / 2, math.nan),
    ]),
    "acosh": ("conj", [
        (lambda x, y: _and(_finite_nonzero(x), _nan(y)), math.nan, math.nan),
        (lambda x, y: _and(_is(x, 0), _nan(y)), math.nan, math.pi / 2),
    ]),
}


def _replace(mask: Tensor, value, part: Tensor, x: Tensor, y: Tensor) -> Tensor:
    if value is None:
        return part
    new = value(x, y) if callable(value) else _const(value, part)
    return bind1(ew.select, mask, new, part)


def special_values(name: str, prim, z: Tensor) -> Tensor:
    """prim (XLA's complex `name`) at z, with the standard's special values and signed
    zeros."""
    symmetry, rules = _RULES[name]
    x, y = bind1(ew.real, z), bind1(ew.imag, z)
    fold_x = symmetry in ("odd", "even")
    neg_x, neg_y = _signbit(x), _signbit(y)
    # negate, not abs: the derivative stays +-1 at x = 0
    fx = _negate_where(neg_x, x) if fold_x else x
    fy = _negate_where(neg_y, y)
    w = bind1(prim, bind1(ew.complex_, fx, fy))
    re, im = bind1(ew.real, w), bind1(ew.imag, w)
    for where, re_value, im_value in rules:
        mask = where(fx, fy)
        re = _replace(mask, re_value, re, fx, fy)
        im = _replace(mask, im_value, im, fx, fy)
    if symmetry == "odd":  # f(-x + iy) = -conj f(x + iy)
        re = _negate_where(neg_x, re)
    if symmetry == "even":  # f(-x + iy) = conj f(x + iy)
        neg_y = bind1(ew.xor, neg_x, neg_y)
    return bind1(ew.complex_, re, _negate_where(neg_y, im))


def _times_i(z: Tensor) -> Tensor:
    """i * z, exactly (signed zeros kept, which multiplying would lose)."""
    return bind1(ew.complex_, bind1(ew.neg, bind1(ew.imag, z)), bind1(ew.real, z))


def _times_minus_i(z: Tensor) -> Tensor:
    return bind1(ew.complex_, bind1(ew.imag, z), bind1(ew.neg, bind1(ew.real, z)))


# f(z) = -i g(iz) or f(z) = g(iz): the hyperbolic partner g at i*z (C99 7.3.5)
_AT_I_Z = {"sin": (ew.sinh, True), "cos": (ew.cosh, False), "tan": (ew.tanh, True),
           "asin": (ew.asinh, True), "atan": (ew.atanh, True)}


def complex_function(name: str, prim) -> Callable[[Tensor], Tensor] | None:
    """How the namespace's `name` evaluates complex operands, or None where XLA's prim
    is right as it is."""
    if name in _RULES:
        return lambda z: special_values(name, prim, z)
    if name in _AT_I_Z:
        partner, minus_i = _AT_I_Z[name]

        def via_partner(z: Tensor) -> Tensor:
            w = special_values(partner.name, partner, _times_i(z))
            return _times_minus_i(w) if minus_i else w
        return via_partner
    return None
