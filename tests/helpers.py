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
import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import stablejit
from stablejit.compiler import dtypes as dt
from stablejit.compiler.builder import Builder
from stablejit.compiler.ir import Attrs, Function, Literal, TensorType
from stablejit.compiler.ops import Ops
from stablejit.compiler.primitives import elementwise as ew
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

def run_primitive(prim, operands, attrs, path: str, regions=()) -> tuple[np.ndarray, ...]:
    """Apply one primitive to NumPy operands via `path`: "jit" (a compiled one-op
    program), "eager" (the XLA backend) or "reference". `regions`: the op's region
    Functions (control flow, custom derivative calls)."""
    attrs = Attrs(attrs)
    regions = tuple(regions)
    tensors = [to_backend(np.asarray(o), path) for o in operands]
    if path == "jit":
        fn = stablejit.jit(lambda *xs: bind(prim, xs, attrs, regions=regions))
        if not tensors:  # zero-operand primitives (iota, constant) run on the default backend
            with stablejit.default_backend(xla_backend()):
                out = fn()
        else:
            out = fn(*tensors)
    elif path == "eager":
        out = bind(prim, tensors, attrs, backend=xla_backend(), regions=regions)
    else:
        out = bind(prim, tensors, attrs, backend=stablejit.REFERENCE, regions=regions)
    return tuple(t.numpy() for t in out)


def run_primitive_jit_batch(prim, cases) -> list[tuple[np.ndarray, ...]]:
    """Like run_primitive(..., "jit") for many (operands, attrs[, regions]) cases of one
    primitive at once: one compiled program holding one independent op per case (one XLA
    compile instead of one per case). Returns one tuple of results per case."""
    cases = [(list(ops), Attrs(attrs), tuple(*regions)) for ops, attrs, *regions in cases]

    def program(operand_lists):
        return [bind(prim, tuple(xs), attrs, regions=regions)
                for xs, (_, attrs, regions) in zip(operand_lists, cases, strict=True)]

    args = [[to_backend(np.asarray(o), "jit") for o in ops] for ops, _, _ in cases]
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
    regions: tuple = ()  # IR Functions of ops with bodies (cond, while, scan, custom calls)


@dataclass
class PrimSpec:
    """How to build example operands for one primitive, per dtype. `make` returns
    (operands, attrs) or, for ops with regions, (operands, attrs, region Functions) (build
    them with `region`); an `extra` entry is (label, operands, attrs[, regions]). The
    expectation never sees the regions: it computes the answer on its own."""

    dtypes: tuple
    make: object  # (dtype, rng) -> (operands, attrs[, regions])
    expected: object  # (*operands, **attrs) -> ndarray, NumPy semantics per StableHLO
    upcast: bool = True  # compute the expectation for f16/bf16 in float32
    extra: list = field(default_factory=list)  # additional (label, operands, attrs[, regions])

    def cases(self, seed: int = 0):
        for d in self.dtypes:
            rng = np.random.default_rng(seed)
            ops, attrs, *regions = self.make(d, rng)
            yield PrimCase(d.short, ops, attrs, self._expect, tuple(*regions))
        for label, ops, attrs, *regions in self.extra:
            yield PrimCase(label, ops, attrs, self._expect, tuple(*regions))

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


