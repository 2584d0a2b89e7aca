"""Bad-input sweep: every malformed call must raise a clear Python exception (never crash, hang or
return garbage), and the library must keep working afterwards.

Each case runs in its own subprocess (a crash, abort or hang is reported, not fatal to pytest). The
child runs the case, records the exception, then runs a tiny job in the same session and again
after flow.clear_default_session(). Cases that may legitimately succeed check their own result
(garbage raises AssertionError, which no case accepts).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 30  # a hang, not slowness: a loaded CI machine needs several seconds per case

CASES = {}


class Case:
    def __init__(self, fn, expect, words, allow_success, same_session):
        self.fn, self.expect, self.words = fn, expect, words
        self.allow_success, self.same_session = allow_success, same_session


def case(*expect, words=(), allow_success=False, same_session=True):
    """expect: acceptable exception class names (a subclass counts); words: at least one must
    appear in the message (case-insensitive); allow_success: the case may instead return a
    correct result (it asserts the result itself); same_session=False: the case changes the
    session's configuration, so only the tiny job after clear_default_session is required."""

    def deco(fn):
        assert fn.__name__ not in CASES
        CASES[fn.__name__] = Case(fn, expect, tuple(words), allow_success, same_session)
        return fn

    return deco


F32 = np.float32
_job_counter = [0]


def run_job(body, *placeholders, type="predict", args=None, ret=tp.Numpy):  # noqa: A002
    """Defines a job whose arguments are `placeholders` and whose body is `body(*blobs)`, runs it
    with `args` (default: ones of the placeholders' shapes) and returns the result."""
    names = ["a%d" % i for i in range(len(placeholders))]
    ns = {"body": body, "tp": tp, "ret": ret}
    for n, p in zip(names, placeholders):
        ns["P_" + n] = p
    _job_counter[0] += 1
    fname = "job_%d" % _job_counter[0]
    src = "def %s(%s) -> ret:\n    return body(%s)\n" % (
        fname, ", ".join("%s: P_%s" % (n, n) for n in names), ", ".join(names))
    exec(src, ns)
    job = flow.global_function(type=type)(ns[fname])
    if args is None:
        args = [np.ones(p.shape, dtype=flow.convert_oneflow_dtype_to_numpy_dtype(p.dtype))
                for p in placeholders]
    return job(*args)


def P(shape, dtype=flow.float32):
    return tp.Numpy.Placeholder(shape, dtype=dtype)


def sgd(lr=0.1, momentum=0.0):
    return flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [lr]),
                              momentum=momentum)


def trainable_x(x):
    return x + flow.get_variable("zero_var", shape=(1,), dtype=x.dtype,
                                 initializer=flow.zeros_initializer())


# ---------------------------------------------------------------- op argument types
@case("TypeError", words=["matmul", "blob", "None"])
def matmul_none():
    run_job(lambda a: flow.matmul(a, None), P((2, 3)))


@case("TypeError", words=["matmul", "blob", "str"])
def matmul_string():
    run_job(lambda a: flow.matmul(a, "abc"), P((2, 3)))


@case("TypeError", words=["matmul", "blob", "list"])
def matmul_list():
    run_job(lambda a: flow.matmul(a, [[1.0], [2.0], [3.0]]), P((2, 3)))


@case("TypeError", words=["matmul", "blob", "ndarray", "numpy"])
def matmul_numpy():
    run_job(lambda a: flow.matmul(a, np.ones((3, 3), F32)), P((2, 3)))


@case("ValueError", words=["matmul"])
def matmul_shape_mismatch():
    run_job(lambda a, b: flow.matmul(a, b), P((2, 3)), P((4, 5)))


@case("ValueError", words=["matmul"])
def matmul_transpose_shape_mismatch():
    run_job(lambda a, b: flow.matmul(a, b, transpose_b=True), P((2, 3)), P((3, 4)))


@case("ValueError", "NotImplementedError", words=["matmul"])
def matmul_1d():
    run_job(lambda a, b: flow.matmul(a, b), P((3,)), P((3,)))


@case("ValueError", "TypeError", words=["matmul", "dtype", "float64", "double"])
def matmul_dtype_mismatch():
    run_job(lambda a, b: flow.matmul(a, b), P((2, 3)), P((3, 4), flow.float64))


@case("NotImplementedError", "TypeError", "ValueError", words=["matmul", "int32"])
def matmul_int32():
    run_job(lambda a, b: flow.matmul(a, b), P((2, 3), flow.int32), P((3, 4), flow.int32))


@case("TypeError", words=["transpose_a", "bool"])
def matmul_transpose_flag_string():
    run_job(lambda a, b: flow.matmul(a, b, transpose_a="yes"), P((3, 2)), P((3, 4)))


@case("TypeError", words=["alpha", "float", "str"])
def matmul_alpha_string():
    run_job(lambda a, b: flow.matmul(a, b, alpha="2"), P((2, 3)), P((3, 4)))


@case("ValueError", words=["bias_add", "bias"])
def bias_add_wrong_length():
    run_job(lambda a, b: flow.nn.bias_add(a, b), P((2, 3)), P((4,)))


@case("ValueError", words=["bias_add", "bias"])
def bias_add_2d_bias():
    run_job(lambda a, b: flow.nn.bias_add(a, b), P((2, 3)), P((1, 3)))


@case("ValueError", words=["data_format", "NXYZ"])
def bias_add_bad_data_format():
    run_job(lambda a, b: flow.nn.bias_add(a, b, data_format="NXYZ"), P((2, 3, 4)), P((3,)))


@case("TypeError", words=["bias_add", "blob", "None"])
def bias_add_none():
    run_job(lambda a: flow.nn.bias_add(a, None), P((2, 3)))


@case("ValueError", words=["broadcast", "add", "shape"])
def add_not_broadcastable():
    run_job(lambda a, b: flow.math.add(a, b), P((3, 4)), P((5,)))


@case("ValueError", words=["broadcast", "multiply", "mul", "shape"])
def multiply_not_broadcastable():
    run_job(lambda a, b: a * b, P((2, 3)), P((3, 2)))


