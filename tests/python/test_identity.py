"""flow.identity: same values, gradient passes through unchanged."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_identity(dtype):
    check_op(flow.identity, lambda x: x, [(3, 4)], dtype, weight_output=True)


def test_identity_int32_forward():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out, _ = check_op(flow.identity, lambda x: x, inputs=[x])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x)


def test_identity_gradient_is_ones():
    _, gradients = check_op(flow.identity, lambda x: x, [(2, 2)])
    np.testing.assert_array_equal(gradients[0], np.ones((2, 2)))
