"""flow.random.uniform / normal / bernoulli: statistics, a fresh sample every iteration, the
same sequence for the same seed in a new session, the same numbers on 2-4 devices under every
declared SBP signature, and argument errors."""
import re

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_multi_device, run_op


def _session_samples(make, iterations=3, shape=(2,)):
    """Runs a predict job (its input is unused) `iterations` times in a fresh session."""
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return make(x)

    return [job(np.full(shape, 0.3, np.float32)) for _ in range(iterations)]


GENERATORS = {
    "uniform": lambda x: flow.random.uniform((400, 500), minval=-2.0, maxval=3.0, seed=11),
    "normal": lambda x: flow.random.normal((400, 500), mean=1.5, stddev=2.0, seed=11),
    "normal64": lambda x: flow.random.normal((400, 500), dtype=flow.float64, seed=3),
}


def test_uniform_statistics():
    (sample,) = _session_samples(GENERATORS["uniform"], 1)
    assert sample.dtype == np.float32 and sample.shape == (400, 500)
    assert sample.min() >= -2.0 and sample.max() < 3.0
    # 200k samples: mean 0.5, std 5/sqrt(12); standard errors ~0.003 and ~0.002.
    assert abs(sample.mean() - 0.5) < 0.02
    assert abs(sample.std() - 5 / np.sqrt(12)) < 0.02
    counts, _ = np.histogram(sample, bins=10, range=(-2, 3))
    assert counts.min() > 0.95 * counts.max()


def test_normal_statistics():
    (sample,) = _session_samples(GENERATORS["normal"], 1)
    assert abs(sample.mean() - 1.5) < 0.03 and abs(sample.std() - 2.0) < 0.03
    standardized = (sample - 1.5) / 2.0
    assert abs(np.mean(standardized ** 3)) < 0.05  # skewness
    assert abs(np.mean(standardized ** 4) - 3.0) < 0.1  # kurtosis
    assert abs(np.mean(np.abs(standardized) < 1) - 0.6827) < 0.01
    (double,) = _session_samples(GENERATORS["normal64"], 1)
    assert double.dtype == np.float64 and abs(double.mean()) < 0.02


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_fresh_sample_every_iteration_and_same_sequence_for_same_seed(name):
    first = _session_samples(GENERATORS[name])
    again = _session_samples(GENERATORS[name])
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[1], first[2])
    # Consecutive samples are uncorrelated.
    assert abs(np.corrcoef(first[0].ravel(), first[1].ravel())[0, 1]) < 0.02


def test_other_seed_other_numbers_and_unseeded_ops_differ():
    a = _session_samples(lambda x: flow.random.uniform((100,), seed=1), 1)[0]
    b = _session_samples(lambda x: flow.random.uniform((100,), seed=2), 1)[0]
    assert not np.array_equal(a, b)
    c = _session_samples(lambda x: flow.random.uniform((100,)), 1)[0]
    d = _session_samples(lambda x: flow.random.uniform((100,)), 1)[0]
    assert not np.array_equal(c, d)


def test_bernoulli():
    p = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    shape = (20000, 5)
    samples = _session_samples(lambda x: flow.random.bernoulli(x, seed=5), 2, shape)
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return flow.random.bernoulli(x, seed=5, dtype=flow.int32)

    ints = job(np.broadcast_to(p, shape).astype(np.float32))
    assert ints.dtype == np.int32 and set(np.unique(ints)) <= {0, 1}
    np.testing.assert_allclose(ints.mean(axis=0), p, atol=0.015)
    assert samples[0].dtype == np.float32
    np.testing.assert_allclose(samples[0].mean(), 0.3, atol=0.01)  # x = 0.3 everywhere
    assert not np.array_equal(samples[0], samples[1])


@pytest.mark.parametrize("bad", [1.5, -0.25, float("nan")])
def test_bernoulli_probability_outside_zero_one_is_an_error(bad):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return flow.random.bernoulli(x, seed=1, name="coin")

    with pytest.raises(ValueError, match=r"bernoulli \(op 'coin'\): probability x\[1\] .* = "
                                         r"%s is not in \[0, 1\]" % re.escape(repr(bad))):
        job(np.array([0.5, bad, 0.5], np.float32))
    np.testing.assert_array_equal(job(np.array([0.0, 1.0, 1.0], np.float32)), [0, 1, 1])


MULTI_DEVICE_CASES = {
    "uniform": lambda x: flow.random.uniform((5, 3), minval=-1.0, maxval=1.0, seed=7),
    "normal": lambda x: flow.random.normal((3, 7), dtype=flow.float64, seed=8),
    "bernoulli": lambda x: flow.random.bernoulli(x, seed=9),
}


@pytest.mark.parametrize("name", sorted(MULTI_DEVICE_CASES))
def test_same_numbers_on_many_devices_under_every_signature(name):
    # Values depend on (seed, iteration, logical index) only, so every split reproduces them.
    inputs = [np.random.RandomState(0).uniform(0, 1, size=(5, 3))]
    fn = MULTI_DEVICE_CASES[name]
    reference = run_op(fn, inputs, train=False)
    runs = check_multi_device(fn, inputs, reference, train=False)
    forced = [run for run in runs if run.forced]
    assert forced, "no split signature was exercised"


def test_errors():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,), dtype=flow.int32)) -> tp.Numpy:
        with pytest.raises(ValueError, match="random.uniform: maxval 0 must be greater"):
            flow.random.uniform((2,), minval=1, maxval=0)
        with pytest.raises(TypeError, match="random.uniform: dtype must be float32 or float64"):
            flow.random.uniform((2,), dtype=flow.int32)
        with pytest.raises(ValueError, match="random.normal: stddev must be >= 0"):
            flow.random.normal((2,), stddev=-1.0)
        with pytest.raises(ValueError, match=r"random.normal: shape \(2, 0\) must have positive"):
            flow.random.normal((2, 0))
        with pytest.raises(TypeError, match="bernoulli: x holds probabilities"):
            flow.random.bernoulli(x)
        with pytest.raises(TypeError, match="bernoulli: seed must be an int"):
            flow.random.bernoulli(flow.cast(x, flow.float32), seed="1")
        return x

    job(np.zeros((2,), np.int32))