def _window_spec(kind, np_fn, kinds):
    """reduce_window_<kind> over 2x2 windows with stride (1, 2) and no padding."""
    attrs = {"window_dimensions": (2, 2), "window_strides": (1, 2),
             "padding": ((0, 0), (0, 0)), "base_dilations": (1, 1), "window_dilations": (1, 1)}

    def expected(x, **a):
        w = np.lib.stride_tricks.sliding_window_view(x, (2, 2))[::1, ::2]
        return np_fn(w, axis=(2, 3)).astype(x.dtype)

    return PrimSpec(kinds, lambda d, rng: ([values(d, rng, (3, 5), low=0.8 if kind == "prod"
                                                    else None, high=1.25 if kind == "prod"
                                                    else None)], attrs), expected)


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
    "erf": _un(np.vectorize(math.erf), FLOAT),
    "erfc": _un(np.vectorize(math.erfc), FLOAT),
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
    # ---- sorting, cumulative, windows, fft, autodiff markers
    "stop_gradient": _un(lambda x: x, INEXACT),
    "cumsum": PrimSpec(NUMERIC, lambda d, rng: ([values(d, rng, (3, 4), positive=True,
                                                       high=3)], {"axis": 1}),
                       lambda x, *, axis: np.cumsum(x, axis).astype(x.dtype)),
    "cumprod": PrimSpec(FLOAT, lambda d, rng: ([values(d, rng, (2, 4), low=0.8, high=1.25)],
                                               {"axis": 0, "reverse": True}),
                        lambda x, *, axis, reverse: np.flip(np.cumprod(np.flip(x, axis), axis),
                                                            axis)),
    "cummax": PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 4))], {"axis": 1}),
                       lambda x, *, axis: np.maximum.accumulate(x, axis)),
    "cummin": PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 4))], {"axis": 0}),
                       lambda x, *, axis: np.minimum.accumulate(x, axis)),
    "sort": PrimSpec(INT + FLOAT, lambda d, rng: ([values(d, rng, (3, 5))],
                                                  {"dimension": 1}),
                     lambda x, *, dimension: (np.sort(x, dimension),)),
    "top_k": PrimSpec(INT + FLOAT, lambda d, rng: ([np.arange(10).reshape(2, 5)[:, ::-1]
                                                    .astype(d.np) * (1 if d.kind == "u" else
                                                                     -1)], {"k": 2}),
                      lambda x, *, k: (np.sort(x, -1)[:, ::-1][:, :k],
                                       np.argsort(-x.astype(np.float64), -1,
                                                  kind="stable")[:, :k].astype(np.int32))),
    "reduce_window_sum": _window_spec("sum", np.sum, NUMERIC),
    "reduce_window_prod": _window_spec("prod", np.prod, FLOAT),
    "reduce_window_max": _window_spec("max", np.max, INT + FLOAT),
    "reduce_window_min": _window_spec("min", np.min, INT + FLOAT),
    "fft": PrimSpec(COMPLEX, lambda d, rng: ([values(d, rng, (2, 8))],
                                             {"fft_type": "FFT", "fft_length": (8,)}),
                    lambda x, **a: np.fft.fft(x, axis=-1), extra=[
        ("rfft", [np.arange(8.0, dtype=np.float32)], {"fft_type": "RFFT",
                                                       "fft_length": (8,)})]),
    "dot_general": PrimSpec(DTYPES, _dot_make, _dot_expected, extra=[
        ("i8->i32", [np.arange(-6, 6, dtype=np.int8).reshape(1, 3, 4),
                     np.arange(8, dtype=np.int8).reshape(1, 4, 2)],
         {"contracting": ((2,), (1,)), "batch": ((0,), (0,)),
          "preferred_element_type": dt.int32})]),
}

# ---- ops with regions; gather and scatter ---------------------------------------------------
# Region bodies are IR Functions built with the compiler's Ops vocabulary (`region`); each
# expectation computes the answer on its own with NumPy and Python loops, never by running
# the regions. A primitive whose cases need different expectations joins several PrimSpecs.


def region(name: str, param_types, body) -> Function:
    """An IR Function for an op's region: body(ops, *params) returns its result Values."""
    b = Builder(name)
    params = [b.param(t) for t in param_types]
    return b.build(list(body(Ops(b), *params)))


def _tt(a) -> TensorType:
    a = np.asarray(a)
    return TensorType(a.shape, dt.dtype(a.dtype))


class JoinedSpec:
    """Several PrimSpecs of one primitive, each with its own expectation; case labels are
    prefixed with the part's name."""

    def __init__(self, **parts: PrimSpec):
        self.parts = parts

    def cases(self, seed: int = 0):
        for part, spec in self.parts.items():
            for case in spec.cases(seed):
                case.label = f"{part}-{case.label}"
                yield case


def _cond_if_make(pred):
    """bool[] predicate, branches [false, true] over two operands with two results (the
    true branch returns one of its parameters unchanged)."""
    def make(d, rng):
        x, y = values(d, rng), values(d, rng)
        t = _tt(x)
        on_false = region("on_false", [t, t], lambda o, x, y: [o.sub(x, y), o.neg(x)])
        on_true = region("on_true", [t, t], lambda o, x, y: [o.mul(x, y), x])
        return [np.asarray(pred), x, y], {}, (on_false, on_true)
    return make


def _cond_case_make(index):
    """i32[] index over three branches, results of two dtypes; out of range runs the last."""
    def make(d, rng):
        x, y = values(dt.int32, rng), values(dt.float32, rng, (3,))
        ts = [_tt(x), _tt(y)]
        branches = (
            region("b0", ts, lambda o, x, y: [o.mul(x, o.full_like(x, 2)), y]),
            region("b1", ts, lambda o, x, y: [o.neg(x), o.add(y, o.ones_like(y))]),
            region("b2", ts, lambda o, x, y: [o.sub(x, o.full_like(x, 3)), o.mul(y, y)]))
        return [np.asarray(index, np.int32), x, y], {}, branches
    return make


def _cond_case_expected(index, x, y):
    i = int(index) if 0 <= int(index) < 3 else 2
    return [(x * 2, y), (-x, y + 1), (x - 3, y * y)][i]


def _cond_const_make(pred):
    """No operands besides the predicate: each branch makes a constant."""
    branches = tuple(region(f"c{v}", [], lambda o, v=v: [o.const(v, dt.float32, (2,))])
                     for v in (1.5, -2.5))
    return [np.asarray(pred)], {}, branches


