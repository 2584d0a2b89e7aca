"""Learning-rate schedules and warmup: the rate used at each train step against closed forms
transcribed from OneFlow 0.3's learning_rate_schedule_kernel.cpp (steps count from 0; while a
warmup is active it alone sets the rate, from the base rate; the decay then applies to the step
itself).

The rate is observed through plain SGD on loss = sum(w) (gradient 1): each step lowers w by the
rate of that step.
"""
import math

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

O = flow.optimizer


def observed_rates(make_scheduler, steps):
    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.0))
        loss = flow.math.reduce_sum(w)
        O.SGD(make_scheduler(), momentum=0).minimize(loss)
        return w

    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("w", shape=(1,), dtype=flow.float64,
                                 initializer=flow.constant_initializer(0.0))

    values = [0.0]
    for _ in range(steps):
        train()
        values.append(float(read()[0]))
    return [before - after for before, after in zip(values, values[1:])]


def piece(boundaries, step):
    for i, boundary in enumerate(boundaries):
        if step <= boundary:
            return i
    return len(boundaries)


def polynomial(base, steps, end, power, cycle, step):
    s, d = float(step), float(steps)
    if cycle:
        s = 1.0 if step == 0 else s
        d = d * math.ceil(s / d)
    else:
        s = min(s, d)
    return (base - end) * (1 - s / d) ** power + end


def cosine(base, steps, alpha, step):
    s = min(step, steps)
    return base * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * s / steps)) + alpha)


def linear_cosine(base, steps, periods, alpha, beta, step):
    s = min(step, steps)
    linear = (steps - s) / steps
    return base * ((alpha + linear) * 0.5 * (1 + math.cos(2 * math.pi * periods * s / steps)) + beta)


def staircase(step, steps, stairs):
    p = step / steps
    return math.floor(p) if stairs else p


CASES = {
    "piecewise_constant": (lambda: O.PiecewiseConstantScheduler([2, 5], [0.5, 0.25, 0.125]),
                           lambda t: [0.5, 0.25, 0.125][piece([2, 5], t)]),
    "piecewise_scaling": (lambda: O.PiecewiseScalingScheduler(0.5, [1, 4], [0.5, 0.1]),
                          lambda t: 0.5 * [1.0, 0.5, 0.1][piece([1, 4], t)]),
    "piecewise_scaling_one_scale": (lambda: O.PiecewiseScalingScheduler(0.5, [1, 4], 0.5),
                                    lambda t: 0.5 * [1.0, 0.5, 0.5][piece([1, 4], t)]),
    "cosine": (lambda: O.CosineScheduler(0.5, 6, alpha=0.1),
               lambda t: cosine(0.5, 6, 0.1, t)),
    "linear_cosine": (lambda: O.LinearCosineScheduler(0.5, 6, num_periods=0.5, alpha=0.1, beta=0.01),
                      lambda t: linear_cosine(0.5, 6, 0.5, 0.1, 0.01, t)),
    "polynomial": (lambda: O.PolynomialScheduler(0.5, 5, end_learning_rate=0.01, power=2.0),
                   lambda t: polynomial(0.5, 5, 0.01, 2.0, False, t)),
    "polynomial_cycle": (lambda: O.PolynomialScheduler(0.5, 3, end_learning_rate=0.01, power=1.0,
                                                       cycle=True),
                         lambda t: polynomial(0.5, 3, 0.01, 1.0, True, t)),
    "exponential": (lambda: O.ExponentialScheduler(0.5, 3, 0.5),
                    lambda t: 0.5 * 0.5 ** staircase(t, 3, False)),
    "exponential_staircase": (lambda: O.ExponentialScheduler(0.5, 3, 0.5, staircase=True),
                              lambda t: 0.5 * 0.5 ** staircase(t, 3, True)),
    "inverse_time": (lambda: O.InverseTimeScheduler(0.5, 2, 0.5),
                     lambda t: 0.5 / (1 + 0.5 * staircase(t, 2, False))),
    "natural_exp": (lambda: O.NaturalExpScheduler(0.5, 2, 0.3, staircase=True),
                    lambda t: 0.5 * math.exp(-0.3 * staircase(t, 2, True))),
    "constant_warmup": (lambda: O.PiecewiseConstantScheduler([], [0.5],
                                                             warmup=O.warmup.constant(3, 0.1)),
                        lambda t: 0.05 if t < 3 else 0.5),
    "linear_warmup_then_cosine": (
        lambda: O.CosineScheduler(0.5, 8, warmup=O.warmup.linear(3, 0.2)),
        lambda t: 0.5 * (0.2 + 0.8 * t / 3) if t < 3 else cosine(0.5, 8, 0.0, t)),
}


