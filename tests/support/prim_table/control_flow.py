"""Example cases of cond, while and scan. Region bodies are IR Functions built with the
compiler's Ops vocabulary (`region`); each expectation computes the answer on its own with
NumPy and Python loops, never by running the regions."""

from __future__ import annotations

import numpy as np
from stablejit.compiler import dtypes as dt
from stablejit.compiler.ir import TensorType
from stablejit.compiler.primitives import elementwise as ew

from tests.support.prim_table.spec import (
    JoinedSpec,
    PrimSpec,
    region,
    tensor_type,
    values,
)


def _cond_if_make(pred):
    """bool[] predicate, branches [false, true] over two operands with two results (the
    true branch returns one of its parameters unchanged)."""
    def make(d, rng):
        x, y = values(d, rng), values(d, rng)
        t = tensor_type(x)
        on_false = region("on_false", [t, t], lambda o, x, y: [o.sub(x, y), o.neg(x)])
        on_true = region("on_true", [t, t], lambda o, x, y: [o.mul(x, y), x])
        return [np.asarray(pred), x, y], {}, (on_false, on_true)
    return make


def _cond_case_make(index):
    """i32[] index over three branches, results of two dtypes; out of range runs the last."""
    def make(d, rng):
        x, y = values(dt.int32, rng), values(dt.float32, rng, (3,))
        ts = [tensor_type(x), tensor_type(y)]
        branches = (
            region("b0", ts, lambda o, x, y: [o.mul(x, o.full_like(x, 2)), y]),
            region("b1", ts, lambda o, x, y: [o.neg(x), o.add(y, o.ones_like(y))]),
            region("b2", ts, lambda o, x, y: [o.sub(x, o.full_like(x, 3)), o.mul(y, y)]))
        return [np.asarray(index, np.int32), x, y], {}, branches
    return make


def _cond_case_expected(index, x, y):
    i = int(index) if 0 <= int(index) < 3 else 2
    return [(x * 2, y), (-x, y + 1), (x - 3, y * y)][i]


def _cond_const_make(pred):
    """No operands besides the predicate: each branch makes a constant."""
    branches = tuple(region(f"c{v}", [], lambda o, v=v: [o.const(v, dt.float32, (2,))])
                     for v in (1.5, -2.5))
    return [np.asarray(pred)], {}, branches


def _while_affine_make(limit=4, start=0):
    """consts (limit, scale), carry (i, acc): while i < limit: i += 1; acc = acc*scale + 1."""
    def make(d, rng):
        scale, acc = values(d, rng, (3,)), values(d, rng, (3,))
        i32 = TensorType((), dt.int32)
        ts = [i32, tensor_type(scale), i32, tensor_type(acc)]
        cond_fn = region("below", ts, lambda o, n, s, i, a: [o.lt(i, n)])
        body = region("step", ts, lambda o, n, s, i, a: [
            o.add(i, o.const(1, dt.int32)), o.add(o.mul(a, s), o.ones_like(a))])
        return [np.asarray(limit, np.int32), scale, np.asarray(start, np.int32), acc], \
            {"num_consts": 2}, (cond_fn, body)
    return make


def _while_affine_expected(limit, scale, i, acc, *, num_consts):
    i = int(i)
    while i < limit:
        i, acc = i + 1, acc * scale + 1
    return np.asarray(i), acc


def _collatz_make(d, rng):
    """No consts; carry (n, steps): integer division, remainder and select in the body."""
    ts = [TensorType((), d), TensorType((), dt.int32)]

    def body(o, n, steps):
        two = o.const(2, d)
        even = o.eq(o.bind(ew.remainder, n, two), o.const(0, d))
        up = o.add(o.mul(n, o.const(3, d)), o.const(1, d))
        return [o.select(even, o.div(n, two), up), o.add(steps, o.const(1, dt.int32))]

    return [np.asarray(27, d.np), np.asarray(0, np.int32)], {"num_consts": 0}, (
        region("not_one", ts, lambda o, n, s: [o.ne(n, o.const(1, d))]),
        region("collatz", ts, body))


def _collatz_expected(n, steps, *, num_consts):
    n, steps = int(n), int(steps)
    while n != 1:
        n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
    return np.asarray(n), np.asarray(steps)