@case("ValueError", "TypeError", words=["dtype", "int32", "float"])
def add_dtype_mismatch():
    run_job(lambda a, b: flow.math.add(a, b), P((3,)), P((3,), flow.int32))


@case("TypeError", words=["add", "None", "blob"])
def add_none():
    run_job(lambda a: flow.math.add(a, None), P((3,)))


@case("TypeError", words=["str", "blob", "add", "+"])
def blob_plus_string():
    run_job(lambda a: a + "abc", P((3,)))


@case("TypeError", words=["list", "blob", "subtract", "-"])
def blob_minus_list():
    run_job(lambda a: a - [1.0, 2.0, 3.0], P((3,)))


@case("TypeError", words=["ndarray", "numpy", "blob", "multiply", "*"])
def blob_times_ndarray():
    run_job(lambda a: a * np.ones(3, F32), P((3,)))


@case("TypeError", words=["ndarray", "numpy", "blob", "multiply", "*"])
def ndarray_times_blob():
    """numpy would otherwise build an object array of blobs (one op per element)."""
    out = run_job(lambda a: np.ones(3, F32) * a, P((3,)))
    raise AssertionError("np.ndarray * blob silently gave %r" % (out,))


@case("TypeError", words=["blob", "multiply", "*", "float32"], allow_success=True)
def numpy_scalar_times_blob():
    out = run_job(lambda a: np.float32(2.0) * a, P((3,)))
    assert isinstance(out, np.ndarray) and out.dtype == F32 and out.shape == (3,), repr(out)
    assert np.array_equal(out, [2, 2, 2]), repr(out)


@case("TypeError", words=["divide", "blob", "None"])
def divide_by_none():
    run_job(lambda a: flow.math.divide(a, None), P((3,)))


@case("TypeError", words=["relu", "blob", "None"])
def relu_none():
    run_job(lambda a: flow.nn.relu(None), P((3,)))


@case("TypeError", words=["relu", "blob", "str"])
def math_relu_string():
    run_job(lambda a: flow.math.relu("x"), P((3,)))


@case("TypeError", words=["sigmoid", "blob", "ndarray", "numpy"])
def sigmoid_numpy():
    run_job(lambda a: flow.math.sigmoid(np.ones(3, F32)), P((3,)))


@case("TypeError", words=["tanh", "blob", "list"])
def tanh_list():
    run_job(lambda a: flow.math.tanh([1.0, 2.0]), P((3,)))


@case("TypeError", words=["square", "blob"])
def square_int_literal():
    run_job(lambda a: flow.math.square(3), P((3,)))


@case("NotImplementedError", "TypeError", "ValueError", words=["sigmoid", "int32"])
def sigmoid_int32():
    run_job(lambda a: flow.math.sigmoid(a), P((3,), flow.int32))


@case("NotImplementedError", "TypeError", "ValueError", words=["softmax", "int32"])
def softmax_int32():
    run_job(lambda a: flow.nn.softmax(a), P((2, 3), flow.int32))


@case("TypeError", words=["identity", "blob", "None"])
def identity_none():
    run_job(lambda a: flow.identity(None), P((3,)))


# ---------------------------------------------------------------- reshape
@case("ValueError", words=["reshape"])
def reshape_wrong_count():
    run_job(lambda a: flow.reshape(a, (5, 5)), P((4, 6)))


@case("ValueError", words=["reshape", "-1"])
def reshape_two_minus_one():
    run_job(lambda a: flow.reshape(a, (-1, -1)), P((4, 6)))


@case("ValueError", words=["reshape", "0"])
def reshape_zero_dim():
    run_job(lambda a: flow.reshape(a, (0, 24)), P((4, 6)))


@case("ValueError", words=["reshape", "-2"])
def reshape_negative_dim():
    run_job(lambda a: flow.reshape(a, (-2, -12)), P((4, 6)))


@case("ValueError", words=["reshape", "-1"])
def reshape_minus_one_not_divisible():
    run_job(lambda a: flow.reshape(a, (5, -1)), P((4, 6)))


@case("TypeError", "ValueError", words=["reshape"])
def reshape_shape_string():
    run_job(lambda a: flow.reshape(a, "abc"), P((4, 6)))


@case("TypeError", words=["reshape", "shape", "None"])
def reshape_shape_none():
    run_job(lambda a: flow.reshape(a, None), P((4, 6)))


@case("TypeError", words=["reshape", "shape", "int", "float"])
def reshape_shape_float():
    out = run_job(lambda a: flow.reshape(a, (2.9, 4)), P((2, 4)))
    raise AssertionError("reshape to (2.9, 4) silently truncated to %r" % (out.shape,))


@case("TypeError", words=["reshape", "blob", "None"])
def reshape_none_input():
    run_job(lambda a: flow.reshape(None, (2, 3)), P((2, 3)))


@case(allow_success=True)
def reshape_numpy_int_shape():
    out = run_job(lambda a: flow.reshape(a, np.array([3, 8])), P((4, 6)))
    assert out.shape == (3, 8), out.shape
    out = run_job(lambda a: flow.reshape(a, (np.int64(2), np.int32(12))), P((4, 6)))
    assert out.shape == (2, 12), out.shape


# ---------------------------------------------------------------- reduce / softmax
@case("ValueError", words=["axis", "reduce"])
def reduce_sum_axis_out_of_range():
    run_job(lambda a: flow.math.reduce_sum(a, axis=2), P((2, 3)))


@case("ValueError", words=["axis", "reduce"])
def reduce_mean_negative_axis_out_of_range():
    run_job(lambda a: flow.math.reduce_mean(a, axis=-3), P((2, 3)))


@case("ValueError", words=["axis", "reduce"])
def reduce_sum_axis_list_out_of_range():
    run_job(lambda a: flow.math.reduce_sum(a, axis=[0, 5]), P((2, 3)))


@case("ValueError", words=["axis", "duplicate", "reduce"], allow_success=True)
def reduce_sum_duplicate_axis():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    out = run_job(lambda a: flow.math.reduce_sum(a, axis=[0, 0]), P((2, 3)), args=[x])
    assert np.array_equal(out, x.sum(0)), out


