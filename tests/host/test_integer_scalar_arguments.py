"""Sizes and axes given as integer scalars of every kind a NumPy or JAX program passes —
Python ints, NumPy integer scalars, concrete 0-d integer tensors — give the same results
as Python ints, on the native and the Python paths, eagerly and in lazy(); a float
scalar is refused with a clear error. (An optimizer state that kept a shape came back
from jit as 0-d tensors and `reshape` raised "Tensor is unhashable".)"""

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import recorder_native

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)

# name, f(x, a, b) with a == 2 and b == 3 as the kind of scalar under test
CALLS = [
    ("reshape", lambda x, a, b: snp.reshape(x, (b, a))),
    ("reshape -1", lambda x, a, b: snp.reshape(x, (-1, a))),
    ("x.reshape(*sizes)", lambda x, a, b: x.reshape(b, a)),
    ("x.reshape(size)", lambda x, a, b: x.reshape(a * b)),
    ("zeros", lambda x, a, b: snp.zeros((a, b))),
    ("full", lambda x, a, b: snp.full((a, b), 1.5)),
    ("broadcast_to", lambda x, a, b: snp.broadcast_to(x[0], (a, b))),
    ("tile", lambda x, a, b: snp.tile(x, (a, 1))),
    ("eye", lambda x, a, b: snp.eye(a, b)),
    ("arange", lambda x, a, b: snp.arange(a, b + 4)),
    ("expand_dims", lambda x, a, b: snp.expand_dims(x, a - 2)),
    ("moveaxis", lambda x, a, b: snp.moveaxis(x, a - 2, 1)),
    ("swapaxes", lambda x, a, b: snp.swapaxes(x, a - 2, 1)),
    ("take axis", lambda x, a, b: snp.take(x, snp.asarray([0]), axis=a - 1)),
    ("squeeze", lambda x, a, b: snp.squeeze(x[:1], a - 2)),
    ("slice", lambda x, a, b: x[:a - 1, 1:b]),
    ("roll", lambda x, a, b: snp.roll(x, a, axis=1)),
    ("repeat", lambda x, a, b: snp.repeat(x, a, axis=0)),
    ("split", lambda x, a, b: snp.split(x, b, axis=1)),
]

KINDS = {"numpy int64": np.int64, "numpy uint8": np.uint8, "0-d tensor": snp.asarray}


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name,f", CALLS, ids=[c[0] for c in CALLS])
def test_integer_scalars_act_as_python_ints(name, f, kind, native):
    if native and not recorder_native.available():
        pytest.skip("no native recorder in this build")
    make = KINDS[kind]
    x = snp.asarray(X)
    want = [np.asarray(t) for t in stablejit.tree.leaves(f(x, 2, 3))]
    was = recorder_native.installed()
    recorder_native.install(native)
    try:
        for lazily in (False, True):
            if lazily:
                with stablejit.lazy():
                    got = f(snp.asarray(X), make(2), make(3))
            else:
                got = f(x, make(2), make(3))
            got = [np.asarray(t) for t in stablejit.tree.leaves(got)]
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g, w, err_msg=f"{name} lazy={lazily}")
    finally:
        recorder_native.install(was)


@pytest.mark.parametrize("name,call", [
    ("reshape", lambda x, v: snp.reshape(x, (v, 2))),
    ("zeros", lambda x, v: snp.zeros((v, 2))),
    ("axis", lambda x, v: snp.expand_dims(x, v)),
])
def test_float_scalars_are_refused_with_the_rule(name, call):
    x = snp.asarray(X)
    for v in (3.0, np.float32(3.0), snp.asarray(3.0)):
        with pytest.raises(TypeError, match="integer"):
            call(x, v)
