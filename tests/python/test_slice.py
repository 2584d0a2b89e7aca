"""flow.slice, flow.slice_v2 (steps, negative indices, None) and flow.slice_update: forward
against NumPy, gradients against finite differences, the multi-device pass (the axes a slice
keeps whole split), integer dtypes and errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op

SLICE_V2_CASES = [
    ((5, 6), [(1, 4, 1), (None, None, 2)], np.s_[1:4, ::2]),
    ((5, 6), [(None, None, -1), (-4, -1, 1)], np.s_[::-1, -4:-1]),
    ((5, 6), [(4, 0, -2)], np.s_[4:0:-2]),
    ((4, 3, 6), [(None, None, None), (1, None, None), (-1, 1, -3)], np.s_[:, 1:, -1:1:-3]),
    ((4, 3, 6), [(0, 100, 1), (-100, 2, 1)], np.s_[0:100, -100:2]),  # bounds clamp
    # steps longer than the axis, up to the int64 limits, take one element
    ((5, 6), [(1, None, 2**63 - 1), (None, None, -2**63)], np.s_[1::2**63 - 1, ::-2**63]),
    ((5, 6), [(-2**63, 2**63 - 1, 7), (2**63 - 1, -2**63, -(2**63 - 1))],
     np.s_[-2**63:2**63 - 1:7, 2**63 - 1:-2**63:-(2**63 - 1)]),
]


@pytest.mark.parametrize("shape, tuples, index", SLICE_V2_CASES, ids=str)
def test_slice_v2(shape, tuples, index):
    check_op(lambda x: flow.slice_v2(x, tuples), lambda x: x[index], [shape], flow.float64,
             weight_output=True)


def test_empty_slice_concatenated():
    check_op(lambda x: flow.concat([flow.slice_v2(x, [(2, 2, 1)]), x], axis=0),
             lambda x: np.concatenate([x[2:2], x]), [(4, 6)], flow.float64, weight_output=True)


def test_slice_begin_size():
    check_op(lambda x: flow.slice(x, [None, 1, -3], [None, 2, -1]),
             lambda x: x[:, 1:3, -3:], [(3, 4, 5)], flow.float64, weight_output=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float32])
def test_slice_dtypes(dtype):
    x = (np.arange(5 * 66) % 100).reshape(5, 66).astype(dtype)
    check_op(lambda x: flow.slice_v2(x, [(None, None, None), (3, 60, 3)]), lambda x: x[:, 3:60:3],
             inputs=[x])


def test_slice_large_float32():
    # Whole-row runs bigger than the parallel grain: memcpy per row, rows over the threads.
    check_op(lambda x: flow.slice_v2(x, [(10, 290, 1), (5, 250, 1)]), lambda x: x[10:290, 5:250],
             [(300, 256)], flow.float32, check_backward=False, multi_device=False)


def _slice_update_reference(x, update, index):
    y = x.copy()
    y[index] = update
    return y


def test_slice_update():
    tuples = [(None, None, None), (1, 5, 2)]
    check_op(lambda x, u: flow.slice_update(x, u, tuples),
             lambda x, u: _slice_update_reference(x, u, np.s_[:, 1:5:2]),
             [(3, 6), (3, 2)], flow.float64, weight_output=True)
    check_op(lambda x, u: flow.slice_update(x, u, [(-1, None, -1)]),
             lambda x, u: _slice_update_reference(x, u, np.s_[::-1]),
             [(4, 2), (4, 2)], flow.float64, weight_output=True, multi_device=False)
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    u = -np.ones((3, 1), np.int32)
    check_op(lambda x, u: flow.slice_update(x, u, [(None, None, None), (2, 3, 1)]),
             lambda x, u: _slice_update_reference(x, u, np.s_[:, 2:3]), inputs=[x, u])


def _trace(body, shape=(3, 4)):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return body(x)

    return job(np.zeros(shape, np.float32))


@pytest.mark.parametrize("body, error, pattern", [
    (lambda x: flow.slice_v2(x, [(0, 2, 0)]), ValueError, r"slice_v2: slice step of axis 0 is 0"),
    (lambda x: flow.slice_v2(x, [(0, 2, 1)] * 3), ValueError, r"slice_v2: 3 slice tuples .* rank 2"),
    (lambda x: flow.slice_v2(x, [(0, 2)]), ValueError, r"must be \(start, stop, step\)"),
    (lambda x: flow.slice_v2(x, [(0.5, 2, 1)]), TypeError, r"slice_v2: a slice entry must be an int"),
    (lambda x: flow.slice(x, [0, 4], [1, 1]), ValueError, r"slice: begin\[1\] = 4 is out of range"),
    (lambda x: flow.slice(x, [0, 1], [1, 4]), ValueError, r"slice: size\[1\] = 4 from begin 1"),
    (lambda x: flow.slice(x, [0], [1]), ValueError, r"slice: begin must be a list of 2"),
    (lambda x: flow.slice_update(x, flow.slice_v2(x, [(0, 2, 1)]), [(0, 1, 1)]), ValueError,
     r"slice_update: update \(2, 4\) must have the shape of the slice of x \(3, 4\), which is "
     r"\(1, 4\)"),
])
def test_slice_errors(body, error, pattern):
    with pytest.raises(error, match=pattern):
        _trace(body)
    flow.clear_default_session()
