"""stablejit.numpy: a NumPy / Python array API style namespace over stablejit Tensors.

Every function here is a composition of IR primitives, so it runs the same on the
eager XLA backend, the reference backend and inside jit.
"""

from ..compiler.dtypes import DType as dtype
from ..compiler.dtypes import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..tensor import Tensor
from . import fft, linalg  # noqa: E402 - the array API extensions
from ._core import broadcast_arrays, broadcast_shapes, broadcast_to
from ._creation import (
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    ones,
    ones_like,
    tri,
    zeros,
    zeros_like,
)

# array API breadth (issue 3)
from ._dtypes import astype, can_cast, finfo, iinfo, isdtype, result_type
from ._elementwise import (
    abs,
    absolute,
    add,
    arctan2,
    around,
    atan2,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    cos,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    fix,
    floor,
    floor_divide,
    fmod,
    greater,
    greater_equal,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    power,
    real,
    reciprocal,
    remainder,
    right_shift,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)
from ._info import __array_namespace_info__
from ._linalg import dot, einsum, inner, matmul, outer, tensordot, vdot, vecdot
from ._manipulation import (
    atleast_1d,
    atleast_2d,
    concat,
    concatenate,
    expand_dims,
    flatten,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    ravel,
    reshape,
    squeeze,
    stack,
    swapaxes,
    transpose,
)
from ._math import (
    acos,
    acosh,
    allclose,
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    array_equal,
    array_equiv,
    asin,
    asinh,
    atan,
    atanh,
    copysign,
    cosh,
    deg2rad,
    degrees,
    divmod,
    fabs,
    float_power,
    fmax,
    fmin,
    gcd,
    heaviside,
    hypot,
    isclose,
    iscomplex,
    isneginf,
    isposinf,
    isreal,
    lcm,
    ldexp,
    logaddexp,
    logaddexp2,
    modf,
    nan_to_num,
    nextafter,
    rad2deg,
    radians,
    signbit,
    sinc,
    sinh,
)
from ._more_creation import array, asarray, from_dlpack, linspace, logspace, meshgrid, tril, triu
from ._more_manipulation import (
    array_split,
    atleast_3d,
    column_stack,
    diff,
    dstack,
    fliplr,
    flipud,
    hsplit,
    hstack,
    pad,
    repeat,
    roll,
    rot90,
    row_stack,
    split,
    tile,
    unstack,
    vsplit,
    vstack,
)
from ._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._searching import (
    argwhere,
    flatnonzero,
    nonzero,
    put_along_axis,
    searchsorted,
    take,
    take_along_axis,
)
from ._sets import unique, unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import (
    argsort,
    cummax,
    cummin,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    sort,
    top_k,
)
from ._statistics import average, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar, ptp

bool = bool_  # noqa: A001 - the array API spells it `bool`
e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None
ndarray = Tensor

__array_api_version__ = "2023.12"

__all__ = [n for n in dir() if not n.startswith("_")]

import sys as _sys  # noqa: E402

from ..tensor import install_operators as _install  # noqa: E402

_install(_sys.modules[__name__])