@case("TypeError", "ValueError", words=["axis"])
def reduce_sum_axis_string():
    run_job(lambda a: flow.math.reduce_sum(a, axis="0"), P((2, 3)))


@case("TypeError", words=["axis", "float", "int"])
def reduce_mean_axis_float():
    run_job(lambda a: flow.math.reduce_mean(a, axis=1.5), P((2, 3)))


@case("TypeError", words=["reduce", "blob", "None"])
def reduce_sum_none():
    run_job(lambda a: flow.math.reduce_sum(None), P((2, 3)))


@case("ValueError", words=["axis", "softmax"])
def softmax_axis_out_of_range():
    out = run_job(lambda a: flow.nn.softmax(a, axis=2), P((2, 3)),
                  args=[np.arange(6, dtype=F32).reshape(2, 3)])
    raise AssertionError("softmax(axis=2) of a 2-D blob silently gave %r" % (out,))


@case("ValueError", words=["axis", "softmax"])
def softmax_negative_axis_out_of_range():
    out = run_job(lambda a: flow.nn.softmax(a, axis=-3), P((2, 3)))
    raise AssertionError("softmax(axis=-3) of a 2-D blob silently gave %r" % (out,))


@case("TypeError", words=["axis", "softmax", "str", "int"])
def softmax_axis_string():
    run_job(lambda a: flow.nn.softmax(a, axis="last"), P((2, 3)))


# ---------------------------------------------------------------- sparse softmax cross entropy
@case("TypeError", "ValueError", "NotImplementedError", words=["label", "float", "int"])
def sparse_ce_float_labels():
    run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
            P((4,)), P((4, 10)))


@case("ValueError", words=["label", "logits", "shape"])
def sparse_ce_batch_mismatch():
    run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
            P((3,), flow.int32), P((4, 10)))


@case("ValueError", words=["label", "logits", "shape"])
def sparse_ce_labels_2d():
    run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
            P((4, 10), flow.int32), P((4, 10)))


@case("ValueError", words=["label", "logits", "shape", "class"])
def sparse_ce_logits_1d():
    run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
            P((1,), flow.int32), P((10,)))


@case("TypeError", words=["label", "logits", "blob", "None"])
def sparse_ce_missing_labels():
    run_job(lambda g: flow.nn.sparse_softmax_cross_entropy_with_logits(logits=g), P((4, 10)))


@case("ValueError", "RuntimeError", "IndexError", words=["label", "range", "10"])
def sparse_ce_label_out_of_range():
    labels = np.array([0, 3, 10, 1], np.int32)
    out = run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
                  P((4,), flow.int32), P((4, 10)), args=[labels, np.zeros((4, 10), F32)])
    raise AssertionError("label 10 with 10 classes silently gave %r" % (out,))


@case("ValueError", "RuntimeError", "IndexError", words=["label", "range", "-1", "negative"])
def sparse_ce_negative_label():
    labels = np.array([0, -1, 2, 1], np.int64)
    out = run_job(lambda l, g: flow.nn.sparse_softmax_cross_entropy_with_logits(l, g),
                  P((4,), flow.int64), P((4, 10)), args=[labels, np.zeros((4, 10), F32)])
    raise AssertionError("label -1 silently gave %r" % (out,))


@case("ValueError", "RuntimeError", "IndexError", words=["label", "range"])
def sparse_ce_huge_label_in_train_job():
    labels = np.array([0, 2 ** 31 - 1], np.int32)

    def body(l, g):
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(l, trainable_x(g))
        sgd().minimize(loss)
        return loss

    out = run_job(body, P((2,), flow.int32), P((2, 5)), type="train",
                  args=[labels, np.zeros((2, 5), F32)])
    raise AssertionError("label 2**31-1 silently gave %r" % (out,))


# ---------------------------------------------------------------- dense / cast / constant
@case("ValueError", words=["units", "dense", "0"])
def dense_zero_units():
    run_job(lambda a: flow.layers.dense(a, 0), P((2, 3)))


@case("ValueError", words=["units", "dense", "-1"])
def dense_negative_units():
    run_job(lambda a: flow.layers.dense(a, -1), P((2, 3)))


@case("TypeError", "ValueError", words=["units"])
def dense_units_string():
    run_job(lambda a: flow.layers.dense(a, "3"), P((2, 3)))


@case("TypeError", "ValueError", words=["units"])
def dense_units_float():
    run_job(lambda a: flow.layers.dense(a, 2.5), P((2, 3)))


@case("ValueError", words=["dense", "axes", "dim", "shape", "2"])
def dense_1d_input():
    run_job(lambda a: flow.layers.dense(a, 4), P((3,)))


@case("TypeError", words=["activation", "callable"])
def dense_activation_not_callable():
    run_job(lambda a: flow.layers.dense(a, 4, activation="relu"), P((2, 3)))


@case("TypeError", words=["dense", "blob", "None"])
def dense_none_input():
    run_job(lambda a: flow.layers.dense(None, 4), P((2, 3)))


@case("TypeError", words=["dtype", "cast"], allow_success=True)
def cast_dtype_string():
    out = run_job(lambda a: flow.cast(a, "float64"), P((2, 3)))
    assert out.dtype == np.float64, out.dtype  # a lenient spelling is fine if it is right


@case("TypeError", words=["dtype", "cast", "None"])
def cast_dtype_none():
    out = run_job(lambda a: flow.cast(a, None), P((2, 3)))
    raise AssertionError("cast(x, None) silently gave dtype %s" % (out.dtype,))


@case("TypeError", words=["cast", "blob"])
def cast_numpy_input():
    run_job(lambda a: flow.cast(np.ones(3), flow.float64), P((2, 3)))


@case("ValueError", words=["constant", "shape", "-3"])
def constant_negative_shape():
    run_job(lambda a: flow.constant(1.0, dtype=flow.float32, shape=(2, -3)), P((1,)))


@case("TypeError", "ValueError", words=["constant"])
def constant_string_value():
    run_job(lambda a: flow.constant("abc", dtype=flow.float32, shape=(2,)), P((1,)))


