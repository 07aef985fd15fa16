"""x[index] with integer arrays, masks and mixed basic/advanced indices (NumPy's layout
rules) and x.at[index] updates, three ways against NumPy; static out-of-range indices
raise IndexError; tensor indices follow JAX (clamp reads, drop updates); boolean masks
inside jit raise MustCompileError."""

import contextlib

import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

from tests.support.runners import check_three_ways

rng = np.random.default_rng(1)
X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

STATIC = [
    (np.array([2, 0, -1]),),
    (slice(None), [1, 3]),
    ([0, 2], slice(1, 4), [1, -1]),  # separated advanced indices: broadcast dims go first
    (Ellipsis, [0, 1]),
    (None, [1, 2], None, 1),
    ([[0], [2]], [1, 3]),  # broadcasting index arrays
    (1, slice(None), [0, 4]),  # int + array separated by a slice
    (slice(None, None, -1), [3, 0], slice(None, None, 2)),
    (np.array([], np.int64),),
]


@pytest.mark.parametrize("index", STATIC, ids=[str(i) for i in range(len(STATIC))])
def test_static_integer_array_indexing_matches_numpy(index):
    check_three_ways(lambda x: x[index], lambda x: x[index], X)


@pytest.mark.parametrize("index", [(np.array([2, 0, 1]),), (slice(None), np.array([[1, 3]])),
                                   (np.array([0, 2]), slice(1, 4), np.array([1, 4]))])
def test_tensor_indices_are_gathered(index):
    def f(x, *idx):
        it = iter(idx)
        return x[tuple(next(it) if isinstance(i, np.ndarray) else i for i in index)]
    arrays = [i for i in index if isinstance(i, np.ndarray)]
    check_three_ways(f, lambda x, *a: x[index], X, *arrays)


def test_boolean_masks_outside_jit():
    m = X[:, :, 0] > 20
    for backend in ("xla", "reference"):
        with stablejit.default_backend(backend):
            t = snp.asarray(X)
            np.testing.assert_array_equal(t[m].numpy(), X[m])
            np.testing.assert_array_equal(t[snp.asarray(X > 30)].numpy(), X[X > 30])
            np.testing.assert_array_equal(t[1, X[1, :, 0] > 30].numpy(), X[1, X[1, :, 0] > 30])


def test_boolean_mask_inside_jit_must_compile():
    with pytest.raises(stablejit.MustCompileError, match="size"):
        stablejit.jit(lambda x: x[x > 3])(snp.asarray(X))


def test_static_out_of_range_raises_index_error_naming_index_axis_and_size():
    t = snp.asarray(X)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 4"):
        t[:, [0, 5]]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        t[np.array([-4])]
    with pytest.raises(IndexError, match="boolean index did not match"):
        t[np.ones(2, bool)]
    with pytest.raises(IndexError, match="integer"):
        t[np.array([0.5])]


def test_tensor_out_of_range_reads_clamp_like_jax():
    idx = np.array([7, -7, -1])
    want = np.asarray(jnp.asarray(X)[jnp.asarray(idx)])
    check_three_ways(lambda x, i: x[i], lambda x, i: want, X, idx)
    fill = np.asarray(jnp.asarray(X).at[jnp.asarray(idx)].get(mode="fill"))
    check_three_ways(lambda x, i: x.at[i].get(mode="fill"), lambda x, i: fill, X, idx)


def np_update(x, index, v, method):
    y = x.copy()
    if method == "set":
        y[index] = v
    else:
        {"add": np.add, "multiply": np.multiply, "min": np.minimum,
         "max": np.maximum}[method].at(y, index, v)
    return y


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_updates_with_leading_advanced_indices(method):
    idx = np.array([0, 2, 0] if method != "set" else [0, 2])
    v = rng.normal(size=(len(idx), 4, 5)).astype(np.float32)
    check_three_ways(lambda x, i, v: getattr(x.at[i], method)(v),
                     lambda x, i, v: np_update(x, i, v, method), X, idx, v)


@pytest.mark.parametrize("index", [(slice(1, 3), [0, 2]), (slice(None), 1), (Ellipsis, 3),
                                   (1, slice(None, None, -2)), ([0, 2], slice(None), [4, 0])])
def test_at_add_with_mixed_indices_goes_through_flat_positions(index):
    shape = X[index].shape
    v = rng.normal(size=shape).astype(np.float32)
    check_three_ways(lambda x, v: x.at[index].add(v), lambda x, v: np_update(x, index, v, "add"),
                     X, v)


def test_at_set_broadcasts_values_and_casts_them():
    check_three_ways(lambda x: x.at[:, 1].set(7), lambda x: np_update(x, (slice(None), 1), 7,
                                                                      "set"), X)


def test_tensor_out_of_range_updates_are_dropped_like_jax():
    idx = np.array([1, 9, -1])
    want = np.asarray(jnp.asarray(X).at[jnp.asarray(idx)].add(1.0))
    check_three_ways(lambda x, i: x.at[i].add(1.0), lambda x, i: want, X, idx)
    want = np.asarray(jnp.asarray(X).at[jnp.asarray(idx)].add(1.0, mode="clip"))
    check_three_ways(lambda x, i: x.at[i].add(1.0, mode="clip"), lambda x, i: want, X, idx)


