"""flow.cast between float32, float64 and int32; gradients flow through casts (to integers
and back too, as in OneFlow 0.3)."""
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


@pytest.mark.parametrize("int_type", [flow.int8, flow.int32, flow.int64], ids=str)
def test_gradient_through_an_integer_product(int_type):
    """OneFlow 0.3 carries gradients through casts to integers and back (test_multiply's
    int8/int32/int64 cases): d(cast(x) * cast(y))/dx = cast(y), in the integer type."""
    import oneflow.typing as tp

    x = np.array([[3, -2], [1, 4]], dtype=np.float32)
    y = np.array([[-5, 2], [6, 0]], dtype=np.float32)
    seen = {}
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(a: tp.Numpy.Placeholder((2, 2)), b: tp.Numpy.Placeholder((2, 2))) -> tp.Numpy:
        va = flow.get_variable("va", shape=(1,), initializer=flow.zeros_initializer())
        a = a + va
        a_int, b_int = flow.cast(a, int_type), flow.cast(b, int_type)
        out = flow.cast(flow.math.multiply(a_int, b_int), flow.float)
        flow.watch(out, lambda o: seen.setdefault("out", o.numpy()))
        flow.watch_diff(a_int, lambda d: seen.setdefault("a_int", d.numpy()))
        flow.watch_diff(a, lambda d: seen.setdefault("a", d.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5])).minimize(out)
        return va

    assert job(x, y)[0] == 0.0
    np.testing.assert_array_equal(seen["out"], x * y)
    assert seen["a_int"].dtype == np.dtype(int_type.numpy_dtype)
    np.testing.assert_array_equal(seen["a_int"], y)
    np.testing.assert_array_equal(seen["a"], y)
    # The variable's gradient is the sum of y, scaled by 1 / elem_cnt(loss) (OneFlow's rule).
    np.testing.assert_allclose(job(x, y), [-0.5 * y.sum() / 4], rtol=1e-6)


def test_integer_loss_trains():
    """An int32 loss (test_tril's int32 case): seeded with integer ones."""
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(a: tp.Numpy.Placeholder((3, 3), dtype=flow.int32)) -> tp.Numpy:
        v = flow.get_variable("v", shape=(1,), initializer=flow.constant_initializer(2.0))
        out = flow.math.tril(a + flow.cast(v, flow.int32), 0)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.9])).minimize(out)
        return flow.cast(v, flow.float)

    a = np.ones((3, 3), np.int32)
    assert job(a)[0] == 2.0
    # d out / d v = number of kept (lower-triangle) elements = 6, scaled by 1/9.
    np.testing.assert_allclose(job(a)[0], 2.0 - 0.9 * 6 / 9, rtol=1e-6)
