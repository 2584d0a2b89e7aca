"""The mirrored view: each device of the placement holds its own value of every blob.
ListNumpy placeholders take one array per device, ListNumpy results give one array per device,
variables stay consistent (and their gradients are summed over the devices)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def _mirrored_config():
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())
    return config


@pytest.mark.parametrize("devices", [1, 2, 3])
def test_each_device_computes_on_its_own_value(devices):
    flow.config.cpu_device_num(devices)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((4, 3))) -> tp.ListNumpy:
        # Per device: a reduction over axis 0 of that device's own (4, 3) value.
        return flow.math.reduce_sum(flow.math.relu(x * 2.0), axis=[0])

    rng = np.random.RandomState(devices)
    values = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(devices)]
    results = job(values)
    assert isinstance(results, list) and len(results) == devices
    for value, result in zip(values, results):
        np.testing.assert_allclose(result, np.maximum(value * 2, 0).sum(axis=0), rtol=1e-6)


def test_result_annotations_of_mirrored_blobs():
    flow.config.cpu_device_num(2)
    values = [np.full((2, 3), 1.0, np.float32), np.full((2, 3), 2.0, np.float32)]

    @flow.global_function(function_config=_mirrored_config())
    def as_numpy(x: tp.ListNumpy.Placeholder((2, 3))) -> tp.Numpy:
        return x + 1.0

    # tp.Numpy: the devices' values concatenated along axis 0.
    np.testing.assert_array_equal(as_numpy(values), np.concatenate(values) + 1)

    @flow.global_function(function_config=_mirrored_config())
    def as_lists(x: tp.ListNumpy.Placeholder((2, 3))) -> tp.ListListNumpy:
        return x

    lists = as_lists(values)
    assert len(lists) == 2 and all(len(tensors) == 1 for tensors in lists)
    np.testing.assert_array_equal(lists[1][0], values[1])

    @flow.global_function(function_config=_mirrored_config())
    def as_future(x: tp.ListNumpy.Placeholder((2, 3))):
        return flow.math.reduce_sum(x)  # shape (1,) per device, as in OneFlow 0.3

    local = as_future(values).get()
    np.testing.assert_array_equal(local.numpy_list(), [[6.0], [12.0]])
    np.testing.assert_array_equal(local.numpy(1), [12.0])


def test_training_sums_the_devices_gradients():
    """loss_d = sum((x_d @ w)^2, axis 1) on each device d; w is one consistent variable whose
    gradient is the sum over the devices, scaled by 1 / elements of one device's loss (OneFlow
    0.3's rule). Checked against NumPy from the w the step started with."""
    flow.config.cpu_device_num(2)
    lr = 0.05
    rng = np.random.RandomState(3)
    xs = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(2)]

    @flow.global_function(type="train", function_config=_mirrored_config())
    def train(x: tp.ListNumpy.Placeholder((4, 3))) -> tp.ListNumpy:
        w = flow.get_variable("w", shape=(3, 2),
                              initializer=flow.random_uniform_initializer(-1, 1, seed=5))
        loss = flow.math.reduce_sum(flow.math.square(flow.matmul(x, w)), axis=[1])
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [lr]),
                           momentum=0).minimize(loss)
        return loss

    from oneflow.framework import session as session_util

    first = train(xs)

    w = session_util.default_session().cpp.variable_value("w").astype(np.float64)
    second = train(xs)
    for x, loss in zip(xs, second):
        np.testing.assert_allclose(loss, ((x @ w) ** 2).sum(axis=1), rtol=1e-5)
    # The step between them: w_next = w - lr / 4 * sum_d 2 x_d^T (x_d w)  (4 = one device's loss)
    w_next = w - lr / 4 * sum(2 * x.T @ (x @ w) for x in xs)
    np.testing.assert_allclose(session_util.default_session().cpp.variable_value("w"), w_next,
                               rtol=1e-5)
    assert not np.allclose(first[0], second[0])


