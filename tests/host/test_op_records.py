"""One table of op records drives every function of `stablejit.numpy` four ways —
`stablejit.jit`, eager XLA (the default backend), lazy eager code (`stablejit.lazy()`)
and the reference backend — and compares each with NumPy (or a stated reference where
stablejit differs on purpose).

A record names the function, how to call it, its input generators (domains, shapes with
broadcasting, dtypes) and its tolerances. `test_every_function_has_a_record` fails when a
name of `stablejit.numpy.__all__` has neither a record nor a justified entry in SKIP.

Shapes repeat across records ((3, 4) and (4,)) so that eager programs are shared.
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import ml_dtypes
import numpy as np
import pytest
import stablejit as sj
import stablejit.numpy as snp
from stablejit import nn
from stablejit.errors import MustCompileError
from stablejit.scipy import special

from tests.support.jax_equivalents import jax_on_the_host

F32, F64, F16, BF16 = "float32", "float64", "float16", "bfloat16"
C64, C128 = "complex64", "complex128"
I8, I32, I64, U8, U32, BOOL = "int8", "int32", "int64", "uint8", "uint32", "bool"
FLOATS = (F32, F64, F16, BF16)
FLOAT2 = (F32, F64)
COMPLEX = (C64, C128)
INTS = (I32, I64, U8, I8)
REALS = (F32, I32)
ALLNUM = (F32, F64, F16, I32, I64, U8, C64)

# (rtol, atol) per dtype; records may loosen them
TOL = {F64: (1e-10, 1e-12), F32: (2e-5, 2e-6), F16: (4e-3, 2e-3), BF16: (3e-2, 2e-2),
       C64: (2e-5, 2e-6), C128: (1e-10, 1e-12)}

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0, -1.0, 0.5, 2.0, -0.5]


def _np_dtype(d: str):
    return ml_dtypes.bfloat16 if d == BF16 else np.dtype(d)


def make(domain: str, shape, dtype: str, seed: int) -> np.ndarray:
    """Deterministic data of one domain."""
    rng = np.random.default_rng(seed)
    d = _np_dtype(dtype)
    n = math.prod(shape)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if np.dtype(d).kind in "iu":
        lo, hi = {"any": (-5, 6), "pos": (1, 7), "small": (0, 4), "nonzero": (1, 7),
                  "unit": (-1, 2), "ge1": (1, 4), "special": (-5, 6), "nan": (-5, 6)
                  }.get(domain, (-5, 6))
        if np.dtype(d).kind == "u":
            lo = max(lo, 0)
        a = rng.integers(lo, hi, size=shape)
        if domain == "nonzero" and np.dtype(d).kind == "i":
            a = a * rng.choice([-1, 1], size=shape)
        return a.astype(d)
    if domain == "special":
        a = np.resize(np.array(SPECIAL), n).reshape(shape)
    elif domain == "nan":
        a = rng.uniform(-3, 3, shape)
        a[rng.random(shape) < 0.3] = np.nan
    else:
        lo, hi = {"any": (-3, 3), "pos": (0.5, 3), "unit": (-0.9, 0.9), "ge1": (1.1, 3),
                  "nonzero": (0.5, 3), "small": (0, 3)}[domain]
        a = rng.uniform(lo, hi, shape)
        if domain == "nonzero":
            a = a * rng.choice([-1, 1], size=shape)
    if np.dtype(d).kind == "c":
        a = a + 1j * (rng.uniform(-1, 1, shape) if domain not in ("pos", "ge1") else
                      rng.uniform(-0.5, 0.5, shape))
    return a.astype(d)


@dataclass
class Rec:
    name: str
    fn: Callable  # called with tensors (on any path)
    ref: Callable  # called with NumPy arrays
    args: tuple = ()  # (domain, shape) per tensor argument
    dtypes: tuple = (F32,)
    aliases: tuple = ()
    tol: dict = field(default_factory=dict)
    jit: str = "ok"  # "ok" or "raises" (data-dependent shapes)
    values: bool = True  # False: compare shape and dtype only (empty)
    out_dtype: str | None = None  # the expected result dtype, where not NumPy's rule
    native: bool = False  # the NumPy reference takes half-precision inputs as they are
    arg_dtypes: Callable | None = None  # dtype per argument from the record's dtype

    def inputs(self, dtype: str) -> list[np.ndarray]:
        ds = self.arg_dtypes(dtype) if self.arg_dtypes else [dtype] * len(self.args)
        return [make(dom, shape, d, seed=zlib.crc32(f"{self.name}/{i}".encode()))
                for i, ((dom, shape), d) in enumerate(zip(self.args, ds, strict=True))]


S, V = (3, 4), (4,)  # the shared shapes: a matrix and a broadcastable row


def U(name, dom="any", dtypes=FLOATS, ref=None, aliases=(), **kw) -> Rec:
    """A unary elementwise record."""
    f = getattr(snp, name)
    return Rec(name, f, ref or getattr(np, name), ((dom, S),), dtypes, aliases, **kw)


def B(name, doms=("any", "any"), dtypes=FLOAT2, ref=None, aliases=(), shapes=(S, V), **kw):
    """A binary elementwise record, broadcasting (3, 4) with (4,)."""
    f = getattr(snp, name)
    return Rec(name, f, ref or getattr(np, name), tuple(zip(doms, shapes, strict=True)), dtypes,
               aliases, **kw)


def N(name, fn, ref, args=(("any", S),), dtypes=(F32,), **kw) -> Rec:
    """Any other record."""
    return Rec(name, fn, ref, tuple(args), dtypes, **kw)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _nan_to_num(x):
    if x.dtype != ml_dtypes.bfloat16:
        return np.nan_to_num(x)
    info = ml_dtypes.finfo(x.dtype)  # bfloat16: NumPy's nan_to_num leaves inf alone
    return np.nan_to_num(x.astype(np.float32), posinf=float(info.max),
                         neginf=float(info.min)).astype(x.dtype)


def _put_along(x, v):
    y = x.copy()
    np.put_along_axis(y, _IDX1, v, 1)
    return y


def _snp_put_along(x, v):
    """NumPy's form, in place into a copy (put_along_axis returns None, as NumPy's)."""
    y = snp.copy(x)
    assert snp.put_along_axis(y, snp.asarray(_IDX1), v, 1) is None
    return y


def _top_k(x, k):
    i = np.argsort(-x, axis=-1, stable=True)[..., :k]
    return np.take_along_axis(x, i, -1), i.astype(np.int32)  # int32 like jax.lax.top_k


def _unique_all(x):
    v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    return v, i, inv.reshape(x.shape), c


_IDX1 = np.array([[0], [2], [1]])
_IDX = np.array([[3, 0, 1, 1], [2, 2, 0, 3], [0, 1, 2, 3]])

LOOSE = {F32: (1e-4, 1e-5), C64: (1e-4, 1e-5), F16: (1e-2, 1e-2), BF16: (5e-2, 5e-2)}

RECORDS: list[Rec] = [
    # ---- unary float math (ints and bools become float32) ----
    U("exp", dtypes=FLOATS + COMPLEX + (I32,)),
    U("expm1", dtypes=FLOATS + (I32,)),
    U("exp2", dtypes=FLOATS, tol=LOOSE),
    U("log", "pos", FLOATS + COMPLEX + (I32,)),
    U("log1p", "pos", FLOATS),
    U("log2", "pos", FLOATS),
    U("log10", "pos", FLOATS),
    U("sqrt", "pos", FLOATS + COMPLEX + (I32, U8)),
    U("rsqrt", "pos", FLOATS, ref=lambda x: 1 / np.sqrt(x)),
    U("cbrt", "any", FLOATS),
    U("sin", dtypes=FLOATS + COMPLEX),
    U("cos", dtypes=FLOATS + COMPLEX),
    U("tan", "unit", FLOATS + COMPLEX, tol=LOOSE),
    U("tanh", dtypes=FLOATS + COMPLEX, tol=LOOSE),
    U("sigmoid", dtypes=FLOATS, ref=_sigmoid),
    U("acos", "unit", FLOATS + COMPLEX, ref=np.arccos, aliases=("arccos",), tol=LOOSE),
    U("asin", "unit", FLOATS + COMPLEX, ref=np.arcsin, aliases=("arcsin",), tol=LOOSE),
    U("atan", "any", FLOATS + COMPLEX, ref=np.arctan, aliases=("arctan",), tol=LOOSE),
    U("acosh", "ge1", FLOATS + COMPLEX, ref=np.arccosh, aliases=("arccosh",), tol=LOOSE),
    U("asinh", "any", FLOATS + COMPLEX, ref=np.arcsinh, aliases=("arcsinh",), tol=LOOSE),
    U("atanh", "unit", FLOATS + COMPLEX, ref=np.arctanh, aliases=("arctanh",), tol=LOOSE),
    U("sinh", dtypes=FLOATS + COMPLEX),
    U("cosh", dtypes=FLOATS + COMPLEX),
    U("deg2rad", dtypes=FLOATS, aliases=("radians",)),
    U("rad2deg", dtypes=FLOATS, aliases=("degrees",)),
    U("sinc", dtypes=FLOAT2, tol=LOOSE),
    U("fabs", dtypes=FLOATS),
    # ---- unary numeric ----
    U("abs", dtypes=ALLNUM + (I8, BF16, C128), aliases=("absolute",)),
    U("negative", dtypes=ALLNUM),
    U("positive", dtypes=ALLNUM),
    U("sign", dtypes=(F32, F64, F16, I32, I64, U8, C64)),
    U("square", dtypes=ALLNUM),
    U("reciprocal", "nonzero", FLOATS),
    U("floor", dtypes=FLOATS + (I32,)),
    U("ceil", dtypes=FLOATS + (I32,)),
    U("trunc", dtypes=FLOATS + (I32,), aliases=("fix",)),
    N("round", lambda x: snp.round(x), np.round, [("any", S)], FLOATS + (I32, C64),
      aliases=("around",)),
    N("round(decimals=2)", lambda x: snp.round(x, 2), lambda x: np.round(x, 2),
      [("any", S)], FLOAT2, tol=LOOSE),
    N("round(decimals=-1)", lambda x: snp.round(x, -1), lambda x: np.round(x, -1),
      [("any", S)], (I32,)),
    N("rint", lambda x: snp.rint(x), np.rint, [("any", S)], FLOATS),
    U("isfinite", "special", FLOATS + (I32, C64)),
    U("isinf", "special", FLOATS + (I32, C64)),
    U("isnan", "special", FLOATS + (I32, C64)),
    U("isposinf", "special", FLOAT2),
    U("isneginf", "special", FLOAT2),
    U("signbit", "special", FLOATS + (I32, U8)),
    U("nan_to_num", "special", FLOATS + (I32, C64), native=True, ref=lambda x: _nan_to_num(x)),
    N("nan_to_num(nan=,posinf=)", lambda x: snp.nan_to_num(x, nan=-1.0, posinf=9.0),
      lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0), [("special", S)], FLOAT2),
    U("real", dtypes=COMPLEX + (F32,)),
    U("imag", dtypes=COMPLEX + (F32,)),
    U("conj", dtypes=COMPLEX + (F32,), aliases=("conjugate",)),
    U("angle", dtypes=COMPLEX + (F32,)),
    U("isreal", dtypes=(C64, F32)),
    U("iscomplex", dtypes=(C64, F32)),
    U("invert", dtypes=INTS + (BOOL,), aliases=("bitwise_invert", "bitwise_not")),
    U("logical_not", dtypes=(BOOL, F32, I32)),
    # ---- binary arithmetic, broadcasting (3, 4) with (4,) ----
    B("add", dtypes=ALLNUM + (BOOL, BF16)),
    B("subtract", dtypes=ALLNUM + (BF16,)),
    B("multiply", dtypes=ALLNUM + (BOOL,)),
    B("divide", ("any", "nonzero"), FLOATS + COMPLEX + (I32,), aliases=("true_divide",)),
    B("floor_divide", ("any", "nonzero"), (F32, F64, I32, I64, U8, I8)),
    B("remainder", ("any", "nonzero"), (F32, F64, I32, I64, U8, I8), aliases=("mod",)),
    B("fmod", ("any", "nonzero"), (F32, F64, I32, I64, U8)),
    B("power", ("pos", "any"), FLOAT2 + (C64,), aliases=("pow",), tol=LOOSE),
    N("power(int)", snp.power, np.power, [("any", S), ("small", V)], (I32, I64, U8)),
    N("power(x, 3)", lambda x: snp.power(x, 3), lambda x: np.power(x, 3), [("any", S)],
      (F32, I32)),
    B("maximum", ("special", "any"), FLOATS + (I32, U8, BOOL)),
    B("minimum", ("special", "any"), FLOATS + (I32, U8, BOOL)),
    B("fmax", ("special", "special"), FLOAT2 + (I32,), shapes=(S, S)),
    B("fmin", ("special", "special"), FLOAT2 + (I32,), shapes=(S, S)),
    B("arctan2", dtypes=FLOATS, aliases=("atan2",), tol=LOOSE),
    B("hypot", ("special", "any"), FLOATS),
    B("logaddexp", ("special", "any"), FLOATS, tol=LOOSE),
    B("logaddexp2", ("special", "any"), FLOATS, tol=LOOSE),
    B("copysign", ("special", "special"), FLOATS, shapes=(S, S)),
    B("nextafter", ("any", "special"), FLOAT2),
    B("heaviside", ("special", "any"), FLOAT2),
    B("float_power", ("pos", "any"), (F32, I32), out_dtype=F64),
    N("ldexp", snp.ldexp, np.ldexp, [("any", S), ("any", V)], FLOAT2,
      arg_dtypes=lambda d: [d, I32]),
    B("gcd", ("any", "any"), (I32, I64, U8, I8)),
    B("lcm", ("any", "any"), (I32, I64, U8)),
    B("bitwise_and", dtypes=INTS + (BOOL,)),
    B("bitwise_or", dtypes=INTS + (BOOL,)),
    B("bitwise_xor", dtypes=INTS + (BOOL,)),
    B("left_shift", ("any", "small"), INTS, aliases=("bitwise_left_shift",)),
    B("right_shift", ("any", "small"), INTS, aliases=("bitwise_right_shift",)),
    B("equal", ("small", "small"), (F32, I32, BOOL, C64)),
    B("not_equal", ("small", "small"), (F32, I32, BOOL, C64)),
    B("less", ("small", "small"), (F32, I32, U8, BOOL)),
    B("less_equal", ("small", "small"), (F32, I32, U8)),
    B("greater", ("small", "small"), (F32, I32, U8)),
    B("greater_equal", ("small", "small"), (F32, I32, U8)),
    B("logical_and", dtypes=(BOOL, F32)),
    B("logical_or", dtypes=(BOOL, F32)),
    B("logical_xor", dtypes=(BOOL, I32)),
    N("divmod", snp.divmod, np.divmod, [("any", S), ("nonzero", V)], (F32, I32)),
    N("modf", snp.modf, np.modf, [("special", S)], FLOAT2),
    # mixed dtypes and Python scalars (promotion)
    N("add(i32, f32)", snp.add, lambda a, b: np.add(a.astype(np.float32), b),  # jax: f32
      [("any", S), ("any", V)], (F32,), arg_dtypes=lambda d: [I32, F32]),
    N("multiply(u8, i8)", snp.multiply, np.multiply, [("any", S), ("any", V)], (I32,),
      arg_dtypes=lambda d: [U8, I8]),
    N("add(f16 tensor, py float)", lambda x: x + 1.5,
      lambda x: (x.astype(np.float32) + 1.5).astype(x.dtype), [("any", S)], (F16, BF16)),
    N("multiply(i8 tensor, py int)", lambda x: x * 3, lambda x: x * np.int8(3),
      [("any", S)], (I8,)),
    N("divide(i32 tensor, py int)", lambda x: x / 2, lambda x: (x / 2).astype(np.float32),
      [("any", S)], (I32,)),
    N("where", snp.where, np.where, [("any", S), ("any", S), ("any", V)], (F32, I32, C64),
      arg_dtypes=lambda d: [BOOL, d, d]),
    N("clip", lambda x: snp.clip(x, -1, 2), lambda x: np.clip(x, -1, 2), [("any", S)],
      (F32, I32)),
    N("isclose", snp.isclose, np.isclose, [("special", S), ("special", S)], FLOAT2 + (I32,)),
    N("isclose(equal_nan, rtol)", lambda a, b: snp.isclose(a, b, 0.1, 0.0, equal_nan=True),
      lambda a, b: np.isclose(a, b, 0.1, 0.0, equal_nan=True), [("special", S),
                                                                ("any", S)], FLOAT2),
    N("allclose", snp.allclose, lambda a, b: np.asarray(np.allclose(a, b)),
      [("any", S), ("any", V)], (F32,)),
    N("array_equal", lambda a: snp.array_equal(a, a), lambda a: np.asarray(True),
      [("any", S)], (F32, I32)),
    N("array_equal(nan)", lambda a: snp.array_equal(a, a, equal_nan=True),
      lambda a: np.asarray(np.array_equal(a, a, equal_nan=True)), [("special", S)], (F32,)),
    N("array_equiv", lambda a, b: snp.array_equiv(a, b),
      lambda a, b: np.asarray(np.array_equiv(a, b)), [("small", S), ("small", V)], (I32,)),
    # ---- reductions ----
    N("sum", lambda x: snp.sum(x, axis=0), lambda x: np.sum(x, axis=0), [("any", S)],
      (F32, F64, I32, I8, U8, BOOL, C64)),
    N("sum(all, keepdims)", lambda x: snp.sum(x, keepdims=True),
      lambda x: np.sum(x, keepdims=True), [("any", S)], (F32, I32), tol=LOOSE),
    N("prod", lambda x: snp.prod(x, axis=1), lambda x: np.prod(x, axis=1), [("any", S)],
      (F32, I32, BOOL)),
    N("mean", lambda x: snp.mean(x, axis=(0, 1)), lambda x: np.mean(x, axis=(0, 1)),
      [("any", S)], (F32, F64, C64)),
    N("max", lambda x: snp.max(x, axis=1), lambda x: np.max(x, axis=1), [("any", S)],
      (F32, I32, U8, BOOL), aliases=("amax",)),
    N("min", lambda x: snp.min(x, axis=-1, keepdims=True),
      lambda x: np.min(x, axis=-1, keepdims=True), [("any", S)], (F32, I32), aliases=("amin",)),
    N("all", lambda x: snp.all(x, axis=0), lambda x: np.all(x, axis=0), [("any", S)],
      (BOOL, I32)),
    N("any", lambda x: snp.any(x), lambda x: np.any(x), [("any", S)], (BOOL, F32)),
    N("argmax", lambda x: snp.argmax(x, axis=1), lambda x: np.argmax(x, axis=1),
      [("any", S)], (F32, I32)),
    N("argmin", lambda x: snp.argmin(x), lambda x: np.argmin(x), [("any", S)], (F32, I32)),
    N("count_nonzero", lambda x: snp.count_nonzero(x, axis=0),
      lambda x: np.count_nonzero(x, axis=0), [("small", S)], (I32, BOOL)),
    N("var", lambda x: snp.var(x, axis=0, correction=1), lambda x: np.var(x, axis=0, ddof=1),
      [("any", S)], (F32, F64, C64), tol=LOOSE),
    N("std", lambda x: snp.std(x, keepdims=True), lambda x: np.std(x, keepdims=True),
      [("any", S)], (F32, F64), tol=LOOSE),
    N("nansum", lambda x: snp.nansum(x, axis=1), lambda x: np.nansum(x, axis=1),
      [("nan", S)], FLOAT2, tol=LOOSE),
    N("nanprod", lambda x: snp.nanprod(x, axis=0), lambda x: np.nanprod(x, axis=0),
      [("nan", S)], FLOAT2, tol=LOOSE),
    N("nanmean", lambda x: snp.nanmean(x, axis=1), lambda x: np.nanmean(x, axis=1),
      [("nan", S)], FLOAT2, tol=LOOSE),
    N("nanvar", lambda x: snp.nanvar(x, axis=1, ddof=1), lambda x: np.nanvar(x, axis=1, ddof=1),
      [("nan", S)], FLOAT2, tol=LOOSE),
    N("nanstd", lambda x: snp.nanstd(x), lambda x: np.nanstd(x), [("nan", S)], FLOAT2,
      tol=LOOSE),
    N("nanmax", lambda x: snp.nanmax(x, axis=0), lambda x: np.nanmax(x, axis=0),
      [("nan", S)], FLOAT2 + (I32,)),
    N("nanmin", lambda x: snp.nanmin(x, axis=1), lambda x: np.nanmin(x, axis=1),
      [("nan", S)], FLOAT2),
    N("ptp", lambda x: snp.ptp(x, axis=1), lambda x: np.ptp(x, axis=1), [("any", S)],
      (F32, I32)),
    N("average", lambda x, w: snp.average(x, axis=1, weights=w),
      lambda x, w: np.average(x, axis=1, weights=w), [("any", S), ("pos", V)], FLOAT2,
      tol=LOOSE),
    # ---- creation (no tensor inputs: jit traces a function of no arguments) ----
    N("arange", lambda: snp.arange(2, 11, 3), lambda: np.arange(2, 11, 3), []),
    N("arange(float)", lambda: snp.arange(0.5, 3.0, 0.5),
      lambda: np.arange(0.5, 3.0, 0.5, dtype=np.float32), []),
    N("zeros", lambda: snp.zeros((2, 3), dtype=snp.int32), lambda: np.zeros((2, 3), np.int32),
      []),
    N("ones", lambda: snp.ones(4), lambda: np.ones(4, np.float32), []),
    N("full", lambda: snp.full((2, 2), 7), lambda: np.full((2, 2), 7, np.int64), []),
    N("empty", lambda: snp.empty((2, 5), dtype=snp.float64),
      lambda: np.empty((2, 5), np.float64), [], values=False),
    N("eye", lambda: snp.eye(3, 4, k=1), lambda: np.eye(3, 4, 1, np.float32), []),
    N("identity", lambda: snp.identity(3, dtype=snp.int32),
      lambda: np.identity(3, np.int32), []),
    N("tri", lambda: snp.tri(3, 4, k=-1), lambda: np.tri(3, 4, -1, np.float32), []),
    N("linspace", lambda: snp.linspace(0, 1, 7), lambda: np.linspace(0, 1, 7, dtype=np.float32),
      []),
    N("linspace(tensor end points)", lambda a: snp.linspace(a[0, 0], a[1, 1], 5,
                                                             endpoint=False),
      lambda a: np.linspace(a[0, 0], a[1, 1], 5, endpoint=False).astype(a.dtype),
      [("any", S)], FLOAT2, tol=LOOSE),
    N("logspace", lambda: snp.logspace(0, 2, 5), lambda: np.logspace(0, 2, 5).astype(np.float32),
      [], tol=LOOSE),
    N("zeros_like", snp.zeros_like, np.zeros_like, [("any", S)], (F32, I32)),
    N("ones_like", snp.ones_like, np.ones_like, [("any", S)], (F32, BOOL)),
    N("full_like", lambda x: snp.full_like(x, 2), lambda x: np.full_like(x, 2), [("any", S)],
      (F32, I32)),
    N("empty_like", snp.empty_like, np.empty_like, [("any", S)], (F32,), values=False),
    N("tril", lambda x: snp.tril(x, k=1), lambda x: np.tril(x, 1), [("any", (2, 3, 4))],
      (F32, I32)),
    N("triu", lambda x: snp.triu(x), np.triu, [("any", S)], (F32, BOOL)),
    N("meshgrid", lambda a, b: snp.meshgrid(a, b), lambda a, b: np.meshgrid(a, b),
      [("any", (3,)), ("any", (4,))], (F32,)),
    N("meshgrid(ij)", lambda a, b, c: snp.meshgrid(a, b, c, indexing="ij"),
      lambda a, b, c: np.meshgrid(a, b, c, indexing="ij"),
      [("any", (3,)), ("any", (4,)), ("any", (2,))], (I32,)),
    N("asarray", lambda x: snp.asarray(x, dtype=snp.float64), lambda x: x.astype(np.float64),
      [("any", S)], (F32,)),
    N("array", lambda x: snp.array(x), lambda x: x, [("any", S)], (I32,)),
    N("asarray(list)", lambda: snp.asarray([[1, 2], [3, 4]]),
      lambda: np.array([[1, 2], [3, 4]]), []),
    N("from_dlpack", lambda: snp.from_dlpack(np.arange(6.0).reshape(2, 3)),
      lambda: np.arange(6.0).reshape(2, 3), []),
    N("astype", lambda x: snp.astype(x, snp.int32), lambda x: x.astype(np.int32),
      [("any", S)], (F32, BOOL, I64)),
    N("astype(complex->real)", lambda x: snp.astype(x, snp.float32),
      lambda x: x.real.astype(np.float32), [("any", S)], (C64,)),
    # ---- manipulation ----
    N("reshape", lambda x: snp.reshape(x, (2, -1)), lambda x: np.reshape(x, (2, -1)),
      [("any", S)], (F32, BOOL)),
    N("ravel", snp.ravel, np.ravel, [("any", S)]),
    N("flatten", snp.flatten, lambda a: a.flatten(), [("any", S)]),
    N("transpose", lambda x: snp.transpose(x, (2, 0, 1)), lambda x: np.transpose(x, (2, 0, 1)),
      [("any", (2, 3, 4))]),
    N("permute_dims", lambda x: snp.permute_dims(x, (1, 0, 2)),
      lambda x: np.permute_dims(x, (1, 0, 2)), [("any", (2, 3, 4))]),
    N("matrix_transpose", snp.matrix_transpose, np.matrix_transpose, [("any", (2, 3, 4))]),
    N("swapaxes", lambda x: snp.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
      [("any", (2, 3, 4))]),
    N("moveaxis", lambda x: snp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1),
      [("any", (2, 3, 4))]),
    N("expand_dims", lambda x: snp.expand_dims(x, (0, 3)), lambda x: np.expand_dims(x, (0, 3)),
      [("any", S)]),
    N("squeeze", lambda x: snp.squeeze(x, 1), lambda x: np.squeeze(x, 1), [("any", (3, 1, 4))]),
    N("concat", lambda a, b: snp.concat([a, b], axis=0),
      lambda a, b: np.concatenate([a, b], 0), [("any", S), ("any", (2, 4))], (F32, I32),
      aliases=("concatenate",)),
    N("concat(mixed dtypes)", lambda a, b: snp.concat([a, b], axis=1),
      lambda a, b: np.concatenate([a, b], 1), [("any", S), ("any", S)], (F32,),
      arg_dtypes=lambda d: [I8, F32]),
    N("stack", lambda a, b: snp.stack([a, b], axis=-1), lambda a, b: np.stack([a, b], -1),
      [("any", S), ("any", S)], (F32, BOOL)),
    N("flip", lambda x: snp.flip(x, axis=(0, 1)), lambda x: np.flip(x, (0, 1)), [("any", S)]),
    N("fliplr", snp.fliplr, np.fliplr, [("any", S)]),
    N("flipud", snp.flipud, np.flipud, [("any", S)]),
    N("rot90", lambda x: snp.rot90(x, 3, axes=(1, 2)), lambda x: np.rot90(x, 3, axes=(1, 2)),
      [("any", (2, 3, 4))]),
    N("atleast_1d", lambda: snp.atleast_1d(snp.asarray(3.0)), lambda: np.atleast_1d(
        np.float32(3.0)), []),
    N("atleast_2d", snp.atleast_2d, np.atleast_2d, [("any", V)]),
    N("atleast_3d", snp.atleast_3d, np.atleast_3d, [("any", S)]),
    N("broadcast_to", lambda x: snp.broadcast_to(x, (2, 3, 4)),
      lambda x: np.broadcast_to(x, (2, 3, 4)), [("any", V)], (F32, I32)),
    N("broadcast_arrays", lambda a, b: snp.broadcast_arrays(a, b),
      lambda a, b: np.broadcast_arrays(a, b), [("any", (3, 1)), ("any", V)]),
    N("roll", lambda x: snp.roll(x, (1, -2), axis=(0, 1)),
      lambda x: np.roll(x, (1, -2), axis=(0, 1)), [("any", S)], (F32, I32)),
    N("roll(flat)", lambda x: snp.roll(x, 5), lambda x: np.roll(x, 5), [("any", S)]),
    N("repeat", lambda x: snp.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1),
      [("any", S)], (F32, BOOL)),
    N("repeat(counts)", lambda x: snp.repeat(x, [2, 0, 1], axis=0),
      lambda x: np.repeat(x, [2, 0, 1], axis=0), [("any", S)]),
    N("repeat(flat)", lambda x: snp.repeat(x, 3), lambda x: np.repeat(x, 3), [("any", S)]),
    N("tile", lambda x: snp.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [("any", S)],
      (F32, I32)),
    N("unstack", lambda x: snp.unstack(x, axis=1), lambda x: np.unstack(x, axis=1),
      [("any", S)]),
    N("split", lambda x: snp.split(x, 2, axis=1), lambda x: np.split(x, 2, axis=1),
      [("any", S)]),
    N("array_split", lambda x: snp.array_split(x, [1, 3]), lambda x: np.array_split(x, [1, 3]),
      [("any", (5, 2))]),
    N("array_split(sections)", lambda x: snp.array_split(x, 3, axis=1),
      lambda x: np.array_split(x, 3, axis=1), [("any", S)]),
    N("hsplit", lambda x: snp.hsplit(x, 2), lambda x: np.hsplit(x, 2), [("any", S)]),
    N("vsplit", lambda x: snp.vsplit(x, [1]), lambda x: np.vsplit(x, [1]), [("any", S)]),
    N("dsplit", lambda x: snp.dsplit(x, [1]), lambda x: np.dsplit(x, [1]),
      [("any", (2, 1, 4))]),
    N("hstack", lambda a, b: snp.hstack([a, b]), lambda a, b: np.hstack([a, b]),
      [("any", S), ("any", S)]),
    N("vstack", lambda a, b: snp.vstack([a, b]), lambda a, b: np.vstack([a, b]),
      [("any", S), ("any", V)], aliases=("row_stack",)),
    N("dstack", lambda a, b: snp.dstack([a, b]), lambda a, b: np.dstack([a, b]),
      [("any", S), ("any", S)]),
    N("column_stack", lambda a, b: snp.column_stack([a, b]),
      lambda a, b: np.column_stack([a, b]), [("any", (3,)), ("any", (3, 2))]),
    N("pad", lambda x: snp.pad(x, ((1, 2), (0, 3)), constant_values=-1),
      lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=-1), [("any", S)], (F32, I32)),
    *[N(f"pad({m})", lambda x, m=m: snp.pad(x, ((2, 1), (3, 2)), m),
        lambda x, m=m: np.pad(x, ((2, 1), (3, 2)), m), [("any", S)], (F32,), tol=LOOSE)
      for m in ("edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean")],
    N("diff", lambda x: snp.diff(x, n=2, axis=1), lambda x: np.diff(x, n=2, axis=1),
      [("any", S)], (F32, I32, BOOL)),
    N("diff(prepend)", lambda x: snp.diff(x, prepend=0),  # a weak 0: x's dtype, as jax
      lambda x: np.diff(x, prepend=x.dtype.type(0)), [("any", S)], (I32,)),
    # ---- linear algebra of the main namespace ----
    N("matmul", snp.matmul, np.matmul, [("any", (2, 3, 4)), ("any", (4, 5))], (F32, I32),
      tol=LOOSE),
    N("tensordot", lambda a, b: snp.tensordot(a, b, axes=([1, 2], [0, 1])),
      lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])),
      [("any", (2, 3, 4)), ("any", (3, 4, 2))], tol=LOOSE),
    N("vecdot", snp.vecdot, np.vecdot, [("any", S), ("any", V)], (F32, C64), tol=LOOSE),
    N("dot", snp.dot, np.dot, [("any", S), ("any", (4, 2))], tol=LOOSE),
    N("inner", snp.inner, np.inner, [("any", S), ("any", (2, 4))], tol=LOOSE),
    N("outer", snp.outer, np.outer, [("any", (3,)), ("any", V)]),
    N("vdot", snp.vdot, np.vdot, [("any", S), ("any", S)], (F32, C64), tol=LOOSE),
    N("einsum", lambda a, b: snp.einsum("ij,kj->ik", a, b),
      lambda a, b: np.einsum("ij,kj->ik", a, b), [("any", S), ("any", (2, 4))], tol=LOOSE),
    # ---- searching: data-dependent shapes raise inside jit ----
    N("nonzero", snp.nonzero, lambda x: tuple(i.astype(np.int64) for i in np.nonzero(x)),
      [("small", S)], (I32, BOOL), jit="raises"),
]



def _jax64(fn):
    """jax's answer on the host, computed in float64 for float64 inputs (jax rounds to
    float32 unless x64 is on); the oracle for functions NumPy lacks."""
    def ref(*arrays):
        with jax.enable_x64(True), jax_on_the_host():
            return np.asarray(fn(*arrays))
    return ref


# Functions of the other namespaces (stablejit.scipy, stablejit.nn) that NumPy lacks.
RECORDS += [
    N("scipy.special.erf", special.erf, _jax64(jax.scipy.special.erf),
      dtypes=(F32, F64, F16, BF16, I32), tol=LOOSE),
    N("scipy.special.erf(special values)", special.erf, _jax64(jax.scipy.special.erf),
      [("special", S)], (F32, F64)),
    N("scipy.special.erfc", special.erfc, _jax64(jax.scipy.special.erfc),
      dtypes=(F32, F64, F16, BF16, I32), tol=LOOSE),
    N("scipy.special.erfc(special values)", special.erfc, _jax64(jax.scipy.special.erfc),
      [("special", S)], (F32, F64)),
    N("nn.gelu(approximate=False)", lambda x: nn.gelu(x, approximate=False),
      _jax64(lambda x: jax.nn.gelu(x, approximate=False)), dtypes=(F32, F64, F16), tol=LOOSE),
]

# ---- the NumPy surface JAX programs use (issue 10) ----------------------------------------
# NumPy is the reference; JAX (computed in float64, see _jax64) where stablejit follows
# JAX on purpose: fill_diagonal(inplace=False), histogram's float counts, bincount(length=),
# unique(size=), nanargmax's -1 for all-NaN slices, unravel_index's clipping, roots with
# strip_zeros=False.
import jax.numpy as jnp  # noqa: E402

_Q = np.array([0.1, 0.5, 0.9])


def _q(x):
    """The quantiles in x's dtype (NumPy would promote float32 data to float64 q)."""
    return snp.asarray(_Q).astype(x.dtype) if isinstance(x, sj.Tensor) else _Q.astype(x.dtype)