def test_an_integer_index_is_a_program_input_so_a_loop_compiles_once():
    """x[i] on a device: i goes in as a cached device scalar, not as slice attributes,
    so a loop over rows compiles nothing after its first two rows (eagerly and in a
    lazy block); negative indices, int and 0-d tensor indices give NumPy's rows."""
    from stablejit import compilation

    a = np.arange(48, dtype=np.float32).reshape(8, 6)
    x = snp.asarray(a)

    def compiles():
        return compilation.stats["compiled"] + compilation.stats["disk"]

    x[0], x[1, 2]
    before = compiles()
    for i in range(-8, 8):
        np.testing.assert_array_equal(np.asarray(x[i]), a[i])
        assert float(x[i, 2]) == a[i, 2]
    assert compiles() == before
    for i in (-8, -1, 0, 7):  # a 0-d tensor index (possibly negative) is normalised
        np.testing.assert_array_equal(np.asarray(x[snp.asarray(np.int64(i))]), a[i])
        np.testing.assert_array_equal(np.asarray(x[snp.asarray(np.int32(i)), 1:3]),
                                      a[i, 1:3])
    with stablejit.lazy():  # (rows 1-3: index 0 would share its buffer with the zero start)
        rows = [x[i] * 1.0 for i in range(1, 4)]
    lazy_before = compiles()
    with stablejit.lazy():
        rows = [x[i] * 1.0 for i in range(4, 7)]  # the same graph, other indices
    assert compiles() == lazy_before
    for r, i in zip(rows, range(4, 7), strict=True):
        np.testing.assert_array_equal(np.asarray(r), a[i])


# indices of slices, None and Ellipsis: planned once per (shape, index) (_indexing._PLANS)
PLAIN = [(slice(None), None), (None,), (Ellipsis, None), (slice(1, None), slice(None, None, 2)),
         (slice(None, None, -1),), (slice(None, None, -2), slice(1, 3)), (Ellipsis,),
         (slice(None),), (None, Ellipsis, None), (slice(5, 1, -1), None, slice(None)),
         (slice(-3, None), slice(0, 0))]


@pytest.mark.parametrize("index", PLAIN, ids=repr)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_planned_basic_index_matches_numpy_every_call_and_stays_a_view(index, lazy):
    """The first call of an index on a shape plans its ops, later ones replay the plan:
    both give NumPy's values, and a write into the result still reaches the base."""
    from stablejit.numpy import _indexing
    a = np.arange(42, dtype=np.float32).reshape(7, 6)
    _indexing._PLANS.clear()
    for call in range(3):
        x = snp.asarray(a)
        with stablejit.lazy() if lazy else contextlib.nullcontext():
            got = x[index]
            got_np = got.numpy()
        np.testing.assert_array_equal(got_np, a[index], err_msg=f"call {call}")
        assert (a.shape, _indexing._plain_key(index)) in _indexing._PLANS
        if got.size:  # NumPy's view semantics: x[index] = ... writes through
            view, expected = x[index], a.copy()
            view[...] = -1.0
            expected[index] = -1.0
            np.testing.assert_array_equal(x.numpy(), expected, err_msg=f"call {call}")


# indices with Python ints: planned per (shape, index form, backend) with each int a
# program input, so a plan replayed with other ints must read other elements. Each form
# puts the int it is given on `axis` (of sizes 7, 6); a second int is derived from it
WITH_INTS = [(lambda i: i, 0), (lambda i: (i, slice(None)), 0),
             (lambda i: (slice(None), i), 1), (lambda i: (i, None), 0),
             (lambda i: (Ellipsis, i), 1), (lambda i: (i, i % 6), 0),
             (lambda i: (slice(1, None), i), 1), (lambda i: (None, i, slice(None, None, -2)), 0),
             (lambda i: (slice(None, None, -1), i), 1), (lambda i: (i % 7, None, i), 1)]


@pytest.mark.parametrize("form", range(len(WITH_INTS)))
@pytest.mark.parametrize("mode", ["eager", "lazy", "jit"])
def test_a_planned_index_with_ints_reads_each_calls_ints(form, mode):
    """The first call plans the index's ops; later calls with other ints (negative too)
    replay them with their own values, check each against its axis as the first call
    did (the same IndexError), and a write into the result still reaches the base."""
    from stablejit.numpy import _indexing
    make, axis = WITH_INTS[form]
    a = np.arange(42, dtype=np.float32).reshape(7, 6)
    n = a.shape[axis]
    _indexing._PLANS.clear()

    def read(x, index):
        return stablejit.jit(lambda x: x[index])(x) if mode == "jit" else x[index]
    for i in (2, -1, n - 1, -n, 0):
        index = make(i)
        x = snp.asarray(a)
        with stablejit.lazy() if mode == "lazy" else contextlib.nullcontext():
            got_np = read(x, index).numpy()
        np.testing.assert_array_equal(got_np, a[index], err_msg=f"index {index}")
        if mode != "jit" and np.shares_memory(a[index], a):  # (NumPy's x[2, 2] is a copy)
            view, expected = x[index], a.copy()
            view[...] = -1.0
            expected[index] = -1.0
            np.testing.assert_array_equal(x.numpy(), expected, err_msg=f"index {index}")
    if mode != "jit":
        assert any(_indexing._INT in k[1] for k in _indexing._PLANS), "no plan was kept"
    for bad in (n, -n - 1):
        x = snp.asarray(a)
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis "
                                             f"{axis} with size {n}"):
            with stablejit.lazy() if mode == "lazy" else contextlib.nullcontext():
                read(x, make(bad))
