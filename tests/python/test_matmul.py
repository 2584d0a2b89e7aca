"""flow.matmul: every transpose_a / transpose_b combination, float32 and float64; batch matmul
(same rank > 2), broadcast matmul (a rank > 2, b 2-D), and the rank and shape errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, random_inputs

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


def _swap_last_axes(x):
    return np.swapaxes(x, -1, -2)


@pytest.mark.parametrize("batch_dims", [(2,), (2, 3)], ids=["rank3", "rank4"])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_batch_matmul(batch_dims, transpose_a, transpose_b):
    a_shape = batch_dims + ((K, M) if transpose_a else (M, K))
    b_shape = batch_dims + ((N, K) if transpose_b else (K, N))

    def reference(a, b):
        return 1.5 * np.matmul(_swap_last_axes(a) if transpose_a else a,
                               _swap_last_axes(b) if transpose_b else b)

    out, _ = check_op(
        lambda a, b: flow.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                                 alpha=1.5),
        reference, [a_shape, b_shape], flow.float64, weight_output=True,
    )
    assert out.shape == batch_dims + (M, N)


def test_batch_matmul_float32():
    check_op(lambda a, b: flow.matmul(a, b), np.matmul, [(4, M, K), (4, K, N)], flow.float32)


@pytest.mark.parametrize("a_shape", [(2, M, K), (2, 3, M, K)], ids=["rank3", "rank4"])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_broadcast_matmul(a_shape, transpose_b):
    # b's gradient sums over every leading axis of a.
    b_shape = (N, K) if transpose_b else (K, N)
    out, _ = check_op(
        lambda a, b: flow.matmul(a, b, transpose_b=transpose_b),
        lambda a, b: np.matmul(a, b.T if transpose_b else b),
        [a_shape, b_shape], flow.float64, weight_output=True,
    )
    assert out.shape == a_shape[:-1] + (N,)


def _add_matmul(a_shape, b_shape, **kwargs):
    flow.clear_default_session()
    a, b = random_inputs([a_shape, b_shape], flow.float32)

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder(a_shape), b: tp.Numpy.Placeholder(b_shape)) -> tp.Numpy:
        return flow.matmul(a, b, **kwargs)

    return job(a, b)


@pytest.mark.parametrize("a_shape, b_shape", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (2, 3, 4)),
                                              ((2, 2, 3), (1, 2, 3, 4))], ids=str)
def test_matmul_rejects_unsupported_ranks(a_shape, b_shape):
    with pytest.raises(ValueError, match="matmul: unsupported ranks"):
        _add_matmul(a_shape, b_shape)


def test_matmul_shape_errors():
    with pytest.raises(ValueError, match=r"batch dimensions.*a.shape\[0\]=2 != b.shape\[0\]=3"):
        _add_matmul((2, 3, 4), (3, 4, 5))
    with pytest.raises(ValueError, match=r"a.shape\[2\]=4 != b.shape\[1\]=5"):
        _add_matmul((2, 3, 4), (2, 5, 6))
    with pytest.raises(ValueError, match="transpose_a must be false"):
        _add_matmul((2, 4, 3), (4, 5), transpose_a=True)
    with pytest.raises(ValueError, match=r"a.shape\[1\]=3 != b.shape\[0\]=4"):
        _add_matmul((2, 3), (4, 5))