def _jax64_tree(fn):
    """_jax64 for functions returning a tuple of arrays."""
    def ref(*arrays):
        with jax.enable_x64(True), jax_on_the_host():
            return [np.asarray(o) for o in fn(*arrays)]
    return ref


def _same_dtype(np_fn):
    """NumPy's answer in the input's float dtype: NumPy computes cov, corrcoef and interp
    in float64 for float32 data, JAX (and stablejit) in float32."""
    return lambda x, *rest: np_fn(x, *rest).astype(x.dtype)
_BINS = np.array([-2.0, -0.5, 0.0, 1.0, 2.5])


def _pieces(p, k: int = 2):
    """A partition compared as (sorted part before k, the kth value, sorted part after)."""
    m = snp if isinstance(p, sj.Tensor) else np
    return m.sort(p[..., :k], axis=-1), p[..., k], m.sort(p[..., k + 1:], axis=-1)


def _root_parts(r):
    """Roots compared without their order: sorted real parts, sorted imaginary parts."""
    m = snp if isinstance(r, sj.Tensor) else np
    return m.sort(m.real(r)), m.sort(m.imag(r))


RECORDS += [
    # diagonals and triangles
    N("diag", lambda v: snp.diag(v, 1), lambda v: np.diag(v, 1), [("any", V)], (F32, I32)),
    N("diag(of a matrix)", lambda x: snp.diag(x, -1), lambda x: np.diag(x, -1), [("any", S)]),
    N("diagonal", lambda x: snp.diagonal(x, -1, 0, 2), lambda x: np.diagonal(x, -1, 0, 2),
      [("any", (3, 4, 4))], (F32, I32)),
    N("trace", lambda x: snp.trace(x, 1), lambda x: np.trace(x, 1), [("any", S)], (F32, I32)),
    N("fill_diagonal", lambda x: snp.fill_diagonal(x, 5, inplace=False),
      _jax64(lambda x: jnp.fill_diagonal(x, 5, inplace=False)), [("any", (5, 3))],
      (F32, I32)),
    N("fill_diagonal(values, wrap)", lambda x, v: _in_place(snp.fill_diagonal, x, v, wrap=True),
      lambda x, v: (lambda y: (np.fill_diagonal(y, v, wrap=True), y)[1])(x.copy()),
      [("any", (7, 3)), ("any", (2,))]),
    N("diag_indices", lambda: snp.diag_indices(3, 3), lambda: np.diag_indices(3, 3), []),
    N("diag_indices_from", snp.diag_indices_from, np.diag_indices_from, [("any", (3, 3))]),
    N("tril_indices", lambda: snp.tril_indices(4, -1, 5), lambda: np.tril_indices(4, -1, 5),
      []),
    N("triu_indices", lambda: snp.triu_indices(3, 1), lambda: np.triu_indices(3, 1), []),
    N("tril_indices_from", lambda x: snp.tril_indices_from(x, 1),
      lambda x: np.tril_indices_from(x, 1), [("any", S)]),
    N("triu_indices_from", snp.triu_indices_from, np.triu_indices_from, [("any", S)]),
    # grids and index arithmetic
    N("indices", lambda: snp.indices((2, 3)), lambda: np.indices((2, 3)), []),
    N("indices(sparse)", lambda: snp.indices((2, 3, 2), sparse=True),
      lambda: np.indices((2, 3, 2), sparse=True), []),
    N("mgrid", lambda: snp.mgrid[0:3, 1:6:2], lambda: np.mgrid[0:3, 1:6:2], []),
    N("mgrid(point counts)", lambda: snp.mgrid[0:1:5j, -1:1:0.5],
      lambda: np.mgrid[0:1:5j, -1:1:0.5], [], out_dtype=F32),
    N("ogrid", lambda: snp.ogrid[0:3, 0:2], lambda: np.ogrid[0:3, 0:2], []),
    N("ix_", lambda: snp.ix_([0, 2], [1, 3, 3]), lambda: np.ix_([0, 2], [1, 3, 3]), []),
    N("unravel_index", lambda i: snp.unravel_index(i, (3, 4)),
      lambda i: np.unravel_index(i, (3, 4)), [("small", S)], (I64,)),
    N("unravel_index(out of bounds clip, as jax)",
      lambda: snp.unravel_index(snp.asarray([13, -1, -20, 5]), (3, 4)),
      _jax64_tree(lambda: jnp.unravel_index(jnp.asarray([13, -1, -20, 5]), (3, 4))), []),
    N("ravel_multi_index", lambda a, b: snp.ravel_multi_index((a, b), (4, 5)),
      lambda a, b: np.ravel_multi_index((a, b), (4, 5)), [("small", S), ("small", S)],
      (I64,), jit="raises"),
    N("ravel_multi_index(wrap, F)", lambda a, b: snp.ravel_multi_index((a, b), (3, 2), "wrap",
                                                                     "F"),
      lambda a, b: np.ravel_multi_index((a, b), (3, 2), "wrap", "F"),
      [("any", S), ("any", S)], (I64,)),
    # editing along an axis
    N("delete", lambda x: snp.delete(x, [0, 2], axis=1), lambda x: np.delete(x, [0, 2], 1),
      [("any", S)], (F32, I32)),
    N("delete(flat slice)", lambda x: snp.delete(x, slice(1, None, 3)),
      lambda x: np.delete(x, slice(1, None, 3)), [("any", S)]),
    N("delete(mask)", lambda x: snp.delete(x, np.array([True, False, True]), axis=0),
      lambda x: np.delete(x, np.array([True, False, True]), axis=0), [("any", S)]),
    N("delete(traced, assume_unique_indices)",
      lambda x: snp.delete(x, snp.asarray([3, 0]), axis=1, assume_unique_indices=True),
      lambda x: np.delete(x, [3, 0], axis=1), [("any", S)]),
    N("insert", lambda x: snp.insert(x, 1, 9.0, axis=1), lambda x: np.insert(x, 1, 9.0, 1),
      [("any", S)], (F32, I32)),
    N("insert(positions)", lambda x, v: snp.insert(x, [0, 2, 2], v, axis=1),
      lambda x, v: np.insert(x, [0, 2, 2], v, axis=1), [("any", S), ("any", (3,))]),
    N("insert(flat)", lambda x: snp.insert(x, [1, 5], [7, 8]),
      lambda x: np.insert(x, [1, 5], [7, 8]), [("any", S)], (F32, I32)),
    N("append", snp.append, np.append, [("any", S), ("any", V)]),
    N("append(axis)", lambda a, b: snp.append(a, b, axis=0),
      lambda a, b: np.append(a, b, axis=0), [("any", S), ("any", (2, 4))], (I32,)),
    N("copy", snp.copy, np.copy, [("any", S)], (F32, BOOL)),
    # elementwise and reductions
    N("frexp", snp.frexp, np.frexp, [("special", S)], (F32, F64, F16)),
    N("frexp(any)", snp.frexp, np.frexp, [("any", S)], (F32, F64)),
    N("sum(where=, initial=)", lambda x: snp.sum(x, axis=0, where=x > 0, initial=2),
      lambda x: np.sum(x, axis=0, where=x > 0, initial=2), [("any", S)], (F32, I32)),
    N("prod(where=)", lambda x: snp.prod(x, axis=1, where=x < 1),
      lambda x: np.prod(x, axis=1, where=x < 1), [("any", S)], (F32,)),
    N("max(where=, initial=)", lambda x: snp.max(x, axis=1, where=x < 0, initial=-9),
      lambda x: np.max(x, axis=1, where=x < 0, initial=-9), [("any", S)], (F32, I32)),
    N("min(initial=, empty)", lambda x: snp.min(x[:, :0], axis=1, initial=3),
      lambda x: np.min(x[:, :0], axis=1, initial=3), [("any", S)], (F32,)),
    # statistics
    N("median", lambda x: snp.median(x, axis=1), lambda x: np.median(x, axis=1),
      [("any", (3, 5))], (F32, F64, I32)),
    *[N(f"quantile({m})", lambda x, m=m: snp.quantile(x, _q(x), axis=(0, 2), method=m,
                                                      keepdims=True),
        lambda x, m=m: np.quantile(x, _q(x), axis=(0, 2), method=m, keepdims=True),
        [("any", (2, 3, 5))], (F32, F64), tol=LOOSE)
      for m in ("linear", "lower", "higher", "midpoint", "nearest")],
    N("percentile", lambda x: snp.percentile(x, 30.0), lambda x: np.percentile(x, 30.0),
      [("any", S)], (F32, I32), tol=LOOSE),
    N("nanmedian", lambda x: snp.nanmedian(x, axis=0), lambda x: np.nanmedian(x, axis=0),
      [("nan", (5, 4))], FLOAT2),
    N("nanquantile", lambda x: snp.nanquantile(x, _q(x), axis=1),
      lambda x: np.nanquantile(x, _q(x), axis=1), [("nan", (3, 6))], FLOAT2, tol=LOOSE),
    N("nanpercentile", lambda x: snp.nanpercentile(x, 75, method="nearest"),
      lambda x: np.nanpercentile(x, 75, method="nearest"), [("nan", S)], FLOAT2),
    N("nanargmax", lambda x: snp.nanargmax(x, axis=1), lambda x: np.nanargmax(x, axis=1),
      [("nan", (3, 6))], FLOAT2 + (I32,)),
    N("nanargmin", lambda x: snp.nanargmin(x), lambda x: np.nanargmin(x), [("nan", S)],
      FLOAT2),
    N("nanargmax(all-NaN slice: -1, as jax)",
      lambda x: snp.nanargmax(snp.where(snp.arange(3)[:, None] == 1, snp.nan, x), axis=1),
      _jax64(lambda x: jnp.nanargmax(jnp.where(jnp.arange(3)[:, None] == 1, jnp.nan, x),
                                     axis=1)), [("any", S)], FLOAT2),
    N("nancumsum", lambda x: snp.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1),
      [("nan", S)], FLOAT2, tol=LOOSE),
    N("nancumprod", snp.nancumprod, np.nancumprod, [("nan", S)], FLOAT2, tol=LOOSE),
    N("cov", snp.cov, _same_dtype(np.cov), [("any", (3, 6))], FLOAT2, tol=LOOSE),
    N("cov(y, rowvar=False, weights)",
      lambda x, y: snp.cov(x, y, rowvar=False, fweights=np.array([1, 2, 1, 3, 1, 1]),
                           aweights=np.linspace(0.5, 2, 6)),
      lambda x, y: np.cov(x, y, rowvar=False, fweights=np.array([1, 2, 1, 3, 1, 1]),
                          aweights=np.linspace(0.5, 2, 6)),
      [("any", (6, 2)), ("any", (6,))], (F64,)),
    N("corrcoef", snp.corrcoef, _same_dtype(np.corrcoef), [("any", (3, 6))], FLOAT2,
      tol=LOOSE),
    # counting into bins
    N("bincount", snp.bincount, np.bincount, [("small", (10,))], (I32, I64, U8),
      jit="raises"),
    N("bincount(weights, minlength)", lambda x, w: snp.bincount(x, w, minlength=7),
      lambda x, w: np.bincount(x, w, minlength=7), [("small", (10,)), ("any", (10,))],
      (F64,), arg_dtypes=lambda d: [I64, d], jit="raises"),
    N("bincount(length=, as jax)", lambda x: snp.bincount(x, length=3),
      _jax64(lambda x: jnp.bincount(x, length=3)), [("small", (10,))], (I64,)),
    N("digitize", lambda x: snp.digitize(x, _BINS), lambda x: np.digitize(x, _BINS),
      [("any", (12,))], FLOAT2),
    N("digitize(right, decreasing)", lambda x: snp.digitize(x, _BINS[::-1], right=True),
      lambda x: np.digitize(x, _BINS[::-1], right=True), [("any", (12,))], (F64,)),
    N("histogram", lambda x: snp.histogram(x, 7), _jax64_tree(lambda x: jnp.histogram(x, 7)),
      [("any", (40,))], FLOAT2, tol=LOOSE),
    N("histogram(edges, weights, density)",
      lambda x, w: snp.histogram(x, _BINS, weights=w, density=True),
      _jax64_tree(lambda x, w: jnp.histogram(x, _BINS, weights=w, density=True)),
      [("any", (40,)), ("pos", (40,))], (F64,)),
    N("histogram_bin_edges", lambda x: snp.histogram_bin_edges(x, 5, range=(-1, 2)),
      lambda x: np.histogram_bin_edges(x, 5, range=(-1, 2)), [("any", (20,))], FLOAT2,
      tol=LOOSE),
    # sets, choices, interpolation
    N("isin", lambda a, b: snp.isin(a, b), lambda a, b: np.isin(a, b),
      [("any", S), ("any", (5,))], (I32, I64)),
    N("isin(invert)", lambda a, b: snp.isin(a, b, invert=True),
      lambda a, b: np.isin(a, b, invert=True), [("special", S), ("special", (4,))], (F32,)),
    N("unique(axis=0)", lambda x: snp.unique(x, axis=0, return_index=True,
                                             return_inverse=True, return_counts=True),
      lambda x: np.unique(x, axis=0, return_index=True, return_inverse=True,
                          return_counts=True), [("unit", (8, 2))], (I32,), jit="raises"),
    N("unique(axis=1)", lambda x: snp.unique(x, axis=1), lambda x: np.unique(x, axis=1),
      [("unit", (2, 7))], (I64,), jit="raises"),
    N("unique(axis=0, size=, as jax)", lambda x: snp.unique(x, axis=0, size=8),
      _jax64(lambda x: jnp.unique(x, axis=0, size=8)), [("unit", (6, 2))], (I64,)),
    N("select", lambda x: snp.select([x < -1, x > 1], [x * 2, x ** 2], 7.0),
      lambda x: np.select([x < -1, x > 1], [x * 2, x ** 2], 7.0), [("any", S)], FLOAT2),
    N("piecewise", lambda x: snp.piecewise(x, [x < 0, x >= 0.5],
                                           [lambda v: -v, lambda v: v * 10, 3]),
      lambda x: np.piecewise(x, [x < 0, x >= 0.5], [lambda v: -v, lambda v: v * 10, 3]),
      [("any", S)], (F32, I32)),
    N("interp", lambda x, xp, fp: snp.interp(x, snp.sort(xp), fp),
      _same_dtype(lambda x, xp, fp: np.interp(x, np.sort(xp), fp)),
      [("any", (9,)), ("unit", (5,)), ("any", (5,))], FLOAT2, tol=LOOSE),
    N("interp(left, right)", lambda x, xp, fp: snp.interp(x, snp.sort(xp), fp, -9, 9),
      lambda x, xp, fp: np.interp(x, np.sort(xp), fp, -9, 9),
      [("any", (9,)), ("unit", (5,)), ("any", (5,))], (F64,)),
    N("interp(period)", lambda x, xp, fp: snp.interp(x, xp, fp, period=1.5),
      lambda x, xp, fp: np.interp(x, xp, fp, period=1.5),
      [("any", (9,)), ("any", (5,)), ("any", (5,))], (F64,)),
    # sorting
    N("lexsort", lambda a, b: snp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)),
      [("small", (2, 8)), ("small", (2, 8))], (I32, F32)),
    N("partition", lambda x: _pieces(snp.partition(x, 2)), lambda x: _pieces(
        np.partition(x, 2)), [("any", (3, 6))], (F32, I32)),
    N("argpartition", lambda x: _pieces(snp.take_along_axis(x, snp.argpartition(x, 2), -1)),
      lambda x: _pieces(np.take_along_axis(x, np.argpartition(x, 2), -1)),
      [("any", (3, 6))], (F32,)),
    # products, convolution, calculus, polynomials
    N("kron", snp.kron, np.kron, [("any", (2, 3)), ("any", (3, 2))], (F32, I32)),
    N("kron(1-D with 3-D)", snp.kron, np.kron, [("any", (3,)), ("any", (2, 2, 2))]),
    N("cross", snp.cross, np.cross, [("any", (4, 3)), ("any", (4, 3))], (F32, I32)),
    N("cross(axes, a 2-vector, as jax)",
      lambda a, b: snp.cross(a, b, axisa=0, axisb=-1, axisc=0),
      _jax64(lambda a, b: jnp.cross(a, b, axisa=0, axisb=-1, axisc=0)),
      [("any", (2, 4)), ("any", (4, 3))], FLOAT2),
    N("einsum(ellipsis)", lambda a, b: snp.einsum("...ij,jk->...ik", a, b),
      lambda a, b: np.einsum("...ij,jk->...ik", a, b), [("any", (2, 3, 4)), ("any", (4, 2))],
      tol=LOOSE),
    N("einsum(broadcast ellipsis)", lambda a, b: snp.einsum("...ij,...jk", a, b),
      lambda a, b: np.einsum("...ij,...jk", a, b), [("any", (2, 3, 4)),
                                                     ("any", (5, 1, 4, 2))], tol=LOOSE),
    N("einsum(trace, diagonal)", lambda a, b: (snp.einsum("ii", a), snp.einsum("bii->bi", b),
                                               snp.einsum("iji->j", b.transpose(1, 0, 2))),
      lambda a, b: (np.einsum("ii", a), np.einsum("bii->bi", b),
                    np.einsum("iji->j", b.transpose(1, 0, 2))),
      [("any", (4, 4)), ("any", (2, 3, 3))], (F32, I32)),
    N("convolve", snp.convolve, np.convolve, [("any", (7,)), ("any", (3,))], (F32, I32, C64),
      tol=LOOSE),
    N("convolve(same, short first)", lambda a, v: snp.convolve(a, v, "same"),
      lambda a, v: np.convolve(a, v, "same"), [("any", (4,)), ("any", (6,))], (F64,)),
    N("correlate", snp.correlate, np.correlate, [("any", (7,)), ("any", (3,))], (F32, C64),
      tol=LOOSE),
    N("correlate(full, short first)", lambda a, v: snp.correlate(a, v, "full"),
      lambda a, v: np.correlate(a, v, "full"), [("any", (3,)), ("any", (5,))], (C128, F64)),
    N("trapezoid", lambda y: snp.trapezoid(y, dx=0.5), lambda y: np.trapezoid(y, dx=0.5),
      [("any", S)], FLOAT2 + (I32,), tol=LOOSE),
    N("trapezoid(x)", lambda y, x: snp.trapezoid(y, snp.sort(x), axis=0),
      lambda y, x: np.trapezoid(y, np.sort(x), axis=0), [("any", S), ("any", (3,))], FLOAT2,
      tol=LOOSE),
    N("gradient", lambda f: snp.gradient(f, 0.5), lambda f: np.gradient(f, 0.5),
      [("any", S)], FLOAT2 + (I32,), tol=LOOSE),
    N("gradient(coordinates, axis)", lambda f, x: snp.gradient(f, snp.sort(x), axis=1),
      lambda f, x: np.gradient(f, np.sort(x) + 0, axis=1), [("any", S), ("any", (4,))],
      (F64,)),
    N("polyval", snp.polyval, np.polyval, [("any", (5,)), ("any", S)], (F32, F64, I32),
      tol=LOOSE),
    N("poly", snp.poly, np.poly, [("any", (4,))], FLOAT2, tol=LOOSE),
    N("roots", lambda p: _root_parts(snp.roots(p)), lambda p: _root_parts(np.roots(p)),
      [("any", (6,))], (F64,), jit="raises"),
    N("roots(strip_zeros=False: NaN for a leading zero, as jax)",
      lambda: _root_parts(snp.roots(np.array([0.0, 1, -3, 2]), strip_zeros=False)),
      lambda: (np.array([1.0, 2.0, np.nan]), np.array([0.0, 0.0, np.nan])), []),
]

