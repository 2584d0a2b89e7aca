"""flow.argwhere and flow.where(condition): the coordinates of the non-zero elements, a result
whose row count depends on the data, against numpy.argwhere."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import dtypes

pytestmark = pytest.mark.timeout(120)


def _input(shape, dtype, seed):
    x = np.random.RandomState(seed).randint(0, 3, size=shape) * (np.arange(
        int(np.prod(shape))).reshape(shape) % 4 == 0)
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [(10,), (6, 4), (3, 5, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64])
@pytest.mark.parametrize("index_type", [flow.int32, flow.int64], ids=str)
def test_argwhere_matches_numpy(shape, dtype, index_type):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape, dtype=dtypes.check(dtype))) -> tp.Numpy:
        return flow.argwhere(x, dtype=index_type)

    for seed in range(3):  # a different count of non-zeros each call
        x = _input(shape, dtype, seed)
        out = job(x)
        assert out.dtype == np.dtype(index_type.numpy_dtype)
        np.testing.assert_array_equal(out, np.argwhere(x))


def test_all_zero_input_gives_no_rows():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.where(x)

    assert job(np.zeros((2, 3), np.float32)).shape == (0, 2)


def test_mirrored_devices_each_get_their_own_rows():
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=config)
    def job(x: tp.ListNumpy.Placeholder((4, 3))) -> tp.ListNumpy:
        with flow.scope.placement("cpu", "0:0-1"):
            return flow.where(x)

    xs = [_input((4, 3), np.float32, 1), _input((4, 3), np.float32, 2)]
    xs[1][:] = 0
    xs[1][3, 2] = 5
    out = job(xs)
    assert len(out) == 2
    for got, x in zip(out, xs):
        np.testing.assert_array_equal(got, np.argwhere(x))


def test_local_blob_result():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((5,), dtype=flow.int32)):
        return flow.argwhere(x)

    x = np.array([0, 3, 0, 0, 1], np.int32)
    np.testing.assert_array_equal(job(x).get().numpy(), [[1], [4]])


def test_where_needs_both_or_neither_of_x_and_y():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((5,))):
        return flow.where(x > 0, x)

    with pytest.raises(ValueError, match="both x and y, or neither"):
        job(np.ones((5,), np.float32))
