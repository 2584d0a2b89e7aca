"""Adam and AdamW against torch.optim (with bias correction) and OneFlow 0.3's formula."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

torch = pytest.importorskip("torch")

X = np.random.RandomState(0).randn(5, 4).astype(np.float32)
STEPS = 5


def train_oneflow(optimizer):
    """Trains loss = sum((x @ w)^2) with `optimizer`; returns (w before, [w after each step])."""

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((5, 4))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(4, 3), initializer=flow.random_uniform_initializer(-1, 1))
        loss = flow.math.reduce_sum(flow.math.square(flow.matmul(x, w)))
        optimizer.minimize(loss)
        return loss

    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("w", shape=(4, 3), initializer=flow.random_uniform_initializer(-1, 1))

    initial = read()
    weights = []
    for _ in range(STEPS):
        train(X)
        weights.append(read())
    return initial, weights


def schedule(lr):
    return flow.optimizer.PiecewiseConstantScheduler([], [lr])


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.5, 0.9)])
def test_adam_with_bias_correction_matches_torch(betas):
    initial, weights = train_oneflow(flow.optimizer.Adam(
        schedule(0.05), beta1=betas[0], beta2=betas[1], epsilon=1e-8, do_bias_correction=True))
    w = torch.tensor(initial, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=0.05, betas=betas, eps=1e-8)
    for step in range(STEPS):
        optimizer.zero_grad()
        (torch.tensor(X) @ w).pow(2).sum().backward()
        optimizer.step()
        np.testing.assert_allclose(weights[step], w.detach().numpy(), rtol=1e-4, atol=1e-5)


def oneflow_adam_reference(initial, lr, beta1, beta2, epsilon, weight_decay):
    """OneFlow 0.3's Adam without bias correction (its default), in numpy."""
    w = initial.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    result = []
    for _ in range(STEPS):
        g = 2 * X.T.astype(np.float64) @ (X @ w)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        w = w - lr * (m / (np.sqrt(v) + epsilon) + weight_decay * w)
        result.append(w.copy())
    return result


def test_adam_default_has_no_bias_correction():
    initial, weights = train_oneflow(flow.optimizer.Adam(schedule(0.01)))
    expected = oneflow_adam_reference(initial, 0.01, 0.9, 0.999, 1e-8, 0.0)
    for got, want in zip(weights, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_adamw_weight_decay():
    initial, weights = train_oneflow(flow.optimizer.AdamW(schedule(0.01), weight_decay=0.1))
    expected = oneflow_adam_reference(initial, 0.01, 0.9, 0.999, 1e-8, 0.1)
    for got, want in zip(weights, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_adam_state_variables_persist_across_a_late_defined_job():
    """m and v are variables: defining another job mid-training keeps them (and the step)."""
    optimizer = flow.optimizer.Adam(schedule(0.05), do_bias_correction=True)
    initial, weights = train_oneflow(optimizer)

    @flow.global_function()
    def late() -> tp.Numpy:
        return flow.get_variable("w-m", shape=(4, 3))

    assert np.abs(late()).sum() > 0  # the first moment accumulated gradients


@pytest.mark.parametrize("kwargs, error", [
    (dict(beta1=1.0), ValueError), (dict(beta2=-0.1), ValueError), (dict(epsilon="1e-8"), TypeError),
    (dict(do_bias_correction=1), TypeError),
])
def test_adam_rejects_bad_hyperparameters(kwargs, error):
    with pytest.raises(error, match="Adam"):
        flow.optimizer.Adam(schedule(0.1), **kwargs)
