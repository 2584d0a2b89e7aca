"""flow.pad (constant), flow.pad_grad, flow.reflection_pad2d and flow.replication_pad2d:
forward against NumPy / PyTorch, gradients against finite differences, the multi-device pass,
integer dtypes and errors."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


@pytest.mark.parametrize("shape, paddings, value", [
    ((3, 4), [(1, 2), (0, 3)], 0.0),
    ((2, 3, 4), [(0, 0), (2, 1), (1, 0)], 1.5),
    ((2, 3, 4), [(0, 0), (0, 0), (0, 0)], -2.0),
])
def test_pad(shape, paddings, value):
    check_op(lambda x: flow.pad(x, paddings, constant_value=value),
             lambda x: np.pad(x, paddings, constant_values=value), [shape], flow.float64,
             weight_output=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float32])
def test_pad_dtypes(dtype):
    x = (np.arange(2 * 3 * 5) % 50).reshape(2, 3, 5).astype(dtype)
    check_op(lambda x: flow.pad(x, [(0, 0), (1, 1), (2, 0)], constant_value=7),
             lambda x: np.pad(x, [(0, 0), (1, 1), (2, 0)], constant_values=7), inputs=[x])


def test_pad_grad_is_the_inner_slice():
    check_op(lambda x: flow.pad_grad(x, [(1, 0), (2, 1)]), lambda x: x[1:, 2:-1], [(4, 6)],
             flow.float64, multi_device=False)


@pytest.mark.parametrize("padding", [[2, 1, 1, 2], 1, [0, 0, 0, 0]])
def test_reflection_pad2d(padding):
    torch_padding = padding if isinstance(padding, int) else tuple(padding)
    check_op(lambda x: flow.reflection_pad2d(x, padding),
             lambda x: torch.nn.functional.pad(torch.from_numpy(x), _four(torch_padding),
                                               mode="reflect").numpy(),
             [(2, 2, 3, 4)], flow.float64, weight_output=True)


@pytest.mark.parametrize("padding", [[2, 1, 3, 0], 2])
def test_replication_pad2d(padding):
    check_op(lambda x: flow.replication_pad2d(x, padding),
             lambda x: torch.nn.functional.pad(torch.from_numpy(x), _four(padding),
                                               mode="replicate").numpy(),
             [(2, 2, 3, 4)], flow.float64, weight_output=True)


def _four(padding):
    return (padding,) * 4 if isinstance(padding, int) else tuple(padding)


def test_reflection_pad2d_float32_matches_torch():
    x = np.random.RandomState(0).randn(2, 3, 17, 19).astype(np.float32)
    check_op(lambda x: flow.reflection_pad2d(x, [3, 5, 4, 2]),
             lambda x: torch.nn.functional.pad(torch.from_numpy(x), (3, 5, 4, 2),
                                               mode="reflect").numpy(),
             inputs=[x], check_backward=False, multi_device=False)


def _trace(body, shape=(1, 1, 3, 4), dtype=flow.float32):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape, dtype=dtype)) -> tp.Numpy:
        return body(x)

    return job(np.zeros(shape, flow.convert_oneflow_dtype_to_numpy_dtype(dtype)))


@pytest.mark.parametrize("body, error, pattern", [
    (lambda x: flow.pad(x, [(1, 1)] * 3), ValueError, r"pad: paddings has 3 pairs but x"),
    (lambda x: flow.pad(x, [(1, 1), (1, 1), (1, 1), (-1, 0)]), ValueError,
     r"pad: paddings of axis 3 are \(-1, 0\); paddings must be non-negative"),
    (lambda x: flow.pad(x, [(1, 1), 1, (1, 1), (1, 1)]), ValueError, r"pad: paddings\[1\] must be"),
    (lambda x: flow.pad(x, "same"), ValueError, r"pad: paddings must be a list"),
    (lambda x: flow.reflection_pad2d(x, [1, 1, 3, 0]), ValueError,
     r"reflection_pad2d: padding \[1, 1, 3, 0\] does not fit x \(1, 1, 3, 4\)"),
    (lambda x: flow.reflection_pad2d(x, [1, 1]), ValueError, r"reflection_pad2d: padding must be"),
    (lambda x: flow.reflection_pad2d(flow.reshape(x, (3, 4)), 1), ValueError,
     r"reflection_pad2d: x must be a 4-d NCHW blob"),
])
def test_pad_errors(body, error, pattern):
    with pytest.raises(error, match=pattern):
        _trace(body)
    flow.clear_default_session()