def _while_affine_make(limit=4, start=0):
    """consts (limit, scale), carry (i, acc): while i < limit: i += 1; acc = acc*scale + 1."""
    def make(d, rng):
        scale, acc = values(d, rng, (3,)), values(d, rng, (3,))
        i32 = TensorType((), dt.int32)
        ts = [i32, _tt(scale), i32, _tt(acc)]
        cond_fn = region("below", ts, lambda o, n, s, i, a: [o.lt(i, n)])
        body = region("step", ts, lambda o, n, s, i, a: [
            o.add(i, o.const(1, dt.int32)), o.add(o.mul(a, s), o.ones_like(a))])
        return [np.asarray(limit, np.int32), scale, np.asarray(start, np.int32), acc], \
            {"num_consts": 2}, (cond_fn, body)
    return make


def _while_affine_expected(limit, scale, i, acc, *, num_consts):
    i = int(i)
    while i < limit:
        i, acc = i + 1, acc * scale + 1
    return np.asarray(i), acc


def _collatz_make(d, rng):
    """No consts; carry (n, steps): integer division, remainder and select in the body."""
    ts = [TensorType((), d), TensorType((), dt.int32)]

    def body(o, n, steps):
        two = o.const(2, d)
        even = o.eq(o.bind(ew.remainder, n, two), o.const(0, d))
        up = o.add(o.mul(n, o.const(3, d)), o.const(1, d))
        return [o.select(even, o.div(n, two), up), o.add(steps, o.const(1, dt.int32))]

    return [np.asarray(27, d.np), np.asarray(0, np.int32)], {"num_consts": 0}, (
        region("not_one", ts, lambda o, n, s: [o.ne(n, o.const(1, d))]),
        region("collatz", ts, body))


def _collatz_expected(n, steps, *, num_consts):
    n, steps = int(n), int(steps)
    while n != 1:
        n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
    return np.asarray(n), np.asarray(steps)


def _scan_affine_make(length=4, reverse=False):
    """const w, carry c, xs x: c = c*w + x[i]; ys (c, sum of x[i])."""
    def make(d, rng):
        w, c, x = values(d, rng, (3,)), values(d, rng, (3,)), values(d, rng, (length, 3))
        ts = [_tt(w), _tt(c), TensorType((3,), d)]

        def body(o, w, c, xi):
            c = o.add(o.mul(c, w), xi)
            return [c, c, o.reduce_sum(xi, (0,))]

        return [w, c, x], {"num_consts": 1, "num_carry": 1, "length": length,
                           "reverse": reverse}, (region("affine", ts, body),)
    return make


def _scan_affine_expected(w, c, x, *, num_consts, num_carry, length, reverse):
    ys, sums = np.zeros((length, 3), c.dtype), np.zeros(length, c.dtype)
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        c = c * w + x[i]
        ys[i], sums[i] = c, x[i].sum()
    return c, ys, sums


def _scan_map_make(d, rng):
    """No consts or carry, two scanned operands of different dtypes."""
    a, b = values(dt.int32, rng, (5, 2)), values(dt.float32, rng, (5,))
    ts = [TensorType((2,), dt.int32), TensorType((), dt.float32)]
    body = region("map", ts, lambda o, a, b: [o.mul(a, a), o.add(b, o.ones_like(b))])
    return [a, b], {"num_consts": 0, "num_carry": 0, "length": 5, "reverse": False}, (body,)


def _scan_counter_make(reverse):
    """Nothing scanned: a counter carry, ys its squares."""
    def make(d, rng):
        ts = [TensorType((), d)]
        body = region("count", ts, lambda o, c: [o.add(c, o.const(1, d)), o.mul(c, c)])
        return [np.asarray(2, d.np)], {"num_consts": 0, "num_carry": 1, "length": 3,
                                       "reverse": reverse}, (body,)
    return make


def _scan_counter_expected(c, *, num_consts, num_carry, length, reverse):
    ys = [(c + k) ** 2 for k in range(length)]
    return c + length, np.stack(ys[::-1] if reverse else ys)


def _custom_jvp_make(d, rng):
    """f(x) = sin(x) * c with c captured; the rule gives cos(x) * t * c."""
    x, c = values(d, rng), values(d, rng)
    t = _tt(x)
    fun = region("f", [t, t], lambda o, x, c: [o.mul(o.bind(ew.sin, x), c)])
    rule = region("f_jvp", [t, t, t], lambda o, x, tx, c: [
        o.mul(o.bind(ew.sin, x), c), o.mul(o.mul(o.bind(ew.cos, x), tx), c)])
    return [x, c], {"out_types": (t,), "n_args": 1}, (fun, rule)


def _custom_jvp_pair_make(d, rng):
    """Two arguments, two outputs, nothing captured."""
    x, y = values(d, rng), values(d, rng)
    t = _tt(x)
    fun = region("g", [t, t], lambda o, x, y: [o.mul(x, y), o.add(x, y)])
    rule = region("g_jvp", [t] * 4, lambda o, x, y, tx, ty: [
        o.mul(x, y), o.add(x, y), o.add(o.mul(tx, y), o.mul(x, ty)), o.add(tx, ty)])
    return [x, y], {"out_types": (t, t), "n_args": 2}, (fun, rule)


