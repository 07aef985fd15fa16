"""Signed zeros and NaN payloads survive every path (eager scalar cache, IR literals,
emitted constants, jit), compared with NumPy bit for bit.

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import stablejit
import stablejit.numpy as snp


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# ---- signed zeros and NaN payloads: the eager scalar cache keys on the bits -------------

def test_scalar_cache_keeps_the_sign_of_zero():
    x = snp.asarray([1.0, 2.0])
    neg = np.asarray(x * -0.0)
    pos = np.asarray(x * 0.0)  # +0.0 after -0.0 was cached
    assert np.signbit(neg).all() and not np.signbit(pos).any()
    assert np.array_equal(np.asarray(1.0 / (x * 0.0)), [np.inf, np.inf])


def test_arctan2_of_signed_zero_scalars():
    for y in (0.0, -0.0, 0.0):
        got = np.asarray(snp.arctan2(y, -1))
        assert got == np.arctan2(y, -1).astype(got.dtype)


def test_asarray_and_floor_of_negative_zero_after_positive_zero():
    snp.asarray(0.0), snp.floor(0.0)
    assert np.signbit(np.asarray(snp.asarray(-0.0)))
    assert np.signbit(np.asarray(snp.floor(-0.0)))
    snp.asarray(-0.0)
    assert not np.signbit(np.asarray(snp.asarray(0.0)))


def test_scalar_cache_separates_nan_payloads_and_int_bool_float():
    quiet = np.float32(np.nan)
    payload = np.array(0x7FC00123, np.uint32).view(np.float32)
    for v in (quiet, payload):
        got = snp.asarray(float(v), dtype=snp.float32)
        assert _bits(got) == _bits(np.float32(float(v)))
    x = snp.asarray([3], dtype=snp.int32)
    assert np.asarray(x + True).tolist() == [4]
    assert np.asarray(x + 1).tolist() == [4]
    assert np.asarray(snp.asarray(1.0) + 0.5) == 1.5


def test_signed_zero_complex_scalar():
    z = snp.asarray(complex(-0.0, -0.0))
    assert np.signbit(np.asarray(z).real) and np.signbit(np.asarray(z).imag)
    z = snp.asarray(complex(0.0, 0.0))
    assert not np.signbit(np.asarray(z).real)


def test_ir_literals_and_emitted_constants_keep_zero_signs_and_nan_payloads():
    from stablejit.compiler import dtypes as dt
    from stablejit.compiler.emitter import dense_text
    from stablejit.compiler.ir import Literal

    payload = np.array(0x7FC00123, np.uint32).view(np.float32)
    assert Literal(np.float32(0.0)) != Literal(np.float32(-0.0))
    assert Literal(payload) != Literal(np.float32(np.nan))
    assert Literal(payload) == Literal(payload.copy())
    assert dense_text(np.float32(-0.0), dt.float32) == "dense<-0.0>"
    assert dense_text(payload, dt.float32) == "dense<0x7FC00123>"
    assert dense_text(np.float16(-0.0), dt.float16).startswith("dense<-0.")
    assert dense_text(np.complex64(complex(-0.0, 0.0)), dt.complex64) == "dense<(-0.0, 0.0)>"


def test_nan_payload_survives_jit_constants():
    payload = np.array(0x7FC00123, np.uint32).view(np.float32)
    f = stablejit.jit(lambda x: snp.where(x > 0, snp.asarray(payload), x))
    assert _bits(np.asarray(f(snp.ones(1)))) == np.uint32(0x7FC00123)


def test_signed_zero_under_jit_constants():
    f = stablejit.jit(lambda x: (x * -0.0, x * 0.0, x + -0.0, snp.floor(-0.0 * x)))
    outs = [np.asarray(o) for o in f(snp.asarray([1.0, 2.0]))]
    assert np.signbit(outs[0]).all() and not np.signbit(outs[1]).any()
    assert not np.signbit(outs[2]).any() and np.signbit(outs[3]).all()


# ---- a product with a bool converted to float: IEEE's zero signs on every path ----------

def test_bool_times_float_keeps_ieee_zero_signs_on_every_path():
    """XLA rewrites convert(b) * x into select(b, x, 0): False * -1.0 was +0.0 under jit
    and in lazy(), -0.0 (IEEE's, NumPy's) eagerly. compiler/passes/hold.py holds the
    converted bool. (NaN * False is NaN, as NumPy's.)"""
    import ml_dtypes

    values = [-1.0, -0.0, 0.0, 2.5, -np.inf, np.inf, np.nan, -3.0]
    mask = np.array([False, True] * 4)
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64):
        x = np.array(values, dtype)
        for f in (lambda b, v: b * v, lambda b, v: v * b, lambda b, v: b.astype(v.dtype) * v,
                  lambda b, v: snp.multiply(v, b) * 2):
            with np.errstate(invalid="ignore"):
                want = f(mask, x) if dtype is not ml_dtypes.bfloat16 else (
                    f(mask, x.astype(np.float32)).astype(dtype))
            tb, tx = snp.asarray(mask), snp.asarray(x)
            with stablejit.lazy():
                lazy = f(tb, tx)
            for got in (f(tb, tx), stablejit.jit(f)(tb, tx), lazy):
                got = np.asarray(got)
                assert got.dtype == want.dtype
                parts = (np.real, np.imag) if dtype is np.complex64 else (lambda a: a,)
                for part in parts:
                    g, w = part(got).astype(np.float64), part(want).astype(np.float64)
                    assert np.array_equal(g, w, equal_nan=True), (dtype, g, w)
                    assert np.array_equal(np.signbit(g), np.signbit(w)), (dtype, g, w)


def test_cumulative_sums_keep_a_leading_negative_zero_on_every_path():
    """cumsum's first element is x[0], as NumPy's: the scan's padding and start were
    +0.0, so cumsum([-0.0]) was +0.0 eagerly and under jit (-0.0 on the reference
    backend). The additive identity of IEEE floats is -0.0."""
    import ml_dtypes

    rows = [[-0.0, 1.0, -0.0], [-0.0, -0.0, -0.0], [-0.0, np.nan, -0.0], [2.0, -2.0, -0.0]]
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64):
        x = np.array(rows, np.float64)
        if dtype is np.complex64:
            x = x + np.complex64(complex(0, -0.0))
        x = x.astype(dtype)
        wide = x.astype(np.complex128 if dtype is np.complex64 else np.float64)
        for name, axis, flip in (("cumsum", 1, False), ("nancumsum", 1, False),
                                 ("cumsum", 0, False), ("cumsum", 1, True)):
            f = getattr(snp, name)

            def g(t, f=f, axis=axis, flip=flip):
                return snp.flip(f(snp.flip(t, axis), axis=axis), axis) if flip else f(t, axis=axis)
            with np.errstate(invalid="ignore"):
                src = np.flip(wide, axis) if flip else wide
                want = getattr(np, name)(src, axis=axis)
                want = (np.flip(want, axis) if flip else want).astype(dtype)
            t = snp.asarray(x)
            with stablejit.lazy():
                lazy = g(t)
            with stablejit.default_backend("reference"):
                ref = g(snp.asarray(x))
            for got in (g(t), stablejit.jit(g)(t), lazy, ref):
                got = np.asarray(got)
                parts = (np.real, np.imag) if dtype is np.complex64 else (lambda a: a,)
                for part in parts:
                    gw, ww = part(got).astype(np.float64), part(want).astype(np.float64)
                    assert np.array_equal(gw, ww, equal_nan=True), (dtype, name, gw, ww)
                    assert np.array_equal(np.signbit(gw), np.signbit(ww)), (dtype, name, gw, ww)