# the linalg and fft extensions: names outside stablejit.numpy.__all__
RECORDS += [
    N("linalg.lstsq", lambda a, b: snp.linalg.lstsq(a, b), lambda a, b: np.linalg.lstsq(a, b),
      [("any", (6, 3)), ("any", (6, 2))], FLOAT2, tol=LOOSE),
    N("linalg.lstsq(wide, 1-D b, residuals as jax)", lambda a, b: snp.linalg.lstsq(a, b)[:2],
      _jax64_tree(lambda a, b: jnp.linalg.lstsq(a, b)[:2]), [("any", (3, 5)), ("any", (3,))],
      (F64,)),
    N("linalg.multi_dot", lambda a, b, c, d: snp.linalg.multi_dot([a, b, c, d]),
      lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]),
      [("any", (4,)), ("any", (4, 7)), ("any", (7, 2)), ("any", (2, 3))], FLOAT2, tol=LOOSE),
    *[N(f"linalg.cond({p})", lambda x, p=p: snp.linalg.cond(x, p),
        lambda x, p=p: np.linalg.cond(x, p), [("any", (2, 4, 4))], (F64,))
      for p in (None, -2, 1, np.inf, "fro", "nuc")],
    N("linalg.tensorinv", lambda a: snp.linalg.tensorinv(a, ind=2),
      lambda a: np.linalg.tensorinv(a, ind=2), [("any", (2, 3, 6))], FLOAT2, tol=LOOSE),
    N("linalg.tensorsolve", snp.linalg.tensorsolve, np.linalg.tensorsolve,
      [("any", (2, 3, 6)), ("any", (2, 3))], FLOAT2, tol=LOOSE),
    N("linalg.tensorsolve(axes)", lambda a, b: snp.linalg.tensorsolve(a, b, axes=(0,)),
      lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)), [("any", (6, 2, 3)), ("any", (2, 3))],
      (F64,), tol=LOOSE),
    N("fft.rfft2", snp.fft.rfft2, np.fft.rfft2, [("any", (3, 4, 6))], (F64,)),
    N("fft.irfft2", lambda x: snp.fft.irfft2(x, s=(4, 6)), lambda x: np.fft.irfft2(x, s=(4, 6)),
      [("any", (4, 4))], (C128,)),
]