def _custom_vjp_make(d, rng):
    """f(x, y) = x * y; fwd keeps x and y, bwd gives (ct * y, ct * x)."""
    x, y = values(d, rng), values(d, rng)
    t = _tt(x)
    fun = region("f", [t, t], lambda o, x, y: [o.mul(x, y)])
    fwd = region("f_fwd", [t, t], lambda o, x, y: [o.mul(x, y), x, y])
    bwd = region("f_bwd", [t, t, t], lambda o, x, y, ct: [o.mul(ct, y), o.mul(ct, x)])
    return [x, y], {"out_types": (t,), "n_args": 2}, (fun, fwd, bwd)


def _custom_vjp_captured_make(d, rng):
    """f(x) = (exp(x) * c, x) with c captured; one residual."""
    x, c = values(d, rng), values(d, rng)
    t = _tt(x)
    fun = region("h", [t, t], lambda o, x, c: [o.mul(o.bind(ew.exp, x), c), x])
    fwd = region("h_fwd", [t, t], lambda o, x, c: [
        o.mul(o.bind(ew.exp, x), c), x, o.bind(ew.exp, x)])
    bwd = region("h_bwd", [t] * 4, lambda o, r, ct0, ct1, c: [
        o.add(o.mul(o.mul(ct0, r), c), ct1)])
    return [x, c], {"out_types": (t, t), "n_args": 1}, (fun, fwd, bwd)


