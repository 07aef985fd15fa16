"""The docstrings of the namespace's functions that are written from a table, in one
place: the elementwise families (one template, a line each) and the functions whose
docstrings are composed from the parameter glossary below. `install` gives each
function without a docstring its text; a function documented where it is defined keeps
its own.

A docstring here says what the function computes, what each parameter means (from
_ARGS, unless the entry says otherwise), what it returns and raises, how it differs from
NumPy where it does, and an example. The examples are run by
tests/host/test_docstring_examples.py eagerly, under jit and lazily; their outputs are
the real ones. They assume `import numpy as np, stablejit, stablejit.numpy as snp`.
"""

from __future__ import annotations

import inspect
import textwrap

from ._example_outputs import OUTPUTS

# What a parameter means, by name, wherever an entry does not say otherwise.
_ARGS = {
    "x": "the input: a tensor, or anything `asarray` takes (a number, nested lists, a "
         "NumPy array)",
    "y": "the second input, broadcast against `x`",
    "x1": "the dividend, as `x`",
    "x2": "the divisor, broadcast against `x1`",
    "a": "the input: a tensor, or anything `asarray` takes",
    "arr": "the tensor whose shape decides the result",
    "arrays": "a sequence of tensors (or of anything `asarray` takes)",
    "axis": "the axis (or tuple of axes) to work along; negative values count from the "
            "end; None means every axis (the flattened tensor)",
    "keepdims": "keep the reduced axes as axes of length 1, so the result broadcasts "
                "against `x`",
    "dtype": "the result's dtype (a stablejit or NumPy dtype, or its name); None picks "
             "the default described below",
    "device": "where the result lives: a backend name such as 'xla:host:0' or "
              "'reference', or a device; None uses the default backend",
    "shape": "the result's shape: an int or a tuple of ints",
    "fill_value": "the value every element takes",
    "correction": "degrees of freedom subtracted from the element count in the divisor "
                  "(0: the population statistic, 1: the sample statistic)",
    "ddof": "NumPy's name for `correction`; give one of the two",
    "where": "a boolean mask that broadcasts to `x`: only the elements where it is True "
             "take part (None: all do), as NumPy's where=",
    "initial": "a value that takes part in the reduction (and is the result where no "
               "element does); None: none",
    "mean": "the mean along `axis`, already computed with keepdims=True (NumPy 2's and "
            "jax's mean=); None computes it",
    "out": "NumPy's output array; must be None (tensors are immutable: use the result)",
    "reverse": "scan from the end of the axis towards its start",
    "size": "the number of results, fixed in advance; required under `jit` and `vmap`, "
            "where the result's shape cannot depend on the data. Missing results are "
            "`fill_value`, extra ones are dropped",
    "descending": "sort from largest to smallest",
    "stable": "keep equal elements in their original order (the default; sorting is "
              "always stable)",
    "kind": "NumPy's sort algorithm name; accepted and ignored (the sort is stable)",
    "order": "NumPy's field order for structured arrays; must be None (there are none)",
    "include_initial": "prepend the scan's initial value (0 for a sum, 1 for a product), "
                       "so the axis grows by one",
    "k": "the diagonal: 0 is the main one, k > 0 above it, k < 0 below it",
    "copy": "True always copies; False raises where NumPy's strides allow no view; None "
            "gives a view when it can",
    "preferred_element_type": "jax's: the result's dtype (the products accumulate in "
                              "it: int8 operands with int32, bfloat16 with float32); None "
                              "keeps the operands' promoted dtype",
    "precision": "jax's: None, a `lax.Precision`, 'default'/'high'/'highest' (or "
                 "'bfloat16'/'tensorfloat32'/'float32'), or a pair for the two operands. "
                 "The host computes float32 in full precision whatever it says; GPUs take "
                 "float32 products as TF32 unless it is 'highest'",
}


def _wrap(text: str, indent: str = "", hanging: bool = False) -> str:
    more = indent + "    " if hanging else indent
    return textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=more)