@case("TypeError", words=["constant", "value", "None"])
def constant_none_value():
    run_job(lambda a: flow.constant(None, dtype=flow.float32, shape=(2,)), P((1,)))


@case("TypeError", "ValueError", words=["constant", "value", "shape"])
def constant_list_value():
    run_job(lambda a: flow.constant([1.0, 2.0], dtype=flow.float32, shape=(3,)), P((1,)))


@case("ValueError", "OverflowError", words=["int32", "range", "constant", "overflow"],
      allow_success=False)
def constant_int_overflow():
    out = run_job(lambda a: flow.constant(2 ** 40, dtype=flow.int32, shape=(2,)), P((1,)))
    raise AssertionError("constant 2**40 as int32 silently gave %r" % (out,))


# ---------------------------------------------------------------- variables
@case("ValueError", words=["shape", "clash_var", "variable"])
def get_variable_shape_clash():
    def body(a):
        v1 = flow.get_variable("clash_var", shape=(3,), initializer=flow.zeros_initializer())
        v2 = flow.get_variable("clash_var", shape=(4,), initializer=flow.zeros_initializer())
        return a + v1
    run_job(body, P((3,)))


@case("ValueError", words=["clash_var", "shape", "variable"])
def get_variable_shape_clash_across_jobs():
    run_job(lambda a: a + flow.get_variable("clash_var", shape=(3,),
                                            initializer=flow.zeros_initializer()), P((3,)))
    run_job(lambda a: a + flow.get_variable("clash_var", shape=(2, 3),
                                            initializer=flow.zeros_initializer()), P((3,)))


@case("ValueError", "TypeError", words=["dtype", "clash_var", "variable"])
def get_variable_dtype_clash():
    def body(a):
        v1 = flow.get_variable("clash_var", shape=(3,), dtype=flow.float32,
                               initializer=flow.zeros_initializer())
        v2 = flow.get_variable("clash_var", shape=(3,), dtype=flow.float64,
                               initializer=flow.zeros_initializer())
        return a + v1
    run_job(body, P((3,)))


@case("ValueError", words=["shape", "variable", "-1"])
def get_variable_negative_shape():
    run_job(lambda a: flow.get_variable("v", shape=(2, -1)), P((1,)))


@case("ValueError", words=["shape", "variable", "0"])
def get_variable_zero_shape():
    run_job(lambda a: flow.get_variable("v", shape=(0, 3)), P((1,)))


@case("TypeError", "ValueError", words=["shape", "variable", "None"])
def get_variable_shape_none():
    run_job(lambda a: flow.get_variable("v", shape=None), P((1,)))


@case("TypeError", "ValueError", words=["name", "variable"])
def get_variable_name_none():
    run_job(lambda a: flow.get_variable(None, shape=(2,)), P((1,)))


@case("TypeError", words=["initializer"])
def get_variable_initializer_string():
    run_job(lambda a: flow.get_variable("v", shape=(2,), initializer="zeros"), P((1,)))


@case("TypeError", words=["dtype", "variable"], allow_success=True)
def get_variable_dtype_string():
    out = run_job(lambda a: flow.get_variable("v", shape=(2,), dtype="float64"), P((1,)))
    assert out.dtype == np.float64, out.dtype


# ---------------------------------------------------------------- placeholders / annotations
@case("ValueError", words=["placeholder", "shape", "-2"])
def placeholder_negative_dim():
    tp.Numpy.Placeholder((3, -2))


@case("ValueError", words=["placeholder", "shape", "0"])
def placeholder_zero_dim():
    tp.Numpy.Placeholder((0, 3))


@case("TypeError", "ValueError", words=["placeholder"])
def placeholder_shape_string():
    tp.Numpy.Placeholder("abc")


@case("TypeError", words=["placeholder", "shape"])
def placeholder_shape_float():
    p = tp.Numpy.Placeholder((2.9, 3))
    raise AssertionError("Placeholder((2.9, 3)) silently became %r" % (p.shape,))


@case("TypeError", words=["placeholder", "dtype"], allow_success=True)
def placeholder_dtype_string():
    assert tp.Numpy.Placeholder((2, 3), dtype="float64").dtype == flow.float64


@case("TypeError", words=["placeholder", "dtype"], allow_success=True)
def placeholder_dtype_numpy():
    assert tp.Numpy.Placeholder((2, 3), dtype=np.float64).dtype == flow.float64


@case("TypeError", words=["placeholder", "dtype"])
def placeholder_dtype_none():
    p = tp.Numpy.Placeholder((2, 3), dtype=None)
    raise AssertionError("Placeholder dtype=None silently became %r" % (p.dtype,))


@case("TypeError", "ValueError", words=["annotat", "x"])
def missing_annotation():
    @flow.global_function()
    def job(x) -> tp.Numpy:
        return x

    job(np.ones(3, F32))


@case("TypeError", "ValueError", "NotImplementedError", words=["annotat", "return", "int"])
def bad_return_annotation():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> int:
        return x

    out = job(np.ones(3, F32))
    raise AssertionError("return annotation int was ignored; got %r" % (out,))


@case("TypeError", words=["return", "blob", "int"])
def returns_non_blob():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return 3

    job(np.ones(3, F32))


@case("ValueError", words=["type", "foo"])
def global_function_bad_type():
    flow.global_function(type="foo")


@case("TypeError", "ValueError", words=["data_type", "dtype", "float"], allow_success=True)
def function_config_dtype_string_float():
    """flow.float is float32; a string spelling must either be rejected or mean the same."""
    cfg = flow.FunctionConfig()
    cfg.default_data_type("float")

    @flow.global_function(function_config=cfg)
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return flow.get_variable("v", shape=(3,), initializer=flow.zeros_initializer()) + x

    out = job(np.ones(3, F32))
    assert cfg.data_type() == flow.float32 and out.dtype == F32, (cfg.data_type(), out.dtype)


# ---------------------------------------------------------------- call arguments
def _simple_job():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3)), y: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x + y

    return job


@case("TypeError", words=["argument", "job", "2", "1"])
def call_too_few_args():
    _simple_job()(np.ones((2, 3), F32))