_GATHER_ROWS = {"offset_dims": (2,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
                "index_vector_dim": 2, "slice_sizes": (1, 3)}


def _gather_rows_expected(x, idx, **attrs):  # x[idx], starts clamped into the operand
    return x[np.clip(idx, 0, x.shape[0] - 1)]


def _gather_points_expected(x, idx, **attrs):
    return x[np.clip(idx[:, 0], 0, x.shape[0] - 1), np.clip(idx[:, 1], 0, x.shape[1] - 1)]


def _gather_columns_expected(x, idx, **attrs):
    return x[:, np.clip(idx, 0, x.shape[1] - 1)]


def _gather_windows_expected(x, idx, *, slice_sizes, **attrs):
    k = slice_sizes[0]
    return np.stack([x[s:s + k] for s in np.clip(idx[:, 0], 0, len(x) - k)])


_SCATTER_ROWS = {"update_window_dims": (1,), "inserted_window_dims": (0,),
                 "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1}
_COMBINE = {"set": lambda old, new: new, "add": np.add, "mul": np.multiply,
            "min": np.minimum, "max": np.maximum}


def _scatter_rows_case(label, d, rows, kind, seed=0):
    rng = np.random.default_rng(seed)
    x, upd = values(d, rng, (5, 3)), values(d, rng, (len(rows), 3))
    return label, [x, np.asarray(rows, np.int32)[:, None], upd], {**_SCATTER_ROWS,
                                                                  "kind": kind}


def _scatter_rows_expected(x, idx, upd, *, kind, **attrs):
    out = x.copy()
    for r, u in zip(idx[:, 0], upd, strict=True):
        if 0 <= r < x.shape[0]:  # a window that leaves the operand is dropped
            out[r] = _COMBINE[kind](out[r], u)
    return out


def _scatter_points_expected(x, idx, upd, *, kind, **attrs):
    out = x.copy()
    for (i, j), u in zip(idx, upd, strict=True):
        if 0 <= i < x.shape[0] and 0 <= j < x.shape[1]:
            out[i, j] = _COMBINE[kind](out[i, j], u)
    return out


PRIM_TABLE.update({
    # ---- control flow
    "cond": JoinedSpec(
        pred=PrimSpec((dt.int8, dt.uint32, dt.float16, dt.float32, dt.complex64),
                     _cond_if_make(True), lambda p, x, y: (x * y, x) if p else (x - y, -x),
                     extra=[("f32-false", *_cond_if_make(False)(dt.float32,
                                                                np.random.default_rng(0)))]),
        case=PrimSpec((), None, _cond_case_expected, extra=[
            (f"index{i}", *_cond_case_make(i)(None, np.random.default_rng(0)))
            for i in (0, 1, 2, 3, -1)]),
        const=PrimSpec((), None, lambda p: np.full(2, -2.5 if p else 1.5, np.float32),
                       extra=[(f"{p}", *_cond_const_make(p)) for p in (False, True)])),
    "while": JoinedSpec(
        affine=PrimSpec((dt.int32, dt.float32, dt.complex64), _while_affine_make(),
                        _while_affine_expected, extra=[
            ("f64-zero-trips", *_while_affine_make(-2)(dt.float64, np.random.default_rng(0))),
            ("f64-started-past", *_while_affine_make(3, 5)(dt.float64,
                                                          np.random.default_rng(0)))]),
        collatz=PrimSpec((dt.int64, dt.uint32), _collatz_make, _collatz_expected)),
    "scan": JoinedSpec(
        affine=PrimSpec((dt.int32, dt.float32, dt.float64), _scan_affine_make(),
                        _scan_affine_expected, extra=[
            ("f32-reverse", *_scan_affine_make(reverse=True)(dt.float32,
                                                             np.random.default_rng(0))),
            ("f32-length0", *_scan_affine_make(0)(dt.float32, np.random.default_rng(0)))]),
        map=PrimSpec((dt.int32,), _scan_map_make, lambda a, b, **attrs: (a * a, b + 1)),
        counter=PrimSpec((dt.int32,), _scan_counter_make(False), _scan_counter_expected,
                         extra=[("i64-reverse", *_scan_counter_make(True)(
                             dt.int64, np.random.default_rng(0)))])),
    # ---- calls with user-written derivative rules (emission and reference run `fun`)
    "custom_jvp_call": JoinedSpec(
        unary=PrimSpec((dt.float32, dt.float64), _custom_jvp_make,
                       lambda x, c, **attrs: np.sin(x) * c),
        pair=PrimSpec((dt.float32,), _custom_jvp_pair_make,
                      lambda x, y, **attrs: (x * y, x + y))),
    "custom_vjp_call": JoinedSpec(
        product=PrimSpec((dt.float32, dt.float64), _custom_vjp_make,
                         lambda x, y, **attrs: x * y),
        captured=PrimSpec((dt.float32,), _custom_vjp_captured_make,
                          lambda x, c, **attrs: (np.exp(x) * c, x))),
    # ---- gather (starts clamped) and scatter (windows that leave the operand dropped)
    "gather": JoinedSpec(
        rows=PrimSpec(DTYPES, lambda d, rng: (
            [values(d, rng, (5, 3)), np.array([[0, 4], [2, 7]], np.int32)], _GATHER_ROWS),
            _gather_rows_expected, upcast=False),
        points=PrimSpec((dt.float32,), lambda d, rng: (
            [values(d, rng, (4, 5)), np.array([[1, 2], [3, 0], [-1, 9]], np.int64)],
            {"offset_dims": (), "collapsed_slice_dims": (0, 1), "start_index_map": (0, 1),
             "index_vector_dim": 1, "slice_sizes": (1, 1)}), _gather_points_expected),
        columns=PrimSpec((dt.int32,), lambda d, rng: (
            [values(d, rng, (4, 5)), np.array([3, 0, 4, 6], np.int32)],
            {"offset_dims": (0,), "collapsed_slice_dims": (1,), "start_index_map": (1,),
             "index_vector_dim": 1, "slice_sizes": (4, 1)}), _gather_columns_expected),
        windows=PrimSpec((dt.float64,), lambda d, rng: (
            [values(d, rng, (6,)), np.array([[4], [-3], [1]], np.int32)],
            {"offset_dims": (1,), "collapsed_slice_dims": (), "start_index_map": (0,),
             "index_vector_dim": 1, "slice_sizes": (3,)}), _gather_windows_expected)),
    "scatter": JoinedSpec(
        rows=PrimSpec(NUMERIC, lambda d, rng: _scatter_rows_case("", d, [1, 3, 1], "add")[1:],
                      _scatter_rows_expected, extra=[
            _scatter_rows_case("bool-set", dt.bool_, [4, 0], "set"),
            _scatter_rows_case("c128-set", dt.complex128, [2, 0, 4], "set"),
            _scatter_rows_case("f32-mul", dt.float32, [0, 0, 3], "mul"),
            _scatter_rows_case("i16-min", dt.int16, [2, 4, 2], "min"),
            _scatter_rows_case("f64-max", dt.float64, [3, 1, 3], "max"),
            _scatter_rows_case("f32-dropped", dt.float32, [0, 7, -1, 2], "add")]),
        points=PrimSpec((dt.int32,), lambda d, rng: (
            [values(d, rng, (3, 4)), np.array([[0, 1], [2, 3], [0, 1], [3, 0]], np.int32),
             values(d, rng, (4,))],
            {"update_window_dims": (), "inserted_window_dims": (0, 1),
             "scatter_dims_to_operand_dims": (0, 1), "index_vector_dim": 1, "kind": "add"}),
            _scatter_points_expected)),
})


def _sort_keyed_expected(*xs, dimension, num_keys, descending):
    """1-D: a stable Python sort on the key tuples, NaN after every number, -0.0 == 0.0."""
    def key(i):
        return [(bool(np.isnan(x[i])), 0.0 if np.isnan(x[i]) else float(x[i]))
                for x in xs[:num_keys]]
    order = sorted(range(len(xs[0])), key=key, reverse=descending)  # reverse keeps ties
    return tuple(x[order] for x in xs)


_SORT_KEYS = np.array([3, 1, np.nan, 1, -0.0, 0.0, -np.inf, np.nan, 1], np.float32)
PRIM_TABLE["sort"] = JoinedSpec(values=PRIM_TABLE["sort"], keyed=PrimSpec(
    (), None, _sort_keyed_expected, upcast=False, extra=[
        (f"f32-payload-{'desc' if desc else 'asc'}",
         [_SORT_KEYS, np.arange(9, dtype=np.int32)],
         {"dimension": 0, "num_keys": 1, "descending": desc}) for desc in (False, True)] + [
        ("i32-f64-two-keys", [np.array([2, 1, 2, 1, 2, 1], np.int32),
                              np.array([0.5, 3, -1, 3, 0.5, np.nan]),
                              np.arange(6, dtype=np.uint8)],
         {"dimension": 0, "num_keys": 2, "descending": False})]))


# ---- linalg, fft, convolution and window primitives ---------------------------------------
# Expectations are independent loops / NumPy / SciPy. Decompositions get inputs with a unique
# answer: diagonal (eigh, svd) or triangular (qr) matrices, a SPD matrix (cholesky).

LINALG = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def _small_ints(d, rng, shape, lo=-3, hi=4):
    """Integer-valued entries: sums and products of a few of them are exact in every dtype."""
    d = dt.dtype(d)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if d.kind == "u" else lo
    v = rng.integers(lo, hi, shape)
    if d.kind == "c":
        v = v + 1j * rng.integers(lo, hi, shape)
    return v.astype(d.np)


def _spd(d, rng, n=3, batch=(2,)):
    b = values(d, rng, (*batch, n, n)).astype(np.complex128 if d.is_complex else np.float64)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(d.np)


def _ts_make(d, rng):
    a = values(d, rng, (2, 3, 3)) * 0.3 + 2.5 * np.eye(3, dtype=d.np)  # upper part ignored
    return [a.astype(d.np), values(d, rng, (2, 3, 2))], {
        "left_side": True, "lower": True, "transpose_a": "N", "unit_diagonal": False}


def _ts_expected(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        a = a - a * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    if transpose_a != "N":
        a = np.swapaxes(a, -1, -2)
        a = np.conj(a) if transpose_a == "C" else a
    if left_side:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _lu_expected(a):
    import scipy.linalg

    m = a.shape[-1]
    lu, piv = np.empty_like(a), np.empty(a.shape[:-1], np.int32)
    perm = np.empty(a.shape[:-1], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        lu[idx], piv[idx] = scipy.linalg.lu_factor(a[idx])
        p = list(range(m))
        for i, j in enumerate(piv[idx]):
            p[i], p[j] = p[j], p[i]
        perm[idx] = p
    return lu, piv, perm


def _qr_make(shape, full):
    def make(d, rng):
        # a real positive diagonal: Householder leaves such a column alone (tau = 0)
        a = np.triu(values(d, rng, shape), 1) + np.eye(*shape[-2:]) * rng.uniform(1, 3, shape)
        return [a.astype(d.np)], {"full_matrices": full}
    return make


def _qr_expected(a, *, full_matrices):
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), (*a.shape[:-2], m, k))
    return q, np.triu(a)[..., :k, :]  # upper triangular, positive diagonal: Q = I


_EIG_DIAG = np.array([2.0, -1.0, 0.5, 3.0])


def _eigh_make(lower):
    def make(d, rng):
        out = []
        for diag in (_EIG_DIAG, _EIG_DIAG[::-1] * 2):
            noise = values(d, rng, (len(diag), len(diag)))  # the ignored triangle
            out.append(np.diag(diag) + (np.triu(noise, 1) if lower else np.tril(noise, -1)))
        return [np.stack(out).astype(d.np)], {"lower": lower}
    return make


def _eigh_expected(a, *, lower):
    ws, vs = [], []
    for m in a:
        diag = np.real(np.diagonal(m))
        order = np.argsort(diag)
        ws.append(diag[order])
        vs.append(np.eye(len(diag))[:, order])
    return np.stack(ws), np.stack(vs)


def _svd_make(shape, full, uv=True):
    def make(d, rng):
        a = np.zeros(shape, d.np)
        k = min(shape[-2:])
        a[..., range(k), range(k)] = rng.permutation(np.arange(1, k + 1)) * 1.5
        return [a], {"full_matrices": full, "compute_uv": uv}
    return make


def _svd_expected(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    ss, us, vts = [], [], []
    for x in a.reshape(-1, m, n):
        d = np.real(np.diagonal(x))
        order = np.argsort(-d)
        ss.append(d[order])
        us.append(np.eye(m)[:, order] if not full_matrices else
                  np.eye(m)[:, list(order) + list(range(k, m))])
        vts.append(np.eye(n)[order] if not full_matrices else
                   np.eye(n)[list(order) + list(range(k, n))])
    batch = a.shape[:-2]
    s = np.stack(ss).reshape(*batch, k)
    if not compute_uv:
        return (s,)
    return (s, np.stack(us).reshape(*batch, m, -1), np.stack(vts).reshape(*batch, -1, n))


def _fft_expected(x, *, fft_type, fft_length):
    axes = tuple(range(x.ndim - len(fft_length), x.ndim))
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_length, axes=axes)


def _fft_case(label, dtype, shape, fft_type, fft_length):
    x = values(dtype, np.random.default_rng(len(label)), shape)
    return (label, [x], {"fft_type": fft_type, "fft_length": fft_length})


def _conv_attrs(**kw):
    a = {"window_strides": (1, 1), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1),
         "rhs_dilation": (1, 1), "feature_group_count": 1, "batch_group_count": 1,
         "dimension_numbers": ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))}
    a.update(kw)
    return a