def _scan_affine_make(length=4, reverse=False):
    """const w, carry c, xs x: c = c*w + x[i]; ys (c, sum of x[i])."""
    def make(d, rng):
        w, c, x = values(d, rng, (3,)), values(d, rng, (3,)), values(d, rng, (length, 3))
        ts = [tensor_type(w), tensor_type(c), TensorType((3,), d)]

        def body(o, w, c, xi):
            c = o.add(o.mul(c, w), xi)
            return [c, c, o.reduce_sum(xi, (0,))]

        return [w, c, x], {"num_consts": 1, "num_carry": 1, "length": length,
                           "reverse": reverse}, (region("affine", ts, body),)
    return make


def _scan_affine_expected(w, c, x, *, num_consts, num_carry, length, reverse):
    ys, sums = np.zeros((length, 3), c.dtype), np.zeros(length, c.dtype)
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        c = c * w + x[i]
        ys[i], sums[i] = c, x[i].sum()
    return c, ys, sums


def _scan_map_make(d, rng):
    """No consts or carry, two scanned operands of different dtypes."""
    a, b = values(dt.int32, rng, (5, 2)), values(dt.float32, rng, (5,))
    ts = [TensorType((2,), dt.int32), TensorType((), dt.float32)]
    body = region("map", ts, lambda o, a, b: [o.mul(a, a), o.add(b, o.ones_like(b))])
    return [a, b], {"num_consts": 0, "num_carry": 0, "length": 5, "reverse": False}, (body,)


def _scan_counter_make(reverse):
    """Nothing scanned: a counter carry, ys its squares."""
    def make(d, rng):
        ts = [TensorType((), d)]
        body = region("count", ts, lambda o, c: [o.add(c, o.const(1, d)), o.mul(c, c)])
        return [np.asarray(2, d.np)], {"num_consts": 0, "num_carry": 1, "length": 3,
                                       "reverse": reverse}, (body,)
    return make


def _scan_counter_expected(c, *, num_consts, num_carry, length, reverse):
    ys = [(c + k) ** 2 for k in range(length)]
    return c + length, np.stack(ys[::-1] if reverse else ys)


TABLE = {
    "cond": JoinedSpec(
        pred=PrimSpec((dt.int8, dt.uint32, dt.float16, dt.float32, dt.complex64),
                     _cond_if_make(True), lambda p, x, y: (x * y, x) if p else (x - y, -x),
                     extra=[("f32-false", *_cond_if_make(False)(dt.float32,
                                                                np.random.default_rng(0)))]),
        case=PrimSpec((), None, _cond_case_expected, extra=[
            (f"index{i}", *_cond_case_make(i)(None, np.random.default_rng(0)))
            for i in (0, 1, 2, 3, -1)]),
        const=PrimSpec((), None, lambda p: np.full(2, -2.5 if p else 1.5, np.float32),
                       extra=[(f"{p}", *_cond_const_make(p)) for p in (False, True)])),
    "while": JoinedSpec(
        affine=PrimSpec((dt.int32, dt.float32, dt.complex64), _while_affine_make(),
                        _while_affine_expected, extra=[
            ("f64-zero-trips", *_while_affine_make(-2)(dt.float64, np.random.default_rng(0))),
            ("f64-started-past", *_while_affine_make(3, 5)(dt.float64,
                                                          np.random.default_rng(0)))]),
        collatz=PrimSpec((dt.int64, dt.uint32), _collatz_make, _collatz_expected)),
    "scan": JoinedSpec(
        affine=PrimSpec((dt.int32, dt.float32, dt.float64), _scan_affine_make(),
                        _scan_affine_expected, extra=[
            ("f32-reverse", *_scan_affine_make(reverse=True)(dt.float32,
                                                             np.random.default_rng(0))),
            ("f32-length0", *_scan_affine_make(0)(dt.float32, np.random.default_rng(0)))]),
        map=PrimSpec((dt.int32,), _scan_map_make, lambda a, b, **attrs: (a * a, b + 1)),
        counter=PrimSpec((dt.int32,), _scan_counter_make(False), _scan_counter_expected,
                         extra=[("i64-reverse", *_scan_counter_make(True)(
                             dt.int64, np.random.default_rng(0)))])),
}
