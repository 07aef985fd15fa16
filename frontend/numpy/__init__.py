"""stablejit.numpy: a NumPy / Python array API style namespace over stablejit Tensors.

Every function here is a composition of IR primitives, so it runs the same on the
eager XLA backend, the reference backend and inside jit.

Modules by job, each importing only those before it: _operands (asarray, promotion,
broadcasting, axis checks), _elementwise, _creation, _manipulation, _reductions,
_diagonals (diag, trace, fill_diagonal, triangle indices), _index_tricks (grids, `ix_`,
unravel/ravel of indices), _conditions (select, piecewise), _padding, _products,
_convolution, _calculus (trapezoid, gradient, unwrap), _statistics, _indexing (x[i],
x.at[i]), _sorting, _searching, _sets, _selection (choose, compress, place, put),
_quantiles (median, percentile, quantile), _histograms (bincount, digitize, histogram,
histogramdd), _interpolation, _insert_delete, _polynomials, _windows (hamming, hanning,
...), _bits (bitwise_count, packbits), _dtypes, _info, and the linalg and fft extensions.
_methods installs Tensor's operators and methods from this namespace when it is imported.
Names built on vmap or scipy (vectorize, apply_along_axis, i0, kaiser ...) are installed
here by the package from numpy_composed.py, which imports those layers.
"""

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
from . import fft, linalg  # the array API extensions
from ._bits import bitwise_count, packbits, unpackbits
from ._calculus import gradient, trapezoid, unwrap
from ._conditions import piecewise, select
from ._convolution import convolve, correlate
from ._creation import (
    arange,
    array,
    copy,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    geomspace,
    identity,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tri,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._diagonals import (
    diag,
    diag_indices,
    diag_indices_from,
    diagflat,
    diagonal,
    fill_diagonal,
    trace,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
)
from ._dtypes import (
    astype,
    can_cast,
    cdouble,
    character,
    complex_,
    complexfloating,
    csingle,
    double,
    dtype,
    finfo,
    flexible,
    float_,
    floating,
    generic,
    iinfo,
    inexact,
    int_,
    integer,
    iscomplexobj,
    isdtype,
    isrealobj,
    isscalar,
    issubdtype,
    number,
    promote_types,
    result_type,
    signedinteger,
    single,
    unsignedinteger,
)
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
    copysign,
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
    rint,
    round,
    rsqrt,
    sigmoid,
    sign,
    signbit,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
)
from ._elementwise_more import (
    acos,
    acosh,
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    asin,
    asinh,
    atan,
    atanh,
    cosh,
    deg2rad,
    degrees,
    divmod,
    fabs,
    float_power,
    fmax,
    fmin,
    frexp,
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
    sinc,
    sinh,
)
from ._histograms import (
    bincount,
    digitize,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
)
from ._index_tricks import (
    c_,
    index_exp,
    indices,
    ix_,
    mgrid,
    ogrid,
    r_,
    ravel_multi_index,
    s_,
    unravel_index,
)
from ._info import __array_namespace_info__
from ._insert_delete import append, delete, insert
from ._interpolation import interp
from ._manipulation import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block,
    column_stack,
    concat,
    concatenate,
    diff,
    dsplit,
    dstack,
    ediff1d,
    expand_dims,
    flatten,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    matrix_transpose,
    moveaxis,
    ndim,
    permute_dims,
    ravel,
    repeat,
    reshape,
    resize,
    roll,
    rollaxis,
    rot90,
    row_stack,
    shape,
    size,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    trim_zeros,
    unstack,
    vsplit,
    vstack,
)
from ._operands import asarray, broadcast_arrays, broadcast_shapes, broadcast_to
from ._padding import pad
from ._polynomials import (
    poly,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
    vander,
)
from ._products import (
    cross,
    dot,
    einsum,
    inner,
    kron,
    matmul,
    matvec,
    outer,
    tensordot,
    vdot,
    vecdot,
    vecmat,
)
from ._quantiles import median, nanmedian, nanpercentile, nanquantile, percentile, quantile
from ._reductions import (
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    array_equal,
    array_equiv,
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
    where,
)
from ._selection import choose, compress, extract, place, put
from ._sets import (
    intersect1d,
    isin,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from ._sorting import (
    argpartition,
    argsort,
    cummax,
    cummin,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    lexsort,
    nancumprod,
    nancumsum,
    partition,
    sort,
    sort_complex,
    top_k,
)
from ._statistics import (
    average,
    corrcoef,
    cov,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    ptp,
)

# What NumPy returns as a view is a view here too (writes reach the base): these
# replace the plain functions of the same names imported above.
from ._views import (  # noqa: E402, F811
    broadcast_to,
    diagonal,
    expand_dims,
    flatten,
    imag,
    matrix_transpose,
    may_share_memory,
    moveaxis,
    permute_dims,
    ravel,
    real,
    reshape,
    shares_memory,
    squeeze,
    swapaxes,
    transpose,
)
from ._windows import bartlett, blackman, hamming, hanning

bool = bool_  # noqa: A001 - the array API spells it `bool`
e = 2.718281828459045
euler_gamma = 0.5772156649015329
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None
ndarray = Tensor

# The newest standard: 2025.12 returns tuples from meshgrid, broadcast_arrays and
# devices() where 2024.12 returned lists (NumPy 2 returns tuples too)
__array_api_version__ = "2025.12"

__all__ = [n for n in dir() if not n.startswith("_")]

import sys as _sys  # noqa: E402

from ._docstrings import install as _install_docstrings  # noqa: E402
from ._methods import install as _install_tensor_methods  # noqa: E402

_install_tensor_methods(_sys.modules[__name__])
_install_docstrings(globals())

from .. import recorder_native as _recorder_native  # noqa: E402

_recorder_native.namespace_ops(globals())  # (after the docstrings: a FastOp takes f's)
