"""flow.cast between float32, float64 and int32; gradients flow through float-to-float casts."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op, run_op

FLOW = {np.float32: flow.float32, np.float64: flow.float64, np.int32: flow.int32}
VALUES = np.array([[1.7, -1.7, 2.5], [-0.3, 0.0, 100.25]])
TYPES = [np.float32, np.float64, np.int32]


@pytest.mark.parametrize("source", TYPES, ids=lambda t: t.__name__)
@pytest.mark.parametrize("target", TYPES, ids=lambda t: t.__name__)
def test_cast_forward(source, target):
    x = VALUES.astype(source)
    # astype truncates toward zero, as a C++ static_cast does.
    out, _ = check_op(lambda x: flow.cast(x, FLOW[target]), lambda x: x.astype(target),
                      inputs=[x], check_backward=False)
    assert out.dtype == np.dtype(target)
    np.testing.assert_array_equal(out, x.astype(target))


def test_cast_to_same_dtype_is_identity():
    check_op(lambda x: flow.cast(x, flow.float64), lambda x: x, [(2, 3)])


@pytest.mark.parametrize("source, target", [(np.float64, np.float32), (np.float32, np.float64)],
                         ids=["float64_to_float32", "float32_to_float64"])
def test_cast_gradient_is_cast_back(source, target):
    x = VALUES.astype(source)
    out, gradients = run_op(lambda x: flow.cast(x, FLOW[target]), [x], differentiable=[0])
    assert out.dtype == np.dtype(target)
    assert gradients[0].dtype == np.dtype(source)
    np.testing.assert_array_equal(gradients[0], np.ones_like(x))


def test_gradient_through_float_casts():
    """x (float64) -> float32 -> square -> float64: the gradient is 2x up to float32 rounding."""
    x = VALUES.astype(np.float64)
    weight = np.linspace(0.5, 2.0, x.size).reshape(x.shape)

    def body(x, weight):
        return flow.cast(flow.math.square(flow.cast(x, flow.float32)), flow.float64) * weight

    out, gradients = run_op(body, [x, weight], differentiable=[0])
    np.testing.assert_allclose(out, x * x * weight, rtol=1e-6)
    np.testing.assert_allclose(gradients[0], 2 * x * weight, rtol=1e-6)