@case("TypeError", words=["argument", "job", "2", "3"])
def call_too_many_args():
    _simple_job()(np.ones((2, 3), F32), np.ones(3, F32), np.ones(3, F32))


@case("TypeError", words=["argument", "z"])
def call_unknown_kwarg():
    _simple_job()(np.ones((2, 3), F32), z=np.ones(3, F32))


@case("ValueError", "TypeError", words=["dtype", "float64", "float32", "double"],
      allow_success=True)
def call_wrong_dtype():
    # OneFlow 0.3 cast the array; a conversion of the same kind (float64 rounded) may be made.
    x = np.random.RandomState(0).uniform(size=(2, 3))
    y = np.ones(3, F32)
    out = _simple_job()(x, y)
    np.testing.assert_allclose(out, x.astype(F32) + y, rtol=1e-6)


@case("ValueError", "TypeError", words=["dtype", "int64", "int32"], allow_success=True)
def call_int64_for_int32():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return flow.identity(x)

    out = job(np.array([1, -2, 3], np.int64))
    assert out.dtype == np.int32 and out.tolist() == [1, -2, 3], out


@case("ValueError", "TypeError", words=["dtype", "float32", "int32"])
def call_float_for_int32():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return flow.identity(x)

    job(np.array([1.5, 2.0, 3.0], F32))


@case("ValueError", "TypeError", words=["int32", "range", "int64"])
def call_int64_out_of_int32_range():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return flow.identity(x)

    job(np.array([1, 2, 2 ** 40], np.int64))


@case("ValueError", words=["shape", "(2, 3)", "(3, 2)"])
def call_wrong_shape():
    _simple_job()(np.ones((3, 2), F32), np.ones(3, F32))


@case("ValueError", words=["shape", "(2, 3)"])
def call_wrong_rank():
    _simple_job()(np.ones((6,), F32), np.ones(3, F32))


@case("TypeError", words=["ndarray", "numpy", "None", "argument 'x'"])
def call_none_arg():
    _simple_job()(None, np.ones(3, F32))


@case("TypeError", "ValueError", words=["ndarray", "numpy", "list", "argument 'x'"],
      allow_success=True)
def call_list_arg():
    out = _simple_job()([[1, 2, 3], [4, 5, 6]], np.ones(3, F32))
    assert np.array_equal(out, [[2, 3, 4], [5, 6, 7]]), out


@case("TypeError", "ValueError", words=["ndarray", "numpy", "str", "argument 'x'"])
def call_string_arg():
    _simple_job()("abc", np.ones(3, F32))


@case("ValueError", words=["contiguous"], allow_success=True)
def call_non_contiguous():
    base = np.arange(12, dtype=F32).reshape(2, 6)
    x = base[:, ::2]
    assert not x.flags["C_CONTIGUOUS"]
    out = _simple_job()(x, np.zeros(3, F32))
    assert np.array_equal(out, x), ("non-contiguous input gave", out, "expected", x)


@case("ValueError", words=["contiguous"], allow_success=True)
def call_fortran_order():
    x = np.asfortranarray(np.arange(6, dtype=F32).reshape(2, 3))
    out = _simple_job()(x, np.zeros(3, F32))
    assert np.array_equal(out, x), ("fortran input gave", out, "expected", x)


@case("ValueError", words=["contiguous"], allow_success=True)
def call_transposed_view():
    x = np.arange(6, dtype=F32).reshape(3, 2).T
    out = _simple_job()(x, np.zeros(3, F32))
    assert np.array_equal(out, x), ("transposed view gave", out, "expected", x)


@case("ValueError", words=["contiguous", "writeable", "read-only"], allow_success=True)
def call_readonly_and_zero_stride():
    x = np.broadcast_to(np.arange(3, dtype=F32), (2, 3))  # zero stride, read-only
    out = _simple_job()(x, np.zeros(3, F32))
    assert np.array_equal(out, x), ("broadcast view gave", out, "expected", x)


@case("ValueError", "TypeError", words=["dtype", "object", "float32"])
def call_object_array():
    _simple_job()(np.array([[1, 2, 3], [4, 5, "x"]], dtype=object), np.ones(3, F32))


@case(allow_success=True)
def nan_and_inf_inputs_propagate():
    import torch

    x = np.array([[np.nan, 1, -np.inf], [np.inf, 0, 2], [-1, 0, 1]], F32)
    tx = torch.tensor(x)
    checks = [
        (lambda a: flow.nn.softmax(a), lambda t: torch.softmax(t, -1)),
        (lambda a: flow.math.sigmoid(a) + flow.math.tanh(a), lambda t: t.sigmoid() + t.tanh()),
        (lambda a: flow.math.reduce_sum(a, axis=1), lambda t: t.sum(1)),
        (lambda a: flow.math.reduce_mean(a, axis=0), lambda t: t.mean(0)),
        (lambda a: flow.math.square(a) * 2 - a, lambda t: t.square() * 2 - t),
    ]
    for of_fn, t_fn in checks:
        out = run_job(of_fn, P((3, 3)), args=[x])
        ref = t_fn(tx).numpy()
        assert np.array_equal(np.isnan(out), np.isnan(ref)), (out, ref)
        assert np.allclose(out[~np.isnan(ref)], ref[~np.isnan(ref)]), (out, ref)


@case(allow_success=True)
def relu_propagates_nan():
    x = np.array([np.nan, -1.0, 2.0, -np.inf], F32)
    for fn in (flow.nn.relu, flow.math.relu):
        out = run_job(fn, P((4,)), args=[x])
        # numpy.maximum(x, 0) and torch.relu keep NaN
        assert np.isnan(out[0]) and out[1] == 0 and out[2] == 2 and out[3] == 0, out


@case(allow_success=True)
def nan_in_training_does_not_crash():
    def body(l, g):
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(l, trainable_x(g))
        sgd().minimize(loss)
        return loss

    logits = np.full((2, 3), np.nan, F32)
    out = run_job(body, P((2,), flow.int32), P((2, 3)), type="train",
                  args=[np.array([0, 1], np.int32), logits])
    assert np.all(np.isnan(out)), out


