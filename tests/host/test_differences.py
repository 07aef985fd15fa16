"""Differences along short and empty axes against NumPy: diff of an axis of n or fewer
elements (0 included) is empty, with prepend and append counted in; n=0 returns x
untouched; ediff1d of 0, 1 or 2 elements; gradient of too few samples is NumPy's
ValueError. Values, dtype and shape, eagerly, under jit and in lazy()."""

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

SHAPES = [(0,), (1,), (2,), (5,), (0, 3), (3, 0), (1, 4), (4, 1), (2, 0, 3), (2, 3, 4)]
CASES = [(s, a) for s in SHAPES for a in sorted({0, len(s) - 1, -1})]
DTYPES = ["float32", "int32", "uint8", "bool"]
NS = [0, 1, 2, 3]


def _edges(x, axis, dtype):
    """(prepend, append) pairs: none, a scalar of x's dtype, an edge of 1 or 2 along axis."""
    shape = list(x.shape)
    shape[axis] = 2
    edge = (np.arange(np.prod(shape)).reshape(shape) * 7 % 5).astype(dtype)
    one = np.dtype(dtype).type(1)
    return [(None, None), (one, None), (None, edge), (one, edge[(slice(None),) * (
        axis % x.ndim) + (slice(0, 1),)])]


def _diffs(xp, x, axis, edges):
    # (NumPy's default is no value: None would be prepended as an object)
    return [xp.diff(x, n=n, axis=axis, **{k: v for k, v in (("prepend", p), ("append", a))
                                          if v is not None})
            for n in NS for p, a in edges]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", CASES, ids=str)
def test_diff_of_short_and_empty_axes_matches_numpy(shape, axis, dtype):
    x = (np.arange(int(np.prod(shape))).reshape(shape) ** 2 % 11).astype(dtype)
    edges = _edges(x, axis, dtype)
    want = _diffs(np, x, axis, edges)
    runs = {"eager": _diffs(snp, snp.asarray(x), axis, edges),
            # (the edges as arguments: an empty bool constant of shape (0, 2) does not
            # compile, a bug of constants, not of diff)
            "jit": stablejit.jit(lambda t, e: _diffs(snp, t, axis, e))(x, edges)}
    with stablejit.lazy():
        runs["lazy"] = _diffs(snp, snp.asarray(x), axis, edges)
    labels = [(n, k) for n in NS for k in ("", "prepend", "append", "both")]
    for mode, got in runs.items():
        for (n, k), g, w in zip(labels, got, want, strict=True):
            g = np.asarray(g)
            where = f"diff({shape}, n={n}, axis={axis}, {k}) {dtype} {mode}"
            assert g.shape == w.shape and g.dtype == w.dtype, f"{where}: {g.shape} {g.dtype}, " \
                                                              f"NumPy {w.shape} {w.dtype}"
            np.testing.assert_array_equal(g, w, err_msg=where)


def test_diff_of_order_0_is_x_even_for_a_0d_one():
    x = snp.asarray([1.0, 2.0, 4.0])
    want = np.diff(np.asarray([1.0, 2.0, 4.0]), n=0, prepend=5.0)
    assert np.asarray(snp.diff(x, n=0, prepend=5.0)).tolist() == want.tolist() == [1, 2, 4]
    assert float(snp.diff(snp.asarray(3.0), n=0)) == 3.0


@pytest.mark.parametrize("n", [1, 2])
def test_diff_of_a_0d_tensor_says_to_give_it_a_dimension(n):
    with pytest.raises(ValueError):
        np.diff(np.float32(3), n=n)
    with pytest.raises(ValueError, match=r"diff: x is 0-d.*atleast_1d"):
        snp.diff(snp.asarray(3.0), n=n)


@pytest.mark.parametrize("size", [0, 1, 2, 5])
@pytest.mark.parametrize("to_begin,to_end", [(None, None), (-1, None), (None, [9, 8]),
                                             ([3], 4)], ids=str)
def test_ediff1d_of_few_elements_matches_numpy(size, to_begin, to_end):
    x = (np.arange(size) ** 2).astype(np.float32)
    want = np.ediff1d(x, to_end=to_end, to_begin=to_begin)
    f = lambda t: snp.ediff1d(t, to_end=to_end, to_begin=to_begin)  # noqa: E731
    for mode, got in (("eager", f(snp.asarray(x))), ("jit", stablejit.jit(f)(x))):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype, mode
        np.testing.assert_array_equal(got, want, err_msg=mode)


@pytest.mark.parametrize("shape,axis", [((0,), None), ((1,), None), ((3, 1), None),
                                        ((3, 1), 1), ((0, 3), 0), ((1, 4), -2)], ids=str)
def test_gradient_of_too_few_samples_is_numpys_value_error(shape, axis):
    with pytest.raises(ValueError):
        np.gradient(np.zeros(shape, np.float32), axis=axis)
    for run in (lambda f: f(), lambda f: stablejit.jit(f)()):
        with pytest.raises(ValueError, match=r"gradient: axis \d+ has [01] sample"):
            run(lambda: snp.gradient(snp.zeros(shape), axis=axis))


@pytest.mark.parametrize("shape,axis", [((2,), None), ((0, 3), 1), ((3, 0), 0),
                                        ((2, 1), 0)], ids=str)
def test_gradient_of_2_samples_or_an_empty_other_axis_matches_numpy(shape, axis):
    x = (np.arange(int(np.prod(shape))).reshape(shape) ** 2).astype(np.float32)
    want = np.gradient(x, axis=axis)
    for mode, got in (("eager", snp.gradient(snp.asarray(x), axis=axis)),
                      ("jit", stablejit.jit(lambda t: snp.gradient(t, axis=axis))(x))):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype, mode
        np.testing.assert_array_equal(got, want, err_msg=mode)
