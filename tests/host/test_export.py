"""stablejit.export with static shapes: round trips of every primitive family through an
artifact (bit-exact against the jitted original on the host), the exported call under
jit, vmap and grad, pytrees, multi-platform artifacts, and the errors a user can hit."""

from __future__ import annotations

import dataclasses
import warnings
from collections import namedtuple

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import export as E
from stablejit import lax
from stablejit.compiler.primitives.exported import call_exported

S = stablejit.ShapeDtypeStruct
RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def _bits(x):
    """Bit patterns: NaNs and signed zeros compare exactly."""
    a = np.asarray(x)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind in "fc" else a


# name -> (function, example arguments). One per primitive family.
_A, _B, _IMG, _K = _f32(6, 5), _f32(5, 4), _f32(2, 3, 8, 8), _f32(4, 3, 3, 3)
FAMILIES = {
    "elementwise": (lambda x, y: snp.tanh(x) * 2 + snp.exp(-y[:, :1]) - x ** 2,
                    (_A, _f32(6, 5))),
    "integer-and-compare": (lambda i, x: (i // 3 + (x > 0).astype(np.int32), i % 5),
                            (RNG.integers(-9, 9, (6, 5)).astype(np.int32), _A)),
    "reductions": (lambda x: (x.sum(0), x.max(1), snp.argmin(x, 0), snp.prod(x)), (_A,)),
    "gather-scatter": (lambda x, i: (x[i], x.at[i].add(1.0), snp.take(x, i, axis=1)),
                       (_A, np.array([0, 3, 3, 1], np.int32))),
    "dot": (lambda a, b: (a @ b, lax.dot_general(a, a, (((0,), (0,)), ((), ())))), (_A, _B)),
    "conv": (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"), (_IMG, _K)),
    "windows": (lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                            "VALID"), (_IMG,)),
    "cond": (lambda p, x: stablejit.cond(p > 0, lambda v: v * 2, lambda v: v - 1, x),
             (np.float32(1.5), _A)),
    "while": (lambda x: stablejit.while_loop(lambda c: c[0] < 5,
                                             lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1],
              (_A,)),
    "scan": (lambda x: stablejit.scan(lambda c, r: (c + r, c * r), np.zeros(5, np.float32),
                                      x), (_A,)),
    "sort": (lambda x: (snp.sort(x, axis=0), snp.argsort(x, axis=1)), (_A,)),
    "fft": (lambda x: (snp.fft.rfft(x), snp.fft.ifft(x.astype(np.complex64))), (_A,)),
    "linalg": (lambda a: (snp.linalg.cholesky(a @ a.T + 5 * snp.eye(6)),
                          snp.linalg.qr(a)[1], snp.linalg.eigh(a @ a.T)[0]), (_A,)),
    "random-key": (lambda k: (stablejit.random.normal(k, (3, 4)),
                              stablejit.random.randint(k, (5,), 0, 10)),
                   (np.asarray(stablejit.random.key_data(stablejit.random.PRNGKey(7))),)),
    "reshape-transpose-concat": (lambda x: snp.concatenate([x.T.reshape(-1), x[1:3, ::2]
                                                            .reshape(-1)]), (_A,)),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_round_trip_through_an_artifact_is_bit_exact(name):
    fn, args = FAMILIES[name]
    jitted = stablejit.jit(fn)
    exp = E.deserialize(E.export(jitted)(*[S(np.shape(a), np.asarray(a).dtype)
                                           for a in args]).serialize())
    want = stablejit.tree.leaves(jitted(*args))
    got = stablejit.tree.leaves(exp.call(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(_bits(g), _bits(w))


@pytest.mark.host_default
def test_signature_and_avals():
    exp = E.export(stablejit.jit(lambda x, s: {"y": x * s, "n": snp.sum(x > 0)}))(
        S((3, 4), np.float32), 2.0)
    assert exp.fun_name == "<lambda>"
    assert exp.in_avals == (S((3, 4), np.float32), S((), np.float32, weak_type=True))
    assert [(a.shape, a.dtype.name) for a in exp.out_avals] == [((), "int64"),
                                                                ((3, 4), "float32")]
    assert exp.platforms == ("host",) and exp.calling_convention_version == 1
    assert "func.func public @main" in exp.mlir_module()
    back = E.deserialize(exp.serialize())
    assert (back.in_tree, back.out_tree, back.in_avals, back.out_avals) == (
        exp.in_tree, exp.out_tree, exp.in_avals, exp.out_avals)
    out = back.call(np.ones((3, 4), np.float32), 3.0)  # a Python float takes float32
    assert out["y"].weak is False and float(out["y"][0, 0]) == 3.0


def test_closed_over_tensors_become_constants_of_the_artifact():
    w = snp.asarray(_B)
    exp = E.deserialize(E.export(stablejit.jit(lambda x: x @ w))(S((6, 5), np.float32))
                        .serialize())
    assert exp.in_avals == (S((6, 5), np.float32),)
    np.testing.assert_array_equal(exp.call(_A), np.asarray(stablejit.jit(lambda x: x @ w)(_A)))


def test_static_arguments_are_fixed_at_export():
    jitted = stablejit.jit(lambda x, n: x * n, static_argnums=1)
    exp = E.export(jitted)(S((2,), np.float32), 3)
    assert len(exp.in_avals) == 1
    np.testing.assert_array_equal(exp.call(np.ones(2, np.float32)), [3.0, 3.0])


# ---- transformations of the call ---------------------------------------------------------

def _mlp(x, w):
    return snp.tanh(x @ w).sum(axis=-1)


@pytest.fixture(scope="module")
def mlp():
    return E.deserialize(E.export(stablejit.jit(_mlp), vjp_order=1)(
        S((6, 5), np.float32), S((5, 4), np.float32)).serialize())


def test_call_inside_jit_is_one_program(mlp):
    f = stablejit.jit(lambda x, w: mlp.call(x, w) * 2 + 1)
    np.testing.assert_array_equal(_bits(f(_A, _B)), _bits(stablejit.jit(
        lambda x, w: _mlp(x, w) * 2 + 1)(_A, _B)))
    assert [op.prim for op in stablejit.make_jaxpr(f)(_A, _B).eqns].count(call_exported) == 1


@pytest.mark.parametrize("in_axes", [(0, None), (0, 0), (None, 0)])
def test_vmap_calls_once_per_example(mlp, in_axes):
    xs, ws = np.stack([_A, _A + 1, -_A]), np.stack([_B, _B * 2, _B - 1])
    args = [xs if a == 0 else x for a, x in zip(in_axes, (_A, _B), strict=True)]
    args = [args[0], ws if in_axes[1] == 0 else _B]
    got = np.asarray(stablejit.vmap(mlp.call, in_axes=in_axes)(*args))
    want = np.stack([np.asarray(mlp.call(*[a[i] if ax == 0 else a for a, ax in
                                           zip(args, in_axes, strict=True)]))
                     for i in range(3)])
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_grad_uses_the_exported_vjp(mlp):
    loss = lambda f: lambda x, w: snp.sum(f(x, w) ** 2)  # noqa: E731
    got = stablejit.grad(loss(mlp.call), argnums=(0, 1))(_A, _B)
    want = stablejit.grad(loss(_mlp), argnums=(0, 1))(_A, _B)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_grad_without_an_exported_vjp_says_how():
    exp = E.export(stablejit.jit(_mlp))(S((6, 5), np.float32), S((5, 4), np.float32))
    with pytest.raises(TypeError, match=r"holds no VJP.*vjp_order=1"):
        stablejit.grad(lambda x: snp.sum(exp.call(x, _B)))(_A)


@pytest.mark.host_default
def test_reference_backend_runs_the_host_module(mlp):
    x = stablejit.backend_transfer(snp.asarray(_A), stablejit.REFERENCE)
    w = stablejit.backend_transfer(snp.asarray(_B), stablejit.REFERENCE)
    got = mlp.call(x, w)
    np.testing.assert_array_equal(_bits(np.asarray(got)), _bits(mlp.call(_A, _B)))


# ---- pytrees ----------------------------------------------------------------------------

Point = namedtuple("Point", ["x", "y"])


@stablejit.tree.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="tanh", metadata={"static": True})


TREES = {
    "tuple-list-none": ((_A, [_B, None]), lambda t: (t[0] * 2, [t[1][0].sum(), None])),
    "dict": ({"a": _A, "b": {"c": _B}}, lambda d: {"s": d["a"].sum() + d["b"]["c"].sum()}),
    "namedtuple": (Point(_A, _B), lambda p: Point(p.y, p.x)),
    "dataclass": (Layer(_B, _f32(4)), lambda layer: Layer(layer.w * 2, layer.b, layer.act)),
}


@pytest.mark.parametrize("name", sorted(TREES))
def test_pytrees_round_trip(name):
    arg, fn = TREES[name]
    exp = E.deserialize(E.export(stablejit.jit(fn))(arg).serialize())
    got, want = exp.call(arg), stablejit.jit(fn)(arg)
    assert stablejit.tree.structure(got) == stablejit.tree.structure(want)
    for g, w in zip(stablejit.tree.leaves(got), stablejit.tree.leaves(want), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


class Opaque:
    def __init__(self, v):
        self.v = v


stablejit.tree.register_pytree_node(Opaque, lambda o: ((o.v,), None),
                                    lambda aux, ch: Opaque(ch[0]))


@pytest.mark.parametrize("arg,fn,match", [
    ({"a": [_A, Opaque(_B)]}, lambda d: d["a"][0],
     r"Opaque at args\[0\]\['a'\]\[1\].*cannot name"),
    ({1: _A}, lambda d: d[1], r"dict at args\[0\] has the key 1.*str keys"),
    ((_A, "text"), lambda t: t[0], r"argument args\[0\]\[1\] is a str"),
])
def test_unsupported_trees_are_refused_at_export_naming_the_path(arg, fn, match):
    with pytest.raises(TypeError, match=match):
        E.export(stablejit.jit(fn))(arg)


def _edit(data, change) -> bytearray:
    """An artifact whose metadata `change(meta)` edited, written again whole (so only
    the edit differs: the checksum and length are right)."""
    meta, blobs = E._artifact.unpack(data)
    change(meta)
    return E._artifact.pack(meta, blobs)


def test_namedtuple_of_an_unimported_module_loads_as_a_stand_in():
    exp = E.export(stablejit.jit(lambda p: Point(p.y, p.x)))(Point(_A, _B))

    def elsewhere(meta):
        meta["out_tree"]["class"] = "models_not_imported:Point"
    out = E.deserialize(_edit(exp.serialize(), elsewhere)).out_tree.unflatten([1, 2])
    assert type(out) is not Point
    assert type(out).__name__ == "Point" and out._fields == ("x", "y") and out == (1, 2)


# ---- errors when calling ----------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs,match", [
    ((np.ones((6, 4), np.float32), _B), {}, r"argument args\[0\] has type float32\[6, 4\].*"
                                            r"exported for float32\[6, 5\]"),
    ((_A, _B.astype(np.float64)), {}, r"argument args\[1\] has type float64"),
    ((_A,), {}, r"exported for arguments of structure"),
    ((_A, _B), {"extra": _B}, r"with keyword arguments"),
    ((_A, "w"), {}, r"argument args\[1\] is a str"),
])
def test_call_with_wrong_arguments_says_which(mlp, args, kwargs, match):
    with pytest.raises(TypeError, match=match):
        mlp.call(*args, **kwargs)


# ---- platforms ---------------------------------------------------------------------------

def test_one_artifact_for_every_platform_selected_at_call():
    f = stablejit.jit(lambda a: snp.linalg.cholesky(a @ a.T + 4 * snp.eye(6)))
    exp = E.deserialize(E.export(f, platforms=("host", "cuda", "rocm", "tpu"))(
        S((6, 6), np.float32)).serialize())
    assert exp.platforms == ("host", "cuda", "rocm", "tpu")
    assert "lapack_spotrf_ffi" in exp.mlir_module("host")
    assert "cusolver" in exp.mlir_module("cuda") and "hipsolver" in exp.mlir_module("rocm")
    a = _f32(6, 6)
    np.testing.assert_array_equal(exp.call(a), np.asarray(f(a)))


@pytest.mark.host_default
def test_platform_not_in_the_artifact_is_a_clear_error():
    exp = E.deserialize(E.export(stablejit.jit(lambda x: x + 1), platforms="cuda")(
        S((2,), np.float32)).serialize())
    with pytest.raises(ValueError, match=r"exported for cuda, and this call runs on host; "
                                         r"export it again with platforms="):
        exp.call(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="unknown platform 'tpu2'"):
        E.export(stablejit.jit(lambda x: x), platforms=("tpu2",))


def test_functions_that_cannot_be_exported_say_why():
    def prints(x):
        stablejit.debug.print("x {}", x)
        return x
    with pytest.raises(TypeError, match="calls the Python function.*remove it"):
        E.export(stablejit.jit(prints))(S((2,), np.float32))

    def writes(x):
        x[0] = 1.0
        return x.sum()
    with pytest.raises(TypeError, match="writes into its arguments"):
        E.export(stablejit.jit(writes))(np.zeros(3, np.float32))


def test_an_executable_built_elsewhere_warns_and_compiles():
    exp = E.export(stablejit.jit(lambda x: x * 3 + 1))(S((7,), np.float32))

    def other_jaxlib(meta):
        meta["executables"][0]["jaxlib"] = "0.0.1"
    loaded = E.deserialize(_edit(exp.serialize(executables=True), other_jaxlib))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = loaded.call(np.ones(7, np.float32))
    np.testing.assert_array_equal(out, np.full(7, 4.0, np.float32))
    assert any(issubclass(x.category, E.ExportWarning) and "compiling the StableHLO"
               in str(x.message) for x in w)


# ---- one forward module, several derivatives ------------------------------------------------

@stablejit.custom_vjp
def _cube(x):
    return x ** 3


_cube.defvjp(lambda x: (x ** 3, x), lambda r, g: (g * 100.0,))
_SAME_FORWARD = {  # name -> (jitted function, vjp_order, grad at 2.0 or None: refused)
    "x**3 with its VJP": (stablejit.jit(lambda x: snp.sum(x ** 3)), 1, 12.0),
    "custom VJP": (stablejit.jit(lambda x: snp.sum(_cube(x))), 1, 100.0),
    "x**3 without a VJP": (stablejit.jit(lambda x: snp.sum(x ** 3)), 0, None),
}


@pytest.mark.parametrize("order", [list(_SAME_FORWARD), list(reversed(_SAME_FORWARD))],
                         ids=["forward", "reversed"])
def test_artifacts_with_one_forward_keep_their_own_derivatives(order):
    """Exported modules compare by a digest; it covered the forward module alone, so two
    artifacts of one forward and different VJPs (or none) shared the first's derivative
    in a process: grad gave 12 where the custom VJP says 100, or differentiated an
    artifact with no VJP."""
    x = np.full(3, 2.0, np.float32)
    for name in order:
        f, vjp_order, want = _SAME_FORWARD[name]
        exp = E.export(f, vjp_order=vjp_order)(x)
        for e in (exp, E.deserialize(exp.serialize())):
            for grad in (stablejit.grad(e.call), stablejit.jit(stablejit.grad(e.call))):
                if want is None:
                    with pytest.raises(TypeError, match="holds no VJP"):
                        grad(x)
                else:
                    np.testing.assert_array_equal(np.asarray(grad(x)), np.full(3, want),
                                                  err_msg=name)


def test_a_second_derivative_of_an_artifact_says_what_to_export():
    """grad of grad, jvp and jacfwd of an artifact exported with vjp_order=1 said "holds
    no VJP. Export it with vjp_order=1", which the user had done."""
    e = E.deserialize(E.export(stablejit.jit(lambda x: snp.sum(x ** 3)), vjp_order=1)(
        np.ones(3, np.float32)).serialize())
    x = np.full(3, 2.0, np.float32)
    np.testing.assert_array_equal(np.asarray(stablejit.grad(e.call)(x)), np.full(3, 12.0))
    for second in (lambda: stablejit.jvp(e.call, (x,), (x,)),
                   lambda: stablejit.jacfwd(e.call)(x),
                   lambda: stablejit.grad(lambda v: snp.sum(stablejit.grad(e.call)(v)))(x)):
        with pytest.raises(TypeError, match=r"twice.*stablejit\.grad\(f\)") as info:
            second()
        assert "vjp_order=1 to call" not in str(info.value)


def test_a_namedtuple_class_made_after_loading_matches_the_artifacts():
    """An artifact whose argument is a namedtuple of a class the loading process does not
    have when it deserializes (a script's own class, defined after the load) holds a
    stand-in of that name and fields; a call with the script's class matched nothing
    and printed two identical structures."""
    old = namedtuple("Pair", "a b")
    old.__module__ = "no_such_module_here"  # (not importable where the artifact loads)
    f = stablejit.jit(lambda p: p.a * 2 + p.b)
    x = old(np.ones(3, np.float32), np.full(3, 2.0, np.float32))
    loaded = E.deserialize(E.export(f)(x).serialize())
    new = namedtuple("Pair", "a b")  # the script's class, made after the load
    got = loaded.call(new(*x))
    np.testing.assert_array_equal(np.asarray(got), np.full(3, 4.0))
    other = namedtuple("Pair", "a c")  # other fields: a clear refusal
    with pytest.raises(TypeError, match="exported for arguments of structure"):
        loaded.call(other(*x))
