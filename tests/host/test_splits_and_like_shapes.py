"""The split family (split, array_split, hsplit, vsplit, dsplit) on tensors of 0 to 4
dimensions, and the *_like functions' shape= keyword, against NumPy: the same pieces, or
NumPy's exception class where NumPy refuses (vsplit of a 1-d tensor split its axis 0
silently; dsplit and shape= were missing)."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

SHAPES = [(), (6,), (2, 6), (6, 4), (2, 3, 4), (1, 2, 4, 2)]
SPLITS = ["split", "array_split", "hsplit", "vsplit", "dsplit"]


@pytest.mark.parametrize("sections", [2, [1, 3]], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", SPLITS)
def test_splits_give_numpys_pieces_or_its_error(name, shape, sections):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        want = getattr(np, name)(x, sections)
    except (ValueError, IndexError, np.exceptions.AxisError) as e:
        for f in (lambda t: getattr(snp, name)(t, sections),
                  stablejit.jit(lambda t: getattr(snp, name)(t, sections))):
            with pytest.raises(type(e)):
                f(snp.asarray(x))
        return
    for f in (lambda t: getattr(snp, name)(t, sections),
              stablejit.jit(lambda t: getattr(snp, name)(t, sections))):
        got = f(snp.asarray(x))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_array_equal(np.asarray(g), w)


LIKES = {"zeros_like": (), "ones_like": (), "empty_like": (), "full_like": (7,)}


@pytest.mark.parametrize("shape", [None, (3,), (2, 0), (), 4], ids=str)
@pytest.mark.parametrize("dtype", [None, np.int8, np.float64], ids=str)
@pytest.mark.parametrize("name", list(LIKES))
def test_like_functions_take_shape_as_numpy(name, dtype, shape):
    x = np.ones((2, 3), np.float32)
    want = getattr(np, name)(x, *LIKES[name], dtype=dtype, shape=shape)
    for f in (lambda t: getattr(snp, name)(t, *LIKES[name], dtype=dtype, shape=shape),
              stablejit.jit(lambda t: getattr(snp, name)(t, *LIKES[name], dtype=dtype,
                                                          shape=shape))):
        got = f(snp.asarray(x))
        assert got.shape == want.shape and got.dtype == want.dtype
        if name != "empty_like":
            np.testing.assert_array_equal(np.asarray(got), want)
