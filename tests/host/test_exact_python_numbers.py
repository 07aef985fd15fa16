"""Python numbers are converted exactly: float64 values never round through the default
float32, and Python ints out of the dtype's range raise as in jax.

Found as regressions (issue 9): each test failed before its fix."""


import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


# ---- float64 values never round through the default float32 ---------------------------

BIG = 16777217.0  # 2**24 + 1: exact in float64, not in float32
F64 = np.float64(BIG)


def _exact_f64(t, expected):
    a = np.asarray(t)
    e = np.asarray(expected, dtype=np.float64)
    assert a.dtype == np.float64, a.dtype
    assert np.array_equal(_bits(a), _bits(e)), (a, e)


def test_asarray_list_with_float64_dtype_is_exact():
    _exact_f64(snp.asarray([BIG], dtype=snp.float64), [BIG])
    _exact_f64(snp.asarray([[BIG, 0.1]], dtype="float64"), [[BIG, 0.1]])
    _exact_f64(snp.array([BIG, 0.1], dtype=snp.float64), [BIG, 0.1])
    assert np.asarray(snp.asarray([BIG], dtype=snp.complex128)).real[0] == BIG


def test_at_updates_of_float64_are_exact():
    z = snp.zeros(3, dtype=snp.float64)
    _exact_f64(z.at[0].set(BIG), [BIG, 0, 0])
    _exact_f64(z.at[0].add(BIG), [BIG, 0, 0])
    _exact_f64(z.at[0].subtract(BIG), [-BIG, 0, 0])
    _exact_f64(z.at[:2].set([BIG, 0.1]), [BIG, 0.1, 0])
    _exact_f64(snp.ones(3, dtype=snp.float64).at[1].multiply(BIG), [1, BIG, 1])
    _exact_f64(z.at[1].max(BIG), [0, BIG, 0])
    f = stablejit.jit(lambda a: a.at[0].set(BIG))
    _exact_f64(f(z), [BIG, 0, 0])


def test_float64_creation_and_scalar_operands_are_exact():
    x = snp.zeros(2, dtype=snp.float64)
    _exact_f64(snp.full(2, BIG, dtype=snp.float64), [BIG, BIG])
    _exact_f64(snp.full((), BIG, dtype=snp.float64), BIG)
    _exact_f64(snp.full_like(x, BIG), [BIG, BIG])
    _exact_f64(x + BIG, [BIG, BIG])
    _exact_f64(snp.where(x == 0, BIG, x), [BIG, BIG])
    _exact_f64(snp.clip(x, BIG, None), [BIG, BIG])
    _exact_f64(snp.clip(x + 2 * BIG, None, BIG), [BIG, BIG])
    _exact_f64(snp.arange(BIG, BIG + 2, dtype=snp.float64), [BIG, BIG + 1])
    _exact_f64(snp.linspace(BIG, BIG + 2, 3, dtype=snp.float64), [BIG, BIG + 1, BIG + 2])
    g = stablejit.jit(lambda a: (snp.full(2, BIG, dtype=snp.float64), a + BIG,
                                 snp.arange(BIG, BIG + 2, dtype=snp.float64),
                                 snp.linspace(BIG, BIG + 2, 3, dtype=snp.float64)))
    outs = g(x)
    _exact_f64(outs[0], [BIG, BIG])
    _exact_f64(outs[1], [BIG, BIG])
    _exact_f64(outs[2], [BIG, BIG + 1])
    _exact_f64(outs[3], [BIG, BIG + 1, BIG + 2])


# Functions that take a Python number beside a float64 tensor (a stored value, an
# initial value, a bin range, a percentage): each converts the number to float64 from its
# own value, as NumPy does. Found by the conformance suite at 200 examples
# (test_setitem_masking) and a sweep of the namespace; each rounded through float32.
def _masked_store(m, x):
    x = x.copy() if m is np else snp.asarray(x)
    x[x == 0] = BIG
    return x


_PYTHON_NUMBER_CASES = {
    "x[mask] = number": _masked_store,
    "sum(initial=)": lambda m, x: m.sum(x, initial=BIG),
    "prod(initial=)": lambda m, x: m.prod(x[:1] + 1, initial=BIG),
    "diff(prepend=, append=)": lambda m, x: m.diff(x, prepend=BIG, append=-BIG),
    "histogram(range=)": lambda m, x: m.histogram(x, bins=2, range=(-BIG, BIG))[1],
    "histogram_bin_edges(bins=list)": lambda m, x: m.histogram_bin_edges(x, [-BIG, 0.0, BIG]),
    "percentile(q)": lambda m, x: m.percentile(x, 33.333333333333),
    "quantile(q)": lambda m, x: m.quantile(x, 0.33333333333333),
    "insert(values)": lambda m, x: m.insert(x, 1, BIG),
    "piecewise(value)": lambda m, x: m.piecewise(x, [x == 0], [BIG, -1.0]),
    "put_along_axis(values)": lambda m, x: m.put_along_axis(
        x[None], m.asarray([[1]]), BIG, axis=1, **({} if m is np else {"inplace": False})),
    "fill_diagonal(val)": lambda m, x: m.fill_diagonal(
        m.zeros((2, 2), dtype=m.float64), BIG, **({} if m is np else {"inplace": False})),
    "unique(fill_value=)": lambda m, x: (m.unique(x, size=5, fill_value=BIG) if m is snp
                                         else np.append(np.unique(x), BIG)),
}


@pytest.mark.parametrize("name", sorted(_PYTHON_NUMBER_CASES))
def test_python_numbers_beside_float64_are_exact(name):
    f = _PYTHON_NUMBER_CASES[name]
    a = np.array([1.0, 0.0, -3.5, 2.0 ** 40 + 0.5], dtype=np.float64)
    expected = f(np, a.copy())
    if name == "put_along_axis(values)":
        expected = a.copy()[None]
        expected[0, 1] = BIG
    if name == "fill_diagonal(val)":
        expected = np.diag([BIG, BIG])
    _exact_f64(f(snp, snp.asarray(a)), expected)


# ---- Python ints out of range of the integer dtype raise, as in jax ---------------------

@pytest.mark.parametrize("make", [
    lambda: snp.asarray([2**63]),
    lambda: snp.asarray([2**64]),
    lambda: snp.asarray(2**63),
    lambda: snp.asarray([[1], [-2**63 - 1]]),
    lambda: snp.asarray([2**31], dtype=snp.int32),
    lambda: snp.zeros(3, snp.int32) + 2**40,
    lambda: snp.full(2, 2**40, dtype=snp.int32),
    lambda: snp.zeros(2, snp.uint8).at[0].set(256),
    lambda: snp.zeros(2, snp.uint8).at[0].set([300]),
])
def test_python_int_out_of_range_raises_overflow(make):
    with pytest.raises(OverflowError):
        make()


def test_python_ints_in_range_are_exact():
    got = np.asarray(snp.asarray([2**63 - 1, -2**63]))
    assert got.dtype == np.int64 and got.tolist() == [2**63 - 1, -2**63]
    assert np.asarray(snp.zeros(2, snp.uint8) + 255).tolist() == [255, 255]


def test_unique_fill_value_of_float64_is_exact():
    x = snp.asarray([1.0, 1.0], dtype=snp.float64)
    _exact_f64(snp.unique_values(x, size=3, fill_value=BIG), [1.0, BIG, BIG])
