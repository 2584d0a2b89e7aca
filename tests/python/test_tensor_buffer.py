"""flow.tensor_to_tensor_buffer / flow.tensor_buffer_to_tensor on a blob of the job: the buffer's
tensors are x's last instance_dims axes (OneFlow 0.3's test_tensor_buffer_ops), read back whole,
flattened or cast; bad instance_dims, a mismatching instance_shape and a buffer given to an
ordinary op raise naming the op."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def _run(body, x, dtype=flow.float32):
    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=dtype)) -> tp.Numpy:
        return body(b)

    return job(x)


def test_round_trip_gives_the_input_back():
    x = np.random.RandomState(0).rand(16, 24, 32, 36).astype(np.float32)

    def body(b):
        buffer = flow.tensor_to_tensor_buffer(b, instance_dims=2)
        assert buffer.shape == (16, 24) and buffer.instance_shape == (32, 36)
        return flow.tensor_buffer_to_tensor(buffer, dtype=flow.float32, instance_shape=[32, 36])

    np.testing.assert_array_equal(_run(body, x), x)


def test_instance_shape_may_regroup_the_elements_and_dtype_casts():
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)

    def body(b):
        buffer = flow.tensor_to_tensor_buffer(b, instance_dims=2)
        return flow.tensor_buffer_to_tensor(buffer, dtype=flow.float32, instance_shape=(12,))

    out = _run(body, x, dtype=flow.int32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x.reshape(2, 12).astype(np.float32))


@pytest.mark.parametrize("instance_dims", [0, 3, -1, 1.5, True])
def test_instance_dims_must_leave_a_buffer_axis(instance_dims):
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"tensor_to_tensor_buffer: instance_dims must be an int "
                                         r"in \[1, 3\)"):
        _run(lambda b: flow.tensor_buffer_to_tensor(
            flow.tensor_to_tensor_buffer(b, instance_dims), flow.float32, [4]), x)


def test_instance_shape_must_hold_the_tensors_elements():
    x = np.zeros((2, 3, 4), np.float32)
    message = (r"tensor_buffer_to_tensor: the buffer's tensors have shape \(3, 4\) "
               r"\(12 elements\); instance_shape \(3, 5\)")
    with pytest.raises(ValueError, match=message):
        _run(lambda b: flow.tensor_buffer_to_tensor(
            flow.tensor_to_tensor_buffer(b, 2), flow.float32, [3, 5]), x)


def test_a_buffer_is_not_a_blob_for_other_ops():
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(TypeError, match=r"relu: .*tensor buffer"):
        _run(lambda b: flow.math.relu(flow.tensor_to_tensor_buffer(b, 1)), x)
