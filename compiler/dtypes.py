"""Element types of the IR, with their NumPy and MLIR spellings.

A DType is an interned singleton: compare with `is` or `==`, hash freely. For NumPy it
stands for its NumPy dtype: it equals (and hashes as) that dtype, so `x.dtype ==
np.float32` and `x.dtype == "float32"` hold, and NumPy reads its `.dtype` attribute, so
`np.zeros(3, x.dtype)`, `np.issubdtype` and `np.finfo` accept it. Calling one makes a
tensor, as in jax (`float32(1.5)`); the frontend installs that constructor.
Promotion between dtypes lives in the frontend (it is a user-facing policy);
this module only states what each type is.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

_constructor = None  # (value, DType) -> tensor, installed by the frontend


def install_constructor(fn) -> None:
    global _constructor
    _constructor = fn


class DType:
    """A tensor's element type: `stablejit.numpy.float32`, `int64`, `bool`, `bfloat16` ...

    Each dtype is one object that compares equal to its NumPy dtype, its name and NumPy's
    scalar type (`snp.float32 == np.float32 == "float32"`), so it can be passed wherever
    NumPy takes a dtype. Calling it makes a tensor of that dtype (`snp.float32(1.5)`, as
    `jnp.float32(1.5)`). Attributes: `name`, `kind` ('b' bool, 'i' signed, 'u' unsigned,
    'f' float, 'c' complex), `bits`, and the NumPy dtype as `dtype` (or `np`).

    Example:
        >>> snp.float32 == np.float32, snp.float32.kind, snp.float32.bits
        (True, 'f', 32)
        >>> snp.int8(7)
        Tensor<i8[] xla:host:0>
        7
    """

    __slots__ = ("name", "np", "mlir", "kind", "bits", "_hash")

    def __init__(self, name: str, np_dtype, mlir: str, kind: str, bits: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.mlir = mlir  # element type as written in StableHLO text
        self.kind = kind  # 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex
        self.bits = bits
        self._hash = hash(self.np)

    def __repr__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: NumPy converts any object with a `.dtype` through it."""
        return self.np

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        if other is None:
            return False
        try:
            return self.np == np.dtype(other)  # np.float32, "float32", a NumPy dtype
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self) -> int:
        return self._hash  # as its NumPy dtype's, since the two compare equal

    def __call__(self, value):
        """A tensor of this dtype from a number or nested sequence (jnp.float32(1.5))."""
        if _constructor is None:
            raise TypeError(f"{self.name}(...) needs the stablejit frontend")
        return _constructor(value, self)

    def __reduce__(self):
        return (dtype, (self.name,))

    @property
    def short(self) -> str:
        """Compact name used in IR text and signatures: f32, i64, bf16, c64, pred."""
        return _SHORT[self.name]

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    @property
    def is_inexact(self) -> bool:
        return self.kind in "fc"

    @property
    def itemsize(self) -> int:
        return self.np.itemsize


bool_ = DType("bool", np.bool_, "i1", "b", 1)
int8 = DType("int8", np.int8, "i8", "i", 8)
int16 = DType("int16", np.int16, "i16", "i", 16)
int32 = DType("int32", np.int32, "i32", "i", 32)
int64 = DType("int64", np.int64, "i64", "i", 64)
uint8 = DType("uint8", np.uint8, "ui8", "u", 8)
uint16 = DType("uint16", np.uint16, "ui16", "u", 16)
uint32 = DType("uint32", np.uint32, "ui32", "u", 32)
uint64 = DType("uint64", np.uint64, "ui64", "u", 64)
float16 = DType("float16", np.float16, "f16", "f", 16)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, "bf16", "f", 16)
float32 = DType("float32", np.float32, "f32", "f", 32)
float64 = DType("float64", np.float64, "f64", "f", 64)
complex64 = DType("complex64", np.complex64, "complex<f32>", "c", 64)
complex128 = DType("complex128", np.complex128, "complex<f64>", "c", 128)

ALL = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       float16, bfloat16, float32, float64, complex64, complex128)

_SHORT = {
    "bool": "pred", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}
_BY_SHORT = {d.short: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# a short (IR) name is a dtype's name too, except where NumPy reads the same text as
# another dtype: "i8", "u8", "f16" are NumPy's int64, uint64 and float128 (ir_dtype reads
# IR names)
_BY_NAME.update({s: d for s, d in _BY_SHORT.items() if s not in ("i8", "u8", "f16")})
_BY_NAME["bool_"] = bool_
_BY_NP = {d.np: d for d in ALL}


# what Python's float and complex name as dtypes (dtype=float): the frontend's default
# float and complex, float32 and complex64 unless its x64 mode is on
_py_float, _py_complex = float32, complex64


def set_python_defaults(float_dtype: DType, complex_dtype: DType) -> None:
    """Make `dtype(float)` and `dtype(complex)` these (the frontend's x64 mode)."""
    global _py_float, _py_complex
    _py_float, _py_complex = float_dtype, complex_dtype


def dtype(x) -> DType:
    """The DType for a DType, a name ('float32', 'f32'), a NumPy dtype or scalar type.
    Python's float and complex give the default float and complex (float32 and complex64;
    float64 and complex128 in x64 mode), int gives int64."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return _py_float
    if x is complex:
        return _py_complex
    try:
        npd = np.dtype(x)
    except TypeError:
        npd = None
    if npd is not None and not npd.isnative:  # big-endian data: same dtype, swapped bytes
        npd = npd.newbyteorder("=")
    if npd is not None and npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(
        f"stablejit has no dtype {x!r}; use one of: {', '.join(d.name for d in ALL)}")


def ir_dtype(name: str) -> DType:
    """The DType of an IR type name ('f32', 'i8', 'pred'), as the IR prints it."""
    return _BY_SHORT[name] if name in _BY_SHORT else dtype(name)


def real_dtype(d: DType) -> DType:
    """The real counterpart of a complex dtype (complex64 -> float32); others unchanged."""
    return {complex64: float32, complex128: float64}.get(d, d)


def complex_dtype(d: DType) -> DType:
    """The complex dtype whose parts are d (float64 -> complex128; other reals -> complex64)."""
    if d.is_complex:
        return d
    return complex128 if d is float64 else complex64


def finfo(d: DType):
    return ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)


def iinfo(d: DType):
    return np.iinfo(d.np)
