"""flow.nn.dropout: scale 1 / (1 - rate) on kept elements, the same mask in the backward pass,
seeded masks that change each iteration and agree across device counts, identity in predict
jobs and for rate 0, rate validation."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_multi_device, run_job


def _dropout_run(x, rate, seed, steps=1, devices=None):
    """Runs a train job `steps` times; returns [(y, dx)] with loss = sum(y * w), w = 1..n."""
    flow.clear_default_session()
    if devices is not None:
        flow.config.cpu_device_num(devices)
    gradients = []
    weight = np.arange(1, x.size + 1, dtype=x.dtype).reshape(x.shape)

    @flow.global_function(type="train")
    def job(a: tp.Numpy.Placeholder(x.shape, dtype=flow.float32),
            w: tp.Numpy.Placeholder(x.shape, dtype=flow.float32)) -> tp.Numpy:
        v = flow.get_variable("v", shape=x.shape, dtype=flow.float32,
                              initializer=flow.zeros_initializer())
        a = a + v
        flow.watch_diff(a, lambda d: gradients.append(np.array(d)))
        y = flow.nn.dropout(a, rate=rate, seed=seed)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(y * w)
        return y

    outputs = [job(x, weight) for _ in range(steps)]
    flow.clear_default_session()
    return [(y, dx) for y, dx in zip(outputs, gradients)], weight


def test_scale_mask_and_backward_use_the_same_mask():
    x = np.random.RandomState(0).uniform(1, 2, size=(64, 50)).astype(np.float32)
    [(y, dx)], weight = _dropout_run(x, 0.3, seed=7)
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.7, rtol=1e-6)
    np.testing.assert_allclose(dx, np.where(kept, weight / 0.7, 0), rtol=1e-6)
    assert abs(kept.mean() - 0.7) < 0.03


def test_statistics_of_many_masks():
    x = np.ones((1000, 100), np.float32)
    [(y, _)], _ = _dropout_run(x, 0.5, seed=1)
    kept = (y != 0).astype(np.float64)
    assert abs(kept.mean() - 0.5) < 0.005  # 1e5 draws: 3 sigma is 0.0047
    # Neighbouring elements are independent.
    correlation = np.corrcoef(kept.ravel()[:-1], kept.ravel()[1:])[0, 1]
    assert abs(correlation) < 0.02
    assert abs(y.mean() - 1.0) < 0.01  # the scale keeps the expectation


def test_seed_reproduces_and_masks_change_each_iteration():
    x = np.ones((32, 32), np.float32)
    first, _ = _dropout_run(x, 0.5, seed=123, steps=2)
    again, _ = _dropout_run(x, 0.5, seed=123, steps=2)
    other, _ = _dropout_run(x, 0.5, seed=124, steps=1)
    np.testing.assert_array_equal(first[0][0], again[0][0])
    np.testing.assert_array_equal(first[1][0], again[1][0])
    assert not np.array_equal(first[0][0], first[1][0])
    assert not np.array_equal(first[0][0], other[0][0])


@pytest.mark.parametrize("devices", [2, 3])
def test_multi_device_mask_equals_single_device(devices):
    x = np.random.RandomState(2).uniform(1, 2, size=(7, 9)).astype(np.float32)
    [(y1, dx1)], _ = _dropout_run(x, 0.4, seed=5)
    [(y2, dx2)], _ = _dropout_run(x, 0.4, seed=5, devices=devices)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(dx1, dx2)


def test_every_declared_signature_gives_the_single_device_mask():
    x = np.random.RandomState(3).uniform(1, 2, size=(5, 6))
    fn = lambda b: flow.nn.dropout(b, rate=0.5, seed=11)
    single = run_job(fn, [x], differentiable=[0])
    runs = check_multi_device(fn, [x], (single.output, single.gradients), differentiable=[0],
                              device_counts=(2, 3))
    assert {run.op_type for run in runs} >= {"dropout"}


def test_identity_in_predict_jobs_and_for_rate_zero():
    x = np.random.RandomState(4).randn(3, 4).astype(np.float32)
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def predict(a: tp.Numpy.Placeholder((3, 4))) -> tp.Numpy:
        return flow.nn.dropout(a, rate=0.9)

    np.testing.assert_array_equal(predict(x), x)
    [(y, _)], _ = _dropout_run(x, 0.0, seed=None)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, "0.5"])
def test_rate_must_be_in_zero_one(rate):
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(a: tp.Numpy.Placeholder((3, 4))) -> tp.Numpy:
        return flow.nn.dropout(a, rate=rate)

    with pytest.raises(ValueError, match=r"dropout: rate must be a number in \[0, 1\)"):
        job(np.zeros((3, 4), np.float32))
    flow.clear_default_session()
