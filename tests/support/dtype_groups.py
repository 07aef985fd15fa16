"""The stablejit dtypes grouped by kind, for choosing which dtypes a test runs over."""

from stablejit.compiler import dtypes as dt

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