def test_watch_of_a_mirrored_blob_gives_each_devices_value():
    flow.config.cpu_device_num(3)
    seen = []

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((2,))) -> tp.ListNumpy:
        doubled = x * 2.0

        def handler(values: tp.ListNumpy):
            seen.append(values)

        flow.watch(doubled, handler)
        return doubled

    values = [np.array([i, -i], np.float32) for i in range(3)]
    job(values)
    assert len(seen) == 1 and len(seen[0]) == 3
    for value, watched in zip(values, seen[0]):
        np.testing.assert_array_equal(watched, value * 2)


def test_cast_to_current_logical_view_both_ways():
    flow.config.cpu_device_num(2)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        with flow.scope.mirrored_view():
            per_device = flow.cast_to_current_logical_view(x)  # each device its 2 rows
            assert per_device.is_mirrored and per_device.shape == (2, 3)
            summed = flow.math.reduce_sum(per_device, axis=[0], keepdims=True)  # per device
        return flow.cast_to_current_logical_view(summed)  # the two rows, concatenated

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(job(x), np.stack([x[:2].sum(0), x[2:].sum(0)]))


def test_one_device_mirrored_job_as_oneflow_tests_write_it():
    """OneFlow 0.3's own tests: mirrored view, ListNumpy placeholder, the zero-variable idiom,
    a watch_diff handler annotated tp.ListNumpy."""
    flow.config.gpu_device_num(1)
    diffs = []

    @flow.global_function(type="train", function_config=_mirrored_config())
    def train(x: tp.ListNumpy.Placeholder((5, 2))) -> tp.ListNumpy:
        with flow.scope.placement("gpu", "0:0"):
            x += flow.get_variable("v1", shape=(1,), dtype=flow.float,
                                   initializer=flow.zeros_initializer())
            y = flow.math.square(x)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-4]),
                               momentum=0).minimize(y)

            def handler(diff: tp.ListNumpy):
                diffs.append(diff)

            flow.watch_diff(x, handler)
        return y

    x = np.random.RandomState(0).uniform(-1, 1, (5, 2)).astype(np.float32)
    (y,) = train([x])
    np.testing.assert_allclose(y, x * x, rtol=1e-6)
    np.testing.assert_allclose(diffs[0][0], 2 * x, rtol=1e-6)


def test_mirrored_blobs_stay_on_their_devices():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((2,))) -> tp.ListNumpy:
        with flow.scope.placement("cpu", "0:1"):
            return flow.math.relu(x, name="elsewhere")

    with pytest.raises(ValueError, match="a mirrored blob stays on its devices"):
        job([np.ones(2, np.float32)] * 2)


@pytest.mark.parametrize("devices", [1, 2])
def test_list_numpy_shapes_are_upper_bounds(devices):
    """As in OneFlow 0.3, a ListNumpy placeholder's shape bounds each device's array: arrays of
    the same rank and no more elements run the job with dynamic arguments."""
    flow.config.cpu_device_num(devices)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((20, 8))) -> tp.ListNumpy:
        return flow.math.argmax(x * 1.0, -1)

    rng = np.random.RandomState(0)
    # (5, 30) has a larger axis but fewer elements: allowed, as in OneFlow 0.3.
    for shape in [(10, 5), (20, 8), (10, 5), (3, 8), (5, 30)]:
        values = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(devices)]
        results = job(values)
        for value, result in zip(values, results):
            np.testing.assert_array_equal(result, np.argmax(value, -1))
    with pytest.raises(ValueError, match=r"at most 160 elements"):
        job([rng.uniform(-1, 1, (21, 8)).astype(np.float32)] * devices)
    if devices == 2:  # one shape per device (tests/python/test_mirrored_per_device_shapes.py)
        values = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in [(4, 8), (5, 8)]]
        for value, result in zip(values, job(values)):
            np.testing.assert_array_equal(result, np.argmax(value, -1))


