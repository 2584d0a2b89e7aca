"""flow.layers.dense: relu(x @ W.T + b) with variables "<name>-weight" (units, in) and
"<name>-bias" (units,)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op

IN, UNITS = 4, 3


def _dense(name, kernel_initializer, bias_initializer, activation=flow.nn.relu):
    return lambda x: flow.layers.dense(
        x, UNITS, activation=activation, kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer, name=name)


def test_dense_constant_initializers():
    """With W = 0.25 everywhere and b = -0.1: y = relu(0.25 * sum(x) - 0.1) in each unit."""
    x = np.array([[1.0, 2.0, -0.5, 0.3], [-1.0, -2.0, 0.5, 0.1], [0.2, 0.2, 0.2, 0.2]])

    def reference(x):
        return np.maximum(x @ np.full((UNITS, IN), 0.25).T - 0.1, 0.0)

    out, gradients = check_op(
        _dense("dense_const", flow.constant_initializer(0.25), flow.constant_initializer(-0.1)),
        reference, inputs=[x], weight_output=True)
    assert out.shape == (3, UNITS)
    assert np.all(out[1] == 0.0) and np.all(out[0] > 0)  # both sides of the relu


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_dense_random_weights(dtype):
    """Reads the initial "<name>-weight" and "<name>-bias" and checks relu(x @ W.T + b)."""
    np_dtype = np.float32 if dtype == flow.float32 else np.float64
    kernel_initializer = flow.random_uniform_initializer(-1, 1)
    bias_initializer = flow.random_uniform_initializer(-0.2, 0.2)

    flow.clear_default_session()
    values = {}

    @flow.global_function()
    def initial(x: tp.Numpy.Placeholder((2, IN), dtype=dtype)) -> tp.Numpy:
        out = flow.layers.dense(x, UNITS, kernel_initializer=kernel_initializer,
                                bias_initializer=bias_initializer, name="dense1")
        flow.watch(flow.get_variable("dense1-weight", shape=(UNITS, IN), dtype=dtype),
                   lambda w: values.__setitem__("weight", np.array(w)))
        flow.watch(flow.get_variable("dense1-bias", shape=(UNITS,), dtype=dtype),
                   lambda b: values.__setitem__("bias", np.array(b)))
        return out

    initial(np.zeros((2, IN), np_dtype))
    weight, bias = values["weight"], values["bias"]
    assert weight.shape == (UNITS, IN) and bias.shape == (UNITS,)
    assert weight.dtype == np_dtype
    assert np.all(np.abs(weight) <= 1) and np.all(np.abs(bias) <= 0.2)
    assert len(np.unique(weight)) == weight.size  # really random, not a constant

    out, _ = check_op(
        _dense("dense1", kernel_initializer, bias_initializer),
        lambda x: np.maximum(x @ weight.T + bias, 0.0), [(5, IN)], dtype, low=-2.0, high=2.0,
        weight_output=True,
    )
    assert np.any(out == 0) and np.any(out > 0)


def test_dense_without_activation_and_bias():
    check_op(
        lambda x: flow.layers.dense(x, UNITS, use_bias=False, name="linear",
                                    kernel_initializer=flow.constant_initializer(0.5)),
        lambda x: x @ np.full((IN, UNITS), 0.5), [(2, IN)], weight_output=True)


def test_dense_variable_names():
    flow.clear_default_session()
    names = {}

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, IN))) -> tp.Numpy:
        out = flow.layers.dense(x, UNITS, name="fc7")
        names["weight"] = flow.get_variable("fc7-weight", shape=(UNITS, IN))
        names["bias"] = flow.get_variable("fc7-bias", shape=(UNITS,))
        return out

    assert job(np.ones((2, IN), np.float32)).shape == (2, UNITS)
    assert tuple(names["weight"].shape) == (UNITS, IN)
    assert tuple(names["bias"].shape) == (UNITS,)
    assert names["weight"].op_name == "fc7-weight"
    assert names["bias"].op_name == "fc7-bias"


def test_dense_units_numpy_int_and_bad_values():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.layers.dense(x, np.int64(4), kernel_initializer=flow.ones_initializer())

    np.testing.assert_allclose(job(np.ones((2, 3), np.float32)), np.full((2, 4), 3.0))
    for units in (True, 0, 2.0):
        flow.clear_default_session()

        @flow.global_function()
        def bad(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            return flow.layers.dense(x, units)

        with pytest.raises(ValueError, match="dense: units must be a positive int, got %r"
                                             % (units,)):
            bad(np.ones((2, 3), np.float32))
