"""Random ops: flow.random.bernoulli, shuffle and generate_random_batch_permutation_indices
(OneFlow 0.3's random ops in flow.random) and flow.random.uniform / flow.random.normal
(TensorFlow-style; OneFlow 0.3 only had the random_*_initializer's for variables).

Seeds: with `seed` given, the op draws the same sequence of samples (one per iteration) in
every session, on any number of devices. Without one, a seed is drawn from Python's `random`
when the op is created, as OneFlow does. Ops: oneflow/ops/random.cpp."""
import numbers
import random as _python_random

from oneflow.framework import dtypes
from oneflow.framework import op_builder
from oneflow.framework import shapes

_FLOATING = (dtypes.float32, dtypes.float64)


def _seed(seed, op_name):
    if seed is None:
        return _python_random.getrandbits(63)
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
        raise TypeError("%s: seed must be an int or None, got %r" % (op_name, seed))
    return int(seed) & ((1 << 63) - 1)


def _floating_dtype(dtype, op_name):
    dtype = dtypes.check(dtypes.float32 if dtype is None else dtype, "%s dtype" % op_name)
    if dtype not in _FLOATING:
        raise TypeError("%s: dtype must be float32 or float64, got %s" % (op_name, dtype.name))
    return dtype


def _shape(shape, op_name):
    shape = shapes.to_shape(shape, op_name)
    if any(d < 1 for d in shape):
        raise ValueError("%s: shape %r must have positive dimensions" % (op_name, tuple(shape)))
    return shape


def bernoulli(x, seed=None, dtype=None, name="Bernoulli"):
    """1 with probability x (elementwise), else 0; dtype defaults to x's."""
    op_builder.check_blob(x, "bernoulli", "x")
    if x.dtype not in _FLOATING:
        raise TypeError("bernoulli: x holds probabilities and must be float32 or float64, got %s"
                        % x.dtype.name)
    dtype = x.dtype if dtype is None else dtypes.check(dtype, "bernoulli dtype")
    return op_builder.add_single_output_op(
        "bernoulli", None if name == "Bernoulli" else name, "Bernoulli", {"x": x},
        {"dtype": dtype.value, "seed": _seed(seed, "bernoulli")})


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None, name=None):
    """Uniform samples in [minval, maxval), a new sample every iteration."""
    shape = _shape(shape, "random.uniform")
    dtype = _floating_dtype(dtype, "random.uniform")
    if not maxval > minval:
        raise ValueError("random.uniform: maxval %r must be greater than minval %r"
                         % (maxval, minval))
    dtypes.check_uniform_range("random.uniform", minval, maxval, dtype)
    return op_builder.add_single_output_op(
        "random_uniform", name, "RandomUniform", {},
        {"shape": shape, "dtype": dtype.value, "low": float(minval), "high": float(maxval),
         "seed": _seed(seed, "random.uniform")})


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None):
    """Normal samples N(mean, stddev^2), a new sample every iteration."""
    shape = _shape(shape, "random.normal")
    dtype = _floating_dtype(dtype, "random.normal")
    if not stddev >= 0:
        raise ValueError("random.normal: stddev must be >= 0, got %r" % (stddev,))
    return op_builder.add_single_output_op(
        "random_normal", name, "RandomNormal", {},
        {"shape": shape, "dtype": dtype.value, "mean": float(mean), "stddev": float(stddev),
         "seed": _seed(seed, "random.normal")})


def generate_random_batch_permutation_indices(value, seed=None, name=None):
    """A random permutation of 0 .. value.shape[0] - 1 (int32), a new one each iteration; with
    `seed` the sequence of permutations is the same in every session."""
    op_builder.check_blob(value, "generate_random_batch_permutation_indices", "value")
    return op_builder.add_single_output_op(
        "generate_random_batch_permutation_indices", name, "RandomBatchPermutationIndices",
        {"x": value}, {"seed": _seed(seed, "generate_random_batch_permutation_indices")},
        output="y")


def shuffle(value, seed=None, name=None):
    """value's rows (axis 0) in a random order, a new one each iteration: a gather with
    generate_random_batch_permutation_indices, so the gradient flows back to the rows."""
    from oneflow.ops import index_ops

    indices = generate_random_batch_permutation_indices(
        value, seed, name=None if name is None else name + "_permutation")
    return index_ops.gather(value, indices, name=name)
