"""flow.distributed_partial_fc_sample (OneFlow 0.3's partial FC): the classes kept on each device
of a class-split weight, checked against the rule itself in NumPy (each device's range, its
labels' classes first and ascending, distinct random others), the mapped labels, the gathered
rows and the gradient scattered back into the weight."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(180)


def balanced(size, parts):
    base, extra = divmod(size, parts)
    bounds = [0]
    for index in range(parts):
        bounds.append(bounds[-1] + base + (1 if index < extra else 0))
    return bounds


@pytest.mark.parametrize("devices, classes, num_sample, batch, label_dtype", [
    (4, 200, 64, 32, flow.int32), (2, 101, 21, 16, flow.int64), (1, 50, 20, 8, flow.int32)])
def test_partial_fc_sample(devices, classes, num_sample, batch, label_dtype):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    rng = np.random.RandomState(devices)
    weight = rng.uniform(-10, 10, (classes, 8)).astype(np.float32)
    loss_weight = rng.uniform(-1, 1, (num_sample, 8)).astype(np.float32)
    grads = {}

    @flow.global_function(type="train")
    def job(labels: tp.Numpy.Placeholder((batch,), dtype=label_dtype),
            w_in: tp.Numpy.Placeholder(weight.shape), lw: tp.Numpy.Placeholder(loss_weight.shape)):
        with flow.scope.placement("cpu", "0:0"):
            offset = flow.get_variable("offset", shape=weight.shape,
                                       initializer=flow.zeros_initializer())
            w = w_in + offset
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            mapped, sampled, rows = flow.distributed_partial_fc_sample(
                weight=w.with_distribute(flow.distribute.split(0)),
                label=labels.with_distribute(flow.distribute.broadcast()),
                num_sample=num_sample)
        with flow.scope.placement("cpu", "0:0"):
            rows = flow.identity(rows)
            flow.watch_diff(offset, lambda blob: grads.setdefault("weight", blob.numpy()))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
                flow.math.reduce_sum(rows * lw))
        return mapped, sampled, rows

    for call in range(2):
        grads.clear()
        labels = rng.randint(0, classes, batch).astype(label_dtype.numpy_dtype)
        mapped, sampled, rows = [b.numpy() for b in job(labels, weight, loss_weight).get()]
        assert sampled.dtype == mapped.dtype == label_dtype.numpy_dtype
        class_bounds, sample_bounds = balanced(classes, devices), balanced(num_sample, devices)
        for device in range(devices):
            lower, upper = class_bounds[device], class_bounds[device + 1]
            part = sampled[sample_bounds[device]:sample_bounds[device + 1]]
            assert ((part >= lower) & (part < upper)).all(), (device, part)
            assert len(np.unique(part)) == len(part)
            positives = np.unique(labels[(labels >= lower) & (labels < upper)])
            np.testing.assert_array_equal(part[:len(positives)], positives)
        position = {int(c): j for j, c in enumerate(sampled)}
        np.testing.assert_array_equal(mapped, [position[int(label)] for label in labels])
        np.testing.assert_array_equal(rows, weight[sampled])
        expected = np.zeros_like(weight)
        expected[sampled] = loss_weight
        np.testing.assert_array_equal(grads["weight"], expected)


def test_more_label_classes_than_samples_fails_clearly():
    flow.clear_default_session()

    @flow.global_function()
    def job(labels: tp.Numpy.Placeholder((8,), dtype=flow.int32)):
        w = flow.get_variable("w", shape=(20, 4), initializer=flow.zeros_initializer())
        return flow.distributed_partial_fc_sample(w, labels, num_sample=4)[0]

    with pytest.raises(ValueError, match=r"distributed_partial_fc_sample: the labels hold 8 "
                                         r"distinct classes .* more than the 4"):
        job(np.arange(8, dtype=np.int32)).get()
    with pytest.raises(ValueError, match=r"num_sample 30 must be in \[1, num_classes 20\]"):
        flow.clear_default_session()

        @flow.global_function()
        def bad(labels: tp.Numpy.Placeholder((8,), dtype=flow.int32)):
            w = flow.get_variable("w", shape=(20, 4), initializer=flow.zeros_initializer())
            return flow.distributed_partial_fc_sample(w, labels, num_sample=30)[0]

        bad(np.arange(8, dtype=np.int32))