@case("ZeroDivisionError", "ValueError", "RuntimeError", "TypeError", words=["zero", "divi"],
      allow_success=True)
def int_divide_by_zero_scalar():
    out = run_job(lambda a: a / 0, P((3,), flow.int32),
                  args=[np.array([1, 2, 3], np.int32)])
    assert out.shape == (3,), out


@case("ZeroDivisionError", "ValueError", "RuntimeError", "TypeError",
      words=["zero", "divi", "int32"], allow_success=True)
def int_divide_by_zero_blob():
    out = run_job(lambda a, b: flow.math.divide(a, b), P((3,), flow.int32), P((3,), flow.int32),
                  args=[np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32)])
    assert out.shape == (3,), out


@case("ValueError", "RuntimeError", "ArithmeticError", "TypeError", words=["overflow", "divi", "int32"],
      allow_success=True)
def int_min_divide_by_minus_one():
    out = run_job(lambda a, b: flow.math.divide(a, b), P((2,), flow.int32), P((2,), flow.int32),
                  args=[np.array([-2 ** 31, 4], np.int32), np.array([-1, 2], np.int32)])
    assert out.shape == (2,), out


@case("ZeroDivisionError", words=["zero", "scalar 0"], allow_success=True)
def float_divide_by_zero_gives_inf():
    out = run_job(lambda a: a / 0.0, P((3,)), args=[np.array([1, -1, 0], F32)])
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]), out


# ---------------------------------------------------------------- outside a job
def _outside_words():
    return ["global function", "global_function", "job", "outside"]


@case("RuntimeError", "TypeError", words=_outside_words())
def matmul_outside_job():
    flow.matmul(np.ones((2, 2), F32), np.ones((2, 2), F32))


@case("RuntimeError", words=_outside_words())
def get_variable_outside_job():
    flow.get_variable("v", shape=(2,))


@case("RuntimeError", words=_outside_words())
def constant_outside_job():
    flow.constant(1.0, shape=(2,))


@case("RuntimeError", words=_outside_words())
def minimize_outside_job():
    sgd().minimize(None)


@case("RuntimeError", "TypeError", words=_outside_words())
def watch_outside_job():
    flow.watch(np.ones(3), lambda x: None)


@case("RuntimeError", "TypeError", words=_outside_words())
def dense_outside_job():
    flow.layers.dense(np.ones((2, 3), F32), 4)


@case("RuntimeError", "TypeError", words=_outside_words() + ["blob"])
def blob_escaping_the_job():
    leaked = []

    def body(a):
        leaked.append(a)
        return a

    run_job(body, P((3,)))
    flow.math.relu(leaked[0])


# ---------------------------------------------------------------- train configuration
@case("RuntimeError", "ValueError", words=["minimize", "twice", "once", "already"])
def minimize_twice():
    def body(a):
        loss = trainable_x(a)
        sgd().minimize(loss)
        sgd(0.5).minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("RuntimeError", "ValueError", words=["minimize", "optimizer", "train"])
def train_job_without_minimize():
    run_job(lambda a: trainable_x(a), P((3,)), type="train")


# int8/32/64 losses train (through the cast's integer gradient, as in OneFlow 0.3); uint8
# does not.
@case("RuntimeError", "ValueError", "TypeError", words=["loss", "float", "uint8"])
def minimize_uint8_loss():
    def body(a):
        v = flow.get_variable("v", shape=(3,), initializer=flow.zeros_initializer())
        loss = flow.cast(a + v, flow.uint8)
        sgd().minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("RuntimeError", "ValueError", words=["loss", "variable", "trainable"])
def minimize_loss_without_variables():
    def body(a):
        loss = a * 2
        sgd().minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("TypeError", words=["minimize", "blob", "loss"])
def minimize_non_blob():
    def body(a):
        trainable_x(a)
        sgd().minimize(3.0)
        return a

    run_job(body, P((3,)), type="train")


@case("ValueError", words=["boundaries", "values", "empty", "scheduler"])
def scheduler_empty_lists():
    flow.optimizer.PiecewiseConstantScheduler([], [])


@case("ValueError", words=["boundaries", "values", "len"])
def scheduler_length_mismatch():
    flow.optimizer.PiecewiseConstantScheduler([1, 2], [0.1])


@case("ValueError", words=["boundaries", "sorted", "increasing"])
def scheduler_unsorted_boundaries():
    def body(a):
        loss = trainable_x(a)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([5, 2], [0.1, 0.2, 0.3]),
                           momentum=0).minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("TypeError", "ValueError", words=["values", "float", "str"], allow_success=True)
def scheduler_string_values():
    def body(a):
        loss = flow.get_variable("w", shape=(1,), dtype=flow.double,
                                 initializer=flow.zeros_initializer())
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], ["0.5"]),
                           momentum=0).minimize(loss)
        return loss

    out = [float(run_job(body, P((1,)), type="train")[0])]
    assert out == [0.0], out


@case("TypeError", "NotImplementedError", words=["scheduler", "lr"])
def sgd_without_scheduler():
    def body(a):
        loss = trainable_x(a)
        flow.optimizer.SGD(None, momentum=0).minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("TypeError", "ValueError", words=["momentum", "float"])
def sgd_momentum_string():
    flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum="0.9")


# ---------------------------------------------------------------- watch
@case("TypeError", words=["watch", "callable", "handler"])
def watch_none_handler():
    run_job(lambda a: (flow.watch(a, None), a)[1], P((3,)))


@case("TypeError", words=["watch", "callable", "handler"])
def watch_int_handler():
    run_job(lambda a: (flow.watch(a, 3), a)[1], P((3,)))


@case("TypeError", words=["watch", "blob"])
def watch_numpy_blob():
    run_job(lambda a: (flow.watch(np.ones(3), print), a)[1], P((3,)))


@case("TypeError", words=["watch_diff", "callable", "handler"])
def watch_diff_non_callable():
    def body(a):
        loss = trainable_x(a)
        flow.watch_diff(loss, "not callable")
        sgd().minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")


