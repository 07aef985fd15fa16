"""Shared test utilities: dtype groups, per-dtype tolerances, NumPy comparison, the
per-primitive example table, and runners that execute code three ways.

Stable API (other test files import these; keep signatures compatible):

    DTYPES, INT, UINT, SINT, FLOAT, COMPLEX, INEXACT, NUMERIC, LOGICAL, REAL
        tuples of stablejit DTypes by kind.
    tolerance(dtype) -> (rtol, atol)
        per-dtype tolerance for values computed in that dtype (exact for int/bool).
    assert_close(actual, expected, dtype=None, *, rtol=None, atol=None, msg="",
                 check_dtype=True, signed_zeros=False)
        compare arrays (NaNs must match, bf16/f16 compared in float32).
    PATHS = ("jit", "eager", "reference")
    to_backend(x, path) -> Tensor on the XLA backend ("jit"/"eager") or the reference one.
    run_three_ways(fn, *args) -> {path: pytree of numpy arrays}
        fn(*args) with array arguments made Tensors: under stablejit.jit (XLA), eager
        on XLA, and on the reference backend. Non-array args (Python scalars, None,
        strings ...) are passed through unchanged (as jit arguments they are dynamic
        weak scalars when they are numbers; wrap fn in a closure to make them static).
    check_three_ways(fn, np_fn, *args, rtol=None, atol=None, dtype=None, check_dtype=True)
        run_three_ways, then compare every path with np_fn(*args) (NumPy args).
    PRIM_TABLE: {primitive name: PrimSpec}; PrimSpec.cases() yields PrimCase(label,
        operands, attrs, expected) with concrete NumPy operands; a device-free test reads
        only the operand types.
    run_primitive(prim, operands, attrs, path) -> tuple of numpy results
        one primitive applied via a compiled one-op jit program, the eager XLA backend,
        or the reference backend.
    run_primitive_jit_batch(prim, [(operands, attrs), ...]) -> [tuple of numpy results]
        the jit path for many cases of one primitive in one compiled program.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import stablejit
from stablejit.compiler import dtypes as dt
from stablejit.compiler.ir import Attrs, Literal
from stablejit.dispatch import bind
from stablejit.tensor import Tensor

# ---- dtype groups ------------------------------------------------------------------------

DTYPES = dt.ALL
SINT = (dt.int8, dt.int16, dt.int32, dt.int64)
UINT = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)
INT = SINT + UINT
FLOAT = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
COMPLEX = (dt.complex64, dt.complex128)
INEXACT = FLOAT + COMPLEX
NUMERIC = INT + INEXACT
REAL = (dt.bool_,) + INT + FLOAT  # ordered types ("biuf")
LOGICAL = (dt.bool_,) + INT

_TOL = {
    "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-6),
    "float64": (1e-12, 1e-14), "complex64": (2e-5, 1e-6), "complex128": (1e-12, 1e-14),
}


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for results computed in `dtype`; (0, 0) for integers and bool."""
    return _TOL.get(dt.dtype(dtype).name, (0.0, 0.0))


def _widen(a: np.ndarray) -> np.ndarray:
    if a.dtype in (np.float16, ml_dtypes.bfloat16):
        return a.astype(np.float32)
    return a


