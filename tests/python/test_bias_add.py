"""flow.nn.bias_add: bias along axis 1 (NCHW style, the default) or the last axis (NHWC)."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])


@DTYPES
def test_bias_add_2d(dtype):
    check_op(flow.nn.bias_add, lambda x, b: x + b[np.newaxis, :], [(3, 4), (4,)], dtype,
             weight_output=True)


@DTYPES
def test_bias_add_channels_first(dtype):
    check_op(flow.nn.bias_add, lambda x, b: x + b[np.newaxis, :, np.newaxis],
             [(2, 3, 4), (3,)], dtype, weight_output=True)


def test_bias_add_channels_last():
    check_op(lambda x, b: flow.nn.bias_add(x, b, data_format="NHWC"),
             lambda x, b: x + b, [(2, 3, 4), (4,)], flow.float64, weight_output=True)
