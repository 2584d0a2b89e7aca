"""flow.nn.softmax and flow.nn.logsoftmax over the last axis and over any other axis (the
kernels take the axis natively, no transposes)."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])


def numpy_softmax(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@DTYPES
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (1, 1), (3, 40), (2, 17)], ids=str)
def test_softmax(shape, dtype):
    # sum(softmax(x)) is constant, so a ones seed would only test a zero gradient.
    out, _ = check_op(flow.nn.softmax, numpy_softmax, [shape], dtype, low=-3.0, high=3.0,
                      weight_output=True)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)


def test_softmax_explicit_last_axis():
    check_op(lambda x: flow.nn.softmax(x, axis=-1), numpy_softmax, [(2, 4)], weight_output=True)


def test_softmax_large_logits_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out, _ = check_op(flow.nn.softmax, numpy_softmax, inputs=[x], check_backward=False)
    assert np.all(np.isfinite(out))


def numpy_softmax_axis(x, axis):
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


@DTYPES
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_other_axis_of_rank3(axis, dtype):
    out, _ = check_op(lambda x: flow.nn.softmax(x, axis=axis),
                      lambda x: numpy_softmax_axis(x, axis), [(3, 4, 5)], dtype, low=-3.0,
                      high=3.0, weight_output=True)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-5)


def numpy_log_softmax_axis(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@DTYPES
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_logsoftmax(axis, dtype):
    check_op(lambda x: flow.nn.logsoftmax(x, axis=axis),
             lambda x: numpy_log_softmax_axis(x, -1 if axis is None else axis), [(3, 4, 5)],
             dtype, low=-3.0, high=3.0, weight_output=True)


@DTYPES
@pytest.mark.parametrize("shape", [(3, 40), (2, 17)], ids=str)
def test_logsoftmax_rows_longer_than_a_vector(shape, dtype):
    # The gradient's row sums run in 64-byte vectors with a scalar tail.
    check_op(flow.nn.logsoftmax, lambda x: numpy_log_softmax_axis(x, -1), [shape], dtype,
             low=-3.0, high=3.0, weight_output=True)


def test_logsoftmax_large_logits_are_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out, _ = check_op(flow.nn.logsoftmax, lambda x: numpy_log_softmax_axis(x, -1), inputs=[x],
                      check_backward=False)
    assert np.all(np.isfinite(out))


@DTYPES
@pytest.mark.parametrize("classes", [1, 2, 10, 31, 32, 33, 40, 64, 72, 100, 129])
def test_short_rows_match_numpy(classes, dtype):
    # Rows of under 32 classes go 64 rows at a time through a transposed buffer, longer rows a
    # vector's lanes of rows (16 floats, 8 doubles) at a time, each with a vector tail (lengths
    # not multiples of 16 included): 130 rows (whole blocks and groups, then a partial one),
    # logits up to +-50, a row of large logits, a row with -inf entries (exp gives 0 there,
    # log_softmax -inf) and a row with a NaN (all NaN, as in numpy and torch).
    from typing import Tuple

    import oneflow.typing as tp

    np_type = np.float32 if dtype == flow.float32 else np.float64
    x = np.random.RandomState(classes).uniform(-50, 50, (130, classes)).astype(np_type)
    x[70] += 1e4
    x[100, 1::2] = -np.inf
    x[129, classes // 2] = np.nan
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=dtype)) -> Tuple[tp.Numpy, tp.Numpy]:
        return flow.nn.softmax(b), flow.nn.logsoftmax(b)

    probabilities, logs = job(x)
    assert np.isnan(probabilities[129]).all() and np.isnan(logs[129]).all()
    probabilities, logs, x = probabilities[:129], logs[:129], x[:129]
    exact = x.astype(np.float64)
    shifted = exact - exact.max(axis=1, keepdims=True)
    expected_logs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    tolerance = 2e-6 if dtype == flow.float32 else 1e-12
    np.testing.assert_allclose(probabilities, np.exp(expected_logs), rtol=tolerance,
                               atol=tolerance)
    # x - logsumexp(x) cancels: its error scales with the row's largest magnitude (1e4 in row 70).
    np.testing.assert_array_equal(np.isinf(logs), np.isinf(expected_logs))
    finite = np.isfinite(expected_logs)
    scale = 1 + np.abs(np.where(np.isfinite(x), x, 0)).max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):  # -inf - -inf where both are -inf
        assert np.all((np.abs(logs - expected_logs) <= tolerance * scale)[finite])


def test_softmax_and_logsoftmax_match_torch_float32():
    import torch

    x = np.random.RandomState(3).randn(4, 6, 7).astype(np.float32)
    for axis in (0, 1, 2):
        out, _ = check_op(lambda b: flow.nn.softmax(b, axis=axis), lambda a: torch.softmax(
            torch.tensor(a), axis).numpy(), inputs=[x], multi_device=False)
        out, _ = check_op(lambda b: flow.nn.logsoftmax(b, axis=axis), lambda a: torch.log_softmax(
            torch.tensor(a), axis).numpy(), inputs=[x], multi_device=False)


@pytest.mark.parametrize("fn", [flow.nn.softmax, flow.nn.logsoftmax], ids=["softmax", "logsoftmax"])
def test_softmax_axis_out_of_range_raises(fn):
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return fn(x, axis=2)

    with pytest.raises(ValueError, match="axis 2 is out of range"):
        job(np.zeros((2, 3), np.float32))