# Functions other helpers own: recorded here when they are in the namespace.
OPTIONAL = [
    ("sort", lambda: N("sort", lambda x: snp.sort(x, axis=1), lambda x: np.sort(x, axis=1),
                       [("any", S)], (F32, I32))),
    ("argsort", lambda: N("argsort", lambda x: snp.argsort(x, axis=0, stable=True),
                          lambda x: np.argsort(x, axis=0, stable=True), [("any", S)], (F32,))),
    ("take", lambda: N("take", lambda x: snp.take(x, snp.asarray([2, 0, 0]), axis=0),
                       lambda x: np.take(x, [2, 0, 0], axis=0), [("any", S)], (F32,))),
    ("cumulative_sum", lambda: N("cumulative_sum", lambda x: snp.cumulative_sum(x, axis=1),
                                 lambda x: np.cumulative_sum(x, axis=1), [("any", S)],
                                 (F32, I32), tol=LOOSE)),
    ("cumsum", lambda: N("cumsum", lambda x: snp.cumsum(x, axis=0),
                         lambda x: np.cumsum(x, axis=0), [("any", S)], (F32,), tol=LOOSE)),
    ("searchsorted", lambda: N("searchsorted", lambda a, v: snp.searchsorted(snp.sort(a), v),
                               lambda a, v: np.searchsorted(np.sort(a), v),
                               [("any", (6,)), ("any", V)], (F32,))),
    ("unique_values", lambda: N("unique_values", snp.unique_values, np.unique,
                                [("small", S)], (I32,), jit="raises")),
    ("unique", lambda: N("unique", snp.unique, np.unique, [("small", S)], (F32,), jit="raises")),
    ("unique_counts", lambda: N("unique_counts", snp.unique_counts,
                                lambda x: np.unique(x, return_counts=True), [("small", S)],
                                (I32,), jit="raises")),
    ("unique_inverse", lambda: N("unique_inverse", snp.unique_inverse,
                                 lambda x: _unique_all(x)[::2], [("small", S)], (I32,),
                                 jit="raises")),
    ("unique_all", lambda: N("unique_all", snp.unique_all, _unique_all, [("small", S)],
                             (I32,), jit="raises")),
    ("argwhere", lambda: N("argwhere", snp.argwhere, np.argwhere, [("small", S)], (I32,),
                           jit="raises")),
    ("flatnonzero", lambda: N("flatnonzero", snp.flatnonzero, np.flatnonzero, [("small", S)],
                              (BOOL,), jit="raises")),
    ("cummax", lambda: N("cummax", lambda x: snp.cummax(x, axis=1),
                         lambda x: np.maximum.accumulate(x, axis=1), [("any", S)], (F32, I32))),
    ("cummin", lambda: N("cummin", lambda x: snp.cummin(x, axis=0),
                         lambda x: np.minimum.accumulate(x, axis=0), [("any", S)], (F32,))),
    ("cumprod", lambda: N("cumprod", lambda x: snp.cumprod(x, axis=1),
                          lambda x: np.cumprod(x, axis=1), [("any", S)], (F32,), tol=LOOSE)),
    ("cumulative_prod", lambda: N("cumulative_prod",
                                  lambda x: snp.cumulative_prod(x, axis=1, include_initial=True),
                                  lambda x: np.cumulative_prod(x, axis=1, include_initial=True),
                                  [("any", S)], (F32,), tol=LOOSE)),
    ("take_along_axis", lambda: N("take_along_axis",
                                  lambda x: snp.take_along_axis(x, snp.asarray(_IDX), axis=1),
                                  lambda x: np.take_along_axis(x, _IDX, axis=1), [("any", S)],
                                  (F32,))),
    ("put_along_axis", lambda: N("put_along_axis",
                                 _snp_put_along,
                                 _put_along, [("any", S), ("any", (3, 1))], (F32,))),
    ("top_k", lambda: N("top_k", lambda x: snp.top_k(x, 2), lambda x: _top_k(x, 2),
                        [("any", S)], (F32,))),
]
for _name, _make in OPTIONAL:
    if hasattr(snp, _name):
        RECORDS.append(_make())

