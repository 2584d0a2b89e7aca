"""flow.math.in_top_k against a NumPy reference: k, ties, int32 / int64 targets, float32 /
float64 predictions, targets out of range, non-finite predictions; every declared SBP signature
on 2-4 devices (check_op); the errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


def numpy_in_top_k(targets, predictions, k):
    out = np.zeros(targets.shape, np.int8)
    for i, (target, row) in enumerate(zip(targets, predictions)):
        if 0 <= target < row.size and np.all(np.isfinite(row)):
            out[i] = int(np.sum(row > row[target]) < k)
    return out


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("target_dtype, dtype", [(np.int32, np.float32), (np.int64, np.float64)])
def test_in_top_k_random(k, target_dtype, dtype):
    rng = np.random.RandomState(k)
    predictions = rng.randint(0, 6, size=(7, 9)).astype(dtype)  # small integers: many ties
    targets = rng.randint(0, 9, size=(7,)).astype(target_dtype)
    out, _ = check_op(lambda t, p: flow.math.in_top_k(t, p, k),
                      lambda t, p: numpy_in_top_k(t, p, k), inputs=[targets, predictions],
                      differentiable=[])
    assert out.dtype == np.int8 and set(np.unique(out)) <= {0, 1}


def test_in_top_k_oneflow_example_and_edge_cases():
    targets = np.array([3, 1, 2, 9, -1, 0, 1, 0], np.int32)
    predictions = np.array([
        [0.0, 1.0, 2.0, 3.0],
        [3.0, 2.0, 1.0, 0.0],
        [1.0, 2.0, 2.0, 0.0],      # a tie with the best: in the top 1
        [1.0, 2.0, 3.0, 4.0],      # target past the classes
        [1.0, 2.0, 3.0, 4.0],      # negative target
        [1.0, np.inf, 0.0, 0.0],   # a non-finite prediction
        [np.nan, 5.0, 0.0, 0.0],
        [7.0, 7.0, 7.0, 7.0],      # all tied
    ], np.float32)
    out, _ = check_op(lambda t, p: flow.math.in_top_k(t, p, 1),
                      lambda t, p: numpy_in_top_k(t, p, 1),
                      inputs=[targets, predictions], differentiable=[], multi_device=False)
    np.testing.assert_array_equal(out, [1, 0, 1, 0, 0, 0, 0, 1])
    out, _ = check_op(lambda t, p: flow.math.in_top_k(t, p, 0), lambda t, p: 0 * out,
                      inputs=[targets, predictions], differentiable=[], multi_device=False)
    assert not out.any()


def _in_top_k_error(targets_shape, predictions_shape, k, targets_dtype=flow.int32):
    flow.clear_default_session()

    @flow.global_function()
    def job(t: tp.Numpy.Placeholder(targets_shape, dtype=targets_dtype),
            p: tp.Numpy.Placeholder(predictions_shape)) -> tp.Numpy:
        return flow.math.in_top_k(t, p, k)

    job(np.zeros(targets_shape, flow.convert_oneflow_dtype_to_numpy_dtype(targets_dtype)),
        np.zeros(predictions_shape, np.float32))


@pytest.mark.parametrize("targets_shape, predictions_shape, k, targets_dtype, error, message", [
    ((3,), (3,), 1, flow.int32, ValueError,
     r"in_top_k: targets must have shape \(N,\) and predictions \(N, classes\), got \(3,\) and "
     r"\(3,\)"),
    ((3,), (4, 5), 1, flow.int32, ValueError, r"got \(3,\) and \(4, 5\)"),
    ((3,), (3, 5), -1, flow.int32, ValueError, r"in_top_k: k must be non-negative, got -1"),
    ((3,), (3, 5), 1.0, flow.int32, TypeError, r"in_top_k: k must be an int"),
    ((3,), (3, 5), 1, flow.float32, TypeError, r"in_top_k"),
])
def test_in_top_k_errors(targets_shape, predictions_shape, k, targets_dtype, error, message):
    with pytest.raises(error, match=message):
        _in_top_k_error(targets_shape, predictions_shape, k, targets_dtype)
