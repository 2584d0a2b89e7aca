"""Static and dynamic loss scaling, and clipping by global norm: trajectories against NumPy
references of OneFlow 0.3's rules, on one device and data-parallel on two (same model as
test_optimizers: loss = sum((x @ w + b)^2) in float64)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

from test_optimizers import (
    B0, LR, STEPS, W0, X, assert_trajectories, reference, schedule, train_flow)

O = flow.optimizer


def sgd_reference():
    return reference(lambda name, v, g, state, t: v - LR * g)


def read_loss_scale(job="train"):
    """The dynamic loss scale of train job `job` (a session variable readable by name)."""

    @flow.global_function()
    def read_scale() -> tp.Numpy:
        return flow.get_variable("System-Train-LossScale-" + job, shape=(1,), dtype=flow.float32,
                                 trainable=False)

    return float(read_scale()[0])


def test_static_loss_scale_leaves_the_update_unchanged():
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0, loss_scale_factor=1024.0))
    assert_trajectories(actual, sgd_reference())


def test_dynamic_loss_scale_leaves_finite_steps_unchanged():
    policy = O.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0 ** 12, increment_period=100)
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0, loss_scale_policy=policy))
    assert_trajectories(actual, sgd_reference())


def test_dynamic_loss_scale_skips_non_finite_steps_and_adapts_the_scale():
    """Step 3 sees an infinite input: no variable changes and the scale halves; after
    increment_period (2) good steps in a row the scale doubles."""
    inputs = [X.copy() for _ in range(STEPS)]
    inputs[2][0, 0] = np.inf
    policy = O.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0 ** 10, increment_period=2,
                                             multiplier=2.0)
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0.5, loss_scale_policy=policy),
                        inputs=inputs)
    np.testing.assert_array_equal(actual[2]["w"], actual[1]["w"])
    np.testing.assert_array_equal(actual[2]["b"], actual[1]["b"])

    good = [x for x in inputs if np.isfinite(x).all()]

    def update(name, v, g, state, t):
        state["m"] = 0.5 * state.get("m", 0.0) - LR * g
        return v + state["m"]

    expected = reference(update, steps=len(good), inputs=good)
    assert_trajectories([actual[i] for i in (0, 1, 3, 4, 5)], expected)
    # 2^10: good, good (-> 2^11), bad (-> 2^10), good, good (-> 2^11), good.
    assert read_loss_scale() == 2.0 ** 11


def test_dynamic_loss_scale_never_goes_below_one():
    inputs = [np.full_like(X, np.inf) for _ in range(3)]
    policy = O.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0, increment_period=5)
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0, loss_scale_policy=policy), steps=3,
                        inputs=inputs)
    assert read_loss_scale() == 1.0
    np.testing.assert_array_equal(actual[-1]["w"], actual[0]["w"])


def clipped_reference(clip_norm, regularize=None):
    """SGD on gradients clipped together: g * clip / max(|all g|, clip)."""
    params = {"w": W0.copy(), "b": B0.copy()}
    trajectory = []
    for _ in range(STEPS):
        r = X @ params["w"] + params["b"]
        grads = {"w": 2 * X.T @ r, "b": 2 * r.sum(axis=0)}
        if regularize is not None:
            grads = {name: regularize(name, params[name], g) for name, g in grads.items()}
        norm = np.sqrt(sum((g * g).sum() for g in grads.values()))
        factor = clip_norm / max(norm, clip_norm)
        params = {name: params[name] - LR * factor * grads[name] for name in params}
        trajectory.append({name: value.copy() for name, value in params.items()})
    return trajectory


@pytest.mark.parametrize("clip_norm", [0.5, 1e6])
def test_clip_by_global_norm(clip_norm):
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0,
                                      grad_clipping=O.grad_clipping.by_global_norm(clip_norm)))
    # The clip factor is a float32 scalar (like the learning rate): 1e-7 relative.
    assert_trajectories(actual, clipped_reference(clip_norm), rtol=1e-6)


def test_clipping_includes_the_regularization_and_ignores_the_loss_scale():
    policy = O.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0 ** 8)
    actual = train_flow(lambda: O.SGD(schedule(), momentum=0, loss_scale_policy=policy,
                                      grad_clipping=O.grad_clipping.by_global_norm(0.5)),
                        w_regularizer=flow.regularizers.l2(0.5))
    expected = clipped_reference(
        0.5, regularize=lambda name, v, g: g + 0.5 * v if name == "w" else g)
    assert_trajectories(actual, expected, rtol=1e-6)


def test_data_parallel_lamb_with_clipping_and_dynamic_loss_scale_matches_one_device():
    def make():
        return O.LAMB(schedule(), weight_decay=0.01,
                      grad_clipping=O.grad_clipping.by_global_norm(2.0),
                      loss_scale_policy=O.loss_scale.dynamic_loss_scale(2.0 ** 6))

    one = train_flow(make)
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    two = train_flow(make)
    assert_trajectories(two, one, rtol=1e-9, atol=1e-12)