# Names of stablejit.numpy.__all__ that are not functions of arrays, or are tested elsewhere.
SKIP = {
    **{n: "a dtype object, not a function" for n in (
        "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
        "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128")},
    **{n: "a constant" for n in ("e", "pi", "inf", "nan", "newaxis")},
    "Tensor": "the array type itself", "ndarray": "alias of Tensor", "dtype": "the dtype type",
    **{n: "a question about memory, answered as NumPy's: tested in test_views.py" for n in (
        "shares_memory", "may_share_memory")},
    **{n: "returns Python objects, not tensors: tested in test_array_api_namespace.py" for n in (
        "can_cast", "finfo", "iinfo", "isdtype", "result_type", "broadcast_shapes")},
    **{n: "returns Python objects or dtypes: tested against jax and NumPy in "
          "test_numpy_python_values.py" for n in (
        "shape", "ndim", "size", "promote_types", "issubdtype", "float_", "int_", "complex_")},
    **{n: "a submodule, tested by its own tests (tests/host/test_linalg*.py, test_fft*.py)"
       for n in ("linalg", "fft", "random")},
}

# ---- more of jax.numpy: windows, polynomials, sets of two arrays, selection by masks,
# vectorize / apply_along_axis (on vmap), bits, multidimensional histograms --------------
_F32 = np.float32


