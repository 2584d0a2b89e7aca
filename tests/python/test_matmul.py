"""flow.matmul: every transpose_a / transpose_b combination, float32 and float64."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

M, K, N = 3, 4, 5


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul(transpose_a, transpose_b, dtype):
    a_shape = (K, M) if transpose_a else (M, K)
    b_shape = (N, K) if transpose_b else (K, N)

    def reference(a, b):
        return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)

    out, _ = check_op(
        lambda a, b: flow.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b),
        reference, [a_shape, b_shape], dtype, weight_output=True,
    )
    assert out.shape == (M, N)


def test_matmul_alpha():
    check_op(lambda a, b: flow.matmul(a, b, alpha=2.5), lambda a, b: 2.5 * a @ b,
             [(2, 3), (3, 2)], flow.float64, weight_output=True)
