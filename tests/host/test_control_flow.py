"""cond / switch / while_loop / fori_loop / scan: results on jit, eager XLA and the
reference backend against NumPy; pytrees and closures; the errors users hit; gradients
against jax.grad of the equivalent jax.lax program; emitted StableHLO verifies."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit import cond, fori_loop, scan, switch, while_loop

from tests.support.mlir_check import parse_and_verify
from tests.support.runners import check_three_ways, run_three_ways

F32 = np.float32
X = np.array([0.5, -1.25, 2.0], F32)
W = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], F32)


# ---- cond / switch ---------------------------------------------------------------------------

@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_with_pytree_operands_and_closure(sign):
    def f(p, x, w):
        out = cond(p > 0, lambda a: {"s": snp.sin(a[0]) * w[:, 0], "n": a[1] + 1},
                   lambda a: {"s": a[0] * 2.0, "n": a[1] - 1}, (x, snp.asarray(3)))
        return out["s"], out["n"]

    def ref(p, x, w):
        return (np.sin(x) * w[:, 0], 4) if p > 0 else (x * 2.0, 2)

    check_three_ways(f, ref, np.asarray(sign, F32), X, W, check_dtype=False)


def test_cond_runs_only_the_chosen_branch_and_accepts_numeric_pred():
    # the untaken branch would divide by zero: a select would make it NaN
    def f(n, x):
        return cond(n, lambda x: x / 1.0, lambda x: x / snp.zeros_like(x), x)

    out = run_three_ways(f, np.asarray(2, np.int32), X)
    for got in out.values():
        np.testing.assert_allclose(got, X)


def test_cond_python_scalar_branch_matches_only_its_own_dtype_as_in_jax():
    # a Python float is float32 (weakly typed): it matches a float32 branch, and is not
    # converted to float16 (jax.lax.cond raises there too; tests/host/test_control_flow_types.py
    # has the whole table against jax)
    f = lambda p, x: cond(p, lambda x: x.astype("float16"), lambda x: 0.0, x)  # noqa: E731
    x = np.asarray(1.5, F32)
    with pytest.raises(stablejit.ShapeError, match=r"f32\[\].*weakly typed.*f16\[\]"):
        f(snp.asarray(True), snp.asarray(x))
    with pytest.raises(TypeError):
        jax.lax.cond(True, lambda x: x.astype("float16"), lambda x: 0.0, x)
    g = lambda p, x: cond(p, lambda x: x * 2, lambda x: 0.0, x)  # noqa: E731
    for p, want in [(True, 3.0), (False, 0.0)]:
        for got in run_three_ways(g, np.asarray(p), x).values():
            assert got.dtype == np.float32 and got == want


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_the_index(index):
    branches = [lambda x: x + 1.0, lambda x: x * x, lambda x: -x]

    def ref(i, x):
        return [x + 1.0, x * x, -x][min(max(int(i), 0), 2)]

    check_three_ways(lambda i, x: switch(i, branches, x), ref, np.asarray(index, np.int32), X)


def test_nested_cond_inside_scan_captures_outer_jit_values():
    def f(xs, w):
        def step(c, x):
            y = cond(x > 0, lambda v: v * w, lambda v: v - w, c + x)
            return y, y * 2.0
        return scan(step, snp.asarray(0.0), xs)

    def ref(xs, w):
        c, ys = 0.0, []
        for x in xs:
            v = c + x
            c = v * w if x > 0 else v - w
            ys.append(c * 2.0)
        return np.float32(c), np.array(ys, F32)

    check_three_ways(f, ref, X, np.asarray(1.5, F32))


# ---- loops ------------------------------------------------------------------------------------

def test_while_loop_with_pytree_carry():
    def f(x):
        def body(c):
            return {"i": c["i"] + 1, "v": c["v"] * 0.5 + x}
        out = while_loop(lambda c: c["i"] < 5, body, {"i": snp.asarray(0, "int32"), "v": x})
        return out["i"], out["v"]

    def ref(x):
        v = x
        for _ in range(5):
            v = v * 0.5 + x
        return np.int32(5), v

    check_three_ways(f, ref, X)


def test_while_loop_data_dependent_trip_count():
    def collatz_steps(n):
        def body(c):
            k, m = c
            return k + 1, snp.where(m % 2 == 0, m // 2, 3 * m + 1)
        return while_loop(lambda c: c[1] != 1, body, (snp.asarray(0), n))[0]

    def ref(n):
        k, m = 0, int(n)
        while m != 1:
            k, m = k + 1, (m // 2 if m % 2 == 0 else 3 * m + 1)
        return np.int64(k)

    check_three_ways(collatz_steps, ref, np.asarray(27, np.int64))


def test_fori_loop_static_and_traced_bounds():
    def body(i, v):
        return v * 1.5 + i.astype("float32")

    def ref(lo, hi, x):
        for i in range(int(lo), int(hi)):
            x = x * 1.5 + i
        return x

    check_three_ways(lambda x: fori_loop(2, 6, body, x), lambda x: ref(2, 6, x), X)
    check_three_ways(lambda lo, hi, x: fori_loop(lo, hi, body, x), ref,
                     np.asarray(2, np.int32), np.asarray(6, np.int32), X)
    check_three_ways(lambda x: fori_loop(5, 2, body, x), lambda x: x, X)  # empty range


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytree_xs_and_reverse(reverse):
    def f(xs, ws):
        def step(c, inp):
            x, w = inp["x"], inp["w"]
            c = c * 0.9 + x * w[0]
            return c, (c, snp.sum(w) * x)
        return scan(step, snp.asarray(0.0), {"x": xs, "w": ws}, reverse=reverse)

    def ref(xs, ws):
        c, ys1, ys2 = np.float32(0), [None] * 3, [None] * 3
        for i in (reversed(range(3)) if reverse else range(3)):
            c = F32(c * 0.9 + xs[i] * ws[i][0])
            ys1[i], ys2[i] = c, ws[i].sum() * xs[i]
        return c, (np.array(ys1, F32), np.array(ys2, F32))

    check_three_ways(f, ref, X, W)


def test_scan_with_length_only_and_empty_scan():
    f = lambda x: scan(lambda c, _: (c * 2.0, c), x, None, length=4)  # noqa: E731
    check_three_ways(f, lambda x: (x * 16, np.stack([x, 2 * x, 4 * x, 8 * x])), X)
    g = lambda xs: scan(lambda c, x: (c + x, x * 2.0), snp.asarray(1.0), xs)  # noqa: E731
    check_three_ways(g, lambda xs: (F32(1.0), np.zeros((0,), F32)), np.zeros((0,), F32))


def test_eager_region_ops_compile_once_per_structure():
    from stablejit.compilation import stats

    xs = [stablejit.numpy.asarray(np.full(3, v, F32)) for v in (1.0, 2.0, 3.0)]
    cond(snp.sum(xs[0]) > 4, lambda v: v * 2.0, lambda v: v + 1.0, xs[0])
    before = stats["compiled"] + stats["disk"]
    for x in xs:
        cond(snp.sum(x) > 4, lambda v: v * 2.0, lambda v: v + 1.0, x)
    assert stats["compiled"] + stats["disk"] == before


# ---- errors -----------------------------------------------------------------------------------

def _line_of(marker: str) -> int:
    import inspect

    src, start = inspect.getsourcelines(inspect.currentframe().f_back.f_code)
    return start + next(i for i, s in enumerate(src) if marker in s)


def test_branch_mismatch_names_the_leaf_both_types_and_the_line():
    def f(p, x):
        return cond(p, lambda x: {"a": x, "b": x}, lambda x: {"a": x, "b": x[:2]}, x)  # HERE

    with pytest.raises(stablejit.ShapeError) as e:
        stablejit.jit(f)(snp.asarray(True), snp.asarray(X))
    msg = str(e.value)
    assert "['b']" in msg and "f32[3]" in msg and "f32[2]" in msg, msg
    assert f"test_control_flow.py:{_line_of('# HERE')}" in msg, msg


def test_switch_branch_dtype_mismatch():
    with pytest.raises(stablejit.ShapeError, match=r"branch 1.*i32\[3\]|i32\[3\].*branch 1"):
        switch(snp.asarray(0, "int32"), [lambda x: x, lambda x: x.astype("int32")],
               snp.asarray(X))


def test_loop_carry_mismatch_names_the_leaf_and_types():
    with pytest.raises(stablejit.ShapeError) as e:
        while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype("float64")),
                   (snp.asarray(0), snp.asarray(X)))
    msg = str(e.value)
    assert "[1]" in msg and "f32[3]" in msg and "f64[3]" in msg, msg
    with pytest.raises(stablejit.ShapeError, match=r"\['h'\].*f32\[3\].*f32\[2\]"):
        scan(lambda c, x: ({"h": c["h"][:2]}, x), {"h": snp.asarray(X)}, snp.asarray(X))
    with pytest.raises(TypeError, match="structure"):
        fori_loop(0, 3, lambda i, c: (c, c), snp.asarray(X))


def test_python_control_flow_on_traced_values_points_to_cond():
    def f(x):
        if snp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(stablejit.TracerBoolConversionError, match=r"stablejit\.cond"):
        stablejit.jit(f)(snp.asarray(X))
    # the advice works: the same function written with cond
    g = stablejit.jit(lambda x: cond(snp.sum(x) > 0, lambda v: v, lambda v: -v, x))
    np.testing.assert_allclose(g(snp.asarray(X)).numpy(), X)


def test_cond_pred_must_be_a_scalar():
    with pytest.raises(TypeError, match="scalar"):
        cond(snp.asarray(X) > 0, lambda x: x, lambda x: x, snp.asarray(X))


# a function argument that is not a function, or a pred / index / bound that is no number:
# a TypeError naming the argument and the user's line (it was "'float' object is not
# callable" or "Value None cannot be a tensor", from inside stablejit, with no line)
_f = lambda *a: 1.0  # noqa: E731
NOT_FUNCTIONS = [
    ("cond: true_fn", lambda: cond(True, 1.0, _f)),
    ("cond: false_fn", lambda: cond(True, _f, None)),
    ("switch: branches[1]", lambda: switch(0, [_f, 2.0])),
    ("while_loop: cond_fun", lambda: while_loop(True, _f, 0.0)),
    ("while_loop: body_fun", lambda: while_loop(lambda c: c < 1, 5, 0.0)),
    ("fori_loop: body_fun", lambda: fori_loop(0, 3, "body", 0.0)),
    ("scan: f", lambda: scan(3, 0.0, snp.ones(3))),
    ("lax.map: f", lambda: stablejit.lax.map(None, snp.ones(3))),
    ("cond: pred must be a scalar", lambda: cond(None, _f, _f)),
    ("cond: pred must be a scalar", lambda: cond("yes", _f, _f)),
    ("switch: index must be a scalar", lambda: switch(None, [_f, _f])),
    ("fori_loop: upper must be a scalar", lambda: fori_loop(0, None, _f, 0.0)),
    ("fori_loop: lower must be a scalar", lambda: fori_loop("0", 3, _f, 0.0)),
]


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("label,call", NOT_FUNCTIONS, ids=[c[0] for c in NOT_FUNCTIONS])
def test_arguments_of_the_wrong_kind_are_named(label, call, jit):
    with pytest.raises(TypeError, match=re.escape(label)) as e:
        stablejit.jit(lambda: call())() if jit else call()
    assert "test_control_flow.py" in str(e.value), str(e.value)


# ---- gradients (jax.lax as the oracle) -----------------------------------------------------

def _grad_three_ways(f, jf, *args):
    expected = jax.grad(jf, argnums=tuple(range(len(args))))(*args)
    g = stablejit.grad(f, argnums=tuple(range(len(args))))
    res = run_three_ways(g, *args)
    for path, got in res.items():
        for a, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, np.asarray(e), rtol=2e-5, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_grad_through_cond(sign):
    def f(x, w):
        return snp.sum(cond(snp.sum(x) * sign > 0, lambda v: snp.sin(v) * w, lambda v: v * v,
                            x))

    def jf(x, w):
        return jnp.sum(jax.lax.cond(jnp.sum(x) * sign > 0, lambda v: jnp.sin(v) * w,
                                    lambda v: v * v, x))

    _grad_three_ways(f, jf, X, np.asarray(0.7, F32))


def test_grad_through_switch():
    fs = [lambda v, w: v * w, lambda v, w: snp.exp(v) + w, lambda v, w: v * v * w]
    jfs = [lambda v, w: v * w, lambda v, w: jnp.exp(v) + w, lambda v, w: v * v * w]
    for i in range(3):
        def f(x, w, i=i):
            return snp.sum(switch(snp.asarray(i, "int32"), fs, x, w))

        def jf(x, w, i=i):
            return jnp.sum(jax.lax.switch(i, jfs, x, w))

        _grad_three_ways(f, jf, X, np.asarray(1.3, F32))


def test_grad_through_scan_and_fori_loop():
    def f(xs, w):
        (c, _), ys = scan(lambda c, x: ((c[0] * x + w, c[1]), snp.cos(c[0]) * x),
                          (snp.asarray(1.0), snp.asarray(2)), xs)
        z = fori_loop(0, 3, lambda i, a: a * w + snp.sin(a), xs)
        return c + snp.sum(ys) + snp.sum(z)

    def jf(xs, w):
        (c, _), ys = jax.lax.scan(lambda c, x: ((c[0] * x + w, c[1]), jnp.cos(c[0]) * x),
                                  (jnp.float32(1.0), 2), xs)
        z = jax.lax.fori_loop(0, 3, lambda i, a: a * w + jnp.sin(a), xs)
        return c + jnp.sum(ys) + jnp.sum(z)

    _grad_three_ways(f, jf, X, np.asarray(0.7, F32))


def test_grad_through_reverse_scan_with_closure():
    def f(xs, w):
        c, ys = scan(lambda c, x: (snp.tanh(c * w + x), c * x), snp.asarray(0.1), xs,
                     reverse=True)
        return c + snp.sum(ys * ys)

    def jf(xs, w):
        c, ys = jax.lax.scan(lambda c, x: (jnp.tanh(c * w + x), c * x), jnp.float32(0.1), xs,
                             reverse=True)
        return c + jnp.sum(ys * ys)

    _grad_three_ways(f, jf, X, np.asarray(0.9, F32))


def test_forward_mode_through_while_loop_and_clear_error_for_reverse():
    def f(x):
        return while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1] + 1.0),
                          (0, x))[1]

    def jf(x):
        return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1] + 1.0),
                                  (0, x))[1]

    x = np.asarray(0.3, F32)
    _, t = stablejit.jvp(f, (snp.asarray(x),), (snp.asarray(F32(1.0)),))
    np.testing.assert_allclose(t.numpy(), jax.jvp(jf, (x,), (F32(1.0),))[1], rtol=1e-5)
    with pytest.raises(TypeError, match=r"while_loop.*fori_loop with Python int bounds"):
        stablejit.grad(f)(snp.asarray(x))


# ---- emitted StableHLO -------------------------------------------------------------------

def test_emitted_control_flow_verifies_with_jaxlib_mlir():
    def f(p, i, xs, w):
        a = cond(p, lambda v: v * w, lambda v: v - w, xs)
        b = switch(i, [lambda v: v, lambda v: v * 2.0, lambda v: -v], a)
        c = while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 0.5), (0, b))[1]
        return scan(lambda s, x: (s + x * w, s), snp.asarray(0.0), c, reverse=True)

    args = (snp.asarray(True), snp.asarray(1, "int32"), snp.asarray(X), snp.asarray(F32(2.0)))
    text = stablejit.jit(f).lower(*args).as_text()
    for op in ("stablehlo.if", "stablehlo.case", "stablehlo.while"):
        assert op in text
    parse_and_verify(text)
