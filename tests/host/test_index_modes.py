"""`mode=` and `fill_value=` of x.at[i].get/set/add/..., snp.take, snp.take_along_axis
and snp.put_along_axis against jax: values and dtypes, for in-range and out-of-range
indices (positive and negative), static (Python ints, NumPy arrays, slices) and tensor
ones, eagerly (XLA and reference backends) and under jit (the index closed over, or a
traced argument).

An explicit mode applies to static indices as to tensor ones (x.at[11].get(mode="clip")
is x[9], as in jax). Without a mode static out-of-range indices raise IndexError, as in
NumPy (jax clamps reads and drops updates): tested at the end, with the other errors.
stablejit.lax has no gather or scatter (jax.lax's are the primitives these lower to), so
there is nothing of lax to compare here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.jax_equivalents import jax_on_the_host

X1 = np.arange(10, dtype=np.float32) * 1.5 - 4
X2 = np.arange(12, dtype=np.float32).reshape(3, 4) - 5


def _is_static_part(p) -> bool:
    return isinstance(p, slice) or p is None or p is Ellipsis


def split_index(index):
    """(arrays, build): the integer parts of `index` as NumPy arrays, and a function
    that puts values for them back in place (slices, None and ... stay)."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [np.asarray(p) for p in parts if not _is_static_part(p)]

    def build(*values):
        it = iter(values)
        out = tuple(p if _is_static_part(p) else next(it) for p in parts)
        return out if isinstance(index, tuple) else out[0]
    return arrays, build


def run_all_ways(op, x: np.ndarray, index) -> dict:
    """op(tensor, index) -> tensor, every way: {way: NumPy result}. `op` gets the index
    static (as written) or with its integer parts as tensors (eager) or traced (jit)."""
    arrays, build = split_index(index)
    out = {
        "eager static": op(snp.asarray(x), index),
        "jit static": stablejit.jit(lambda t: op(t, index))(snp.asarray(x)),
    }
    if arrays:
        out["eager tensor"] = op(snp.asarray(x), build(*map(snp.asarray, arrays)))
        out["jit traced"] = stablejit.jit(lambda t, *a: op(t, build(*a)))(
            snp.asarray(x), *arrays)
    with stablejit.default_backend("reference"):
        out["reference static"] = op(snp.asarray(x), index)
        if arrays:
            out["reference tensor"] = op(snp.asarray(x), build(*map(snp.asarray, arrays)))
    return {k: np.asarray(v) for k, v in out.items()}


def jax_result(op, x: np.ndarray, index) -> np.ndarray:
    """jax's answer with the integer parts of `index` traced: jax applies a mode to
    static and traced indices alike."""
    arrays, build = split_index(index)
    return np.asarray(jax.jit(lambda t, *a: op(t, build(*a)))(jnp.asarray(x), *arrays))


def check(op, jop, x, index):
    want = jax_result(jop, x, index)
    for way, got in run_all_ways(op, x, index).items():
        assert got.dtype == want.dtype, f"{way}: dtype {got.dtype}, jax {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=f"{way}, index {index!r}")


# ---- the table -------------------------------------------------------------------------

# (name, operand, index): in range, out of range above and below, far below (-25 is still
# negative once n is added), arrays mixing them, and ints mixed with slices
INDICES = [
    ("int in range", X1, 3),
    ("negative int in range", X1, -2),
    ("int above", X1, 11),
    ("int below", X1, -11),
    ("int far below", X1, -25),
    ("array mixed", X1, np.array([11, -11, -1, 3, -25, 0])),
    ("2-d array", X1, np.array([[12, 2], [-10, -11]])),
    ("int above, slice", X2, (5, slice(1, 3))),
    ("int below, reversed slice", X2, (-4, slice(None, None, -1))),
    ("slice, int above", X2, (slice(None), 7)),
    ("slice, array", X2, (slice(0, 2), np.array([5, -5, -1, 1]))),
    ("two ints", X2, (1, -7)),
    ("two arrays", X2, (np.array([0, 3, -4]), np.array([4, 1, -1]))),
]
IDS = [name for name, _, _ in INDICES]

GET_MODES = [("clip", None), ("fill", None), ("fill", -1.0), ("drop", None), ("drop", 7.0),
             ("promise_in_bounds", None)]


@pytest.mark.parametrize("mode,fill_value", GET_MODES, ids=[f"{m}-{f}" for m, f in GET_MODES])
@pytest.mark.parametrize("name,x,index", INDICES, ids=IDS)
def test_get_modes_match_jax(name, x, index, mode, fill_value):
    def op(t, i):
        return t.at[i].get(mode=mode, fill_value=fill_value)
    check(op, op, x, index)