# --- elementwise functions of one operand: (what it computes, extra note, example) ----
_UNARY = {
    "abs": ("The absolute value, elementwise; of a complex number, its magnitude (a "
            "real tensor).", "", "snp.abs(snp.asarray([-1.5, 0.0, 2.0]))"),
    "fabs": ("The absolute value of real numbers, elementwise, as a float.",
             "Integers become the default float (float32); complex numbers raise, as in "
             "NumPy.", "snp.fabs(snp.asarray([-2, 3]))"),
    "negative": ("`-x`, elementwise.", "Booleans raise a TypeError (NumPy's rule).",
                 "snp.negative(snp.asarray([1, -2]))"),
    "positive": ("`+x`, elementwise: a copy of x's values.", "",
                 "snp.positive(snp.asarray([1.5, -2.0]))"),
    "sign": ("The sign of each element: -1, 0 or 1 (NaN for NaN); for a complex z, "
             "z / |z| (0 at 0).", "", "snp.sign(snp.asarray([-3.0, 0.0, 2.5]))"),
    "square": ("`x * x`, elementwise, in x's dtype.", "",
               "snp.square(snp.asarray([1, -3]))"),
    "reciprocal": ("`1 / x`, elementwise; integers become the default float.",
                   "NumPy keeps integer dtypes (and gives 0 for |x| > 1); stablejit "
                   "follows JAX.", "snp.reciprocal(snp.asarray([2.0, 4.0]))"),
    "floor": ("The largest integer not above x, elementwise.",
              "Integer inputs are returned unchanged, in their dtype.",
              "snp.floor(snp.asarray([-1.5, 0.5, 2.0]))"),
    "ceil": ("The smallest integer not below x, elementwise.",
             "Integer inputs are returned unchanged, in their dtype.",
             "snp.ceil(snp.asarray([-1.5, 0.5, 2.0]))"),
    "trunc": ("x rounded towards zero, elementwise.",
              "Integer inputs are returned unchanged, in their dtype.",
              "snp.trunc(snp.asarray([-1.5, 0.5, 2.7]))"),
    "exp2": ("`2 ** x`, elementwise; integers become the default float.", "",
             "snp.exp2(snp.asarray([0.0, 3.0, -1.0]))"),
    "log2": ("The base-2 logarithm, elementwise; integers become the default float.",
             "", "snp.log2(snp.asarray([1.0, 8.0]))"),
    "log10": ("The base-10 logarithm, elementwise; integers become the default float.",
              "", "snp.log10(snp.asarray([1.0, 1000.0]))"),
    "deg2rad": ("Degrees to radians, elementwise.", "",
                "snp.deg2rad(snp.asarray([0.0, 90.0, 180.0]))"),
    "rad2deg": ("Radians to degrees, elementwise.", "",
                "snp.rad2deg(snp.asarray([0.0, 1.0]))"),
    "real": ("The real part of each element; a real tensor is returned as it is.",
             "Of a complex tensor the result is a view: writing into it writes into x, "
             "as in NumPy.", "snp.real(snp.asarray([1 + 2j, 3 - 4j]))"),
    "imag": ("The imaginary part of each element; zeros for a real tensor.",
             "Of a complex tensor the result is a view, as in NumPy.",
             "snp.imag(snp.asarray([1 + 2j, 3 - 4j]))"),
    "conj": ("The complex conjugate, elementwise; a real tensor is returned unchanged.",
             "", "snp.conj(snp.asarray([1 + 2j, 3 - 4j]))"),
    "invert": ("Bitwise NOT (`~x`), elementwise: logical NOT for booleans.", "",
               "snp.invert(snp.asarray([0, 5], dtype=snp.uint8))"),
    "logical_not": ("`not x`, elementwise, as a boolean tensor (nonzero is true).", "",
                    "snp.logical_not(snp.asarray([0.0, 2.0]))"),
    "isfinite": ("Whether each element is finite (not inf, -inf or NaN).", "",
                 "snp.isfinite(snp.asarray([1.0, np.inf, np.nan]))"),
    "isinf": ("Whether each element is +inf or -inf.", "",
              "snp.isinf(snp.asarray([1.0, -np.inf, np.nan]))"),
    "isnan": ("Whether each element is NaN.", "",
              "snp.isnan(snp.asarray([1.0, np.inf, np.nan]))"),
    "isposinf": ("Whether each element is +inf.", "",
                 "snp.isposinf(snp.asarray([np.inf, -np.inf, 1.0]))"),
    "isneginf": ("Whether each element is -inf.", "",
                 "snp.isneginf(snp.asarray([np.inf, -np.inf, 1.0]))"),
    "iscomplex": ("Whether each element has a nonzero imaginary part.", "",
                  "snp.iscomplex(snp.asarray([1 + 0j, 1 + 1j]))"),
    "isreal": ("Whether each element has a zero imaginary part (always true for real "
               "tensors).", "", "snp.isreal(snp.asarray([1 + 0j, 1 + 1j]))"),
    "atleast_1d": ("x with at least one axis: a 0-d tensor becomes shape (1,).", "",
                   "snp.atleast_1d(3.0)"),
    "atleast_2d": ("x with at least two axes: new axes are added in front.", "",
                   "snp.atleast_2d(snp.asarray([1, 2])).shape"),
    "atleast_3d": ("x with at least three axes, as NumPy adds them ((n,) becomes "
                   "(1, n, 1)).", "", "snp.atleast_3d(snp.asarray([1, 2])).shape"),
    "ravel": ("x flattened to one axis, in row-major order.",
              "A view when NumPy's strides allow one, else a copy.",
              "snp.ravel(snp.asarray([[1, 2], [3, 4]]))"),
    "matrix_transpose": ("The last two axes of x swapped (x.mT); x needs two axes or "
                         "more.", "The result is a view of x.",
                         "snp.matrix_transpose(snp.asarray([[1, 2, 3]])).shape"),
    "fliplr": ("x with its second axis reversed (x[:, ::-1]).", "A view of x.",
               "snp.fliplr(snp.asarray([[1, 2], [3, 4]]))"),
    "flipud": ("x with its first axis reversed (x[::-1]).", "A view of x.",
               "snp.flipud(snp.asarray([[1, 2], [3, 4]]))"),
}
_RAISES_UNARY = {
    "negative": "TypeError: if x is boolean.",
    "sign": "TypeError: if x is boolean.",
    "fabs": "TypeError: if x is complex.",
    "invert": "TypeError: if x is not boolean or integer.",
    "floor": "TypeError: if x is complex.",
    "ceil": "TypeError: if x is complex.",
    "trunc": "TypeError: if x is complex.",
    "deg2rad": "TypeError: if x is complex.",
    "rad2deg": "TypeError: if x is complex.",
    "isposinf": "TypeError: if x is complex.",
    "isneginf": "TypeError: if x is complex.",
    "matrix_transpose": "ValueError: if x has fewer than two axes.",
    "fliplr": "ValueError: if x has fewer than two axes.",
    "flipud": "ValueError: if x has no axis.",
}
_RETURNS_UNARY = {
    "isfinite": "A boolean tensor of x's shape.", "isinf": "A boolean tensor of x's shape.",
    "isnan": "A boolean tensor of x's shape.", "isposinf": "A boolean tensor of x's shape.",
    "isneginf": "A boolean tensor of x's shape.", "iscomplex": "A boolean tensor of x's "
    "shape.", "isreal": "A boolean tensor of x's shape.", "logical_not": "A boolean tensor "
    "of x's shape.", "atleast_1d": "A tensor (a view of x).", "atleast_2d": "A tensor "
    "(a view of x).", "atleast_3d": "A tensor (a view of x).", "ravel": "A 1-d tensor.",
    "matrix_transpose": "A tensor of shape (..., n, m) for x of shape (..., m, n).",
    "fliplr": "A tensor of x's shape.", "flipud": "A tensor of x's shape.",
    "abs": "A tensor of x's shape: x's dtype, or the real dtype of a complex x.",
    "real": "A real tensor of x's shape.", "imag": "A real tensor of x's shape.",
}