def _conv_expected(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   feature_group_count, batch_group_count, dimension_numbers):
    """A loop over kernel taps of NCHW x OIHW (batch_group_count 1, non-negative padding)."""
    assert batch_group_count == 1
    ls, rs, os = dimension_numbers
    x, w = np.transpose(lhs, ls), np.transpose(rhs, rs)
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xd = np.zeros((n, c, (h - 1) * lhs_dilation[0] + 1, (wd - 1) * lhs_dilation[1] + 1),
                  x.dtype)
    xd[:, :, ::lhs_dilation[0], ::lhs_dilation[1]] = x
    xp = np.pad(xd, ((0, 0), (0, 0), *padding))
    (s0, s1), (d0, d1) = window_strides, rhs_dilation
    oh = (xp.shape[2] - (kh - 1) * d0 - 1) // s0 + 1
    ow = (xp.shape[3] - (kw - 1) * d1 - 1) // s1 + 1
    g = feature_group_count
    out = np.zeros((n, o, oh, ow), np.result_type(x.dtype, np.float64 if x.dtype.kind == "f"
                                                   else x.dtype))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d0:i * d0 + s0 * (oh - 1) + 1:s0,
                       j * d1:j * d1 + s1 * (ow - 1) + 1:s1]
            for k in range(g):
                pg = patch[:, k * ci:(k + 1) * ci]
                wg = w[k * (o // g):(k + 1) * (o // g), :, i, j]
                out[:, k * (o // g):(k + 1) * (o // g)] += np.einsum("nchw,oc->nohw", pg, wg)
    return np.transpose(out, np.argsort(os)).astype(lhs.dtype)


def _conv_make(d, rng):
    return [_small_ints(d, rng, (2, 2, 5, 4), -2, 3), _small_ints(d, rng, (3, 2, 2, 3), -2, 3)], \
        _conv_attrs(window_strides=(2, 1), padding=((1, 0), (1, 1)))


def _window_expected(kind):
    def f(x, *, window_dimensions, window_strides, padding, base_dilations, window_dilations):
        if kind in ("max", "min"):
            if x.dtype.kind == "f":
                init = -np.inf if kind == "max" else np.inf
            elif x.dtype == np.bool_:
                init = kind == "min"
            else:
                info = np.iinfo(x.dtype)
                init = info.min if kind == "max" else info.max
        else:
            init = (x.dtype == np.bool_) if kind == "prod" else 0
            init = 1 if kind == "prod" else init
        base = [(n - 1) * b + 1 for n, b in zip(x.shape, base_dilations, strict=True)]
        out_shape = [(bs + lo + hi - (w - 1) * wd - 1) // s + 1 for bs, (lo, hi), w, wd, s in
                     zip(base, padding, window_dimensions, window_dilations, window_strides,
                         strict=True)]
        out = np.empty(out_shape, x.dtype)
        for o in np.ndindex(*out_shape):
            vals = []
            for t in np.ndindex(*window_dimensions):
                pos = [oi * s + ti * wd - lo for oi, s, ti, wd, (lo, _) in
                       zip(o, window_strides, t, window_dilations, padding, strict=True)]
                ok = all(0 <= p < b and p % bd == 0 for p, b, bd in
                         zip(pos, base, base_dilations, strict=True))
                vals.append(x[tuple(p // bd for p, bd in zip(pos, base_dilations,
                                                             strict=True))] if ok else init)
            vals = np.array(vals, x.dtype)
            if x.dtype == np.bool_ and kind in ("sum", "prod"):
                out[o] = vals.any() if kind == "sum" else vals.all()
            else:
                out[o] = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[kind](
                    vals)
        return out
    return f


_WIN = {"window_dimensions": (2, 2), "window_strides": (1, 2), "padding": ((1, 0), (0, 1)),
        "base_dilations": (1, 1), "window_dilations": (1, 1)}
_WIN_DILATED = [("f32-dilated", [np.arange(20.0, dtype=np.float32).reshape(4, 5) - 7],
                 {"window_dimensions": (2, 3), "window_strides": (2, 1),
                  "padding": ((0, 1), (1, 1)), "base_dilations": (2, 1),
                  "window_dilations": (1, 2)})]


def _rw_spec(kind, kinds):
    return PrimSpec(kinds, lambda d, rng: ([_small_ints(d, rng, (4, 5), -2, 3)], dict(_WIN)),
                    _window_expected(kind), extra=_WIN_DILATED)


def _sas_make(select):
    def make(d, rng):
        x = rng.permutation(24).reshape(4, 6).astype(d.np)  # no ties inside a window
        src = _small_ints(d, rng, (2, 3), 1, 4)
        return [src, x, np.asarray(1, d.np)], {
            "select": select, "window_dimensions": (2, 2), "window_strides": (2, 2),
            "padding": ((0, 0), (0, 0))}
    return make


def _sas_expected(source, x, init, *, select, window_dimensions, window_strides, padding):
    out = np.full(x.shape, init, x.dtype)
    for o in np.ndindex(*source.shape):
        best = None
        for t in np.ndindex(*window_dimensions):
            pos = tuple(oi * s + ti for oi, s, ti in zip(o, window_strides, t, strict=True))
            if best is None or (x[pos] > x[best] if select == "ge" else x[pos] < x[best]):
                best = pos
        out[best] += source[o]
    return out


PRIM_TABLE.update({
    # ---- linalg
    "cholesky": PrimSpec(LINALG, lambda d, rng: ([_spd(d, rng)], {}), np.linalg.cholesky),
    "triangular_solve": PrimSpec(LINALG, _ts_make, _ts_expected, extra=[
        ("f64-right-upper-T-unit", [np.triu(np.arange(1.0, 10.0).reshape(3, 3)) + np.eye(3),
                                    np.arange(6.0).reshape(2, 3) - 2],
         {"left_side": False, "lower": False, "transpose_a": "T", "unit_diagonal": True}),
        ("c64-conj", [(np.tril(np.arange(1.0, 10.0).reshape(3, 3)) * (1 + 0.5j)).astype(
            np.complex64), (np.arange(6.0).reshape(3, 2) + 1j).astype(np.complex64)],
         {"left_side": True, "lower": True, "transpose_a": "C", "unit_diagonal": False})]),
    "lu": PrimSpec(LINALG, lambda d, rng: ([values(d, rng, (2, 4, 4))], {}), _lu_expected),
    "qr": PrimSpec(LINALG, _qr_make((2, 4, 3), False), _qr_expected, extra=[
        ("f32-full", _qr_make((4, 3), True)(dt.float32, np.random.default_rng(0))[0],
         {"full_matrices": True}),
        ("c128-wide", _qr_make((2, 4), False)(dt.complex128, np.random.default_rng(0))[0],
         {"full_matrices": False})]),
    "eigh": PrimSpec(LINALG, _eigh_make(True), _eigh_expected, extra=[
        ("f64-upper", *_eigh_make(False)(dt.float64, np.random.default_rng(0)))]),
    "svd": PrimSpec(LINALG, _svd_make((2, 3, 3), True), _svd_expected, extra=[
        ("f32-tall-reduced", *_svd_make((4, 2), False)(dt.float32, np.random.default_rng(0))),
        ("c64-wide-reduced", *_svd_make((2, 3), False)(dt.complex64, np.random.default_rng(0))),
        ("f64-values-only", *_svd_make((3, 3), False, False)(dt.float64,
                                                            np.random.default_rng(0)))]),
    # ---- fft
    "fft": PrimSpec((), None, _fft_expected, extra=[
        _fft_case("c64-fft", dt.complex64, (3, 8), "FFT", (8,)),
        _fft_case("c128-fft2", dt.complex128, (2, 4, 6), "FFT", (4, 6)),
        _fft_case("c64-ifft", dt.complex64, (5, 6), "IFFT", (5, 6)),
        _fft_case("f32-rfft", dt.float32, (2, 10), "RFFT", (10,)),
        _fft_case("f64-rfft3", dt.float64, (2, 3, 4), "RFFT", (2, 3, 4)),
        _fft_case("c64-irfft", dt.complex64, (2, 6), "IRFFT", (10,)),
        _fft_case("c128-irfft-odd", dt.complex128, (3, 4), "IRFFT", (3, 7))]),
    # ---- convolution
    "convolution": PrimSpec(NUMERIC, _conv_make, _conv_expected, extra=[
        ("f32-nhwc-groups-dilated", [
            _small_ints(dt.float32, np.random.default_rng(1), (2, 5, 6, 4)),
            _small_ints(dt.float32, np.random.default_rng(2), (2, 3, 2, 4))],
         _conv_attrs(window_strides=(1, 2), padding=((1, 1), (0, 2)), lhs_dilation=(1, 2),
                     rhs_dilation=(2, 1), feature_group_count=2,
                     dimension_numbers=((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))))]),
    # ---- windows (these and "fft" replace the basic entries above: every dtype, padding,
    # base and window dilations, all four FFT types, 2-D and 3-D transforms)
    "reduce_window_sum": _rw_spec("sum", DTYPES),
    "reduce_window_prod": _rw_spec("prod", DTYPES),
    "reduce_window_max": _rw_spec("max", REAL),
    "reduce_window_min": _rw_spec("min", REAL),
    "select_and_scatter_add": PrimSpec(INT + FLOAT, _sas_make("ge"), _sas_expected, extra=[
        ("f32-min", *_sas_make("le")(dt.float32, np.random.default_rng(0)))]),
})


def result_dtype_of(case: PrimCase, prim) -> list:
    """The result dtypes the primitive's shape rule gives for a case."""
    types = tuple(TensorType(np.shape(o), dt.dtype(np.asarray(o).dtype))
                  for o in case.operands)
    return [t.dtype for t in prim.infer(types, Attrs(case.attrs), case.regions)]


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
