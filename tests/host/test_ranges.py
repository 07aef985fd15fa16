"""Ranges against NumPy: arange, linspace, logspace and geomspace give NumPy's values,
dtype and shape for every integer, unsigned, float and bool dtype, positive, negative and
fractional bounds and steps, num in {0, 1, 2, 5}, with and without the end point, and
tensor end points along any axis; eagerly, under jit and in lazy().

NumPy's rules for an integer dtype: arange casts start and start + step (truncating) and
repeats their difference (arange(0, 5, 1.5, dtype=int) is [0, 1, 2, 3]); linspace
computes in floats and floors (linspace(-10, 0, 4, dtype=int) is [-10, -7, -4, 0]);
logspace and geomspace truncate. (Without a dtype, stablejit's floats are float32, as
jax's, where NumPy's are float64: those dtypes are compared with jax.)"""

import itertools
import math

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
TOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}


def _runs(f):
    """f() eagerly, under jit and in lazy()."""
    with stablejit.lazy():
        lazy = f()
    return {"eager": f(), "jit": stablejit.jit(f)(), "lazy": lazy}


def _outcome(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - compared with the other side's type
        return type(e)


def _same(got, want, where, dtype_of=None):
    """Values, dtype and shape; floats within the dtype's rounding."""
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, f"{where}: shape {got.shape}, NumPy {want.shape}"
    assert got.dtype == (dtype_of or want.dtype), f"{where}: dtype {got.dtype}, {want.dtype}"
    if want.dtype.kind in "fc":
        tol = TOL.get(got.dtype.name, 2e-6)
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=tol, atol=tol,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


# ---- arange ------------------------------------------------------------------------

ARANGE = [(0, 5, 1.5), (0, 5, 1), (2, 11, 3), (-7, 3, 2.5), (5, -3, -1.5), (5, 0, -1),
          (-0.5, 3, 1), (0.5, 6, 1), (2.7, 11.5, 0.7), (-2.5, -7, -0.4), (3, 3, 1),
          (0, 1, 0.3), (1.5, 0, 1), (0, 200, 7), (100, 300, 50)]


@pytest.mark.parametrize("start,stop,step", ARANGE, ids=str)
@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
def test_arange_with_a_dtype_gives_numpys_values(dtype, start, stop, step):
    if dtype == "bool" and math.ceil((stop - start) / step) > 2:
        return  # NumPy refuses a bool range of more than 2 (tested below)
    want = _outcome(lambda: np.arange(start, stop, step, dtype=dtype))
    where = f"arange({start}, {stop}, {step}, dtype={dtype})"
    if isinstance(want, type):  # a negative bound for an unsigned dtype, 150 in int8
        assert want is OverflowError, where
        for run in (lambda f: f(), stablejit.jit):
            with pytest.raises(OverflowError, match="out of bounds|range"):
                run(lambda: snp.arange(start, stop, step, dtype=dtype))()
        return
    for mode, got in _runs(lambda: snp.arange(start, stop, step, dtype=dtype)).items():
        _same(got, want, f"{where} {mode}")


def test_a_bool_arange_longer_than_2_is_refused_as_in_numpy():
    with pytest.raises(TypeError):
        np.arange(3, dtype=bool)
    with pytest.raises(TypeError, match="arange.*bool.*at most 2"):
        snp.arange(3, dtype=bool)
    with pytest.raises(TypeError, match="arange.*bool.*at most 2"):
        stablejit.jit(lambda: snp.arange(0, 2, 0.5, dtype=snp.bool))()


# ---- linspace ----------------------------------------------------------------------

BOUNDS = [(-10, 0), (0, 10), (3, -4), (0.5, 10), (-2.5, 7.5), (1, 1)]
NUMS = [0, 1, 2, 5]


def _linspaces(xp, start, stop, dtype):
    return [xp.linspace(start, stop, n, endpoint=e, dtype=dtype)
            for n, e in itertools.product(NUMS, (True, False))]


@pytest.mark.parametrize("start,stop", BOUNDS, ids=str)
@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
def test_linspace_with_a_dtype_gives_numpys_values(dtype, start, stop):
    if dtype.startswith("uint") and min(start, stop) < 0:
        return  # a negative float cast to an unsigned integer: undefined in C
    want = _linspaces(np, start, stop, dtype)
    for mode, got in _runs(lambda: _linspaces(snp, start, stop, dtype)).items():
        for (n, e), g, w in zip(itertools.product(NUMS, (True, False)), got, want,
                                strict=True):
            _same(g, w, f"linspace({start}, {stop}, {n}, endpoint={e}, dtype={dtype}) {mode}")


def test_linspace_floors_to_an_integer_dtype():
    want = [-10, -7, -4, 0]
    assert np.linspace(-10, 0, 4, dtype=int).tolist() == want
    assert jnp.linspace(-10, 0, 4, dtype=int).tolist() == want
    for got in _runs(lambda: snp.linspace(-10, 0, 4, dtype=int)).values():
        assert np.asarray(got).tolist() == want


# (start shape, stop shape, axis)
ENDPOINTS = [((2,), (2,), 0), ((2,), (2,), 1), ((2,), (2,), -1), ((), (3,), 0),
             ((2, 1), (3,), 0), ((2, 1), (3,), 1), ((2, 1), (3,), 2), ((2, 1), (3,), -2)]


@pytest.mark.parametrize("num", NUMS)
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("a_shape,b_shape,axis", ENDPOINTS, ids=str)
def test_linspace_of_tensor_end_points_along_an_axis_with_its_step(a_shape, b_shape, axis,
                                                                    endpoint, num):
    rng = np.random.default_rng(0)
    a = rng.uniform(-5, 5, a_shape).astype(np.float32)
    b = rng.uniform(-5, 5, b_shape).astype(np.float32)
    kw = dict(num=num, endpoint=endpoint, axis=axis, retstep=True)
    want, want_step = np.linspace(a, b, **kw)
    _, jax_step = jnp.linspace(a, b, **kw)
    where = f"linspace({a_shape}, {b_shape}, {kw})"
    runs = _runs(lambda: snp.linspace(snp.asarray(a), snp.asarray(b), **kw))
    runs["jit(args)"] = stablejit.jit(lambda x, y: snp.linspace(x, y, **kw))(a, b)
    for mode, (got, step) in runs.items():
        _same(got, want, f"{where} {mode}")
        _same(step, want_step, f"{where} step {mode}", dtype_of=jax_step.dtype)


@pytest.mark.parametrize("kw", [dict(num=5), dict(num=1), dict(num=0), dict(num=1,
                                endpoint=False), dict(num=4, dtype="int32"),
                                dict(num=3, dtype="float64")], ids=str)
def test_linspace_retstep_of_python_numbers(kw):
    want, want_step = np.linspace(-1, 2, retstep=True, **kw)
    dtype = kw.get("dtype", "float32")
    step_dtype = dtype if dtype.startswith("float") else "float32"  # as jax's
    if dtype != "float64":  # (jax without x64 makes it float32)
        assert jnp.linspace(-1, 2, retstep=True, **kw)[1].dtype == step_dtype
    for mode, (got, step) in _runs(lambda: snp.linspace(-1, 2, retstep=True, **kw)).items():
        _same(got, want, f"{kw} {mode}", dtype_of=dtype)
        _same(step, want_step, f"{kw} step {mode}", dtype_of=step_dtype)


def test_linspace_takes_numpys_arguments_by_position():
    got = snp.linspace(0, 1, 4, False, True, "float64", 0)
    want = np.linspace(0, 1, 4, False, True, "float64", 0)
    _same(got[0], want[0], "samples")
    _same(got[1], want[1], "step")


def test_linspace_of_python_numbers_along_axis_1_names_the_axis():
    with pytest.raises(np.exceptions.AxisError, match="axis 1 is out of bounds"):
        snp.linspace(0, 1, 3, axis=1)
    assert snp.linspace(0, 1, 3, axis=-1).shape == (3,)


def test_linspace_of_integer_tensors_is_the_default_float():
    a, b = np.array([0, 1], np.int32), np.array([4, 9], np.int32)
    want = np.linspace(a, b, 5)
    dtype = jnp.linspace(a, b, 5).dtype
    for mode, got in _runs(lambda: snp.linspace(snp.asarray(a), snp.asarray(b), 5)).items():
        _same(got, want, mode, dtype_of=dtype)


# ---- logspace and geomspace --------------------------------------------------------

SPACES = [
    ("logspace(tensors)", lambda xp: xp.logspace(xp.asarray([0., 1.]), xp.asarray([1., 3.]),
                                                 3)),
    ("logspace(tensors, axis=1)", lambda xp: xp.logspace(xp.asarray([0., 1.]),
                                                         xp.asarray([1., 3.]), 4, axis=1)),
    ("logspace(base tensor)", lambda xp: xp.logspace(0, 2, 3, base=xp.asarray([2., 3.]))),
    ("logspace(base tensor, axis=-1)",
     lambda xp: xp.logspace(0, 2, 3, base=xp.asarray([2., 3.]), axis=-1)),
    ("logspace(base (2,1), stop (3,), axis=1)",
     lambda xp: xp.logspace(0, xp.asarray([1., 2., 3.]), 4, base=xp.asarray([[2.], [3.]]),
                            axis=1)),
    ("logspace(int)", lambda xp: xp.logspace(0, 2, 5, dtype="int64")),
    ("logspace(-1, 1, int16)", lambda xp: xp.logspace(-1, 1, 5, dtype="int16")),
    ("logspace(uint8, base 2)", lambda xp: xp.logspace(0, 7, 8, base=2, dtype="uint8")),
    ("logspace(0, 12, int64)", lambda xp: xp.logspace(0, 12, 13, dtype="int64")),
    ("logspace(endpoint=False, int32)",
     lambda xp: xp.logspace(0, 3, 4, endpoint=False, dtype="int32")),
    ("geomspace(int)", lambda xp: xp.geomspace(1, 1000, 4, dtype="int64")),
    ("geomspace(negative, int16)", lambda xp: xp.geomspace(-1, -1000, 4, dtype="int16")),
    ("geomspace(uint8)", lambda xp: xp.geomspace(1, 200, 5, dtype="uint8")),
    ("geomspace(3, 30, int8)", lambda xp: xp.geomspace(3, 30, 5, dtype="int8")),
    ("geomspace(tensors, axis=-1)",
     lambda xp: xp.geomspace(xp.asarray([1., 2.]), xp.asarray([8., 32.]), 3, axis=-1)),
]


@pytest.mark.parametrize("name,f", SPACES, ids=[s[0] for s in SPACES])
def test_logspace_and_geomspace_give_numpys_values(name, f):
    want = f(np)
    dtype = "float32" if want.dtype == np.float64 else None  # as jax (no tensor base there)
    for mode, got in _runs(lambda: f(snp)).items():
        _same(got, want, f"{name} {mode}", dtype_of=dtype)


@pytest.mark.parametrize("start,stop", [(0, 1), (1, 0), (0.0, -2.0)])
def test_geomspace_through_zero_is_refused_as_in_numpy(start, stop):
    with pytest.raises(ValueError):
        np.geomspace(start, stop, 3)
    with pytest.raises(ValueError, match="geomspace.*zero"):
        snp.geomspace(start, stop, 3)