def test_get_without_mode_on_tensor_indices_clamps_like_jax():
    for _, x, index in INDICES:
        arrays, build = split_index(index)
        if not arrays:
            continue
        want = jax_result(lambda t, i: t.at[i].get(), x, index)
        got = stablejit.jit(lambda t, *a, build=build: t.at[build(*a)].get())(x, *arrays)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=repr(index))
        got = snp.asarray(x)[build(*map(snp.asarray, arrays))]
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=repr(index))


UPDATES = ["set", "add", "subtract", "multiply", "min", "max"]
UPDATE_MODES = ["clip", "drop", "fill", "promise_in_bounds"]


@pytest.mark.parametrize("mode", UPDATE_MODES)
@pytest.mark.parametrize("method", UPDATES)
@pytest.mark.parametrize("name,x,index", INDICES, ids=IDS)
def test_update_modes_match_jax(name, x, index, method, mode):
    shape = np.shape(jnp.asarray(x).at[index].get(mode="clip"))
    # clamped indices repeat: set writes one value (which write wins is unspecified),
    # the others small exact values (the sums and products do not depend on the order)
    values = np.float32(2.5) if method == "set" else (
        np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5 + 0.5)

    def op(t, i):
        return getattr(t.at[i], method)(values, mode=mode)
    check(op, op, x, index)


@pytest.mark.parametrize("method", UPDATES)
def test_updates_without_mode_drop_out_of_range_tensor_indices_like_jax(method):
    idx = np.array([11, -11, -1, 3, -25])
    v = np.arange(5, dtype=np.float32) + 0.5

    def op(t, i):
        return getattr(t.at[i], method)(v)
    want = jax_result(op, X1, idx)
    got = stablejit.jit(op)(X1, idx)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(op(snp.asarray(X1), snp.asarray(idx))), want)


# default fills and the fill value's dtype: NaN, the most negative signed integer, the
# largest unsigned one, True; a fill_value takes the operand's dtype
DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.uint32, np.bool_]


@pytest.mark.parametrize("fill_value", [None, 1, 0])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fill_values_and_dtypes_match_jax(dtype, fill_value):
    x = (np.arange(10) % 3).astype(dtype)
    for index in (11, -11, np.array([11, -11, -1, 3])):
        def op(t, i):
            return t.at[i].get(mode="fill", fill_value=fill_value)
        check(op, op, x, index)

        def take(ns):
            return lambda t, i: ns.take(t, i, mode="fill", fill_value=fill_value)
        check(take(snp), take(jnp), x, index)


def _np_modes(x, idx, mode, wrap_negatives=True):
    """The positions and validity JAX's modes give, from Python ints (no wrap-around)."""
    n = x.shape[0]
    i = np.asarray(idx).astype(object)
    if wrap_negatives:
        i = np.where(i < 0, i + n, i)
    valid = (i >= 0) & (i < n)
    if mode == "wrap":
        return np.mod(np.asarray(idx).astype(object), n).astype(np.int64), valid | True
    return np.clip(i, 0, n - 1).astype(np.int64), valid


def np_get(x, idx, mode, wrap_negatives=True):
    pos, valid = _np_modes(x, idx, mode, wrap_negatives)
    return x[pos] if mode != "fill" else np.where(valid, x[pos], np.nan).astype(x.dtype)


def np_add(x, idx, mode):
    pos, valid = _np_modes(x, idx, mode)
    y = x.copy()
    np.add.at(y, pos if mode == "clip" else pos[valid], np.float32(1))
    return y


@pytest.mark.parametrize("idtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8,
                                    np.int32, np.int64])