@case("RuntimeError", "ValueError", words=["watch_diff", "train", "predict"])
def watch_diff_in_predict_job():
    run_job(lambda a: (flow.watch_diff(a, print), a)[1], P((3,)))


@case("RuntimeError", "ValueError", words=["watch_diff", "diff", "gradient"], allow_success=True)
def watch_diff_on_blob_without_gradient():
    seen = []

    def body(a):
        loss = trainable_x(a)
        other = a * 3  # not on the path to the loss
        flow.watch_diff(other, lambda d: seen.append(np.array(d)))
        sgd().minimize(loss)
        return loss

    run_job(body, P((3,)), type="train")
    flow.sync_default_session()
    assert len(seen) == 1 and np.array_equal(seen[0], np.zeros(3)), seen


@case("ValueError", "RuntimeError", "TypeError", words=["handler", "argument", "callback"])
def watch_handler_wrong_arity():
    def handler(a, b):
        pass

    run_job(lambda a: (flow.watch(a, handler), a)[1], P((3,)))


@case("RuntimeError", "ValueError", words=["callback", "session", "clear", "inside"])
def clear_session_inside_callback():
    def handler(x):
        flow.clear_default_session()

    run_job(lambda a: (flow.watch(a, handler), a)[1], P((3,)))


@case("RuntimeError", "ValueError", words=["callback", "inside", "running", "call"])
def call_job_inside_callback():
    @flow.global_function()
    def inner(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x + 1

    def handler(x):
        inner(np.ones(3, F32))

    run_job(lambda a: (flow.watch(a, handler), a)[1], P((3,)))


@case("RuntimeError", words=["inside", "global function", "tracing", "nested"])
def call_job_inside_job_definition():
    @flow.global_function()
    def inner(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x + 1

    def body(a):
        inner(np.ones(3, F32))
        return a

    run_job(body, P((3,)))


# ---------------------------------------------------------------- callbacks / futures
@case("TypeError", words=["callback", "callable"])
def callback_none():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Callback[tp.Numpy]:
        return x

    job(np.ones(3, F32))(None)
    flow.sync_default_session()


@case("ValueError", words=["boom"])
def callback_raises_then_sync():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Callback[tp.Numpy]:
        return x

    def cb(y):
        raise ValueError("boom")

    job(np.ones(3, F32))(cb)
    flow.sync_default_session()


@case("ValueError", words=["boom"])
def future_get_twice_after_handler_error():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))):
        flow.watch(x, lambda b: (_ for _ in ()).throw(ValueError("boom")))
        return x

    fut = job(np.ones(3, F32))
    try:
        fut.get()
    except ValueError:
        pass
    fut.get()


# ---------------------------------------------------------------- sessions
@case("RuntimeError", "ValueError", words=["session", "clear", "defined"], allow_success=True)
def job_from_cleared_session():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2

    job(np.ones(3, F32))
    flow.clear_default_session()
    out = job(np.array([1, 2, 3], F32))
    assert np.array_equal(out, [2, 4, 6]), out


@case("ValueError", words=["name", "dup", "exists", "used", "my_op"])
def duplicate_op_names():
    run_job(lambda a: flow.math.relu(a, name="my_op") + flow.math.relu(a, name="my_op"), P((3,)))


@case("ValueError", words=["name", "job", "dup", "exists", "defined"], allow_success=True)
def two_functions_same_name():
    def make(k):
        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
            return x * k
        return job

    j1, j2 = make(1), make(2)
    a, b = j1(np.ones(3, F32)), j2(np.ones(3, F32))
    assert np.array_equal(a, [1, 1, 1]) and np.array_equal(b, [2, 2, 2]), (a, b)


# ---------------------------------------------------------------- huge shapes
@case("MemoryError", "ValueError", "RuntimeError", "OverflowError",
      words=["memory", "alloc", "large", "overflow", "bytes"])
def huge_placeholder():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1 << 20, 1 << 20))) -> tp.Numpy:
        return x

    job(np.ones((2, 2), F32))


@case("MemoryError", "ValueError", "RuntimeError", "OverflowError",
      words=["memory", "alloc", "large", "overflow", "bytes"])
def huge_variable():
    run_job(lambda a: flow.get_variable("big", shape=(1 << 22, 1 << 22)) + a, P((1,)))


@case("MemoryError", "ValueError", "RuntimeError", "OverflowError",
      words=["memory", "alloc", "large", "overflow", "bytes", "shape"])
def shape_element_count_overflows_int64():
    run_job(lambda a: flow.constant(1.0, shape=(1 << 40, 1 << 40)), P((1,)))


@case("MemoryError", "ValueError", "RuntimeError", "OverflowError",
      words=["memory", "alloc", "large", "overflow", "bytes"])
def huge_matmul_result():
    run_job(lambda a, b: flow.matmul(a, b), P((1 << 18, 1)), P((1, 1 << 18)))


@case("MemoryError", "ValueError", "RuntimeError", "OverflowError",
      words=["memory", "alloc", "large", "overflow", "bytes", "shape"])
def huge_reshape_dims():
    run_job(lambda a: flow.reshape(a, (1 << 62, 4)), P((4,)))


# ---------------------------------------------------------------- devices


@case("ValueError", words=["shorter than the device count"], same_session=False)
def split_axis_shorter_than_devices():
    flow.config.gpu_device_num(4)
    run_job(lambda a: a + 1, P((3,)))


@case("ValueError", words=["names device 64", "must be below 64"], same_session=False)
def placement_beyond_the_devices():
    flow.config.cpu_device_num(2)

    def body(a):
        with flow.scope.placement("cpu", "0:64-65"):
            return flow.math.relu(a)

    run_job(body, P((4,)))


@case("ValueError", words=["one per device"])
def mirrored_wrong_number_of_values():
    cfg = flow.FunctionConfig()
    cfg.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=cfg)
    def job(x: tp.ListNumpy.Placeholder((3,))) -> tp.ListNumpy:
        return x

    job([np.ones(3, F32), np.ones(3, F32)])  # one device: one value


