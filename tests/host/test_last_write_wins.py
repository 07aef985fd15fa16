"""NumPy's writes with repeated positions (x[i] = v, put, writes through a view): the last
write stays, on every platform. XLA leaves the order of a scatter's writes to one position
unspecified; the host applies them in order, GPUs race (an H200 kept another write than
NumPy's for put(mode='wrap'/'clip') and x[[1, 1]] = ...). So stablejit drops every write a
later one overrides before the scatter, and the program's result no longer depends on
the order: checked here on the host by the mask's own property (the writes left are to
distinct positions and are the last ones), and end to end against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from hypothesis import given, settings
from hypothesis import strategies as st
from stablejit.numpy._indexing import _last_writes


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=30))
def test_the_writes_left_are_distinct_and_the_last_ones(positions):
    size = 6  # position 6 is a dropped write
    pos = np.asarray(positions, np.int32)
    keep = np.asarray(_last_writes(snp.asarray(pos), size))
    kept = pos[keep]
    assert len(set(kept.tolist())) == kept.size
    for p in set(positions):
        assert keep[len(pos) - 1 - pos[::-1].tolist().index(p)]  # the last write of p


def _setitem(index):
    def f(xp, a, v):
        a[index] = v
        return a
    return f


# (name, write(xp, a, values) -> a, operand, values): each repeats a position
CASES = {
    "ints, repeated": (_setitem(np.array([1, 3, 1, 1, 3])), np.zeros(5), np.arange(5.0)),
    "rows, repeated": (_setitem(np.array([2, 0, 2])), np.zeros((4, 3)),
                       np.arange(9.0).reshape(3, 3)),
    "two index arrays, repeated pairs": (_setitem((np.array([0, 1, 0]), np.array([2, 2, 2]))),
                                         np.zeros((2, 3)), np.array([5.0, 6.0, 7.0])),
    "index array and slice": (_setitem((np.array([3, 1, 3]), slice(None))),
                              np.zeros((4, 2)), np.arange(6.0).reshape(3, 2)),
    "negative and positive alike": (_setitem(np.array([-1, 4, -1])), np.zeros(5),
                                    np.array([1.0, 2.0, 3.0])),
    "bool-free 2-d index array": (_setitem(np.array([[0, 2], [2, 0]])), np.zeros(3),
                                  np.array([[1.0, 2.0], [3.0, 4.0]])),
    "put, wrap": (lambda xp, a, v: (xp.put(a, np.array([0, 5, -1, -13, 20, 30]), v,
                                           mode="wrap"), a)[1],
                  np.arange(12.0).reshape(3, 4), np.array([7.5, -8.0, 9.0])),
    "put, clip": (lambda xp, a, v: (xp.put(a, np.array([0, 5, -1, -13, 20, 30]), v,
                                           mode="clip"), a)[1],
                  np.arange(12.0).reshape(3, 4), np.array([7.5, -8.0, 9.0])),
    "through a view": (lambda xp, a, v: (_setitem(np.array([1, 1, 0]))(xp, a[1], v), a)[1],
                       np.zeros((3, 4)), np.array([1.0, 2.0, 3.0])),
}


@pytest.mark.parametrize("way", ["eager", "jit", "lazy", "tensor index"])
@pytest.mark.parametrize("name", list(CASES))
def test_repeated_positions_keep_numpys_last_write(name, way):
    write, a, v = CASES[name]
    want = write(np, a.copy(), v)
    if way == "jit":
        got = stablejit.jit(lambda t, u: write(snp, t, u))(snp.asarray(a), snp.asarray(v))
    elif way == "lazy":
        with stablejit.lazy():
            got = write(snp, snp.asarray(a), snp.asarray(v))
    else:
        got = write(snp, snp.asarray(a), snp.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_repeated_tensor_index_keeps_the_last_write():
    a = snp.zeros(4)
    a[snp.asarray([2, 2, 0, 2])] = snp.asarray([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(a), [3.0, 0.0, 4.0, 0.0])


def test_distinct_static_positions_need_no_extra_scatter():
    """The common x[[0, 2]] = v: static and distinct, one scatter as before."""
    def f(t):
        t[np.array([0, 2])] = 1.0
        return t
    text = stablejit.jit(f).lower(snp.zeros(4)).as_text()
    assert text.count("\"stablehlo.scatter\"(") == 1


@pytest.mark.parametrize("name", ["setitem", "put", "view"])
def test_traced_positions_are_deduplicated_in_the_program(name):
    """The host applies a scatter's writes in order, so the values above would pass
    without the deduplication: check the program holds it (the scatter-max that finds
    each position's last write) for every NumPy-form write."""
    def f(t, i):
        if name == "setitem":
            t[i] = 1.0
        elif name == "put":
            snp.put(t, i, 1.0, mode="wrap")
        else:
            t[1][i] = 1.0
        return t
    text = stablejit.jit(f).lower(snp.zeros((3, 4)), snp.asarray([1, 1])).as_text()
    assert text.count("\"stablehlo.scatter\"(") >= 2 and "stablehlo.maximum" in text