def test_smaller_list_numpy_arguments_are_dynamic_blobs_of_the_declared_shape():
    """OneFlow 0.3: inside the job a ListNumpy argument has the placeholder's shape and is
    dynamic, and so is what is computed from it (its test_hybrid_concat asserts the static
    size of a concat of such blobs)."""
    flow.config.cpu_device_num(1)
    seen = []

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((10, 4))) -> tp.ListNumpy:
        joined = flow.concat([x, flow.constant(1.0, shape=(3, 4))], axis=0)
        seen.append((x.shape, x.is_dynamic, joined.shape, joined.is_dynamic))
        return joined

    x = np.random.RandomState(1).randn(2, 4).astype(np.float32)
    (result,) = job([x])
    np.testing.assert_array_equal(result, np.concatenate([x, np.ones((3, 4), np.float32)]))
    assert seen[-1] == ((10, 4), True, (13, 4), True)
    y = np.random.RandomState(2).randn(7, 4).astype(np.float32)
    np.testing.assert_array_equal(job([y])[0], np.concatenate([y, np.ones((3, 4), np.float32)]))
    assert len(seen) == 2  # the declared job and the dynamic one, traced once each


def test_concat_max_dim_size_bounds_a_concat_of_dynamic_blobs():
    """OneFlow 0.3's test_hybrid_concat: the static inputs must fit in max_dim_size, which is
    the result's size inside the job; each run's inputs must fit too; the gradient of an input
    after a dynamic one is its own slice of the run."""
    flow.config.cpu_device_num(1)
    seen, diffs = [], []

    @flow.global_function(type="train", function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 2))) -> tp.ListNumpy:
        w = flow.get_variable("w", shape=(3, 2), initializer=flow.ones_initializer())
        joined = flow.concat([x, flow.cast_to_current_logical_view(w)], axis=0, max_dim_size=7)
        seen.append((joined.shape, joined.is_dynamic))
        flow.watch_diff(w, diffs.append)
        loss = flow.math.reduce_sum(joined * joined) * 0.5  # d loss / d w = w
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(loss)
        return joined

    x = np.full((2, 2), 5.0, np.float32)
    (result,) = job([x])
    np.testing.assert_array_equal(result, np.concatenate([x, np.ones((3, 2), np.float32)]))
    assert seen[-1] == ((7, 2), True)
    np.testing.assert_array_equal(diffs[-1], np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"concat: the inputs of this run add up to 8 on axis 0, "
                                         r"more than max_dim_size 7"):
        job([np.zeros((5, 2), np.float32)])
    with pytest.raises(ValueError, match=r"concat: the static inputs add up to 9 on axis 0, "
                                         r"more than max_dim_size 7"):
        job([np.zeros((6, 2), np.float32)])  # the declared shape: a static blob
    flow.clear_default_session()

    @flow.global_function(function_config=_mirrored_config())
    def too_small(x: tp.ListNumpy.Placeholder((6, 2))) -> tp.ListNumpy:
        return flow.concat([x, flow.constant(1.0, shape=(3, 2))], axis=0, max_dim_size=2)

    with pytest.raises(ValueError, match=r"concat: the static inputs add up to \d on axis 0, more "
                                         r"than max_dim_size 2"):
        too_small([np.zeros((1, 2), np.float32)])


def test_broadcast_to_compatible_with_follows_the_shapes_of_the_run():
    # OneFlow 0.3's test_dynamic_broadcast_to_compatible_with: bounds (15, 6), (3, 15, 6),
    # (3, 15, 1), a run of (10, 6), (3, 10, 6), (3, 10, 1).
    flow.config.cpu_device_num(1)

    @flow.global_function(function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((15, 6)), a: tp.ListNumpy.Placeholder((3, 15, 6)),
            b: tp.ListNumpy.Placeholder((3, 15, 1))) -> tp.ListNumpy:
        return flow.broadcast_to_compatible_with(x, [a, b])

    rng = np.random.RandomState(3)
    x, a, b = (rng.randn(*shape).astype(np.float32) for shape in [(10, 6), (3, 10, 6), (3, 10, 1)])
    np.testing.assert_array_equal(job([x], [a], [b])[0], np.broadcast_to(x, (3, 10, 6)))
    x, a, b = (rng.randn(*shape).astype(np.float32) for shape in [(15, 6), (1, 15, 6), (3, 1, 1)])
    np.testing.assert_array_equal(job([x], [a], [b])[0], np.broadcast_to(x, (3, 15, 6)))


