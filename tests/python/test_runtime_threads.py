"""The runtime with several threads: ops of one job on different devices (one runtime thread
each), blocking calls from callbacks, and placements that name devices that do not exist."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

BIG = 1 << 20


def test_single_device_scopes_on_two_devices_with_large_chains():
    """Each device's thread has its own stream and compute pool: two threads running 1M-element
    elementwise chains at the same time used to share one non-reentrant pool and hang."""

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((BIG,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            a = flow.math.relu(x * 2.0 + 1.0)
        with flow.scope.placement("cpu", "0:1"):
            b = flow.math.tanh(a * 0.5 - 1.0)
        return b

    rng = np.random.RandomState(0)
    for _ in range(10):
        x = rng.uniform(-1, 1, BIG).astype(np.float32)
        expected = np.tanh(np.maximum(x * 2.0 + 1.0, 0) * 0.5 - 1.0)
        np.testing.assert_allclose(job(x), expected, rtol=1e-5, atol=1e-6)


def test_many_calls_in_flight_across_four_device_threads():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((BIG // 4,))) -> tp.Callback[tp.Numpy]:
        blob = x
        for device in range(4):
            with flow.scope.placement("cpu", "0:%d" % device):
                blob = blob * 2.0 + float(device)
        return blob

    results = {}
    inputs = [np.full(BIG // 4, i, np.float32) for i in range(16)]
    for i, x in enumerate(inputs):
        job(x)(lambda value, i=i: results.__setitem__(i, value[:3].copy()))
    flow.sync_default_session()
    for i in range(16):
        value = float(i)
        for device in range(4):
            value = value * 2.0 + device
        np.testing.assert_array_equal(results[i], np.full(3, value, np.float32))


def test_future_get_inside_a_callback_raises_instead_of_deadlocking():
    @flow.global_function()
    def plain(x: tp.Numpy.Placeholder((3,))):
        return x + 1.0

    @flow.global_function()
    def with_callback(x: tp.Numpy.Placeholder((3,))) -> tp.Callback[tp.Numpy]:
        return x * 2.0

    future = plain(np.ones(3, np.float32))
    seen = []

    def callback(value):
        seen.append(value)
        future.get()

    with_callback(np.ones(3, np.float32))(callback)
    with pytest.raises(RuntimeError, match=r"future.get\(\) is not allowed inside a watch or result callback"):
        flow.sync_default_session()
    np.testing.assert_array_equal(seen[0], np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(future.get(), np.full(3, 2.0, np.float32))  # fine outside


def test_future_get_inside_a_watch_handler_raises():
    @flow.global_function()
    def plain(x: tp.Numpy.Placeholder((3,))):
        return x + 1.0

    future = plain(np.ones(3, np.float32))

    @flow.global_function()
    def watched(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        flow.watch(x, lambda value: future.get())
        return x

    with pytest.raises(RuntimeError, match="not allowed inside a watch or result callback"):
        watched(np.ones(3, np.float32))


def _single_device_config():
    config = flow.FunctionConfig()
    config.default_placement_scope(flow.scope.placement("cpu", "0:0"))
    return config


def test_placement_on_a_device_id_out_of_range():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_single_device_config())
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:70"):
            return flow.math.relu(x, name="far_relu")

    with pytest.raises(ValueError) as info:
        job(np.ones(3, np.float32))
    message = str(info.value)
    assert "far_relu" in message and '"0:70"' in message and "below 64" in message


def test_placement_beyond_the_configured_device_count_runs_on_a_thread_of_its_own():
    flow.config.cpu_device_num(2)

    @flow.global_function(function_config=_single_device_config())
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:3"):
            return flow.math.relu(x, name="far_relu")

    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_array_equal(job(x), np.maximum(x, 0))


def test_placement_on_a_machine_that_does_not_exist():
    @flow.global_function(function_config=_single_device_config())
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "1:0"):
            return flow.math.relu(x, name="remote_relu")

    with pytest.raises(ValueError) as info:
        job(np.ones(3, np.float32))
    message = str(info.value)
    assert "remote_relu" in message and '"1:0"' in message and "machine" in message


def test_placement_naming_a_device_twice():
    @flow.global_function(function_config=_single_device_config())
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        with flow.scope.placement("cpu", ["0:0", "0:0"]):
            return flow.math.relu(x)

    with pytest.raises(ValueError, match="twice"):
        job(np.ones(3, np.float32))
