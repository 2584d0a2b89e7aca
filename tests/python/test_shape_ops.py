"""flow.concat, stack, split, flatten, expand_dims, squeeze, zeros/ones(_like), constant_like,
broadcast_like, reshape_like and transpose's batch axis: forward against NumPy, gradients
against finite differences, the multi-device pass, integer dtypes and error messages."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    shapes = {0: [(2, 3), (1, 3), (3, 3)], 1: [(2, 1), (2, 4), (2, 2)], -1: [(2, 1), (2, 4), (2, 2)]}
    check_op(lambda a, b, c: flow.concat([a, b, c], axis=axis),
             lambda a, b, c: np.concatenate([a, b, c], axis=axis), shapes[axis], flow.float64,
             weight_output=True)


def test_concat_3d_middle_axis_and_int_dtypes():
    check_op(lambda a, b: flow.concat([a, b], axis=1), lambda a, b: np.concatenate([a, b], 1),
             [(2, 3, 4), (2, 2, 4)], flow.float64, weight_output=True)
    for dtype in (np.int32, np.int64, np.int8, np.uint8):
        a = np.arange(24).reshape(2, 3, 4).astype(dtype)
        b = np.arange(8).reshape(2, 1, 4).astype(dtype)
        check_op(lambda a, b: flow.concat([a, b], axis=1), lambda a, b: np.concatenate([a, b], 1),
                 inputs=[a, b])


def test_concat_large_rows_float32():
    # Bigger than the parallel grain: rows split over the compute threads.
    check_op(lambda a, b: flow.concat([a, b], axis=1), lambda a, b: np.concatenate([a, b], 1),
             [(300, 200), (300, 50)], flow.float32, check_backward=False, multi_device=False)


def test_stack_and_split():
    check_op(lambda a, b: flow.stack([a, b], axis=1), lambda a, b: np.stack([a, b], axis=1),
             [(2, 3), (2, 3)], flow.float64, weight_output=True, multi_device=False)
    check_op(lambda x: flow.split(x, 3, axis=1)[1] * 2 + flow.split(x, [1, -1, 2], axis=1)[2],
             lambda x: np.split(x, 3, axis=1)[1] * 2 + np.split(x, [1, 4], axis=1)[2],
             [(2, 6)], flow.float64, weight_output=True, multi_device=False)


def test_flatten_expand_dims_squeeze():
    check_op(flow.flatten, lambda x: x.reshape(-1), [(2, 3, 4)], flow.float64, multi_device=False)
    check_op(lambda x: flow.flatten(x, start_dim=1, end_dim=2),
             lambda x: x.reshape(2, 12, 5), [(2, 3, 4, 5)], flow.float64, check_backward=False)
    check_op(lambda x: flow.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), [(2, 3)],
             flow.float64, multi_device=False)
    check_op(lambda x: flow.squeeze(x, axis=[1]), lambda x: np.squeeze(x, 1), [(3, 1, 2, 1)],
             flow.float64, multi_device=False)
    check_op(flow.squeeze, np.squeeze, [(3, 1, 2, 1)], flow.float64, multi_device=False)
    # Every axis squeezed: shape (1,), as OneFlow 0.3's squeeze op gives (not numpy's 0-d).
    check_op(lambda x: flow.squeeze(x, axis=[0, 1, 2]), lambda x: x.reshape(1), [(1, 1, 1)],
             flow.float64, multi_device=False)
    check_op(flow.squeeze, lambda x: x.reshape(1), [(1, 1)], flow.float64, multi_device=False)


def test_constant_blobs():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        ints = flow.ones((2, 3), dtype=flow.int32) + flow.zeros_like(x, dtype=flow.int32)
        floats = flow.ones_like(x) * 2 + flow.constant_like(x, 0.5) + flow.zeros((2, 3))
        return floats + flow.cast(ints, flow.float32)

    np.testing.assert_allclose(job(np.zeros((2, 3), np.float32)), np.full((2, 3), 3.5))


def test_broadcast_like_and_reshape_like():
    check_op(lambda x, like: flow.broadcast_like(x, like, broadcast_axes=[0]),
             lambda x, like: np.broadcast_to(x, like.shape), [(1, 3), (4, 3)], flow.float64,
             differentiable=[0], weight_output=True)
    check_op(lambda x, like: flow.reshape_like(x, like), lambda x, like: x.reshape(like.shape),
             [(2, 6), (3, 4)], flow.float64, differentiable=[0], multi_device=False)


def test_transpose_batch_axis():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3, 4))) -> tp.Numpy:
        moved = flow.transpose(x, [1, 0, 2])
        kept = flow.transpose(x, [1, 0, 2], batch_axis_non_change=True)
        assert (moved.batch_axis, kept.batch_axis) == (1, 0)
        return moved

    assert job(np.zeros((2, 3, 4), np.float32)).shape == (3, 2, 4)


def _trace(body, shapes, dtype=flow.float32):
    flow.clear_default_session()
    annotations = {"x%d" % i: tp.Numpy.Placeholder(s, dtype=dtype) for i, s in enumerate(shapes)}
    source = "def job(%s):\n    return body(%s)\n" % (", ".join(annotations), ", ".join(annotations))
    namespace = {"body": body}
    exec(source, namespace)
    function = namespace["job"]
    function.__annotations__ = dict(annotations, **{"return": tp.Numpy})
    job = flow.global_function()(function)
    return job(*[np.zeros(s, flow.convert_oneflow_dtype_to_numpy_dtype(dtype)) for s in shapes])


@pytest.mark.parametrize("body, shapes, error, pattern", [
    (lambda a, b: flow.concat([a, b], axis=1), [(2, 3), (3, 3)], ValueError,
     r"concat: input 1 has shape \(3, 3\) but input 0 has \(2, 3\).*except on axis 1"),
    (lambda a, b: flow.concat([a, b], axis=2), [(2, 3), (2, 3)], ValueError,
     r"concat: axis 2 is out of range for a tensor of rank 2"),
    (lambda a, b: flow.concat([a, flow.cast(b, flow.int32)]), [(2, 3), (2, 3)], TypeError,
     r"concat: input 1 is int32 but input 0 is float32"),
    (lambda a: flow.squeeze(a, axis=[0]), [(2, 3)], ValueError, r"squeeze: axis 0 .* size 2"),
    (lambda a: flow.expand_dims(a, 3), [(2, 3)], ValueError, r"expand_dims: axis 3 is out of range"),
    (lambda a: flow.split(a, 4, axis=1), [(2, 3)], ValueError, r"split: cannot split axis 1"),
    (lambda a, b: flow.stack([a, b]), [(2, 3), (3, 2)], ValueError, r"stack: input 1 has shape"),
    (lambda a: flow.flatten(a, 2, 1), [(2, 3, 4)], ValueError, r"flatten: start_dim 2 comes after"),
])
def test_errors(body, shapes, error, pattern):
    with pytest.raises(error, match=pattern):
        _trace(body, shapes)
    flow.clear_default_session()


def test_concat_values_is_the_deprecated_name_of_inputs():
    check_op(lambda a, b: flow.concat(values=[a, b], axis=1),
             lambda a, b: np.concatenate([a, b], 1), [(2, 3), (2, 2)], flow.float64)
    with pytest.raises(TypeError, match="not both"):
        check_op(lambda a, b: flow.concat([a], values=[b]), lambda a, b: a, [(2, 3), (2, 2)],
                 flow.float64)
