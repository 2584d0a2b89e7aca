"""SGD in closed form: plain, with momentum, and with a piecewise constant schedule.

For `loss = x + v` with a (4,)-shaped loss, the loss diff is ones, so v's gradient is ones, then
scaled by 1 / elem_cnt(loss) = 1/4 before the update: g = 1/4 per element.
"""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

SHAPE = (4,)
G = 1.0 / 4  # v's gradient after scaling by 1 / elem_cnt(loss)
X = np.arange(4, dtype=np.float32)


def make_jobs(optimizer, initial=1.0):
    """A train job (loss = x + v) and a predict job that reads v."""

    def variable():
        return flow.get_variable("v", shape=SHAPE, initializer=flow.constant_initializer(initial))

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        loss = x + variable()
        optimizer.minimize(loss)
        return loss

    @flow.global_function()
    def read() -> tp.Numpy:
        return variable()

    return train, read


def test_sgd_one_step(sgd):
    train, read = make_jobs(sgd(0.1))
    np.testing.assert_allclose(read(), np.ones(SHAPE), rtol=0)
    loss = train(X)
    np.testing.assert_allclose(loss, X + 1.0, rtol=1e-6)  # the loss uses v before the update
    np.testing.assert_allclose(read(), np.full(SHAPE, 1 - 0.1 / 4), rtol=1e-6)


def test_sgd_several_steps(sgd):
    train, read = make_jobs(sgd(0.1))
    for _ in range(3):
        train(X)
    np.testing.assert_allclose(read(), np.full(SHAPE, 1 - 3 * 0.1 * G), rtol=1e-6)


def test_sgd_learning_rate_zero_changes_nothing(sgd):
    train, read = make_jobs(sgd(0.0))
    train(X)
    np.testing.assert_array_equal(read(), np.ones(SHAPE))


def test_momentum_two_steps(sgd):
    lr, momentum = 0.1, 0.9
    train, read = make_jobs(sgd(lr, momentum=momentum))
    v0 = 1.0
    train(X)
    v1 = v0 - lr * G
    np.testing.assert_allclose(read(), np.full(SHAPE, v1), rtol=1e-6)
    train(X)
    v2 = v1 + (momentum * (-lr * G) - lr * G)
    np.testing.assert_allclose(read(), np.full(SHAPE, v2), rtol=1e-6)
    train(X)
    v3 = v2 + (momentum * (momentum * (-lr * G) - lr * G) - lr * G)
    np.testing.assert_allclose(read(), np.full(SHAPE, v3), rtol=1e-6)


def oneflow_piecewise_constant(boundaries, values, step):
    """OneFlow 0.3's learning_rate_schedule_kernel.cpp: values[i] for the first boundary with
    step <= boundaries[i], else the last value; steps count from 0."""
    for boundary, value in zip(boundaries, values):
        if step <= boundary:
            return value
    return values[-1]


def test_piecewise_constant_schedule(sgd):
    """Boundaries [2], values [0.1, 0.01]: steps 0, 1 and 2 use 0.1, later steps 0.01."""
    train, read = make_jobs(sgd([0.1, 0.01], boundaries=[2]))
    values = [read()]
    for _ in range(5):
        train(X)
        values.append(read())
    changes = [float(np.mean(after - before)) for before, after in zip(values, values[1:])]
    expected = [-oneflow_piecewise_constant([2], [0.1, 0.01], step) * G for step in range(5)]
    assert expected == [-0.1 * G, -0.1 * G, -0.1 * G, -0.01 * G, -0.01 * G]
    np.testing.assert_allclose(changes, expected, rtol=1e-4)


def test_piecewise_constant_schedule_two_boundaries(sgd):
    train, read = make_jobs(sgd([0.4, 0.2, 0.0], boundaries=[1, 2]))
    values = [read()]
    for _ in range(4):
        train(X)
        values.append(read())
    changes = [float(np.mean(after - before)) for before, after in zip(values, values[1:])]
    expected = [-oneflow_piecewise_constant([1, 2], [0.4, 0.2, 0.0], step) * G for step in range(4)]
    np.testing.assert_allclose(changes, expected, rtol=1e-5, atol=1e-8)


def test_scheduler_value_count_is_checked():
    with pytest.raises(ValueError, match="len\\(values\\)"):
        flow.optimizer.PiecewiseConstantScheduler([2], [0.1])


def test_gradient_scaling_uses_loss_element_count(sgd):
    """A (2, 3) loss = x + w with w of shape (3,): w's gradient is 2 per element (summed over
    the broadcast rows), scaled by 1/6."""

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        loss = x + flow.get_variable("w", shape=(3,), initializer=flow.zeros_initializer())
        sgd(0.3).minimize(loss)
        return loss

    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("w", shape=(3,))

    train(np.zeros((2, 3), np.float32))
    np.testing.assert_allclose(read(), np.full((3,), -0.3 * 2 / 6), rtol=1e-6)