def test_index_dtypes_with_large_values_do_not_wrap_around(idtype):
    """A uint32 index 2**32 - 1 is out of range: it must not become int32 -1 (x[9]), nor
    2**40 become 0. (jax gets some of these wrong, x64 or not: .at[] converts the index to
    int32 first, so x.at[2**40].get(mode="fill") is x[0]; NumPy is the reference here.)"""
    info = np.iinfo(idtype)
    idx = np.array([info.max, info.min, 3, info.max - 1, info.min + 1], idtype)
    for mode in ("clip", "fill"):
        want = np_get(X1, idx, mode)
        for got in run_all_ways(lambda t, i, mode=mode: t.at[i].get(mode=mode), X1,
                                idx).values():
            np.testing.assert_array_equal(got, want, err_msg=f"get {mode}")
        want = np_add(X1, idx, mode)
        update = "clip" if mode == "clip" else "drop"
        for got in run_all_ways(lambda t, i, m=update: t.at[i].add(1.0, mode=m), X1,
                                idx).values():
            np.testing.assert_array_equal(got, want, err_msg=f"add {update}")
    for mode in ("clip", "fill", "wrap"):  # take: clip does not wrap negatives (NumPy's)
        want = np_get(X1, idx, mode, wrap_negatives=mode != "clip")
        for got in run_all_ways(lambda t, i, mode=mode: snp.take(t, i, mode=mode), X1,
                                idx).values():
            np.testing.assert_array_equal(got, want, err_msg=f"take {mode}")
    for mode in ("clip", "fill"):
        want = np_get(X1, idx, mode)
        for got in run_all_ways(lambda t, i, mode=mode: snp.take_along_axis(
                t, i, axis=0, mode=mode), X1, idx).values():
            np.testing.assert_array_equal(got, want, err_msg=f"take_along_axis {mode}")


# ---- take, take_along_axis, put_along_axis -------------------------------------------

TAKE_INDICES = [3, -2, 11, -11, -25, np.array([11, -11, -1, 3, -25, 0]),
                np.array([[12, 2], [-10, -11]])]
TAKE_MODES = [("fill", None), ("fill", -3.0), ("clip", None), ("wrap", None)]


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode,fill_value", TAKE_MODES,
                         ids=[f"{m}-{f}" for m, f in TAKE_MODES])
def test_take_modes_match_jax(mode, fill_value, axis):
    def take(ns):
        return lambda t, i: ns.take(t, i, axis=axis, mode=mode, fill_value=fill_value)
    for index in TAKE_INDICES:
        check(take(snp), take(jnp), X2, index)


def test_take_without_mode_fills_tensor_indices_like_jax():
    idx = np.array([11, -11, -1, 3, -25])
    want = np.asarray(jnp.take(X1, idx))
    np.testing.assert_array_equal(np.asarray(stablejit.jit(snp.take)(X1, idx)), want)
    np.testing.assert_array_equal(np.asarray(snp.take(snp.asarray(X1), snp.asarray(idx))),
                                  want)


def test_take_mode_raise_checks_static_and_concrete_indices():
    x = snp.asarray(X1)
    np.testing.assert_array_equal(np.asarray(snp.take(x, [3, -1], mode="raise")),
                                  np.take(X1, [3, -1], mode="raise"))
    for idx in (11, [3, -11], snp.asarray([11])):
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 10"):
            snp.take(x, idx, mode="raise")
    # traced indices cannot be checked (jax raises NotImplementedError for mode='raise')
    with pytest.raises(stablejit.MustCompileError, match="mode='raise'"):
        stablejit.jit(lambda t, i: snp.take(t, i, mode="raise"))(X1, np.array([1]))


ALONG_INDICES = {  # by axis: shapes that broadcast against X2's other axis
    0: [np.array([[5, -5, -1, 0], [2, -3, 3, -4]]), np.array([[1, -4, 9, 2]]),
        np.array([[2], [-1]])],
    1: [np.array([[5, -5, -1], [0, 3, -4], [4, 1, 2]]), np.array([[1], [-4], [9]]),
        np.array([[0, 1, 2, 3, -5]])],
}
ALONG_MODES = [(None, None), ("fill", None), ("fill", -2.0), ("drop", None), ("clip", None),
               ("promise_in_bounds", None)]


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode,fill_value", ALONG_MODES,
                         ids=[f"{m}-{f}" for m, f in ALONG_MODES])
def test_take_along_axis_modes_match_jax(mode, fill_value, axis):
    def ours(t, i):
        return snp.take_along_axis(t, i, axis=axis, mode=mode, fill_value=fill_value)

    def theirs(t, i):
        # jax leaves negative indices unwrapped for promise_in_bounds only, "a legacy
        # behavior ... likely to be removed"; here they count from the end in every mode
        return jnp.take_along_axis(t, i, axis=axis, mode=mode, fill_value=fill_value,
                                   wrap_negative_indices=True)
    for index in ALONG_INDICES[axis % 2]:
        want = jax_result(theirs, X2, index)
        got = stablejit.jit(ours)(X2, index)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{index}")
        got = ours(snp.asarray(X2), snp.asarray(index))
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{index}")
        if mode is not None:  # static indices follow an explicit mode too
            for got in (ours(snp.asarray(X2), index),
                        stablejit.jit(lambda t, index=index: ours(t, index))(X2)):
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{index}")


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("mode", [None, "clip", "drop", "fill", "promise_in_bounds"])
def test_put_along_axis_modes_match_jax(mode, axis):
    v = np.float32(9.0)
    for index in ALONG_INDICES[axis]:
        def ours(t, i):
            return snp.put_along_axis(t, i, v, axis=axis, inplace=False, mode=mode)

        def theirs(t, i):
            return jnp.put_along_axis(t, i, v, axis=axis, inplace=False, mode=mode)
        want = jax_result(theirs, X2, index)
        np.testing.assert_array_equal(np.asarray(stablejit.jit(ours)(X2, index)), want)
        np.testing.assert_array_equal(
            np.asarray(ours(snp.asarray(X2), snp.asarray(index))), want)
        if mode is not None:
            np.testing.assert_array_equal(np.asarray(ours(snp.asarray(X2), index)), want)


