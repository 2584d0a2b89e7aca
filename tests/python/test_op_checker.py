"""The checker itself must fail on wrong references, or every op test could pass vacuously."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op, finite_difference_gradients


def test_finite_differences_of_a_known_function():
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    gradients = finite_difference_gradients(lambda x: x ** 3, [x], [0], 1.0)
    np.testing.assert_allclose(gradients[0], 3 * x ** 2, rtol=1e-7)


def test_detects_a_wrong_forward():
    with pytest.raises(AssertionError, match="forward"):
        check_op(flow.math.square, lambda x: x * x * 1.001, [(2, 3)])


def test_detects_a_wrong_gradient():
    """The reference agrees with square at the input point but its slope is larger by 0.5."""
    x0 = np.array([[0.3, -0.7, 1.1]])
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_op(flow.math.square, lambda x: x * x + 0.5 * (x - x0), inputs=[x0])


def test_detects_a_wrong_shape():
    with pytest.raises(AssertionError, match="shape"):
        check_op(flow.identity, lambda x: x.reshape(-1), [(2, 3)])


def test_detects_a_wrong_dtype():
    with pytest.raises(AssertionError, match="dtype"):
        check_op(flow.identity, lambda x: x.astype(np.float32), [(2, 3)], flow.float64)


def test_weighted_output_detects_a_softmax_gradient_error():
    """With a ones seed the softmax gradient is zero whatever the op; a weighted seed is not."""
    def wrong_softmax(x):
        e = np.exp(x)
        return e / e.sum(axis=-1, keepdims=True) * (1 + 0.1 * (x - x0))

    x0 = np.array([[0.1, 0.5, -0.3]])
    with pytest.raises(AssertionError, match="gradient"):
        check_op(flow.nn.softmax, wrong_softmax, inputs=[x0], weight_output=True)


def test_returns_forward_and_gradients():
    out, gradients = check_op(flow.math.square, np.square, inputs=[np.array([1.0, -2.0])])
    np.testing.assert_allclose(out, [1.0, 4.0])
    np.testing.assert_allclose(gradients[0], [2.0, -4.0])
