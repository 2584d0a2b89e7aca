"""flow.identity and flow.cast_to_static_shape: same values, gradient passes through unchanged."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_identity(dtype):
    check_op(flow.identity, lambda x: x, [(3, 4)], dtype, weight_output=True)


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_cast_to_static_shape_of_a_static_blob_is_a_copy(dtype):
    """flow.cast_to_static_shape on dynamic blobs: test_dynamic_shapes.py."""
    check_op(flow.cast_to_static_shape, lambda x: x, [(3, 4)], dtype, weight_output=True)


def test_identity_int32_forward():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out, _ = check_op(flow.identity, lambda x: x, inputs=[x])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x)


def test_identity_gradient_is_ones():
    _, gradients = check_op(flow.identity, lambda x: x, [(2, 2)])
    np.testing.assert_array_equal(gradients[0], np.ones((2, 2)))


def test_copy_moves_a_blob_to_the_current_placement():
    """flow.copy (OneFlow 0.3): a copy made on the devices of the current placement; values
    and the gradient come back through the boxing between the two placements."""
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.cpu_device_num(3)
    seen = {}

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            v = flow.get_variable("v", (4, 3), initializer=flow.zeros_initializer())
            y = x + v
        flow.watch_diff(y, lambda d: seen.setdefault("dy", d))
        with flow.scope.placement("cpu", "0:1-2"):
            z = flow.copy(y)
            loss = flow.math.reduce_sum(z * z)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        assert z.placement.device_names != y.placement.device_names
        return z

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(job(x), x)
    np.testing.assert_array_equal(seen["dy"], 2 * x)


def test_cpu_placements_may_name_devices_beyond_the_configured_count():
    """OneFlow 0.3 scripts place data readers on cpu "0:0-1" next to one GPU (Wide & Deep's
    num_dataloader_thread_per_gpu): CPU device ids are not bounded by the configured count."""
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.gpu_device_num(1)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-1"):
            y = flow.copy(x) * 2.0 + 1.0
            assert y.placement.device_names == ["0:0-1"], y.placement.device_names
        return flow.identity(y)

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(job(x), x * 2 + 1)
