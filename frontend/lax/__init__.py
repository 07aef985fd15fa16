"""stablejit.lax: JAX's low-level names (`jax.lax`), as thin wrappers over the primitives,
so that `from jax import lax` ports by changing the import.

Semantics are lax's, not NumPy's:
  - binary ops do not promote: operands need one dtype. A Python scalar (or a weak
    tensor, e.g. a Python number passed to jit) takes the other operand's dtype when its
    kind fits (an int fits any number, a float any inexact type, a complex a complex
    type); JAX is stricter there (it accepts only the default dtypes), never looser.
  - binary ops do not broadcast, except that a 0-d operand broadcasts to the other's
    shape (as in JAX).
  - integer div and rem round toward zero (C), as XLA.
  - `precision=` of dot_general, dot, batch_matmul and the convolutions is emitted (host
    float32 is full precision whatever it says; GPUs use TF32 under DEFAULT, as jax).

Control flow (cond, switch, while_loop, fori_loop, scan) and stop_gradient are the
same functions as stablejit's.

The package: `elementwise`, `shapes` (and slicing), `reductions` (scans, sorting),
`products` (dot, convolutions, windows) and `higher_order` (map, associative_scan,
custom_root); `_operands` holds their shared operand rules.
"""

from ..autodiff import stop_gradient
from ..collectives import (  # noqa: F401 - lax's collective names
    all_gather,
    all_to_all,
    axis_index,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
)
from ..control_flow import cond, fori_loop, scan, switch, while_loop
from ..spmd import with_sharding_constraint  # noqa: F401 - a lax name in jax
from . import linalg
from ._operands import Precision, RoundingMethod
from .elementwise import (
    abs,
    acos,
    acosh,
    add,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitcast_convert_type,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clamp,
    clz,
    complex,
    conj,
    convert_element_type,
    cos,
    cosh,
    div,
    eq,
    erf,
    erf_inv,
    erfc,
    exp,
    expm1,
    floor,
    ge,
    gt,
    imag,
    integer_pow,
    is_finite,
    le,
    log,
    log1p,
    logistic,
    lt,
    max,
    min,
    mul,
    ne,
    neg,
    nextafter,
    population_count,
    pow,
    real,
    reciprocal,
    reduce_precision,
    rem,
    round,
    rsqrt,
    select,
    select_n,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    sub,
    tan,
    tanh,
)
from .higher_order import associative_scan, custom_root, map, optimization_barrier
from .products import (
    ConvDimensionNumbers,
    batch_matmul,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    dot,
    dot_general,
    reduce_window,
)
from .reductions import (
    approx_max_k,
    approx_min_k,
    argmax,
    argmin,
    cumlogsumexp,
    cummax,
    cummin,
    cumprod,
    cumsum,
    reduce,
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
    reduce_sum,
    reduce_xor,
    sort,
    sort_key_val,
    top_k,
)
from .shapes import (
    broadcast,
    broadcast_in_dim,
    broadcast_shapes,
    broadcast_to_rank,
    broadcasted_iota,
    collapse,
    concatenate,
    dtype,
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    expand_dims,
    full,
    full_like,
    index_in_dim,
    iota,
    pad,
    reshape,
    rev,
    slice,
    slice_in_dim,
    split,
    squeeze,
    transpose,
)
from .special import (
    bessel_i0e,
    bessel_i1e,
    betainc,
    digamma,
    exp2,
    igamma,
    igammac,
    lgamma,
    polygamma,
    zeta,
)

__all__ = [
    "ConvDimensionNumbers", "Precision", "RoundingMethod", "abs", "acos", "acosh", "add",
    "argmax", "argmin", "asin", "asinh", "associative_scan", "atan", "atan2", "atanh",
    "batch_matmul", "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcasted_iota",
    "cbrt", "ceil", "clamp", "clz", "collapse", "complex", "concatenate", "cond", "conj", "conv",
    "conv_dimension_numbers", "conv_general_dilated", "convert_element_type", "cos", "cosh",
    "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "custom_root", "div", "dot",
    "dot_general",
    "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq",
    "erf", "erf_inv", "erfc", "exp", "expand_dims", "expm1", "floor", "fori_loop", "full",
    "full_like",
    "ge", "gt", "imag", "index_in_dim", "integer_pow", "iota", "is_finite", "le", "log",
    "log1p", "logistic", "lt", "map", "max", "min", "mul", "ne", "neg", "nextafter", "pad",
    "population_count", "pow", "real", "reciprocal", "reduce", "reduce_and", "reduce_max",
    "reduce_min", "reduce_or", "reduce_precision",
    "reduce_prod", "reduce_sum", "reduce_window", "rem", "reshape", "rev", "round", "rsqrt",
    "scan", "select", "select_n", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sin", "sinh", "slice", "slice_in_dim", "sort",
    "sort_key_val", "sqrt", "square", "squeeze", "stop_gradient", "sub", "switch", "tan",
    "tanh", "top_k", "transpose", "while_loop",
    # the collectives (vmap's axis_name, shard_map) and sharding constraints
    "all_gather", "all_to_all", "axis_index", "pmax", "pmean", "pmin", "ppermute", "psum",
    "psum_scatter", "with_sharding_constraint",
    # special functions, jax.lax.linalg, and the rest of jax.lax's common names
    "bessel_i0e", "bessel_i1e", "betainc", "digamma", "exp2", "igamma", "igammac", "lgamma",
    "polygamma", "zeta", "linalg", "approx_max_k", "approx_min_k", "broadcast_shapes",
    "dtype", "optimization_barrier", "reduce_xor", "split",
]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
