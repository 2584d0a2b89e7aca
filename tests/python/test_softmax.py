"""flow.nn.softmax over the last axis, and over other axes (through flow.transpose)."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])


def numpy_softmax(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@DTYPES
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (1, 1)], ids=str)
def test_softmax(shape, dtype):
    # sum(softmax(x)) is constant, so a ones seed would only test a zero gradient.
    out, _ = check_op(flow.nn.softmax, numpy_softmax, [shape], dtype, low=-3.0, high=3.0,
                      weight_output=True)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)


def test_softmax_explicit_last_axis():
    check_op(lambda x: flow.nn.softmax(x, axis=-1), numpy_softmax, [(2, 4)], weight_output=True)


def test_softmax_large_logits_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out, _ = check_op(flow.nn.softmax, numpy_softmax, inputs=[x], check_backward=False)
    assert np.all(np.isfinite(out))


def numpy_softmax_axis(x, axis):
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


@DTYPES
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_other_axis_of_rank3(axis, dtype):
    # Goes through flow.transpose (axis moved last and back); the gradient flows through both.
    out, _ = check_op(lambda x: flow.nn.softmax(x, axis=axis),
                      lambda x: numpy_softmax_axis(x, axis), [(3, 4, 5)], dtype, low=-3.0,
                      high=3.0, weight_output=True)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-5)
