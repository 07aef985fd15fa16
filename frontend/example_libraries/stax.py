"""stax: layers as (init_fun, apply_fun) pairs, as jax.example_libraries.stax.

init_fun(rng, input_shape) -> (output_shape, params); apply_fun(params, inputs, **kwargs)
-> outputs. Combinators (serial, parallel, FanOut ...) build networks from layers. The
same keys give the same parameters as jax's (the initializers are stablejit.nn's, with
jax's bits), and the same parameters the same outputs.
"""

from __future__ import annotations

import functools
import math
import operator

from .. import lax, random
from .. import numpy as snp
from ..abstract import eval_shape
from ..callbacks import ShapeDtypeStruct
from ..nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from ..nn.initializers import glorot_normal, normal, ones, zeros

# jax's aliases
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _out_shape(fn, *shapes) -> tuple:
    """The shape of fn's result for float32 inputs of these shapes (traced, not run)."""
    out = eval_shape(fn, *[ShapeDtypeStruct(tuple(s), snp.float32) for s in shapes])
    return tuple(out.shape)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802, B008
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return snp.dot(inputs, W) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: B008
    """A convolution with the layouts dimension_numbers = (lhs, rhs, out) spec strings."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def conv(inputs, W):
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        spatial = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else
                             input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
                             for c in rhs_spec)
        output_shape = _out_shape(conv, input_shape, kernel_shape)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Normalisation over `axis` of each batch (no running statistics), then a learned
    shift (center) and scale (scale) per remaining position."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(x.ndim))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        return gamma[expand] * z if scale else z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer with no parameters applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(snp.tanh)
Relu = elementwise(relu)
Exp = elementwise(snp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        """A pooling layer over the spatial axes (NHWC unless spec says otherwise)."""
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        fixed = (0, len(window_shape) + 1) if spec is None else (spec.index("N"),
                                                                 spec.index("C"))
        dims, steps = tuple(window_shape), strides
        for i in sorted(fixed):
            dims, steps = dims[:i] + (1,) + dims[i:], steps[:i] + (1,) + steps[i:]

        def pool(inputs):
            return lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)

        def init_fun(rng, input_shape):
            return _out_shape(pool, input_shape), ()

        def apply_fun(params, inputs, **kwargs):
            out = pool(inputs)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -math.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims, strides, padding):
    """AvgPool's rescale: divide each sum by the number of inputs its window covered
    (fewer at the borders under SAME padding)."""
    def rescale(outputs, inputs, spec):
        fixed = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in fixed)
        counts = lax.reduce_window(snp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add,
                                   tuple(dims), tuple(strides), padding)
        for i in sorted(fixed):
            counts = snp.expand_dims(counts, i)
        return outputs / counts
    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return snp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()  # (a layer, not a constructor, as in jax)


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):  # noqa: N802
    """num copies of the input (for parallel)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return functools.reduce(operator.add, inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """The inputs concatenated along axis."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return snp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Dropout that KEEPS each input with probability `rate` (jax's stax convention: the
    name says rate, the code keeps) and divides the kept ones by it; the identity unless
    mode == "train". apply_fun needs rng=... in every mode, as jax's."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout's apply_fun needs a key: call apply_fun(params, inputs, rng=key) "
                "with a stablejit.random key (in every mode, as jax's stax)")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return snp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


def serial(*layers):
    """The layers applied one after the other; each gets its own key (split in turn)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, key in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Each layer applied to its own input of a sequence (as made by FanOut)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        pairs = [init(key, shape) for init, key, shape in zip(init_funs, rngs, input_shape,
                                                               strict=True)]
        shapes, params = zip(*pairs, strict=True) if pairs else ((), ())
        return shapes, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [fun(p, x, rng=key, **kwargs)
                for fun, p, x, key in zip(apply_funs, params, inputs, rngs, strict=True)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by the input's shape: make_layer(shape) -> (init_fun, apply_fun)."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun


__all__ = ["AvgPool", "BatchNorm", "Conv", "Dense", "Dropout", "Elu", "Exp", "FanInConcat",
           "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "Identity", "LeakyRelu",
           "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus",
           "SumPool", "Tanh", "elementwise", "elu", "gelu", "glorot", "glorot_normal",
           "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones", "parallel", "randn",
           "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax", "softplus",
           "standardize", "zeros"]


def __dir__() -> list[str]:  # dir(), help() and tab completion show the public names only
    return sorted(__all__)
