"""Mirrored arguments whose devices get arrays of different shapes in one call.

OneFlow 0.3 lets a ListNumpy placeholder's devices take arrays of different shapes, each within
the declared bound (same rank, no more elements): each device runs the job on its own shape
(test_unary_elementwise_ops' test_1n2c_mirror_dynamic_*, test_ccrelu). Such a call runs a
specialization whose input op is dynamic: every device's registers carry its own shape."""
from typing import Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def _mirrored_config():
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())
    config.default_data_type(flow.float)
    return config


def _arrays(rng, *shapes):
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]


def test_oneflow_0_3_mirror_dynamic_elementwise():
    """test_unary_elementwise_ops.test_1n2c_mirror_dynamic_abs/acos, as written for 0.3."""
    flow.config.gpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def abs_job(a: tp.ListNumpy.Placeholder((5, 2))):
        return flow.math.abs(a)

    @flow.global_function(function_config=_mirrored_config())
    def acos_job(a: tp.ListNumpy.Placeholder((5, 2))):
        return flow.math.acos(a)

    x1, x2 = _arrays(np.random.RandomState(0), (3, 1), (4, 2))
    y1, y2 = abs_job([x1, x2]).get().numpy_list()
    np.testing.assert_array_equal(y1, np.absolute(x1))
    np.testing.assert_array_equal(y2, np.absolute(x2))
    y1, y2 = acos_job([x1, x2]).get().numpy_list()
    np.testing.assert_allclose(y1, np.arccos(x1), rtol=1e-6)
    np.testing.assert_allclose(y2, np.arccos(x2), rtol=1e-6)


@pytest.mark.parametrize("devices", [2, 3])
def test_each_device_runs_on_its_own_shape(devices):
    """Softmax, a reduction over axis 1 and a full reduction, per device, over calls whose shapes
    change (and come back, reusing the kernels made for them)."""
    flow.config.cpu_device_num(devices)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4))) -> Tuple[tp.ListNumpy, tp.ListNumpy]:
        first_column = flow.slice_v2(x, [(None, None, None), (0, 1, 1)])
        sums = flow.math.reduce_sum(flow.nn.softmax(x * 2.0 + 1.0), axis=1, keepdims=True)
        return sums * first_column, flow.math.reduce_mean(x)

    rng = np.random.RandomState(devices)
    shapes = [[(3, 4), (5, 4), (1, 4)], [(2, 4), (6, 4), (6, 4)], [(3, 4), (5, 4), (1, 4)],
              [(2, 12), (4, 6), (3, 2)]]
    for call in shapes:
        values = _arrays(rng, *call[:devices])
        rows, means = job(values)
        for value, row, mean in zip(values, rows, means):
            e = np.exp(2 * value + 1)
            expected = (e / e.sum(1, keepdims=True)).sum(1, keepdims=True) * value[:, :1]
            np.testing.assert_allclose(row, expected, rtol=1e-5)
            np.testing.assert_allclose(mean, [value.mean()], rtol=1e-5)


def test_training_sums_the_gradients_of_each_devices_shape(sgd):
    """A train step on per-device arrays of different shapes: the variable's gradient is the sum
    over the devices of each device's own gradient (numpy's formula), step after step."""
    flow.config.cpu_device_num(2)

    @flow.global_function(type="train", function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4))) -> tp.ListNumpy:
        w = flow.get_variable("w", shape=(4, 3), initializer=flow.ones_initializer())
        h = flow.matmul(x, w)
        sgd(0.01).minimize(flow.math.reduce_sum(h * h))
        return h

    rng = np.random.RandomState(0)
    w = np.ones((4, 3))
    for call in [[(3, 4), (5, 4)], [(2, 4), (6, 4)], [(3, 4), (5, 4)]]:
        values = _arrays(rng, *call)
        results = job(values)
        gradient = np.zeros_like(w)
        for value, result in zip(values, results):
            np.testing.assert_allclose(result, value @ w, rtol=1e-5)
            gradient += value.T @ (2 * (value @ w))
        w -= 0.01 * gradient
        np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), w, rtol=1e-5)


def test_watch_and_watch_diff_give_each_devices_value():
    flow.config.cpu_device_num(2)
    watched, diffs = [], []

    @flow.global_function(type="train", function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4)), y: tp.ListNumpy.Placeholder((6, 4))):
        w = flow.get_variable("w", shape=(4,), initializer=flow.ones_initializer())
        h = x * w + y
        flow.watch(h, lambda blob: watched.append(blob.numpy_list()))
        flow.watch_diff(h, lambda blob: diffs.append(blob.numpy_list()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(flow.math.reduce_mean(h * h))

    rng = np.random.RandomState(1)
    for _ in range(3):
        xs, ys = _arrays(rng, (3, 4), (5, 4)), _arrays(rng, (3, 4), (5, 4))
        w = flow.get_all_variables()["w"].numpy()
        job(xs, ys)
        for x, y, value, diff in zip(xs, ys, watched[-1], diffs[-1]):
            np.testing.assert_allclose(value, x * w + y, rtol=1e-6)
            np.testing.assert_allclose(diff, 2 * (x * w + y) / x.size, rtol=1e-5)
    assert len(watched) == len(diffs) == 3


def test_argwhere_on_each_devices_shape():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4))) -> tp.ListNumpy:
        return flow.argwhere(x > 0)

    values = _arrays(np.random.RandomState(2), (3, 4), (5, 4))
    for value, result in zip(values, job(values)):
        np.testing.assert_array_equal(result, np.argwhere(value > 0))


