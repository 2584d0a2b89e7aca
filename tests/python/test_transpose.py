"""flow.transpose: several permutations of ranks 2-4, every dtype, perm=None, and errors."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op, random_inputs

CASES = [
    ((3, 5), (1, 0)),
    ((3, 5), (0, 1)),
    ((2, 3, 4), (0, 2, 1)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (1, 0, 2)),
    ((2, 3, 4), (2, 1, 0)),
    ((2, 3, 4, 5), (0, 2, 1, 3)),
    ((2, 3, 4, 5), (3, 1, 2, 0)),
    ((2, 1, 4, 3), (1, 3, 0, 2)),
]


@pytest.mark.parametrize("shape, perm", CASES, ids=str)
def test_transpose(shape, perm):
    out, _ = check_op(lambda x: flow.transpose(x, perm=perm), lambda x: np.transpose(x, perm),
                      [shape], flow.float64, weight_output=True)
    assert out.shape == tuple(shape[axis] for axis in perm)


@pytest.mark.parametrize("dtype", [flow.float32, flow.int8, flow.int32, flow.int64, flow.uint8],
                         ids=["float32", "int8", "int32", "int64", "uint8"])
def test_transpose_dtypes(dtype):
    np_dtype = flow.convert_oneflow_dtype_to_numpy_dtype(dtype)
    x = (np.arange(2 * 33 * 40) % 97).astype(np_dtype).reshape(2, 33, 40)
    check_op(lambda x: flow.transpose(x, [2, 0, 1]), lambda x: np.transpose(x, [2, 0, 1]),
             inputs=[x])
    check_op(lambda x: flow.transpose(x, [1, 0, 2]), lambda x: np.transpose(x, [1, 0, 2]),
             inputs=[x])


def test_transpose_large_matrix_float32():
    # Bigger than a tile and than the parallel grain, with sizes that are not tile multiples.
    check_op(lambda x: flow.transpose(x, [1, 0]), lambda x: x.T, [(300, 250)], flow.float32,
             check_backward=False)


def test_transpose_default_perm_reverses_axes():
    check_op(flow.transpose, lambda x: np.transpose(x), [(2, 3, 4)], flow.float64,
             weight_output=True)


def test_transpose_in_a_chain_gets_the_gradient_of_the_inverse():
    perm = (2, 0, 3, 1)
    inverse = tuple(int(i) for i in np.argsort(perm))
    check_op(lambda x: flow.transpose(flow.transpose(x, perm) * 2.0, inverse),
             lambda x: x * 2.0, [(2, 3, 4, 5)], flow.float64, weight_output=True)


def _add_transpose(shape, perm, **kwargs):
    flow.clear_default_session()
    x = random_inputs([shape], flow.float32)[0]

    @flow.global_function()
    def job(x: flow.typing.Numpy.Placeholder(shape)) -> flow.typing.Numpy:
        return flow.transpose(x, perm, **kwargs)

    return job(x)


@pytest.mark.parametrize("perm", [(0, 1), (0, 1, 1), (0, 1, 3), (-4, 0, 1), (-1, 0, 2)],
                         ids=str)
def test_transpose_rejects_what_is_not_a_permutation(perm):
    with pytest.raises(ValueError, match=r"perm \[.*\].*not a permutation.*\(2, 3, 4\)"):
        _add_transpose((2, 3, 4), perm)


def test_negative_perm_axes_count_from_the_end_as_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    flow.clear_default_session()

    @flow.global_function()
    def job(v: flow.typing.Numpy.Placeholder((2, 3, 4))) -> flow.typing.Numpy:
        return flow.transpose(v, (-1, 0, -2))

    np.testing.assert_array_equal(job(x), np.transpose(x, (-1, 0, -2)))


def test_transpose_argument_errors():
    with pytest.raises(TypeError, match="transpose: perm must be a sequence of ints"):
        _add_transpose((2, 3), 1)
    with pytest.raises(TypeError, match="transpose: perm must be a sequence of ints"):
        _add_transpose((2, 3), (1.5, 0))
    with pytest.raises(NotImplementedError, match="conjugate"):
        _add_transpose((2, 3), (1, 0), conjugate=True)
    # batch_axis_non_change only keeps the result's batch_axis (test_shape_ops.py).
    _add_transpose((2, 3), (1, 0), batch_axis_non_change=True)
