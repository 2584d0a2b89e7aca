"""flow.constant: a blob of one repeated value, float or integer."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op


@pytest.mark.parametrize("dtype, np_dtype, value", [
    (flow.float32, np.float32, 2.5),
    (flow.float64, np.float64, -0.125),
    (flow.int32, np.int32, 7),
    (flow.int64, np.int64, -3),
], ids=["float32", "float64", "int32", "int64"])
def test_constant_alone(dtype, np_dtype, value):
    out, _ = check_op(lambda: flow.constant(value, dtype=dtype, shape=(2, 3)),
                      lambda: np.full((2, 3), value, dtype=np_dtype), inputs=[])
    assert out.dtype == np.dtype(np_dtype)


def test_constant_default_shape_and_dtype():
    out, _ = check_op(lambda: flow.constant(1.5), lambda: np.full((1,), 1.5, np.float32), inputs=[])
    assert out.shape == (1,)


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_constant_in_expression(dtype):
    """x * c + c: the constant broadcasts, and x's gradient is the constant."""
    def body(x):
        c = flow.constant(3.0, dtype=x.dtype, shape=(1, 4))
        return x * c + c

    _, gradients = check_op(body, lambda x: x * 3.0 + 3.0, [(2, 4)], dtype)
    if dtype == flow.float64:
        np.testing.assert_array_equal(gradients[0], np.full((2, 4), 3.0))


def test_constant_rejects_non_scalar_value():
    with pytest.raises(TypeError, match="scalar"):
        check_op(lambda: flow.constant([1.0, 2.0], shape=(2,)), lambda: np.ones(2), inputs=[])


def test_constant_0d():
    out, _ = check_op(lambda: flow.constant(4.0, dtype=flow.float64, shape=()),
                      lambda: np.float64(4.0), inputs=[])
    assert out.shape == ()