def test_smaller_list_numpy_train_call_shares_the_training_state():
    """A train call with smaller arrays trains the same variable and advances the same train
    step counter as the declared-shape calls."""
    flow.config.cpu_device_num(1)

    @flow.global_function(type="train", function_config=_mirrored_config())
    def job(x: tp.ListNumpy.Placeholder((6, 2))) -> tp.ListNumpy:
        w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_sum(x * w)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                           momentum=0).minimize(loss)
        return loss

    x = np.ones((6, 2), np.float32)
    job([x])  # w -= 0.5 * 6
    job([x[:2]])  # w -= 0.5 * 2
    variables = flow.get_all_variables()
    np.testing.assert_allclose(variables["w"].numpy(), [-3.0, -3.0])
    np.testing.assert_array_equal(variables["System-Train-TrainStep-job"].numpy(), [2])
    assert not any(name.startswith("System-Train-TrainStep-job-") for name in variables)


def test_all_mirrored_inputs_make_a_mirrored_op_in_the_consistent_view():
    """OneFlow 0.3: an op whose inputs are all mirrored is mirrored, so a ListNumpy argument works
    without mirrored_view in the function config."""
    flow.config.cpu_device_num(1)

    @flow.global_function()
    def job(a: tp.ListNumpy.Placeholder((5, 2))) -> tp.ListNumpy:
        return flow.math.relu(a)

    x = np.random.RandomState(0).randn(5, 2).astype(np.float32)
    np.testing.assert_array_equal(job([x])[0], np.maximum(x, 0))


def test_batch_axis_follows_oneflow_rules():
    """blob.batch_axis: a placeholder's own, none for variables and constants, kept by
    elementwise ops, removed by reducing it, shifted by reducing axes before it."""
    seen = {}

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4, 3, 2)), y: tp.Numpy.Placeholder((3, 4), batch_axis=1)):
        v = flow.get_variable("v", shape=(4, 3, 2), initializer=flow.zeros_initializer())
        seen["x"], seen["y"], seen["v"] = x.batch_axis, y.batch_axis, v.batch_axis
        seen["relu"] = flow.math.relu(x + v).batch_axis
        seen["sum_all"] = flow.math.reduce_sum(x).batch_axis
        seen["sum_0"] = flow.math.reduce_mean(x, axis=[0]).batch_axis
        seen["sum_2"] = flow.math.reduce_sum(x, axis=[2]).batch_axis
        seen["y_sum_0"] = flow.math.reduce_sum(y, axis=[0]).batch_axis
        seen["y_sum_0_keep"] = flow.math.reduce_sum(y, axis=[0], keepdims=True).batch_axis
        seen["constant"] = flow.constant(1.0, shape=(2,)).batch_axis

    job(np.zeros((4, 3, 2), np.float32), np.zeros((3, 4), np.float32))
    assert seen == {"x": 0, "y": 1, "v": None, "relu": 0, "sum_all": None, "sum_0": None,
                    "sum_2": 0, "y_sum_0": 0, "y_sum_0_keep": 1, "constant": None}


def test_list_numpy_bounds_that_disagree_still_run_fitting_calls():
    """OneFlow 0.3's test_in_top_k declares targets (20,) and predictions (15, 10), which no op
    accepts together; calls with arrays that agree run (through their specialization), a call
    at the declared shapes raises the op's error."""
    flow.config.cpu_device_num(1)

    @flow.global_function(function_config=_mirrored_config())
    def job(t: tp.ListNumpy.Placeholder((20,), dtype=flow.int32),
            p: tp.ListNumpy.Placeholder((15, 10))) -> tp.ListNumpy:
        return flow.math.in_top_k(t, p, k=2)

    rng = np.random.RandomState(0)
    for rows in (10, 12):
        targets = rng.randint(0, 5, size=rows).astype(np.int32)
        predictions = rng.rand(rows, 5).astype(np.float32)
        top2 = np.argsort(-predictions, axis=1)[:, :2]
        expected = (top2 == targets[:, None]).any(axis=1)
        np.testing.assert_array_equal(job([targets], [predictions])[0].astype(bool), expected)
    with pytest.raises(ValueError, match="in_top_k"):
        job([np.zeros(20, np.int32)], [np.zeros((15, 10), np.float32)])