def test_results_that_do_not_concatenate_come_one_by_one():
    """tp.Numpy and LocalBlob.numpy() concatenate the devices' values along axis 0: that works
    when they agree after it, and otherwise says to take them one by one."""
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def as_numpy(x: tp.ListNumpy.Placeholder((6, 4))) -> tp.Numpy:
        return flow.math.relu(x)

    @flow.global_function(function_config=_mirrored_config())
    def as_local(x: tp.ListNumpy.Placeholder((6, 4))):
        return flow.math.relu(x)

    rng = np.random.RandomState(3)
    rows = _arrays(rng, (3, 4), (5, 4))
    np.testing.assert_array_equal(as_numpy(rows), np.maximum(np.concatenate(rows), 0))
    mixed = _arrays(rng, (3, 4), (4, 5))
    with pytest.raises(ValueError, match=r"\(3, 4\), \(4, 5\), which do not concatenate.*"
                                         r"ListNumpy"):
        as_numpy(mixed)
    local = as_local(mixed).get()
    for value, part in zip(mixed, local.numpy_list()):
        np.testing.assert_array_equal(part, np.maximum(value, 0))
    np.testing.assert_array_equal(local.numpy(1), np.maximum(mixed[1], 0))
    with pytest.raises(ValueError, match="numpy_list"):
        local.numpy()


def test_consistent_use_of_per_device_shapes_is_refused():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4))) -> tp.Numpy:
        with flow.scope.consistent_view():
            return flow.cast_to_current_logical_view(x)

    values = _arrays(np.random.RandomState(4), (3, 4), (5, 4))
    with pytest.raises(ValueError, match="cast_from_mirrored.*shape differs per device.*"
                                         "return it as oneflow.typing.ListNumpy"):
        job(values)
    # The declared shapes still run the consistent job, and so do smaller arrays of one shape
    # (a job traced for that shape, since the dynamic job does not compile).
    full = _arrays(np.random.RandomState(5), (6, 4), (6, 4))
    np.testing.assert_array_equal(job(full), np.concatenate(full))
    smaller = _arrays(np.random.RandomState(6), (2, 4), (2, 4))
    np.testing.assert_array_equal(job(smaller), np.concatenate(smaller))


@pytest.mark.parametrize("devices", [1, 2])
def test_an_empty_array_is_a_blob_without_rows(devices):
    # OneFlow 0.3's test_scatter_nd_empty_indices: no indices scatter nothing.
    flow.config.cpu_device_num(devices)

    @flow.global_function(function_config=_mirrored_config())
    def job(indices: tp.ListNumpy.Placeholder((8, 1), dtype=flow.int32),
            updates: tp.ListNumpy.Placeholder((8, 3))) -> Tuple[tp.ListNumpy, tp.ListNumpy]:
        return updates * 2, flow.scatter_nd(indices, updates, (5, 3))

    rng = np.random.RandomState(7)
    rows = [0, 2][:devices]
    indices = [rng.permutation(5)[:n].reshape(n, 1).astype(np.int32) for n in rows]
    updates = _arrays(rng, *[(n, 3) for n in rows])
    doubled, scattered = job(indices, updates)
    for device, n in enumerate(rows):
        assert doubled[device].shape == (n, 3)
        np.testing.assert_array_equal(doubled[device], updates[device] * 2)
        expected = np.zeros((5, 3), np.float32)
        expected[indices[device][:, 0]] = updates[device]
        np.testing.assert_array_equal(scattered[device], expected)


def test_arrays_beyond_the_bound_are_refused():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 4))) -> tp.ListNumpy:
        return x + 1

    rng = np.random.RandomState(6)
    for shapes in [[(3, 4), (7, 4)], [(3, 4), (24,)]]:
        with pytest.raises(ValueError, match=r"at most 24 elements"):
            job(_arrays(rng, *shapes))
    with pytest.raises(ValueError, match=r"got shapes \(3, 4\), \(\)"):
        job([np.zeros((3, 4), np.float32), None])
    with pytest.raises(ValueError, match="expected a list of 2 arrays, one per device, got 3"):
        job(_arrays(rng, (3, 4), (2, 4), (1, 4)))
    with pytest.raises(TypeError, match="job 'job', argument 'x': expected dtype float32"):
        job([np.zeros((3, 4), np.float32), np.zeros((2, 4), np.complex64)])
    # The job still runs afterwards.
    values = _arrays(rng, (2, 4), (1, 4))
    for value, result in zip(values, job(values)):
        np.testing.assert_array_equal(result, value + 1)


def test_a_run_that_fails_on_one_device_does_not_shift_later_watches():
    """Device 0 reports its value of a run whose device 1 failed before its watch: that run's
    value is dropped, and later runs still pair each device's values of the same run."""
    flow.config.cpu_device_num(2)
    watched = []

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6,)), i: tp.ListNumpy.Placeholder((6,), dtype=flow.int32)
            ) -> tp.ListNumpy:
        picked = flow.gather(x, i)  # fails on a device given an index out of range
        flow.watch(picked, lambda blob: watched.append(blob.numpy_list()))
        return picked

    rng = np.random.RandomState(7)
    xs = _arrays(rng, (3,), (5,))
    good = [np.array([2, 0], np.int32), np.array([4, 1, 3], np.int32)]
    job(xs, good)
    with pytest.raises(Exception, match="index"):
        job(xs, [good[0], np.array([9, 1, 3], np.int32)])
    job([x * 2 for x in xs], good)
    assert len(watched) == 2
    for values, scale in zip(watched, [1, 2]):
        for x, i, value in zip(xs, good, values):
            np.testing.assert_array_equal(value, x[i] * scale)