# --- the other functions: summary, notes, returns, raises, example, and the meaning of
# any parameter the glossary does not give (or gives otherwise).
def _e(summary, returns, example, notes="", raises="", **args):
    return {"summary": summary, "notes": notes, "returns": returns, "raises": raises,
            "example": example, "args": args}


_OTHER = {
    # creation
    "arange": _e(
        "Evenly spaced values in the half-open interval [start, stop), `step` apart, as "
        "Python's range.", "A 1-d tensor of ceil((stop - start) / step) elements.",
        "snp.arange(5)\nsnp.arange(0.0, 1.0, 0.25)",
        notes="The default dtype is int64 (NumPy's default int; JAX gives int32) when "
              "start, stop and step are integers, else float32 (the default float).",
        raises="ValueError: if step is 0.",
        start="the first value; given alone, it is `stop` and the range starts at 0",
        stop="the end, not included", step="the distance between values (may be negative)"),
    "zeros": _e("A tensor of zeros.", "A tensor of `shape`, float32 unless `dtype` says "
                "otherwise.", "snp.zeros((2, 3), dtype=snp.int32)",
                raises="ValueError: if a dimension is negative."),
    "ones": _e("A tensor of ones.", "A tensor of `shape`, float32 unless `dtype` says "
               "otherwise.", "snp.ones(3)", raises="ValueError: if a dimension is "
               "negative."),
    "empty": _e("A tensor of the given shape whose values are not to be relied on.",
                "A tensor of `shape` (float32 by default).", "snp.empty((2,)).shape",
                notes="Device buffers cannot be left uninitialised, so the values are "
                      "zeros; NumPy leaves whatever the memory held.",
                raises="ValueError: if a dimension is negative."),
    "full": _e("A tensor with every element `fill_value`.",
               "A tensor of `shape`; its dtype is `dtype`, else fill_value's (a Python "
               "int gives int64, a float float32).", "snp.full((2, 2), 7)",
               raises="ValueError: if a dimension is negative."),
    "zeros_like": _e("Zeros of x's shape (unless `shape` is given) and dtype (unless "
                     "`dtype` is given).",
                     "A tensor.", "snp.zeros_like(snp.asarray([1.5, 2.5]))",
                     x="the tensor whose shape and dtype to take"),
    "ones_like": _e("Ones of x's shape (unless `shape` is given) and dtype (unless "
                    "`dtype` is given).",
                    "A tensor.", "snp.ones_like(snp.asarray([[1, 2]]))",
                    x="the tensor whose shape and dtype to take"),
    "empty_like": _e("A tensor of x's shape and dtype (or `shape`, `dtype`) whose values "
                     "are not to be relied on (they are zeros).", "A tensor.",
                     "snp.empty_like(snp.asarray([1, 2])).shape",
                     x="the tensor whose shape and dtype to take"),
    "full_like": _e("A tensor of x's shape (unless `shape` is given) and dtype (unless "
                    "`dtype` is given) with every element `fill_value`.", "A tensor.",
                    "snp.full_like(snp.asarray([1, 2, 3]), 9)",
                    x="the tensor whose shape and dtype to take"),
    "eye": _e("A matrix with ones on the k-th diagonal and zeros elsewhere.",
              "A 2-d tensor of shape (n_rows, n_cols), float32 by default.",
              "snp.eye(2, 3, k=1)", n_rows="the number of rows",
              n_cols="the number of columns (default: n_rows)"),
    "identity": _e("The n-by-n identity matrix.", "A 2-d tensor, float32 by default.",
                   "snp.identity(2, dtype=snp.int32)", n="the number of rows and columns"),
    "tri": _e("A matrix with ones at and below the k-th diagonal, zeros above it.",
              "A 2-d tensor of shape (n, m), float32 by default.", "snp.tri(3, k=-1)",
              n="the number of rows", m="the number of columns (default: n)"),
    # reductions and scans
    "all": _e("Whether every element along `axis` is true (nonzero; a complex number is "
              "true when it is not 0).", "A boolean tensor.",
              "snp.all(snp.asarray([[True, False], [True, True]]), axis=1)"),
    "any": _e("Whether any element along `axis` is true (nonzero).", "A boolean tensor.",
              "snp.any(snp.asarray([[0, 0], [0, 3]]), axis=1)"),
    "mean": _e("The arithmetic mean along `axis`.",
               "A tensor; integers and booleans give the default float (float32), "
               "float16 and bfloat16 are accumulated in float32 and rounded once.",
               "snp.mean(snp.asarray([[1, 2], [3, 5]]), axis=0)",
               notes="The mean of an empty axis (or of nothing that where= selects) is "
                     "NaN, without NumPy's warning.",
               raises="AxisError: if an axis is out of range."),
    "var": _e("The variance along `axis`: the mean squared deviation from the mean, "
              "divided by (n - correction).", "A tensor in x's float dtype (integers "
              "give float32).", "snp.var(snp.asarray([1.0, 2.0, 3.0, 4.0]))",
              raises="ValueError: if both correction and ddof are given.",
              dtype="the dtype the statistic is computed and returned in (NumPy's and jax's "
                    "dtype=); None: x's float dtype, float32 for integers"),
    "std": _e("The standard deviation along `axis`: the square root of `var`.",
              "A tensor in x's float dtype (integers give float32).",
              "snp.std(snp.asarray([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]))",
              raises="ValueError: if both correction and ddof are given.",
              dtype="the dtype the statistic is computed and returned in (NumPy's and jax's "
                    "dtype=); None: x's float dtype, float32 for integers"),
    "nanstd": _e("The standard deviation along `axis`, ignoring NaNs.",
                 "A tensor in x's float dtype (integers give float32); NaN where an "
                 "axis holds only NaNs.",
                 "snp.nanstd(snp.asarray([1.0, np.nan, 3.0]))",
                 raises="ValueError: if both correction and ddof are given.",
                 dtype="the dtype the statistic is computed and returned in (NumPy's and jax's "
                    "dtype=); None: x's float dtype, float32 for integers"),
    "median": _e("The median along `axis`: the middle value, or the mean of the two "
                 "middle values.", "A float tensor (integers give float32); NaN if the "
                 "axis holds a NaN.", "snp.median(snp.asarray([3, 1, 4, 1]))",
                 a="the input"),
    "nanmedian": _e("The median along `axis`, ignoring NaNs.", "A float tensor; NaN where "
                    "an axis holds only NaNs.",
                    "snp.nanmedian(snp.asarray([3.0, np.nan, 1.0]))", a="the input"),
    "nanpercentile": _e("The q-th percentile along `axis`, ignoring NaNs.",
                        "A float tensor; with a tensor q, q's shape comes first.",
                        "snp.nanpercentile(snp.asarray([1.0, np.nan, 3.0, 5.0]), 50)",
                        a="the input", q="the percentile(s), in [0, 100]",
                        method="how to pick between two data points: 'linear' (the "
                               "default), 'lower', 'higher', 'nearest' or 'midpoint'",
                        raises="ValueError: if q is outside [0, 100] or the method is "
                               "unknown."),
    "count_nonzero": _e("How many elements along `axis` are nonzero.",
                        "An int64 tensor.", "snp.count_nonzero(snp.asarray([[0, 1], "
                        "[2, 3]]), axis=0)"),
    "argmax": _e("The index of the largest element along `axis` (the first, if several "
                 "are equal; the first NaN, if any).", "An int64 tensor (JAX gives "
                 "int32).", "snp.argmax(snp.asarray([[1, 5, 2], [7, 0, 7]]), axis=1)",
                 axis="the axis to search; None searches the flattened tensor",
                 raises="ValueError: if the axis is empty."),
    "argmin": _e("The index of the smallest element along `axis` (the first, if several "
                 "are equal; the first NaN, if any).", "An int64 tensor (JAX gives "
                 "int32).", "snp.argmin(snp.asarray([4, 1, 1]))",
                 axis="the axis to search; None searches the flattened tensor",
                 raises="ValueError: if the axis is empty."),
    "cumprod": _e("The cumulative product along `axis`.", "A tensor of x's shape "
                  "(flattened when axis is None); small integers are computed in int64, "
                  "as NumPy.", "snp.cumprod(snp.asarray([1, 2, 3, 4]))",
                  axis="the axis to scan; None scans the flattened tensor"),
    "cummin": _e("The cumulative minimum along `axis` (jax.numpy's cummin; NumPy has "
                 "`minimum.accumulate`).", "A tensor of x's shape and dtype (flattened "
                 "when axis is None).", "snp.cummin(snp.asarray([3, 1, 2, 0]))",
                 axis="the axis to scan; None scans the flattened tensor"),
    "cumulative_sum": _e("The cumulative sum along `axis` (the array API's name).",
                         "A tensor of x's shape, one longer along the axis with "
                         "include_initial.",
                         "snp.cumulative_sum(snp.asarray([1, 2, 3]), include_initial=True)",
                         axis="the axis to scan; may be None only for a 1-d tensor",
                         raises="ValueError: if axis is None and x has several axes."),
    "cumulative_prod": _e("The cumulative product along `axis` (the array API's name).",
                          "A tensor of x's shape, one longer along the axis with "
                          "include_initial.",
                          "snp.cumulative_prod(snp.asarray([1, 2, 3]))",
                          axis="the axis to scan; may be None only for a 1-d tensor",
                          raises="ValueError: if axis is None and x has several axes."),
    # shape and layout
    "reshape": _e("x with a new shape and the same elements, in row-major order.",
                  "A tensor of `shape`: a view of x where NumPy's strides allow one, "
                  "else a copy.", "snp.reshape(snp.arange(6), (2, -1))",
                  shape="the new shape; one dimension may be -1, inferred from the "
                        "others", raises="ValueError: if the sizes differ, or if "
                  "copy=False and no view is possible (a transpose, a strided slice)."),
    "squeeze": _e("x without axes of length 1.", "A view of x.",
                  "snp.squeeze(snp.zeros((1, 3, 1))).shape",
                  axis="the axes to remove (each must have length 1); None removes "
                       "every axis of length 1",
                  raises="ValueError: if a given axis does not have length 1."),
    "expand_dims": _e("x with new axes of length 1 inserted at `axis`.", "A view of x.",
                      "snp.expand_dims(snp.asarray([1, 2]), axis=(0, 2)).shape",
                      axis="where the new axes go in the result (an int or a tuple)",
                      raises="ValueError: if an axis repeats or is out of range."),
    "moveaxis": _e("x with axes moved from `source` to `destination`; the other axes "
                   "keep their order.", "A view of x.",
                   "snp.moveaxis(snp.zeros((2, 3, 4)), 0, -1).shape",
                   source="the axis (or axes) to move",
                   destination="where each goes in the result",
                   raises="ValueError: if the two lists differ in length or repeat an "
                          "axis."),
    "swapaxes": _e("x with two axes exchanged.", "A view of x.",
                   "snp.swapaxes(snp.zeros((2, 3, 4)), 0, 2).shape",
                   axis1="the first axis", axis2="the second axis"),
    "transpose": _e("x with its axes permuted (reversed by default).", "A view of x.",
                    "snp.transpose(snp.asarray([[1, 2, 3]]))",
                    axes="a permutation of range(x.ndim); None reverses the axes",
                    raises="ValueError: if axes is not a permutation of x's axes."),
    "permute_dims": _e("x with its axes permuted (the array API's `transpose`).",
                       "A view of x.", "snp.permute_dims(snp.zeros((2, 3, 4)), (2, 0, 1))"
                       ".shape", axes="a permutation of range(x.ndim)",
                       raises="ValueError: if axes is not a permutation of x's axes."),
    "flip": _e("x with the order of elements reversed along `axis`.", "A view of x.",
               "snp.flip(snp.asarray([[1, 2], [3, 4]]), axis=1)",
               axis="the axes to reverse; None reverses every axis"),
    "broadcast_to": _e("x broadcast to `shape`, by NumPy's rules.",
                       "A read-only view of x: writing into it raises, as in NumPy.",
                       "snp.broadcast_to(snp.asarray([1, 2]), (2, 2))",
                       raises="ValueError: if x's shape does not broadcast to `shape`."),
    "broadcast_shapes": _e("The shape that shapes broadcast to, by NumPy's rules.",
                           "A tuple of ints.", "snp.broadcast_shapes((2, 1), (3,))",
                           shapes="tuples of ints (or ints)",
                           raises="ValueError: if the shapes do not broadcast."),
    "concatenate": _e("The tensors joined along an existing axis.",
                      "A tensor of the promoted dtype.",
                      "snp.concatenate([snp.asarray([1, 2]), snp.asarray([3])])",
                      axis="the axis to join along; None flattens the tensors first",
                      raises="ValueError: if the shapes differ off the axis, or arrays "
                             "is empty."),
    "stack": _e("The tensors joined along a new axis.", "A tensor with one axis more, "
                "of the promoted dtype.",
                "snp.stack([snp.asarray([1, 2]), snp.asarray([3, 4])], axis=1)",
                axis="where the new axis goes in the result",
                raises="ValueError: if the shapes differ, or arrays is empty."),
    "hstack": _e("The tensors joined along their second axis (the first, for 1-d "
                 "tensors).", "A tensor.", "snp.hstack([snp.asarray([1, 2]), "
                 "snp.asarray([3])])"),
    "vstack": _e("The tensors joined along their first axis, 1-d ones as rows.",
                 "A tensor with at least two axes.",
                 "snp.vstack([snp.asarray([1, 2]), snp.asarray([3, 4])])"),
    "dstack": _e("The tensors joined along a third axis (made by atleast_3d).",
                 "A tensor with at least three axes.",
                 "snp.dstack([snp.asarray([1, 2]), snp.asarray([3, 4])]).shape"),
    "column_stack": _e("1-d tensors as the columns of a matrix (2-d ones are joined "
                       "along their second axis).", "A 2-d tensor.",
                       "snp.column_stack([snp.asarray([1, 2]), snp.asarray([3, 4])])"),
    "hsplit": _e("x split along its second axis (the first, for a 1-d tensor).",
                 "A list of views of x.", "[t.shape for t in snp.hsplit(snp.zeros((2, 4)), "
                 "2)]", indices_or_sections="the number of equal parts, or the indices "
                 "where parts start", raises="ValueError: if the parts cannot be equal, or "
                 "x is 0-d."),
    "vsplit": _e("x split along its first axis.", "A list of views of x.",
                 "[t.shape for t in snp.vsplit(snp.zeros((4, 2)), [1])]",
                 indices_or_sections="the number of equal parts, or the indices where "
                 "parts start", raises="ValueError: if the parts cannot be equal, or x has "
                 "fewer than 2 dimensions (as NumPy's)."),
    "dsplit": _e("x split along its third axis.", "A list of views of x.",
                 "[t.shape for t in snp.dsplit(snp.zeros((1, 2, 4)), 2)]",
                 indices_or_sections="the number of equal parts, or the indices where "
                 "parts start", raises="ValueError: if the parts cannot be equal, or x has "
                 "fewer than 3 dimensions (as NumPy's)."),
    "diagonal": _e("The `offset`-th diagonal of the matrices on axes axis1 and axis2.",
                   "A read-only view of a, with the diagonal as its last axis (writing "
                   "raises, as in NumPy).",
                   "snp.diagonal(snp.asarray([[1, 2], [3, 4]]))",
                   a="the input, with at least two axes",
                   offset="the diagonal: 0 is the main one, > 0 above, < 0 below",
                   axis1="the axis of the rows", axis2="the axis of the columns"),
    "diag_indices_from": _e("The indices of the main diagonal of a square tensor, one "
                            "index tensor per axis.", "A tuple of int64 tensors.",
                            "snp.diag_indices_from(snp.zeros((2, 2)))",
                            raises="ValueError: if arr's axes differ in length."),
    "tril_indices_from": _e("The indices of the lower triangle (at and below the k-th "
                            "diagonal) of a 2-d tensor.", "A (rows, cols) pair of int64 "
                            "tensors.", "snp.tril_indices_from(snp.zeros((2, 2)))"),
    "triu_indices_from": _e("The indices of the upper triangle (at and above the k-th "
                            "diagonal) of a 2-d tensor.", "A (rows, cols) pair of int64 "
                            "tensors.", "snp.triu_indices_from(snp.zeros((2, 2)))"),
    # products
    "matmul": _e("The matrix product `x @ y`, with NumPy's rules for 1-d operands and "
                 "batch axes.", "A tensor of the promoted dtype.",
                 "snp.matmul(snp.asarray([[1, 2], [3, 4]]), snp.asarray([1, 1]))",
                 x="the left operand", y="the right operand",
                 raises="ValueError: if an operand is 0-d (use `*`), the contracted "
                        "sizes differ or the batch axes do not broadcast."),
    "dot": _e("NumPy's dot: the matrix product for 2-d operands, the inner product for "
              "1-d ones, a product with the last axis of x and the second-to-last of y "
              "otherwise.", "A tensor of the promoted dtype.",
              "snp.dot(snp.asarray([1, 2]), snp.asarray([3, 4]))",
              x="the left operand", y="the right operand"),
    "inner": _e("The sum of products over the last axes of x and y.",
                "A tensor of shape x.shape[:-1] + y.shape[:-1].",
                "snp.inner(snp.asarray([1, 2]), snp.asarray([3, 4]))",
                x="the left operand", y="the right operand"),
    "outer": _e("The outer product of x and y, flattened first.", "A 2-d tensor.",
                "snp.outer(snp.asarray([1, 2]), snp.asarray([1, 10]))",
                x="the left operand", y="the right operand"),
    "vdot": _e("The dot product of the flattened x and y, conjugating x.",
               "A 0-d tensor.", "snp.vdot(snp.asarray([1j, 2]), snp.asarray([1j, 3]))",
               x="the left operand (conjugated)", y="the right operand"),
    "tensordot": _e("The sum of products over the given axes of x and y.",
                    "A tensor with x's free axes followed by y's.",
                    "snp.tensordot(snp.ones((2, 3)), snp.ones((3, 4)), axes=1).shape",
                    x="the left operand", y="the right operand",
                    axes="an int n (x's last n axes with y's first n) or a pair of axis "
                         "sequences"),
    # searching, sorting, sets
    "sort": _e("x sorted along `axis` (ascending unless `descending`); NaNs go last.",
               "A tensor of x's shape and dtype.",
               "snp.sort(snp.asarray([3, 1, 2]))\n"
               "snp.sort(snp.asarray([3, 1, 2]), descending=True)",
               axis="the axis to sort along; None sorts the flattened tensor"),
    "argsort": _e("The indices that sort x along `axis`; equal elements keep their "
                  "order.", "An int64 tensor of x's shape.",
                  "snp.argsort(snp.asarray([3, 1, 2]))",
                  axis="the axis to sort along; None sorts the flattened tensor"),
    "nonzero": _e("The indices of the nonzero elements, one index tensor per axis.",
                  "A tuple of 1-d int64 tensors.",
                  "snp.nonzero(snp.asarray([0, 3, 0, 4]))",
                  notes="The result's length depends on the data: under jit, give "
                        "`size=`.", fill_value="the index that pads the result to "
                                               "`size` (default 0)",
                  raises="MustCompileError: under jit without `size`."),
    "flatnonzero": _e("The indices of the nonzero elements of the flattened tensor.",
                      "A 1-d int64 tensor.",
                      "snp.flatnonzero(snp.asarray([[0, 1], [2, 0]]))",
                      fill_value="the index that pads the result to `size` (default 0)",
                      raises="MustCompileError: under jit without `size`."),
    "argwhere": _e("The indices of the nonzero elements, one row per element.",
                   "An int64 tensor of shape (count, x.ndim).",
                   "snp.argwhere(snp.asarray([[0, 1], [2, 0]]))",
                   fill_value="the index that pads the result to `size` (default 0)",
                   raises="MustCompileError: under jit without `size`."),
    "take_along_axis": _e("Elements of arr picked along `axis` by an index tensor of the "
                          "same rank (the inverse of argsort's use).",
                          "A tensor of indices' shape (broadcast with arr off the axis).",
                          "x = snp.asarray([[3, 1, 2]])\n"
                          "snp.take_along_axis(x, snp.argsort(x, axis=1), axis=1)",
                          arr="the tensor to pick from", indices="integer indices",
                          axis="the axis the indices run along",
                          mode="what an out-of-range index does: None and 'fill' give "
                               "fill_value (NaN, or the dtype's minimum), 'clip' clamps, "
                               "'promise_in_bounds' trusts it",
                          fill_value="the value of an out-of-range index with 'fill'"),
    "unique_values": _e("The sorted distinct elements of x (flattened).",
                        "A 1-d tensor of x's dtype.",
                        "snp.unique_values(snp.asarray([3, 1, 3, 2]))",
                        fill_value="the value that pads the result to `size` (default: "
                                   "the smallest element)",
                        raises="MustCompileError: under jit without `size`."),
    "unique_counts": _e("The sorted distinct elements of x and how often each occurs.",
                        "A named tuple (values, counts).",
                        "snp.unique_counts(snp.asarray([3, 1, 3]))",
                        fill_value="the value that pads `values` to `size`",
                        raises="MustCompileError: under jit without `size`."),
    "unique_inverse": _e("The sorted distinct elements of x, and for each element of x "
                         "the index of its value among them.",
                         "A named tuple (values, inverse_indices); inverse_indices has "
                         "x's shape.", "snp.unique_inverse(snp.asarray([3, 1, 3]))",
                         fill_value="the value that pads `values` to `size`",
                         raises="MustCompileError: under jit without `size`."),
    "unique_all": _e("The sorted distinct elements of x, the index of each one's first "
                     "occurrence, the inverse indices and the counts.",
                     "A named tuple (values, indices, inverse_indices, counts).",
                     "snp.unique_all(snp.asarray([3, 1, 3])).counts",
                     fill_value="the value that pads `values` to `size`",
                     raises="MustCompileError: under jit without `size`."),
    # elementwise with two operands
    "logical_and": _e("`x and y`, elementwise, as booleans (nonzero is true).",
                      "A boolean tensor of the broadcast shape.",
                      "snp.logical_and(snp.asarray([1, 0, 2]), snp.asarray([1, 1, 0]))"),
    "logical_or": _e("`x or y`, elementwise, as booleans (nonzero is true).",
                     "A boolean tensor of the broadcast shape.",
                     "snp.logical_or(snp.asarray([1, 0, 0]), snp.asarray([0, 0, 3]))"),
    "logical_xor": _e("Whether exactly one of x and y is true, elementwise.",
                      "A boolean tensor of the broadcast shape.",
                      "snp.logical_xor(snp.asarray([1, 0, 1]), snp.asarray([1, 1, 0]))"),
    "power": _e("`x ** y`, elementwise, with NumPy broadcasting and JAX's promotion.",
                "A tensor of the promoted dtype.",
                "snp.power(snp.asarray([2, 3]), 2)\nsnp.power(2.0, snp.asarray([0.5, -1.0]))",
                notes="An integer to a negative integer power is 0 (or ±1 for ±1), "
                      "where NumPy raises.", x="the base", y="the exponent"),
    "divmod": _e("`(x1 // x2, x1 % x2)`, elementwise, as Python's divmod.",
                 "A pair of tensors of the broadcast shape.",
                 "snp.divmod(snp.asarray([7, -7]), 2)",
                 notes="An integer divided by 0 gives 0 and 0, without NumPy's warning."),
    "clip": _e("x with its elements limited to [min, max].", "A tensor of x's shape and "
               "dtype.", "snp.clip(snp.asarray([-2, 0, 5]), 0, 3)",
               min="the lower limit (None: none); a number or a tensor that broadcasts",
               max="the upper limit (None: none)",
               notes="Where min > max the result is max, as in NumPy. NaN limits "
                     "propagate."),
}
_ALIASES = {"absolute": "abs", "conjugate": "conj", "bitwise_not": "invert",
            "bitwise_invert": "invert", "fix": "trunc", "degrees": "rad2deg",
            "radians": "deg2rad", "concat": "concatenate", "row_stack": "vstack",
            "pow": "power"}