def _in_place(f, x, *args, **kw):
    """NumPy's form of put, place, fill_diagonal: in place into a copy (f returns None)."""
    y = snp.copy(x)
    assert f(y, *args, **kw) is None
    return y


def _np_place(x, v):
    y = x.copy()
    np.place(y, y > 0, v)
    return y


def _np_put(x, mode):
    y = x.copy()
    np.put(y, [0, 5, -1, 20], [7, 8], mode=mode)
    return y


def _dd(r):
    """histogramdd's (counts, [edges]) as one flat tuple."""
    return (r[0], *r[1])


RECORDS += [
    N("geomspace", lambda: snp.geomspace(2, 512, 9),
      lambda: np.geomspace(2, 512, 9).astype(_F32), [], tol=LOOSE),
    N("geomspace(tensor end points, axis, negative)",
      lambda a: snp.geomspace(-a[0], -a[1], 5, endpoint=False, axis=1),
      lambda a: np.geomspace(-a[0], -a[1], 5, endpoint=False, axis=1).astype(a.dtype),
      [("pos", S)], FLOAT2, tol=LOOSE),
    *[N(w, lambda w=w: getattr(snp, w)(7), lambda w=w: getattr(np, w)(7).astype(_F32), [])
      for w in ("bartlett", "blackman", "hamming", "hanning")],
    N("hamming(1)", lambda: snp.hamming(1), lambda: np.hamming(1).astype(_F32), []),
    N("kaiser", lambda b: snp.kaiser(8, b[0]), lambda b: np.kaiser(8, b[0]).astype(b.dtype),
      [("pos", (1,))], FLOAT2, tol=LOOSE),
    N("i0", snp.i0, lambda x: np.i0(x).astype(x.dtype if x.dtype.kind == "f" else _F32),
      [("any", S)], (F32, F64, I32), tol=LOOSE),
    N("vander", lambda x: snp.vander(x, 4), lambda x: np.vander(x, 4).astype(x.dtype),
      [("any", (5,))], (F32, F64, I32)),
    N("vander(increasing)", lambda x: snp.vander(x, increasing=True),
      lambda x: np.vander(x, increasing=True), [("any", (4,))], (F64,)),
    N("polyadd", snp.polyadd, np.polyadd, [("any", (3,)), ("any", (5,))], (F32, I32)),
    N("polysub", snp.polysub, np.polysub, [("any", (5,)), ("any", (2,))], (F32, I32)),
    N("polymul", snp.polymul, np.polymul, [("any", (3,)), ("any", (4,))], FLOAT2),
    N("polymul(ints: a float result, as jax)", snp.polymul,
      _jax64(jnp.polymul), [("any", (3,)), ("any", (4,))], (I32,)),
    N("polyder", lambda p: snp.polyder(p, 2), lambda p: np.polyder(p, 2).astype(p.dtype),
      [("any", (5,))],
      FLOAT2),
    N("polyint", lambda p: snp.polyint(p, 2, k=[1.0, -2.0]),
      lambda p: np.polyint(p, 2, k=[1.0, -2.0]).astype(p.dtype), [("any", (4,))], FLOAT2),
    N("polydiv(remainder at u's length, as jax)", snp.polydiv, _jax64_tree(jnp.polydiv),
      [("any", (6,)), ("nonzero", (3,))], FLOAT2, tol=LOOSE),
    N("polydiv(trim_leading_zeros)", lambda u, v: snp.polydiv(u, v, trim_leading_zeros=True),
      np.polydiv, [("any", (6,)), ("nonzero", (3,))], (F64,), jit="raises"),
    N("polyfit", lambda x, y: snp.polyfit(x, y, 3), lambda x, y: np.polyfit(x, y, 3),
      [("any", (10,)), ("any", (10,))], (F64,)),
    N("polyfit(w, cov, 2-D y)", lambda x, y, w: snp.polyfit(x, y, 2, w=w, cov=True),
      lambda x, y, w: np.polyfit(x, y, 2, w=w, cov=True),
      [("any", (10,)), ("any", (10, 2)), ("pos", (10,))], (F64,)),
    N("unwrap", snp.unwrap, np.unwrap, [("any", S)], FLOAT2, tol=LOOSE),
    N("unwrap(axis, period, discont)",
      lambda p: snp.unwrap(p * 3, discont=2.5, axis=0, period=4.0),
      lambda p: np.unwrap(p * 3, discont=2.5, axis=0, period=4.0), [("any", S)], (F64,)),
    N("ediff1d", lambda x: snp.ediff1d(x, to_end=[9, 8], to_begin=-1),
      lambda x: np.ediff1d(x, to_end=[9, 8], to_begin=-1), [("any", S)], (F32, I32)),
    N("sort_complex", snp.sort_complex, np.sort_complex, [("small", (3, 5))], COMPLEX),
    N("sort_complex(reals: complex64 from float32, as jax)", snp.sort_complex,
      _jax64(jnp.sort_complex), [("any", (3, 5))], FLOAT2),
    N("diagflat", lambda x: snp.diagflat(x, 1), lambda x: np.diagflat(x, 1),
      [("any", (2, 2))], (F32, I32)),
    N("rollaxis", lambda x: snp.rollaxis(x, 2, 1), lambda x: np.rollaxis(x, 2, 1),
      [("any", (2, 3, 4))]),
    N("resize", lambda x: snp.resize(x, (5, 3)), lambda x: np.resize(x, (5, 3)),
      [("any", S)], (F32, I32)),
    N("block", lambda a, b, c: snp.block([[a, b], [c]]),
      lambda a, b, c: np.block([[a, b], [c]]), [("any", (2, 3)), ("any", (2, 2)),
                                                ("any", (1, 5))], (F32, I32)),
    N("trim_zeros", lambda x: snp.trim_zeros(snp.pad(x, 2), "fb"),
      lambda x: np.trim_zeros(np.pad(x, 2), "fb"), [("nonzero", (5,))], (F32, I32),
      jit="raises"),
    N("choose", lambda i, a, b: snp.choose(i, [a, b, -b], mode="clip"),
      lambda i, a, b: np.choose(i, [a, b, -b], mode="clip"),
      [("any", S), ("any", V), ("any", S)], (F32, I32), arg_dtypes=lambda d: [I64, d, d]),
    N("choose(wrap)", lambda i, a: snp.choose(i, [a, a * 2], mode="wrap"),
      lambda i, a: np.choose(i, [a, a * 2], mode="wrap"), [("any", S), ("any", S)], (F32,),
      arg_dtypes=lambda d: [I32, d]),
    N("choose(raise: checks the indices, not inside jit)",
      lambda i, a: snp.choose(i, [a, -a, a * 2, a * 3]),
      lambda i, a: np.choose(i, [a, -a, a * 2, a * 3]), [("small", S), ("any", S)], (F32,),
      arg_dtypes=lambda d: [I64, d], jit="raises"),
    N("compress", lambda c, x: snp.compress(c > 0, x, axis=1),
      lambda c, x: np.compress(c > 0, x, axis=1), [("any", (4,)), ("any", S)], (F32, I32),
      jit="raises"),
    N("compress(static condition, flat)", lambda x: snp.compress([True, False, True], x),
      lambda x: np.compress([True, False, True], x), [("any", S)]),
    N("compress(size=, fill_value=, as jax)",
      lambda c, x: snp.compress(c > 0, x, axis=0, size=2, fill_value=-7),
      _jax64(lambda c, x: jnp.compress(c > 0, x, axis=0, size=2, fill_value=-7)),
      [("any", (3,)), ("any", S)], (F32, I32)),
    N("extract", lambda x: snp.extract(x > 0, x), lambda x: np.extract(x > 0, x),
      [("any", S)], (F32, I32), jit="raises"),
    N("extract(size=, as jax)", lambda x: snp.extract(x > 0, x, size=12, fill_value=99),
      _jax64(lambda x: jnp.extract(x > 0, x, size=12, fill_value=99)), [("any", S)],
      (F32, I32)),
    N("place", lambda x, v: _in_place(snp.place, x, x > 0, v), _np_place,
      [("any", S), ("any", (3,))], (F32, I32)),
    N("put(negative from the end, the rest clipped, as jax)",
      lambda x: snp.put(x, snp.asarray([0, 5, -1, 20]), snp.asarray([7, 8]), inplace=False),
      _jax64(lambda x: jnp.put(x, jnp.asarray([0, 5, -1, 20]), jnp.asarray([7, 8], x.dtype),
                               inplace=False)), [("any", S)], (F32, I32)),
    *[N(f"put({m})", lambda x, m=m: _in_place(snp.put, x, [0, 5, -1, 20], [7, 8], mode=m),
        lambda x, m=m: _np_put(x, m), [("any", S)], (F32,)) for m in ("clip", "wrap")],
    *[N(f"{f}", lambda a, b, f=f: getattr(snp, f)(a, b), lambda a, b, f=f: getattr(np, f)(a, b),
        [("small", (3, 4)), ("any", (6,))], (I32, F32), jit="raises")
      for f in ("intersect1d", "setdiff1d", "union1d", "setxor1d")],
    *[N(f"{f}(size=, as jax)", lambda a, b, f=f: getattr(snp, f)(a, b, size=9),
        _jax64(lambda a, b, f=f: getattr(jnp, f)(a, b, size=9)),
        [("small", (3, 4)), ("any", (6,))], (I32, F32))
      for f in ("intersect1d", "setdiff1d", "union1d", "setxor1d")],
    N("intersect1d(return_indices)", lambda a, b: snp.intersect1d(a, b, return_indices=True),
      lambda a, b: np.intersect1d(a, b, return_indices=True),
      [("small", (3, 4)), ("any", (6,))], (I32,), jit="raises"),
    N("intersect1d(return_indices, size=, fill_value=, as jax)",
      lambda a, b: snp.intersect1d(a, b, return_indices=True, size=5, fill_value=-1),
      _jax64_tree(lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=5,
                                               fill_value=-1)),
      [("small", (3, 4)), ("any", (6,))], (I32,)),
    N("apply_along_axis", lambda x: snp.apply_along_axis(lambda v: v * snp.sum(v), 1, x),
      lambda x: np.apply_along_axis(lambda v: v * np.sum(v), 1, x), [("any", (2, 3, 4))],
      (F32, I32), tol=LOOSE),
    N("apply_along_axis(to a scalar, axis 0, extra args)",
      lambda x: snp.apply_along_axis(lambda v, k: snp.max(v) * k, 0, x, 3),
      lambda x: np.apply_along_axis(lambda v, k: np.max(v) * k, 0, x, 3), [("any", S)]),
    N("apply_over_axes", lambda x: snp.apply_over_axes(snp.sum, x, [0, 2]),
      lambda x: np.apply_over_axes(np.sum, x, [0, 2]), [("any", (2, 3, 4))], (F32, I32),
      tol=LOOSE),
    N("vectorize", lambda a, b: snp.vectorize(lambda u, v: snp.where(u > v, u - v, u * v))(
        a, b), lambda a, b: np.vectorize(lambda u, v: u - v if u > v else u * v)(a, b),
      [("any", S), ("any", V)], (F32, I32)),
    N("vectorize(signature)",
      lambda a, b: snp.vectorize(lambda u, v: snp.sum(u * v), signature="(n),(n)->()")(a, b),
      lambda a, b: np.vectorize(lambda u, v: np.sum(u * v), signature="(n),(n)->()")(a, b),
      [("any", (2, 1, 4)), ("any", (3, 4))], (F32,), tol=LOOSE),
    N("fromfunction", lambda: snp.fromfunction(lambda i, j: i * 3 + j, (3, 4)),
      lambda: np.fromfunction(lambda i, j: i * 3 + j, (3, 4)).astype(_F32), []),
    N("matvec", snp.matvec, np.matvec, [("any", (2, 3, 4)), ("any", (4,))], (F32, C64),
      tol=LOOSE),
    N("vecmat", snp.vecmat, np.vecmat, [("any", (3,)), ("any", (2, 3, 4))], (F32, C64),
      tol=LOOSE),
    N("bitwise_count", snp.bitwise_count, np.bitwise_count, [("any", S)],
      (I32, I64, U8, I8, BOOL)),
    N("packbits", lambda x: snp.packbits(x, axis=1), lambda x: np.packbits(x, axis=1),
      [("small", (3, 13))], (I32, BOOL)),
    N("packbits(flat, little)", lambda x: snp.packbits(x, bitorder="little"),
      lambda x: np.packbits(x, bitorder="little"), [("small", (3, 5))], (BOOL,)),
    N("unpackbits", lambda x: snp.unpackbits(x, axis=0, count=10),
      lambda x: np.unpackbits(x, axis=0, count=10), [("any", (2, 3))], (U8,)),
    N("unpackbits(flat, little)", lambda x: snp.unpackbits(x, bitorder="little"),
      lambda x: np.unpackbits(x, bitorder="little"), [("any", (2, 3))], (U8,)),
    N("histogram2d(integer counts, as jax)", lambda x, y: snp.histogram2d(x, y, 4),
      _jax64_tree(lambda x, y: jnp.histogram2d(x, y, 4)), [("any", (40,)), ("any", (40,))],
      FLOAT2, tol=LOOSE),
    N("histogram2d(bins, range, weights, density)",
      lambda x, y, w: snp.histogram2d(x, y, [3, 5], [(-1, 1), None], w, True),
      lambda x, y, w: np.histogram2d(x, y, [3, 5], [(-1, 1), None], weights=w, density=True),
      [("any", (40,)), ("any", (40,)), ("pos", (40,))], (F64,)),
    N("histogramdd", lambda s: _dd(snp.histogramdd(s, (2, 3, _BINS))),
      _jax64_tree(lambda s: _dd(jnp.histogramdd(s, (2, 3, _BINS)))), [("any", (30, 3))],
      FLOAT2, tol=LOOSE),
    N("r_", lambda a, b: snp.r_[a, 0:3, -1, b], lambda a, b: np.r_[a, 0:3, -1, b],
      [("any", (3,)), ("any", (2,))], (I64,)),
    N("r_(directive)", lambda a, b: snp.r_["0,2,0", a, b], lambda a, b: np.r_["0,2,0", a, b],
      [("any", (3,)), ("any", (2,))]),
    N("c_", lambda a, b: snp.c_[a, b], lambda a, b: np.c_[a, b], [("any", (3,)),
                                                                   ("any", (3, 2))]),
]

