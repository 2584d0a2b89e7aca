"""flow.math.reduce_sum / reduce_mean: axis None, int, list, negative; keepdims."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], (1,), [0, 1, 2]]
REDUCTIONS = {
    "reduce_sum": (flow.math.reduce_sum, np.sum),
    "reduce_mean": (flow.math.reduce_mean, np.mean),
}


@DTYPES
@pytest.mark.parametrize("keepdims", [False, True], ids=["dropdims", "keepdims"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduce(name, axis, keepdims, dtype):
    flow_fn, numpy_fn = REDUCTIONS[name]
    numpy_axis = tuple(axis) if isinstance(axis, list) else axis
    out, _ = check_op(
        lambda x: flow_fn(x, axis=axis, keepdims=keepdims),
        lambda x: numpy_fn(x, axis=numpy_axis, keepdims=keepdims),
        [(2, 3, 4)], dtype, weight_output=True,
    )
    # check_op compares shapes with numpy's: a full reduction without keepdims gives a 0-d blob.
    reduced = range(3) if axis is None else [a % 3 for a in np.atleast_1d(axis)]
    assert out.size == 24 // np.prod([(2, 3, 4)[a] for a in reduced])


def test_reduce_sum_full_gradient_is_ones():
    _, gradients = check_op(flow.math.reduce_sum, np.sum, [(3, 2)])
    np.testing.assert_array_equal(gradients[0], np.ones((3, 2)))


def test_reduce_mean_full_gradient_is_one_over_count():
    _, gradients = check_op(flow.math.reduce_mean, np.mean, [(3, 2)])
    np.testing.assert_allclose(gradients[0], np.full((3, 2), 1 / 6), rtol=1e-12)


def test_reduce_axis_out_of_range():
    import oneflow.typing as tp

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.math.reduce_sum(x, axis=2)

    with pytest.raises(ValueError, match="axis 2"):
        job(np.zeros((2, 3), np.float32))