def _arg_lines(fn, entry_args: dict) -> list[str]:
    lines = []
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind is p.VAR_POSITIONAL:
            name_shown = f"*{name}"
        else:
            name_shown = name
        what = entry_args.get(name) or _ARGS.get(name)
        if what is None:
            raise KeyError(f"{fn.__name__}: no description of the parameter {name!r}")
        lines.append(_wrap(f"{name_shown}: {what}.", "    ", hanging=True))
    return lines


def _examples(src: str, outputs: dict[str, str]) -> list[str]:
    out = []
    for line in src.split("\n"):
        out.append(f"    >>> {line}")
        shown = outputs.get(line)
        if shown is None:
            raise KeyError(f"no recorded output for the example {line!r}")
        out += [f"    {s}" if s else "    <BLANKLINE>" for s in shown.split("\n") if
                shown]
    return out


def compose(name: str, fn) -> str:
    """The docstring of one table entry."""
    if name in _UNARY:
        summary, notes, example = _UNARY[name]
        returns = _RETURNS_UNARY.get(name, "A tensor of x's shape.")
        raises = _RAISES_UNARY.get(name, "")
        args = {}
    else:
        e = _OTHER[name]
        summary, notes, returns, raises, example, args = (
            e["summary"], e["notes"], e["returns"], e["raises"], e["example"], e["args"])
    lines = [_wrap(summary), ""]
    if notes:
        lines += [_wrap(notes), ""]
    lines += ["Args:", *_arg_lines(fn, args), "", "Returns:", _wrap(returns, "    "), ""]
    if raises:
        lines += ["Raises:", _wrap(raises, "    ", hanging=True), ""]
    lines += ["Example:", *_examples(example, OUTPUTS)]
    return "\n".join(lines)


def examples() -> dict[str, str]:
    """Every table entry's example source, by name (for recording outputs)."""
    out = {n: e[2] for n, e in _UNARY.items()}
    out.update({n: e["example"] for n, e in _OTHER.items()})
    return out


def install(namespace: dict) -> None:
    """Give the table's functions, and their aliases, their docstrings."""
    for name in (*_UNARY, *_OTHER):
        fn = namespace[name]
        if not fn.__doc__:
            fn.__doc__ = compose(name, fn)
    for alias, name in _ALIASES.items():
        fn = namespace[alias]
        if not fn.__doc__:  # an alias that is a function of its own
            fn.__doc__ = f"The same as `{name}`.\n\n{namespace[name].__doc__}"