SKIP.update({
    **{n: "NumPy's abstract scalar type, used with issubdtype: tested against jax in "
          "test_numpy_more.py" for n in (
        "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
        "floating", "complexfloating", "character", "flexible")},
    **{n: "a dtype object, not a function" for n in ("single", "double", "csingle",
                                                     "cdouble")},
    "euler_gamma": "a constant",
    **{n: "NumPy's index expression object (plain Python slices)" for n in ("s_",
                                                                           "index_exp")},
    **{n: "returns a Python bool: tested against jax in test_numpy_more.py" for n in (
        "isscalar", "iscomplexobj", "isrealobj")},
})


CASES = [(r, d) for r in RECORDS for d in r.dtypes]
PATHS = ("jit", "eager", "reference")
# "lazy": eager code under stablejit.lazy() (recorded, run as one program on exit), for
# the first dtype of each record (the lazy path records the same ops as eager)
LAZY_CASES = [(r, r.dtypes[0]) for r in RECORDS]


def _low(d) -> bool:
    return np.dtype(d) in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def reference(rec: Rec, arrays):
    """NumPy's answer. Half-precision inputs are computed in float32 and rounded back;
    integer/bool inputs to float functions give float32 (the default float), not float64."""
    low = next((a.dtype for a in arrays if _low(a.dtype)), None)
    args = [a.astype(np.float32) if _low(a.dtype) else a for a in arrays]
    if rec.native:
        args = arrays
    exact_inputs = all(a.dtype.kind in "biu" for a in arrays) and arrays
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices in nan* references
        out = rec.ref(*args)
        if exact_inputs and any(np.asarray(o).dtype.kind in "fc" and np.asarray(o).itemsize < 8
                                for o in (out if isinstance(out, (tuple, list)) else [out])):
            out = rec.ref(*[a.astype(np.float64) for a in arrays])  # not NumPy's float16

    def fix(o):
        o = np.asarray(o)
        if rec.out_dtype is not None:
            return o.astype(rec.out_dtype)
        if low is not None and o.dtype == np.float32:
            return o.astype(low)
        if exact_inputs and o.dtype.kind == "f":
            return o.astype(np.float32)
        if exact_inputs and o.dtype.kind == "c":
            return o.astype(np.complex64)
        return o
    return [fix(o) for o in out] if isinstance(out, (tuple, list)) else fix(out)


