"""Integer powers that XLA's own stablehlo.power gets wrong, written with other ops.

XLA's integer power squares and multiplies over the exponent's low 6 bits only, so an
exponent of 64 or more gives x ** (y mod 64) (int8 2 ** 64 was 1, not 0; uint8 3 ** 200
was 0, not 161), and it reads an unsigned exponent with its top bit set as negative.
emit_power splits a non-negative exponent into base-64 digits d_i and multiplies the
powers XLA computes right, (x ** 64**i) ** d_i, each x ** 64**i by six squarings; a
negative exponent keeps XLA's rule (1 / x ** -y truncated: 0 but for 1 and -1). Integer
products wrap, so every order gives the bits of NumPy's x ** y modulo 2**bits.
"""

from __future__ import annotations

from .. import dtypes as dt


def emit_power(ctx, x, y):
    t = ctx.in_types[1]
    d = t.dtype
    out = ctx.out_types
    if d.kind not in "iu":
        return ctx.op("stablehlo.power", [x, y], out)

    def k(v):
        return ctx.constant(v, d, t.shape)

    def op(name, *operands):
        return ctx.op(name, list(operands), [t])[0]

    def power(base, e):
        return ctx.op("stablehlo.power", [base, e], out)[0]

    signed = d.kind == "i"
    if signed:  # the digits of max(y, 0); a negative y is XLA's case, selected below
        y_pos = op("stablehlo.maximum", y, k(0))
    else:
        y_pos = y
    result = power(x, op("stablehlo.and", y_pos, k(63)))
    base = x
    for shift in range(6, d.bits - signed, 6):
        for _ in range(6):
            base = op("stablehlo.multiply", base, base)
        digit = op("stablehlo.and", op("stablehlo.shift_right_logical", y_pos, k(shift)), k(63))
        result = op("stablehlo.multiply", result, power(base, digit))
    if signed:
        negative = ctx.op("stablehlo.compare", [y, k(0)], [t.with_dtype(dt.bool_)],
                          "comparison_direction = #stablehlo<comparison_direction LT>, "
                          "compare_type = #stablehlo<comparison_type SIGNED>")[0]
        result = ctx.op("stablehlo.select", [negative, power(x, y), result], out)[0]
    return [result]