@case("ValueError", words=["at most 3 elements", "(4,)"])
def list_numpy_value_larger_than_its_placeholder():
    @flow.global_function()
    def job(x: tp.ListNumpy.Placeholder((3,))) -> tp.ListNumpy:
        return x

    job([np.ones(4, F32)])


@case("ValueError", words=["mirrored blob"])
def mirrored_blob_in_the_consistent_view():
    # All-mirrored inputs make a mirrored op (OneFlow 0.3); mixing the views is refused.
    @flow.global_function()
    def job(x: tp.ListNumpy.Placeholder((3,))) -> tp.Numpy:
        return flow.math.add(x, flow.constant(1.0, shape=(3,)))

    job([np.ones(3, F32)])


@case("TypeError", words=["path must be a str"])
def checkpoint_save_path_not_a_string():
    run_job(lambda a: flow.get_variable("v", shape=(2,)) + a, P((1,)))
    flow.checkpoint.save(42)


@case("FileNotFoundError", words=["does not exist"])
def checkpoint_load_missing_path():
    flow.load_variables(flow.checkpoint.get("/tmp/should_not_exist_oneflow_ckpt"))


@case("ValueError", words=["shape must match"])
def load_variables_value_of_another_shape():
    run_job(lambda a: flow.get_variable("v", shape=(2,)) + a, P((1,)))
    flow.load_variables({"v": np.ones(3, F32)})


@case("ValueError", words=["not a variable"])
def load_variables_unknown_name_without_ignore_mismatch():
    run_job(lambda a: flow.get_variable("v", shape=(2,)) + a, P((1,)))
    flow.load_variables({"no_such_variable": np.ones(2, F32)}, ignore_mismatch=False)


@case("FileNotFoundError", words=["does not exist"])
def legacy_checkpoint_load_missing_path():
    flow.train.CheckPoint().load("/tmp/should_not_exist_oneflow_ckpt")


@case("ValueError", words=["beta1"])
def adam_beta_out_of_range():
    flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), beta1=1.5)


@case("ValueError", words=["RMSProp", "decay_rate"])
def rmsprop_decay_rate_above_one():
    flow.optimizer.RMSProp(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), decay_rate=1.5)


@case("ValueError", words=["machine_num(2)", "1 machine", "oneflow.distributed.launch"],
      same_session=False)
def two_machines():
    flow.config.machine_num(2)
    run_job(lambda a: a + 1, P((3,)))


# ================================================================ runner
def _tiny_job_ok():
    @flow.global_function()
    def tiny_after(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x * 2 + 1

    return bool(np.array_equal(tiny_after(np.array([1, 2], F32)), [3, 5]))


def _child(name):
    result = {}
    try:
        flow.clear_default_session()
        CASES[name].fn()
        try:
            flow.sync_default_session()  # errors of asynchronous calls surface here
        except BaseException as error:
            raise error
        result["raised"] = None
    except BaseException as error:  # noqa: B902 - we report everything
        result["raised"] = type(error).__name__
        result["mro"] = [c.__name__ for c in type(error).__mro__]
        result["msg"] = str(error)[:3000]
    try:
        result["same_session_ok"] = _tiny_job_ok()
    except BaseException as error:
        result["same_session_ok"] = False
        result["same_session_err"] = "%s: %s" % (type(error).__name__, str(error)[:500])
    try:
        flow.clear_default_session()
        flow.config.gpu_device_num(1)
        flow.enable_eager_execution(False)
        result["after_clear_ok"] = _tiny_job_ok()
    except BaseException as error:
        result["after_clear_ok"] = False
        result["after_clear_err"] = "%s: %s" % (type(error).__name__, str(error)[:500])
    sys.stdout.write("\nRESULT:" + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


def _run_in_subprocess(name):
    code = "import sys; sys.path.insert(0, %r); import test_bad_inputs as m; m._child(%r)" % (
        HERE, name)
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=TIMEOUT_S, cwd=HERE)
    except subprocess.TimeoutExpired as error:
        return {"hang": True, "stderr": (error.stderr or b"")[-2000:]
                if isinstance(error.stderr, str) else str(error.stderr)[-2000:]}
    result = {"rc": proc.returncode, "stderr": proc.stderr[-3000:]}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT:"):
            result.update(json.loads(line[len("RESULT:"):]))
    return result


# One child process per case, run by the case's own test: pytest-xdist spreads the cases over
# its workers and each test's time limit covers one child (running every case up front in each
# worker ran them all twice and could outlast the first test's limit on a loaded machine).
# Framework bugs this sweep found are fixed; a case that regresses is listed here with the bug
# (strict xfail, the assertion stays).
XFAIL = {}


def _params():
    for name in CASES:
        marks = []
        if name in XFAIL:
            marks.append(pytest.mark.xfail(strict=True, reason="BUG: " + XFAIL[name]))
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_bad_input(name):
    c = CASES[name]
    res = _run_in_subprocess(name)
    assert not res.get("hang"), "%s: hung for more than %d s; stderr: %s" % (
        name, TIMEOUT_S, res.get("stderr"))
    assert res.get("rc") == 0 and "raised" in res, (
        "%s: the process died (rc=%s, negative = signal); stderr tail:\n%s" % (
            name, res.get("rc"), res.get("stderr")))
    raised = res["raised"]
    if raised is None:
        assert c.allow_success, "%s: no exception raised (expected one of %s)" % (name, c.expect)
    else:
        assert raised != "AssertionError", "%s: wrong result: %s" % (name, res["msg"])
        assert c.expect and any(e in res["mro"] for e in c.expect), (
            "%s: raised %s(%r), expected one of %s" % (name, raised, res["msg"][:500], c.expect))
        assert res["msg"].strip(), "%s: %s with an empty message" % (name, raised)
        if c.words:
            msg = res["msg"].lower()
            assert any(w.lower() in msg for w in c.words), (
                "%s: message %r names none of %s" % (name, res["msg"][:500], c.words))
    assert res["same_session_ok"] or not c.same_session, "%s: a tiny job in the same session failed afterwards: %s" % (
        name, res.get("same_session_err"))
    assert res["after_clear_ok"], "%s: a tiny job after clear_default_session failed: %s" % (
        name, res.get("after_clear_err"))