def assert_rates_follow(case, steps=10):
    """case: (make the scheduler, closed form of step t's rate); rtol: rates are float32."""
    make, closed_form = case
    expected = [closed_form(t) for t in range(steps)]
    np.testing.assert_allclose(observed_rates(make, steps), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_rate_at_each_step(name):
    assert_rates_follow(CASES[name])


def test_issue_example_piecewise_constant_switches_after_the_boundary():
    """PiecewiseConstantScheduler([2], [1.0, 0.1]): updates 1, 1, 1, 0.1, ..."""
    rates = observed_rates(lambda: O.PiecewiseConstantScheduler([2], [1.0, 0.1]), 5)
    np.testing.assert_allclose(rates, [1.0, 1.0, 1.0, 0.1, 0.1], rtol=1e-6)


def test_misspelled_polynomial_alias_warns_and_works(capsys):
    rates = observed_rates(lambda: O.PolynomialSchduler(0.5, 5, end_learning_rate=0.0), 3)
    np.testing.assert_allclose(rates, [polynomial(0.5, 5, 0.0, 1.0, False, t) for t in range(3)],
                               rtol=1e-6)
    assert "PolynomialSchduler" in capsys.readouterr().err


def test_custom_scheduler_reads_a_blob_of_the_job():
    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.0))
        lr = flow.constant(0.375, dtype=flow.float32, shape=(1,))
        O.SGD(O.CustomScheduler(lr), momentum=0).minimize(flow.math.reduce_sum(w))
        return w

    np.testing.assert_allclose(train(), [0.0])  # the return is read before the update
    np.testing.assert_allclose(train(), [-0.375])


@pytest.mark.parametrize("make, error, message", [
    (lambda: O.PiecewiseConstantScheduler([3, 2], [1.0, 0.5, 0.1]), ValueError, "increasing"),
    (lambda: O.PiecewiseScalingScheduler(0.1, [1, 2], [0.5]), ValueError, "one scale per"),
    (lambda: O.CosineScheduler(0.1, 0), ValueError, "steps must be >= 1"),
    (lambda: O.ExponentialScheduler(0.1, 10, 0.5, staircase=1), TypeError, "staircase"),
    (lambda: O.warmup.constant(5, 1.5), ValueError, "multiplier must be < 1"),
    (lambda: O.warmup.linear(-1, 0.5), ValueError, "steps must be >= 0"),
    (lambda: O.CosineScheduler(0.1, 10, warmup=0.5), TypeError, "warmup must be"),
])
def test_bad_schedules_are_clear_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_decay_without_steps_trains_through_the_warmup_then_fails_clearly():
    """OneFlow-Benchmark's defaults for a one-epoch run give a cosine decay of negative steps
    behind a longer warmup: OneFlow trains (its kernel only checks the steps once the warmup is
    over), so must this; past the warmup the step fails with a clear error."""
    make = lambda: O.CosineScheduler(0.5, -4, warmup=O.warmup.linear(3, 0.0))  # noqa: E731
    np.testing.assert_allclose(observed_rates(make, 3), [0.0, 0.5 / 3, 1.0 / 3], rtol=1e-6)
    flow.clear_default_session()
    with pytest.raises(ValueError, match=r"past the warmup of 3 steps.*= -4 is not > 0"):
        observed_rates(make, 4)