# ---- errors: no mode on static indices, unknown modes, empty axes ----------------------

def test_static_out_of_range_without_mode_raises_index_error():
    x = snp.asarray(X1)
    with pytest.raises(IndexError, match=r"index 11 is out of bounds.*mode='clip'"):
        x[11]
    with pytest.raises(IndexError, match=r"index 11 is out of bounds.*mode='clip'"):
        x.at[11].get()
    for method in UPDATES:
        with pytest.raises(IndexError, match=r"index -11 is out of bounds for axis 0 with "
                                             r"size 10.*mode='drop'"):
            getattr(x.at[-11], method)(1.0)
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1"):
            getattr(snp.asarray(X2).at[1, 7], method)(1.0)
    with pytest.raises(IndexError, match="index 11 is out of bounds"):
        snp.take(x, 11)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        snp.take_along_axis(snp.asarray(X2), np.array([[9]]), axis=1)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        snp.put_along_axis(snp.asarray(X2), np.array([[9]]), 1.0, axis=1)
    # a mix of a tensor and a static out-of-range index still names the static one
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1"):
        snp.asarray(X2).at[snp.asarray([0]), 7].add(1.0)


def test_unknown_modes_raise_value_error_as_in_jax():
    x = snp.asarray(X1)
    for bad in ("wrap", "raise", "bogus"):
        with pytest.raises(ValueError, match="mode"):
            x.at[1].get(mode=bad)
        with pytest.raises(ValueError, match="mode"):
            x.at[1].set(0.0, mode=bad)
    for bad in ("drop", "promise_in_bounds", "bogus"):  # jax's take takes neither
        with pytest.raises(ValueError, match="mode"):
            snp.take(x, 1, mode=bad)
        with pytest.raises(ValueError, match="mode"):
            snp.take(x, snp.asarray(1), mode=bad)
    with pytest.raises(ValueError, match="mode"):
        snp.take_along_axis(x, np.array([1]), axis=0, mode="bogus")
    with pytest.raises(ValueError, match="mode"):
        snp.put_along_axis(x, np.array([1]), 0.0, axis=0, mode="wrap")


def test_a_mode_on_an_empty_axis_still_raises_index_error_as_in_jax():
    e = snp.zeros((0, 3))
    for mode in ("clip", "fill", "drop", "promise_in_bounds"):
        with pytest.raises(IndexError):
            e.at[0].get(mode=mode)
    for mode in ("clip", "drop"):
        with pytest.raises(IndexError):
            e.at[0].set(1.0, mode=mode)


@pytest.mark.parametrize("mode", ["drop", "fill"])
@pytest.mark.parametrize("method", UPDATES)
@pytest.mark.parametrize("index", [(1, -7), (3, 0), (-4, 1), 9, (0, 4)],
                         ids=["below", "row above", "row below", "int above", "col above"])
def test_a_static_out_of_range_update_compiles_to_no_scatter(index, method, mode):
    """Dropped at trace time, not left to XLA: the GPU backend wrote a constant
    out-of-range scatter index into the next row ((1, -7) of a (3, 4) tensor landed at
    [2, 0] on an H200; jax's own program still does there). The program is a copy, as
    jax's on the host."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5

    def op(t):
        return getattr(t.at[index], method)(np.float32(2.5), mode=mode)
    text = stablejit.jit(op).lower(snp.asarray(x)).as_text()
    assert "stablehlo.scatter" not in text
    got = np.asarray(stablejit.jit(op)(snp.asarray(x)))
    np.testing.assert_array_equal(got, x)
    with jax_on_the_host():
        np.testing.assert_array_equal(got, np.asarray(jax.jit(op)(jnp.asarray(x))))
