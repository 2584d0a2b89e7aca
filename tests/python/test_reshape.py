"""flow.reshape, including an inferred (-1) dimension."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
CASES = [
    ((2, 3, 4), (6, 4)),
    ((2, 3, 4), (4, -1)),
    ((2, 3, 4), (-1,)),
    ((6,), (2, 1, 3)),
    ((3, 4), (-1, 2, 2)),
]


@DTYPES
@pytest.mark.parametrize("in_shape, shape", CASES, ids=lambda s: str(s))
def test_reshape(in_shape, shape, dtype):
    out, _ = check_op(lambda x: flow.reshape(x, shape), lambda x: np.reshape(x, shape),
                      [in_shape], dtype, weight_output=True)
    assert out.shape == np.empty(in_shape).reshape(shape).shape


def test_reshape_static_shape_of_blob():
    seen = {}

    def body(x):
        y = flow.reshape(x, (3, -1))
        seen["shape"] = tuple(y.shape)
        return y

    check_op(body, lambda x: x.reshape(3, -1), [(2, 6)])
    assert seen["shape"] == (3, 4)