def run(rec: Rec, arrays, path: str):
    if path == "reference":
        with sj.default_backend("reference"):
            ts = [snp.asarray(a) for a in arrays]
            return rec.fn(*ts)
    ts = [snp.asarray(a) for a in arrays]
    if path == "eager":
        return rec.fn(*ts)
    if path == "lazy":
        with sj.lazy():
            return rec.fn(*ts)
    return sj.jit(rec.fn)(*ts)


def compare(got, want, rec: Rec, dtype: str, where: str):
    if isinstance(want, list):
        assert isinstance(got, (tuple, list)), f"{where}: expected a sequence, got {type(got)}"
        assert len(got) == len(want), f"{where}: {len(got)} results, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            compare(g, w, rec, dtype, f"{where}[{i}]")
        return
    assert isinstance(got, sj.Tensor), f"{where}: got {type(got).__name__}, not a Tensor"
    g = np.asarray(got)
    assert g.dtype == want.dtype, f"{where}: dtype {g.dtype}, NumPy gives {want.dtype}"
    assert g.shape == want.shape, f"{where}: shape {g.shape}, NumPy gives {want.shape}"
    if not rec.values:
        return
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want, err_msg=where)
        return
    key = str(want.dtype) if str(want.dtype) in TOL else F32
    rtol, atol = rec.tol.get(key, TOL[key])
    np.testing.assert_allclose(g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
                               want.astype(np.complex128 if want.dtype.kind == "c"
                                           else np.float64),
                               rtol=rtol, atol=atol, equal_nan=True, err_msg=where)


_REF_CACHE: dict = {}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rec,dtype", CASES, ids=[f"{r.name}-{d}" for r, d in CASES])
def test_record(rec: Rec, dtype: str, path: str):
    arrays = rec.inputs(dtype)
    key = (rec.name, dtype)
    if key not in _REF_CACHE:
        _REF_CACHE[key] = reference(rec, arrays)
    want = _REF_CACHE[key]
    if path == "jit" and rec.jit == "raises":
        with pytest.raises(MustCompileError):
            run(rec, arrays, path)
        return
    compare(run(rec, arrays, path), want, rec, dtype, f"{rec.name}[{dtype}] via {path}")


@pytest.mark.parametrize("rec,dtype", LAZY_CASES, ids=[f"{r.name}-{d}" for r, d in LAZY_CASES])
def test_record_lazily(rec: Rec, dtype: str):
    test_record(rec, dtype, "lazy")


def test_every_function_has_a_record():
    covered = set()
    for r in RECORDS:
        covered.add(r.name.split("(")[0])
        covered.update(r.aliases)
    missing = sorted(n for n in snp.__all__ if n not in covered and n not in SKIP)
    assert not missing, (f"stablejit.numpy functions without an op record in "
                         f"tests/host/test_op_records.py (add a record, or a justified SKIP "
                         f"entry): {missing}")
    stale = sorted(n for n in SKIP if n in covered)
    assert not stale, f"SKIP entries that have records: {stale}"


def test_aliases_are_the_same_function():
    for r in RECORDS:
        for a in r.aliases:  # records of other namespaces (scipy.special.erf) have none
            assert getattr(snp, a) is getattr(snp, r.name.split("(")[0]), f"{a} is not {r.name}"