def assert_close(actual, expected, dtype=None, *, rtol=None, atol=None, msg: str = "",
                 check_dtype: bool = True, signed_zeros: bool = False) -> None:
    """Compare `actual` with `expected`: same shape (and dtype unless check_dtype=False),
    NaNs at the same places, values within the tolerance of `dtype` (default: the
    coarser of the two dtypes)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{msg}: shape {actual.shape} != {expected.shape}"
    if check_dtype:
        assert actual.dtype == expected.dtype, f"{msg}: dtype {actual.dtype} != {expected.dtype}"
    if dtype is None:
        cands = [dt.dtype(actual.dtype), dt.dtype(expected.dtype)]
        dtype = max(cands, key=lambda d: tolerance(d)[0])
    r, a = tolerance(dtype)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    x, y = _widen(actual), _widen(expected)
    if x.dtype.kind in "biu" and y.dtype.kind in "biu" and rtol == 0 and atol == 0:
        np.testing.assert_array_equal(x, y, err_msg=msg)
    else:
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)
    if signed_zeros and x.dtype.kind == "f":
        zeros = (y == 0)
        np.testing.assert_array_equal(np.signbit(x[zeros]), np.signbit(y[zeros]),
                                      err_msg=f"{msg}: signs of zeros differ")


# ---- running code three ways ---------------------------------------------------------

PATHS = ("jit", "eager", "reference")


def xla_backend():
    return stablejit.XlaBackend.for_platform("host")


def to_backend(x, path: str):
    """NumPy arrays (and NumPy scalars) become Tensors on the path's backend; anything
    else passes through."""
    if isinstance(x, (np.ndarray, np.generic)):
        backend = stablejit.REFERENCE if path == "reference" else xla_backend()
        return backend.from_numpy(np.asarray(x))
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, np.ndarray) for e in x):
        return type(x)(to_backend(e, path) for e in x)
    return x


def _to_numpy_tree(out):
    if isinstance(out, Tensor):
        return out.numpy()
    if isinstance(out, (list, tuple)):
        return type(out)(_to_numpy_tree(o) for o in out)
    if isinstance(out, dict):
        return {k: _to_numpy_tree(v) for k, v in out.items()}
    return out


def run_three_ways(fn, *args, paths=PATHS) -> dict:
    """{path: fn(*args) as NumPy} for jit (XLA), eager XLA and reference."""
    results = {}
    for path in paths:
        targs = [to_backend(a, path) for a in args]
        if path == "jit":
            out = stablejit.jit(fn)(*targs)
        elif path == "reference":
            with stablejit.default_backend("reference"):
                out = fn(*targs)
        else:
            out = fn(*targs)
        results[path] = _to_numpy_tree(out)
    return results


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _leaves(e)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def check_three_ways(fn, np_fn, *args, rtol=None, atol=None, dtype=None,
                     check_dtype: bool = True, paths=PATHS, signed_zeros: bool = False):
    """Run fn on every path and compare with np_fn(*args). `dtype` is the dtype the
    result must have (default: NumPy's result dtype when check_dtype). Returns the
    results dict."""
    expected = np_fn(*args)
    results = run_three_ways(fn, *args, paths=paths)
    exp_leaves = _leaves(expected)
    for path, out in results.items():
        leaves = _leaves(out)
        assert len(leaves) == len(exp_leaves), f"{path}: {len(leaves)} outputs, " \
                                               f"expected {len(exp_leaves)}"
        for i, (a, e) in enumerate(zip(leaves, exp_leaves, strict=False)):
            e = np.asarray(e)
            a = np.asarray(a)
            if dtype is not None:
                want = dt.dtype(dtype).np
                assert a.dtype == want, f"{path} output {i}: dtype {a.dtype}, expected {want}"
                e = e.astype(want) if e.dtype != want else e
            assert_close(a, e, rtol=rtol, atol=atol, check_dtype=check_dtype,
                         signed_zeros=signed_zeros,
                         msg=f"{getattr(fn, '__name__', fn)} via {path}, output {i}")
    return results


# ---- one primitive, three ways ---------------------------------------------------------

def run_primitive(prim, operands, attrs, path: str) -> tuple[np.ndarray, ...]:
    """Apply one primitive to NumPy operands via `path`: "jit" (a compiled one-op
    program), "eager" (the XLA backend) or "reference"."""
    attrs = Attrs(attrs)
    tensors = [to_backend(np.asarray(o), path) for o in operands]
    if path == "jit":
        fn = stablejit.jit(lambda *xs: bind(prim, xs, attrs))
        if not tensors:  # zero-operand primitives (iota, constant) run on the default backend
            with stablejit.default_backend(xla_backend()):
                out = fn()
        else:
            out = fn(*tensors)
    elif path == "eager":
        out = bind(prim, tensors, attrs, backend=xla_backend())
    else:
        out = bind(prim, tensors, attrs, backend=stablejit.REFERENCE)
    return tuple(t.numpy() for t in out)


def run_primitive_jit_batch(prim, cases) -> list[tuple[np.ndarray, ...]]:
    """Like run_primitive(..., "jit") for many (operands, attrs) cases of one primitive at
    once: one compiled program holding one independent op per case (one XLA compile
    instead of one per case). Returns one tuple of results per case."""
    cases = [(list(ops), Attrs(attrs)) for ops, attrs in cases]

    def program(operand_lists):
        return [bind(prim, tuple(xs), attrs) for xs, (_, attrs) in zip(operand_lists, cases,
                                                                        strict=True)]

    args = [[to_backend(np.asarray(o), "jit") for o in ops] for ops, _ in cases]
    with stablejit.default_backend(xla_backend()):
        out = stablejit.jit(program)(args)
    return [tuple(t.numpy() for t in res) for res in out]


# ---- the per-primitive example table -------------------------------------------------------

@dataclass
class PrimCase:
    label: str
    operands: list
    attrs: dict
    expected: object  # callable(*operands, **attrs) -> ndarray or tuple


@dataclass
class PrimSpec:
    """How to build example operands for one primitive, per dtype."""

    dtypes: tuple
    make: object  # (dtype, rng) -> (operands, attrs)
    expected: object  # (*operands, **attrs) -> ndarray, NumPy semantics per StableHLO
    upcast: bool = True  # compute the expectation for f16/bf16 in float32
    extra: list = field(default_factory=list)  # additional (label, operands, attrs)

    def cases(self, seed: int = 0):
        for d in self.dtypes:
            rng = np.random.default_rng(seed)
            ops, attrs = self.make(d, rng)
            yield PrimCase(d.short, ops, attrs, self._expect)
        for label, ops, attrs in self.extra:
            yield PrimCase(label, ops, attrs, self._expect)

    def _expect(self, *ops, **attrs):
        if self.upcast:
            ops = [_widen(np.asarray(o)) for o in ops]
        with np.errstate(all="ignore"):
            return self.expected(*ops, **attrs)


def values(d, rng, shape=(2, 3), *, low=None, high=None, positive=False) -> np.ndarray:
    """Random example values of dtype d: small integers, normal floats (positive, or in
    [low, high), when asked), complex with both parts random."""
    d = dt.dtype(d)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        lo = 0 if (d.kind == "u" or positive) else -5 if low is None else low
        hi = 6 if high is None else high
        return rng.integers(max(lo, 1) if positive else lo, hi, shape).astype(d.np)
    if low is not None or positive:
        lo = 0.25 if low is None else low
        hi = 2.0 if high is None else high
        re = rng.uniform(lo, hi, shape)
    else:
        re = rng.normal(0, 1.5, shape)
    if d.kind == "c":
        return (re + 1j * rng.normal(0, 1.5, shape)).astype(d.np)
    return re.astype(d.np)


def _un(ref, kinds, **kw):
    return PrimSpec(kinds, lambda d, rng: ([values(d, rng, **kw)], {}), ref)


def _bin(ref, kinds, rhs=None, **kw):
    def make(d, rng):
        x = values(d, rng, **kw)
        y = rhs(d, rng) if rhs else values(d, rng, **kw)
        return [x, y], {}
    return PrimSpec(kinds, make, ref)


def _c_div(x, y):
    if x.dtype.kind in "iu":
        return np.trunc(x.astype(np.float64) / y.astype(np.float64)).astype(x.dtype)
    return x / y


def _nonzero(d, rng):
    v = values(d, rng, positive=True)
    if d.kind == "i":
        v = v * np.where(rng.integers(0, 2, v.shape) == 1, 1, -1).astype(d.np)
    return v


def _shift_amount(d, rng):
    return rng.integers(0, d.bits, (2, 3)).astype(d.np)


def _shift_operand(d, rng):
    info = np.iinfo(d.np)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), (2, 3)).astype(d.np)


def _convert_cases():
    out = []
    rng = np.random.default_rng(0)
    targets = (dt.bool_, dt.int8, dt.uint32, dt.int64, dt.float16, dt.bfloat16, dt.float32,
               dt.float64, dt.complex64)
    for src in DTYPES:
        for dst in targets:
            if src.is_complex and not dst.is_complex:
                continue
            x = values(src, rng, low=0 if src.kind in "fc" else None, high=100)
            out.append((f"{src.short}->{dst.short}", [x], {"dtype": dst}))
    return out


def _convert_expected(x, *, dtype):
    if dtype is dt.bool_:
        return x != 0
    if dtype.is_integer and x.dtype.kind == "f":
        return np.trunc(x).astype(dtype.np)
    return x.astype(dtype.np)


_BITCAST_PAIRS = [(dt.int32, dt.float32), (dt.float32, dt.uint32), (dt.float64, dt.int64),
                  (dt.uint64, dt.float64), (dt.int8, dt.uint8), (dt.float16, dt.int16),
                  (dt.bfloat16, dt.uint16), (dt.int16, dt.float16)]


def _pad_expected(x, value, *, low, high, interior):
    shape = [lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in
             zip(x.shape, low, high, interior, strict=False)]
    out = np.full(shape, value, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + i * (it + 1) for i, lo, it in zip(idx, low, interior, strict=False))
        if all(0 <= p < s for p, s in zip(pos, shape, strict=False)):
            out[pos] = x[idx]
    return out


def _scalar(d, v):
    return np.asarray(v, dtype=dt.dtype(d).np)


def _reduce_ref(np_fn, bool_fn):
    def f(x, *, axes):
        if x.dtype == np.bool_:
            return bool_fn(x, axis=tuple(axes))
        return np.asarray(np_fn(x, axis=tuple(axes)), dtype=x.dtype)
    return f


def _bitwise_reduce(ufunc, bool_fn):
    def f(x, *, axes):
        if x.dtype == np.bool_:
            return bool_fn(x, axis=tuple(axes))
        out = x
        for a in sorted(axes, reverse=True):
            out = ufunc.reduce(out, axis=a)
        return np.asarray(out, dtype=x.dtype)
    return f


def _dot_expected(x, y, *, contracting, batch, preferred_element_type=None):
    out = np.matmul(x, y)  # the table uses the batched-matmul layout
    return out.astype((preferred_element_type or dt.dtype(x.dtype)).np)


def _dot_make(d, rng):
    x = values(d, rng, (2, 3, 4), low=-2 if d.kind in "iu" else None, high=3)
    y = values(d, rng, (2, 4, 5), low=-2 if d.kind in "iu" else None, high=3)
    return [x, y], {"contracting": ((2,), (1,)), "batch": ((0,), (0,))}


def _ds_expected(x, *starts, sizes):
    # StableHLO clamps each start into [0, n - size]
    st = [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, x.shape, sizes, strict=False)]
    return x[tuple(slice(s, s + k) for s, k in zip(st, sizes, strict=False))]


def _dus_expected(x, u, i, j):
    out = x.copy()
    out[i:i + u.shape[0], j:j + u.shape[1]] = u
    return out


ORDERED = REAL
PRIM_TABLE: dict[str, PrimSpec] = {
    # ---- elementwise unary
    "neg": _un(np.negative, NUMERIC),
    "abs": _un(np.abs, SINT + INEXACT),
    "sign": _un(np.sign, SINT + INEXACT),
    "exp": _un(np.exp, INEXACT),
    "expm1": _un(np.expm1, INEXACT),
    "log": _un(np.log, INEXACT, positive=True),
    "log1p": _un(np.log1p, INEXACT, positive=True),
    "sqrt": _un(np.sqrt, INEXACT, positive=True),
    "rsqrt": _un(lambda x: 1 / np.sqrt(x), INEXACT, positive=True),
    "cbrt": _un(np.cbrt, FLOAT),
    "sin": _un(np.sin, INEXACT),
    "cos": _un(np.cos, INEXACT),
    "tan": _un(np.tan, INEXACT, low=-1.2, high=1.2),
    "tanh": _un(np.tanh, INEXACT),
    "logistic": _un(lambda x: 1 / (1 + np.exp(-x)), INEXACT),
    "asin": _un(np.arcsin, INEXACT, low=-0.9, high=0.9),
    "acos": _un(np.arccos, INEXACT, low=-0.9, high=0.9),
    "atan": _un(np.arctan, INEXACT),
    "asinh": _un(np.arcsinh, INEXACT),
    "acosh": _un(np.arccosh, INEXACT, low=1.1, high=3.0),
    "atanh": _un(np.arctanh, INEXACT, low=-0.9, high=0.9),
    "sinh": _un(np.sinh, INEXACT),
    "cosh": _un(np.cosh, INEXACT),
    "floor": _un(np.floor, FLOAT),
    "ceil": _un(np.ceil, FLOAT),
    "round": PrimSpec(FLOAT, lambda d, rng: ([np.array(
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7], d.np)], {}), np.round),
    "is_finite": PrimSpec(FLOAT, lambda d, rng: ([np.array(
        [0.0, -1.0, np.inf, -np.inf, np.nan, 3.0], d.np)], {}), np.isfinite),
    "not": _un(lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
               LOGICAL),
    "real": _un(np.real, INEXACT),
    "imag": _un(lambda x: np.imag(x) if np.iscomplexobj(x) else np.zeros_like(x), INEXACT),
    "conj": _un(np.conj, NUMERIC),
    # ---- elementwise binary
    "add": _bin(lambda x, y: np.logical_or(x, y) if x.dtype == np.bool_ else x + y, DTYPES),
    "subtract": _bin(np.subtract, NUMERIC),
    "multiply": _bin(lambda x, y: np.logical_and(x, y) if x.dtype == np.bool_ else x * y,
                     DTYPES),
    "divide": _bin(_c_div, NUMERIC, rhs=_nonzero),
    "remainder": _bin(np.fmod, INT + FLOAT, rhs=_nonzero),
    "power": PrimSpec(NUMERIC, lambda d, rng: (
        [values(d, rng, positive=True, high=4 if d.kind in "iu" else 2.0),
         values(d, rng, low=0, high=4) if d.kind in "iu" else values(d, rng)], {}),
        np.power),
    "maximum": _bin(np.maximum, ORDERED),
    "minimum": _bin(np.minimum, ORDERED),
    "atan2": _bin(np.arctan2, FLOAT),
    "and": _bin(np.bitwise_and, LOGICAL),
    "or": _bin(np.bitwise_or, LOGICAL),
    "xor": _bin(np.bitwise_xor, LOGICAL),
    "shift_left": PrimSpec(INT, lambda d, rng: ([_shift_operand(d, rng),
                                                 _shift_amount(d, rng)], {}), np.left_shift),
    "shift_right": PrimSpec(INT, lambda d, rng: ([_shift_operand(d, rng),
                                                  _shift_amount(d, rng)], {}), np.right_shift),
    "nextafter": PrimSpec(FLOAT, lambda d, rng: ([values(d, rng), values(d, rng)], {}),
                          np.nextafter, upcast=False),
    # ---- comparisons, select, clamp
    "eq": _bin(np.equal, DTYPES, low=-1, high=2),
    "ne": _bin(np.not_equal, DTYPES, low=-1, high=2),
    "lt": _bin(np.less, ORDERED, low=-1, high=2),
    "le": _bin(np.less_equal, ORDERED, low=-1, high=2),
    "gt": _bin(np.greater, ORDERED, low=-1, high=2),
    "ge": _bin(np.greater_equal, ORDERED, low=-1, high=2),
    "select": PrimSpec(DTYPES, lambda d, rng: (
        [rng.integers(0, 2, (2, 3)).astype(bool), values(d, rng), values(d, rng)], {}),
        np.where, extra=[("scalar-pred", [np.array(True), np.arange(3.0), -np.arange(3.0)],
                          {})]),
    "clamp": PrimSpec(ORDERED, lambda d, rng: (
        [_scalar(d, 0 if d.kind == "b" else 1), values(d, rng, high=8),
         _scalar(d, 1 if d.kind == "b" else 4)], {}),
        lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
        extra=[("tensor-bounds", [np.zeros(4, np.float32), np.array([-1, .5, 2, np.nan],
                                                                   np.float32),
                                  np.ones(4, np.float32)], {})]),
    # ---- conversions
    "convert": PrimSpec((), None, _convert_expected, upcast=False, extra=_convert_cases()),
    "bitcast_convert": PrimSpec((), None, lambda x, *, dtype: np.ascontiguousarray(x).view(
        dtype.np), upcast=False, extra=[
        (f"{a.short}->{b.short}", [values(a, np.random.default_rng(1))], {"dtype": b})
        for a, b in _BITCAST_PAIRS]),
    "complex": PrimSpec((dt.float32, dt.float64), lambda d, rng: (
        [values(d, rng), values(d, rng)], {}),
        lambda re, im: re + 1j * im if re.dtype == np.float64 else
        (re + 1j * im).astype(np.complex64)),
    # ---- shape ops
    "constant": PrimSpec(DTYPES, lambda d, rng: (
        [], {"value": Literal(values(d, rng))}), lambda *, value: value.array, upcast=False,
        extra=[("splat", [], {"value": Literal(np.full((2, 2), 3.5, np.float32))}),
               ("scalar", [], {"value": Literal(np.asarray(7, np.int32))})]),
    "iota": PrimSpec(NUMERIC, lambda d, rng: ([], {"shape": (3, 4), "dtype": d,
                                                   "dimension": 1}),
                     lambda *, shape, dtype, dimension: np.broadcast_to(
                         np.arange(shape[dimension]).astype(dtype.np), shape)),
    "broadcast_in_dim": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 1))], {"shape": (2, 3, 4), "broadcast_dimensions": (1, 2)}),
        lambda x, *, shape, broadcast_dimensions: np.broadcast_to(x[None], shape),
        upcast=False),
    "reshape": PrimSpec(DTYPES, lambda d, rng: ([values(d, rng, (2, 6))], {"shape": (3, 4)}),
                        lambda x, *, shape: x.reshape(shape), upcast=False),
    "transpose": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3, 4))], {"permutation": (2, 0, 1)}),
        lambda x, *, permutation: x.transpose(permutation), upcast=False),
    "slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (5, 6))], {"start": (1, 0), "limit": (4, 6), "strides": (2, 3)}),
        lambda x, **a: x[1:4:2, 0:6:3], upcast=False),
    "dynamic_slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (5, 6)), _scalar(dt.int32, 2), _scalar(dt.int32, 4)],
        {"sizes": (2, 3)}), _ds_expected, upcast=False,
        extra=[("negative-start", [np.arange(12.0).reshape(3, 4), _scalar(dt.int64, -3),
                                   _scalar(dt.int64, 1)], {"sizes": (2, 2)})]),
    "dynamic_update_slice": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (4, 5)), values(d, rng, (2, 2)), _scalar(dt.int32, 3),
         _scalar(dt.int32, -1)], {}), lambda x, u, i, j: _dus_expected(x, u, 2, 0),
        upcast=False),
    "concatenate": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3)), values(d, rng, (4, 3)), values(d, rng, (1, 3))],
        {"dimension": 0}), lambda *xs, dimension: np.concatenate(xs, dimension),
        upcast=False),
    "pad": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (2, 3)), _scalar(d, 1)],
        {"low": (1, -1), "high": (0, 2), "interior": (1, 0)}), _pad_expected, upcast=False),
    "reverse": PrimSpec(DTYPES, lambda d, rng: ([values(d, rng, (2, 3, 4))], {"axes": (0, 2)}),
                        lambda x, *, axes: x[::-1, :, ::-1], upcast=False),
    # ---- reductions
    "reduce_sum": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 4, 5), positive=True, high=3)], {"axes": (0, 2)}),
        _reduce_ref(np.sum, np.any)),
    "reduce_prod": PrimSpec(DTYPES, lambda d, rng: (
        [values(d, rng, (3, 4, 2), low=-2 if d.kind == "i" else 0.8, high=3 if d.kind in "iu"
                else 1.25)], {"axes": (0, 2)}), _reduce_ref(np.prod, np.all)),
    "reduce_max": PrimSpec(ORDERED, lambda d, rng: ([values(d, rng, (3, 4, 5))],
                                                    {"axes": (1,)}),
                           _reduce_ref(np.max, np.any)),
    "reduce_min": PrimSpec(ORDERED, lambda d, rng: ([values(d, rng, (3, 4, 5))],
                                                    {"axes": (0, 1, 2)}),
                           _reduce_ref(np.min, np.all)),
    "reduce_and": PrimSpec(LOGICAL, lambda d, rng: ([values(d, rng, (3, 4), high=16)],
                                                    {"axes": (0,)}),
                           _bitwise_reduce(np.bitwise_and, np.all)),
    "reduce_or": PrimSpec(LOGICAL, lambda d, rng: ([values(d, rng, (3, 4), high=16)],
                                                   {"axes": (1,)}),
                          _bitwise_reduce(np.bitwise_or, np.any)),
    "argmax": PrimSpec(ORDERED, lambda d, rng: ([values(d, rng, (3, 5))],
                                                {"axis": 1, "index_dtype": dt.int32}),
                       lambda x, *, axis, index_dtype: np.argmax(x, axis).astype(np.int32)),
    "argmin": PrimSpec(ORDERED, lambda d, rng: ([values(d, rng, (3, 5))],
                                                {"axis": 0, "index_dtype": dt.int64}),
                       lambda x, *, axis, index_dtype: np.argmin(x, axis).astype(np.int64)),
    "dot_general": PrimSpec(DTYPES, _dot_make, _dot_expected, extra=[
        ("i8->i32", [np.arange(-6, 6, dtype=np.int8).reshape(1, 3, 4),
                     np.arange(8, dtype=np.int8).reshape(1, 4, 2)],
         {"contracting": ((2,), (1,)), "batch": ((0,), (0,)),
          "preferred_element_type": dt.int32})]),
}


def result_dtype_of(case: PrimCase, prim) -> list:
    """The result dtypes the primitive's shape rule gives for a case."""
    from stablejit.compiler.ir import TensorType

    types = tuple(TensorType(np.shape(o), dt.dtype(np.asarray(o).dtype))
                  for o in case.operands)
    return [t.dtype for t in prim.infer(types, Attrs(case.attrs))]


@functools.cache
def mlir_context():
    """A jaxlib.mlir Context with the stablehlo and chlo dialects (jaxlib 0.10 and 0.11)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import chlo, stablehlo

    ctx = ir.Context()
    try:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext as jme

        reg = ir.DialectRegistry()
        jme.register_dialects(reg)
        ctx.append_dialect_registry(reg)
    except (ImportError, AttributeError):  # other jaxlib layouts register on load
        pass
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    return ctx


def parse_and_verify(text: str):
    """Parse StableHLO text with jaxlib's MLIR bindings and run the verifier; returns the
    module (raises with the text on failure)."""
    from jaxlib.mlir import ir

    ctx = mlir_context()
    with ctx:
        try:
            m = ir.Module.parse(text, ctx)
        except Exception as e:
            raise AssertionError(f"MLIR could not parse the module: {e}\n{text}") from None
        assert m.operation.verify(), f"module does not verify:\n{text}"
    return m