@pytest.mark.parametrize("make, message", [
    # A negative alpha / beta makes the rate negative (the loss climbs).
    (lambda: O.CosineScheduler(0.1, 10, alpha=-5), r"CosineScheduler: alpha must be >= 0"),
    (lambda: O.LinearCosineScheduler(0.1, 10, beta=-5), r"LinearCosineScheduler: beta must"),
    (lambda: O.LinearCosineScheduler(0.1, 10, alpha=-1.0), r"LinearCosineScheduler: alpha must"),
    # As InverseTimeScheduler's: a negative natural-exp rate grows the rate until it overflows.
    (lambda: O.NaturalExpScheduler(0.1, 1, -100), r"NaturalExpScheduler: decay_rate must be >= 0"),
    (lambda: O.CosineScheduler(0.1, 10, alpha=float("nan")), r"alpha must be a finite number"),
    # Finite in float64, inf in the float32 learning rate.
    (lambda: O.PiecewiseConstantScheduler([], [1e39]), r"values 1e\+39 .*float32"),
    (lambda: O.CosineScheduler(1e39, 10), r"CosineScheduler: base_lr 1e\+39 .*float32"),
    (lambda: O.PiecewiseScalingScheduler(1e30, [1], [1e10]),
     r"scale 10000000000.0 makes the learning rate 1e\+40, beyond float32"),
    (lambda: O.CosineScheduler(1e38, 10, alpha=10.0), r"CosineScheduler: alpha 10.0 .*float32"),
    (lambda: O.LinearCosineScheduler(3e38, 10, alpha=0.5), r"alpha 0.5 .*float32"),
    (lambda: O.PolynomialScheduler(0.1, 10, end_learning_rate=1e39),
     r"end_learning_rate 1e\+39"),
])
def test_rates_that_would_be_negative_or_overflow_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("make, message", [
    (lambda: O.PiecewiseConstantScheduler([], [np.bool_(True)]), "values must be a number"),
    (lambda: O.PiecewiseConstantScheduler([], np.array([[0.1]])), "values must be a list"),
    (lambda: O.CosineScheduler(0.1, np.float32(3.0)), "steps must be an int"),
])
def test_numpy_values_that_are_not_real_numbers_are_refused(make, message):
    with pytest.raises(TypeError, match=message):
        make()


EDGE_CASES = {
    # alpha > 1: the rate grows from base to base * alpha (legal in OneFlow 0.3, never negative).
    "cosine_alpha_above_one": (lambda: O.CosineScheduler(0.5, 4, alpha=2.0),
                               lambda t: cosine(0.5, 4, 2.0, t)),
    "linear_cosine_zero_alpha_beta": (
        lambda: O.LinearCosineScheduler(0.5, 6, num_periods=1.5, alpha=0.0, beta=0.0),
        lambda t: linear_cosine(0.5, 6, 1.5, 0.0, 0.0, t)),
    "natural_exp_zero_rate": (lambda: O.NaturalExpScheduler(0.5, 2, 0.0), lambda t: 0.5),
    # A decay rate > 1 grows the rate; OneFlow 0.3 (and TensorFlow) take it.
    "exponential_growth": (lambda: O.ExponentialScheduler(0.125, 2, 2.0),
                           lambda t: 0.125 * 2.0 ** (t / 2)),
    # The largest rate float32 holds is accepted (here a rate of 2^127, a float32).
    "largest_float32_rate_scaling": (
        lambda: O.PiecewiseScalingScheduler(2.0 ** 64, [2], 2.0 ** 63),
        lambda t: 2.0 ** 64 if t <= 2 else 2.0 ** 127),
    # OneFlow 0.3 took numpy numbers (np.float32 values from a config file, np.int64 steps).
    "numpy_scalars": (lambda: O.CosineScheduler(np.float32(0.5), np.int64(6),
                                                alpha=np.float64(0.1)),
                      lambda t: cosine(0.5, 6, 0.1, t)),
    "numpy_lists": (lambda: O.PiecewiseConstantScheduler(np.array([2]), [np.float32(0.5),
                                                                        np.float16(0.25)]),
                    lambda t: [0.5, 0.25][piece([2], t)]),
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_legitimate_edge_values_train(name):
    assert_rates_follow(EDGE_CASES[name], steps=8)


def test_a_rate_that_overflows_float32_fails_that_step_and_leaves_the_variable():
    """ExponentialScheduler with a rate above 1 is legal (as in OneFlow 0.3), but once its rate
    leaves float32's range the step raises, saying so, instead of training with inf."""
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_sum(x * w)
        flow.optimizer.SGD(flow.optimizer.ExponentialScheduler(0.1, 1, 1e30),
                           momentum=0).minimize(loss)
        return loss

    x = np.ones(3, np.float32)
    job(x)  # rate 0.1
    job(x)  # rate 0.1 * 1e30
    expected = 1 - 0.1 - 0.1 * 1e30
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), np.full(3, expected),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="learning rate of train step 2 is 1e\\+59, which "
                                         "float32 cannot hold"):
        job(x)
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), np.full(3, expected),
                               rtol=1e-6)
