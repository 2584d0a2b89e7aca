"""flow.advanced.distribute_clone / split / concat / add (OneFlow 0.3): blobs placed one per device
of the current placement and back, against NumPy, forward and gradients (one SGD step at rate 0
with the loss weighted by a random array, so each gradient is that array routed back)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("devices, axis", [(2, 0), (3, 1), (2, -1)])
def test_split_then_concat_and_add_route_values_and_gradients(devices, axis):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    rng = np.random.RandomState(devices)
    x = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    weight = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    grads, seen = {}, {}

    @flow.global_function(type="train")
    def job(x_in: tp.Numpy.Placeholder(x.shape), w: tp.Numpy.Placeholder(x.shape)):
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            v = flow.get_variable("v", shape=x.shape, initializer=flow.zeros_initializer())
            value = x_in + v
            parts = flow.advanced.distribute_split(value, axis=axis)
            clones = flow.advanced.distribute_clone(value)
            whole = flow.advanced.distribute_concat(parts, axis=axis)
            total = flow.advanced.distribute_add(clones)
            seen["parts"] = [part.placement.device_names for part in parts]
            flow.watch_diff(v, lambda blob: grads.setdefault("v", blob.numpy()))
            loss = flow.math.reduce_sum(whole * w) + flow.math.reduce_sum(total * w)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(loss)
        return parts + (whole, total)

    results = [blob.numpy() for blob in job(x, weight).get()]
    parts, whole, total = results[:devices], results[devices], results[devices + 1]
    np.testing.assert_array_equal(np.concatenate(parts, axis=axis), x)
    sizes = [part.shape[axis] for part in parts]
    assert sizes == sorted(sizes, reverse=True) and max(sizes) - min(sizes) <= 1
    assert seen["parts"] == [["0:%d" % i] for i in range(devices)]
    np.testing.assert_array_equal(whole, x)
    np.testing.assert_allclose(total, devices * x, rtol=1e-6)
    # d(sum(concat(split(v)) * w) + sum(devices copies of v summed * w))/dv = w + devices * w
    np.testing.assert_allclose(grads["v"], (1 + devices) * weight, rtol=1e-6)


def test_errors_name_the_op_and_the_rule():
    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    def trace(fn):
        flow.clear_default_session()
        flow.config.cpu_device_num(2)

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((4, 1))):
            with flow.scope.placement("cpu", "0:0-1"):
                return fn(x)

        job(np.zeros((4, 1), np.float32))

    with pytest.raises(ValueError, match=r"distribute_concat: takes one blob per device .*got 3"):
        trace(lambda x: flow.advanced.distribute_concat([x, x, x]))
    with pytest.raises(ValueError, match=r"distribute_split: axis 1 of x \(4, 1\) has 1 entries, "
                                         r"fewer than the 2 devices"):
        trace(lambda x: flow.advanced.distribute_split(x, axis=1))
    with pytest.raises(ValueError, match="distribute_split: axis 2 is out of range"):
        trace(lambda x: flow.advanced.distribute_split(x, axis=2))
    with pytest.raises(TypeError, match="distribute_add: xs must be a list or tuple"):
        trace(lambda x: flow.advanced.distribute_add(x))
