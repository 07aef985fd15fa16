"""Type promotion and weak types against jax, table-driven (docs/numerics.md, "Type promotion";
frontend/promotion.py).

For every pair of operands among the dtypes and the Python scalars, and every binary
function of the table, the result's dtype AND weak flag must be what jax gives
(`jax.eval_shape`, whose weak_type is the one inside jit), eagerly and under jit. JAX's
weak results are mapped to stablejit's default dtypes (tests/support/jax_promotion.py). The
whole table runs on the reference backend (no compiles); the XLA backend runs the
Python-scalar rows, which exercise weak typing there too.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit.compiler import dtypes as dt

from tests.support import jax_promotion

DTYPES = [dt.bool_, dt.int8, dt.uint8, dt.int32, dt.uint32, dt.int64, dt.float16, dt.bfloat16,
          dt.float32, dt.float64, dt.complex64, dt.complex128]
SCALARS = [True, 2, 0.5, 1j]
OPERANDS = DTYPES + SCALARS
SIXTY_FOUR_BIT = (dt.int64, dt.float64, dt.complex128)

_COND = np.array([True, False])
BINARY = {
    "add": (snp.add, jnp.add),
    "subtract": (snp.subtract, jnp.subtract),
    "multiply": (snp.multiply, jnp.multiply),
    "divide": (snp.divide, jnp.divide),
    "maximum": (snp.maximum, jnp.maximum),
    "minimum": (snp.minimum, jnp.minimum),
    "where": (lambda x, y: snp.where(snp.asarray(_COND), x, y),
              lambda x, y: jnp.where(_COND, x, y)),
    "floor_divide": (snp.floor_divide, jnp.floor_divide),
    "equal": (snp.equal, jnp.equal),
}



def _complex(x) -> bool:
    return isinstance(x, complex) or isinstance(x, dt.DType) and x.kind == "c"


def _bool(x) -> bool:
    return x is dt.bool_ or isinstance(x, bool)


# Where stablejit deliberately differs, with the reason: jax orders complex numbers
# lexicographically in maximum/minimum and floor-divides them, and floor-divides two
# booleans as int32; stablejit takes real numbers there, and floor_divide numbers, as the
# array API standard does (a TypeError that says so).
DIFFERENCES = {(op, a, b) for op in ("maximum", "minimum", "floor_divide")
               for a, b in itertools.product(OPERANDS, OPERANDS) if _complex(a) or _complex(b)}
DIFFERENCES |= {("floor_divide", a, b) for a, b in itertools.product(OPERANDS, OPERANDS)
                if _bool(a) and _bool(b)}


def _name(x) -> str:
    return x.name if isinstance(x, dt.DType) else f"python {type(x).__name__}"


def _stablejit_operand(x):
    return snp.ones(2, dtype=x) if isinstance(x, dt.DType) else x


def _jax_operand(x):
    return jnp.ones(2, dtype=x.np) if isinstance(x, dt.DType) else x


def jax_result(fn, *operands):
    """(dtype, weak) jax gives, as stablejit's, or the exception type jax raises.

    One deliberate difference: float math on 64-bit integers (divide, sin) gives float64
    in jax with 64-bit types on, float32 in stablejit. stablejit's default int is int64
    where jax's (64-bit types off) is int32, and jax gives float32 there: stablejit keeps
    that float32, so `snp.sin(snp.arange(3))` is float32 as jnp.sin(jnp.arange(3))."""
    try:
        with jax.enable_x64(True):
            out = jax.eval_shape(fn, *map(_jax_operand, operands))
    except TypeError:
        return TypeError
    if out.dtype == np.float64 and not out.weak_type and dt.float64 not in operands and \
            dt.complex128 not in operands:
        return dt.float32, False
    return jax_promotion.expected(out.dtype, out.weak_type)


def stablejit_result(fn, *operands, jit: bool):
    f = sj.jit(fn) if jit else fn
    try:
        out = f(*map(_stablejit_operand, operands))
    except TypeError:
        return TypeError
    return out.dtype, out.weak


def _mismatches(name, pairs, jit: bool):
    ours, theirs = BINARY[name]
    bad = []
    for a, b in pairs:
        if (name, a, b) in DIFFERENCES:
            continue
        want = jax_result(theirs, a, b)
        got = stablejit_result(ours, a, b, jit=jit)
        if got != want:
            bad.append(f"{name}({_name(a)}, {_name(b)}): stablejit {got}, jax {want}")
    return bad


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_table_matches_jax(name, jit):
    with sj.default_backend("reference"):
        bad = _mismatches(name, itertools.product(OPERANDS, OPERANDS), jit)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", ["add", "multiply", "where"])
def test_python_scalar_rows_on_xla_match_jax(name, jit):
    pairs = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS)
             if not isinstance(a, dt.DType) or not isinstance(b, dt.DType)]
    assert not (bad := _mismatches(name, pairs, jit)), "\n".join(bad)


UNARY = {"negative": (snp.negative, jnp.negative), "abs": (snp.abs, jnp.abs),
         "sin": (snp.sin, jnp.sin), "sqrt": (snp.sqrt, jnp.sqrt), "exp": (snp.exp, jnp.exp),
         "sqrt_of_sum": (lambda x: snp.sqrt(snp.add(x, x)), lambda x: jnp.sqrt(jnp.add(x, x)))}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_unary_table_matches_jax(jit):
    bad = []
    with sj.default_backend("reference"):
        for (name, (ours, theirs)), x in itertools.product(UNARY.items(), OPERANDS):
            want, got = jax_result(theirs, x), stablejit_result(ours, x, jit=jit)
            if got != want:
                bad.append(f"{name}({_name(x)}): stablejit {got}, jax {want}")
    assert not bad, "\n".join(bad)


def test_result_type_matches_jax_for_every_pair_and_triple():
    for ops in itertools.chain(itertools.product(OPERANDS, repeat=2),
                               itertools.product(SCALARS + [dt.int8, dt.float16], repeat=3)):
        want = jax_promotion.result_type(*ops)
        assert snp.result_type(*ops) is want[0], [_name(x) for x in ops]


def test_result_type_matches_jax_with_64_bit_types_off():
    """Against jax's default mode too (no 64-bit operands there): the one difference is
    uint32 with a signed int, which jax without 64-bit types makes int32 (it never makes
    an int64 from 32-bit inputs); stablejit has int64, so it follows the 64-bit lattice."""
    ops32 = [x for x in OPERANDS if x not in SIXTY_FOUR_BIT]
    for a, b in itertools.product(ops32, ops32):
        d, weak = jax.dtypes.result_type(jax_promotion.as_jax_operand(a),
                                         jax_promotion.as_jax_operand(b),
                                         return_weak_type_flag=True)
        want = jax_promotion.expected(d, weak)[0]
        if dt.uint32 in (a, b) and any(isinstance(x, dt.DType) and x.kind == "i"
                                       for x in (a, b)):
            assert want is dt.int32 and snp.result_type(a, b) is dt.int64, (a, b)
            continue
        assert snp.result_type(a, b) is want, (_name(a), _name(b))


# ---- the cases of the issue ----------------------------------------------------------------

def test_weak_int_times_python_float_is_a_weak_float32():
    out = sj.jit(lambda n: n * 0.1)(3)
    want = jax.jit(lambda n: n * 0.1)(3)
    assert out.dtype is dt.float32 and out.weak and want.aval.weak_type
    assert np.asarray(out) == np.asarray(want)
    eager = snp.multiply(3, 0.1)
    assert eager.dtype is dt.float32 and eager.weak


def test_weak_results_keep_the_other_operand_dtype():
    f = sj.jit(lambda n, x: (n * 0.5) * x)
    x = snp.ones(3, dtype=snp.float16)
    assert f(3, x).dtype is dt.float16  # the weak float takes float16, as in jax
    assert (snp.asarray(3) * 0.5 * x).dtype is dt.float16


def test_asarray_of_a_python_scalar_is_weak_as_in_jax():
    for v in (3, 2.5, 1j):
        assert snp.asarray(v).weak == jnp.asarray(v).aval.weak_type is True
    assert not snp.asarray(True).weak and not jnp.asarray(True).aval.weak_type
    assert not snp.asarray(3, dtype=snp.int32).weak
    assert not jnp.asarray(3, dtype=jnp.int32).aval.weak_type
    assert not snp.asarray(np.float32(3)).weak  # NumPy scalars keep their dtype


def test_reductions_and_astype_give_strong_results():
    for ours, theirs in [(lambda x: snp.sum(x), lambda x: jnp.sum(x)),
                         (lambda x: snp.max(x), lambda x: jnp.max(x)),
                         (lambda x: x.astype(snp.float32), lambda x: x.astype(jnp.float32))]:
        got = sj.jit(ours)(2.0)
        assert not got.weak and not jax.eval_shape(theirs, 2.0).weak_type


def test_fori_loop_index_is_weak_so_the_float32_carry_stays_float32():
    def body(m):
        def step(i, c):
            t = i * dt_
            return c + m.sin(t)
        return step

    dt_ = np.float32(0.1)
    got = sj.fori_loop(0, 5, body(snp), snp.float32(0.0))
    want = jax.lax.fori_loop(0, 5, body(jnp), jnp.float32(0.0))
    assert got.dtype is dt.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    # the index is weak: with a Python float step the product is float32 as well
    out = sj.fori_loop(0, 5, lambda i, c: c + i * 0.1, snp.float32(0.0))
    assert out.dtype is dt.float32
    seen = []
    sj.fori_loop(0, 2, lambda i, c: (seen.append((i.dtype, i.weak)), c)[1], 0.0)
    assert seen == [(dt.int64, True)]  # stablejit's default int (jax: a weak int32)


@pytest.mark.parametrize("lower", [0, snp.asarray(0)], ids=["static", "traced"])
def test_fori_loop_carry_error_names_fori_loop_body_fun_and_init_val_leaf(lower):
    with pytest.raises(TypeError) as e:
        sj.fori_loop(lower, 3, lambda i, c: {"t": c["t"].astype(snp.float64), "n": c["n"]},
                     {"t": snp.float32(0.0), "n": 1})
    msg = str(e.value)
    assert msg.startswith("fori_loop: body_fun changes the type of carry leaf init_val['t']")
    assert "f32[]" in msg and "f64[]" in msg and ".astype(float32)" in msg
    assert "scan" not in msg and "while_loop" not in msg


def test_scan_and_while_loop_carry_errors_name_their_own_function():
    with pytest.raises(TypeError, match=r"^scan: f changes the type of carry leaf \[1\]"):
        sj.scan(lambda c, x: ((c[0], c[1].astype(snp.float64)), x),
                (snp.float32(0), snp.float32(0)), snp.ones(2))
    with pytest.raises(TypeError, match=r"^while_loop: body_fun changes the type of carry"):
        sj.while_loop(lambda c: c < 3, lambda c: c.astype(snp.float64), snp.float32(0))
