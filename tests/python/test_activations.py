"""flow.nn.relu, flow.math.relu / sigmoid / tanh / square."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACTIVATIONS = {
    "nn.relu": (flow.nn.relu, lambda x: np.maximum(x, 0)),
    "math.relu": (flow.math.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (flow.math.sigmoid, _sigmoid),
    "tanh": (flow.math.tanh, np.tanh),
    "square": (flow.math.square, np.square),
}


@DTYPES
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name, dtype):
    flow_fn, numpy_fn = ACTIVATIONS[name]
    check_op(flow_fn, numpy_fn, [(3, 5)], dtype, low=-3.0, high=3.0)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_3d(name):
    flow_fn, numpy_fn = ACTIVATIONS[name]
    check_op(flow_fn, numpy_fn, [(2, 3, 2)], flow.float64, low=-2.0, high=2.0)


def test_relu_gradient_is_a_mask():
    x = np.array([[-2.0, -0.5, 0.5, 2.0]])
    out, gradients = check_op(flow.nn.relu, lambda x: np.maximum(x, 0), inputs=[x])
    np.testing.assert_array_equal(out, [[0.0, 0.0, 0.5, 2.0]])
    np.testing.assert_array_equal(gradients[0], [[0.0, 0.0, 1.0, 1.0]])


def test_sigmoid_saturates_without_overflow():
    x = np.array([-100.0, 0.0, 100.0])
    out, _ = check_op(flow.math.sigmoid, _sigmoid, inputs=[x], check_backward=False)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0], atol=1e-12)
