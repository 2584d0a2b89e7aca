"""flow.quantization (min_max_observer, moving_average_min_maxObserver, fake_quantization)
against NumPy written from OneFlow 0.3's documented formulas: per layer and per channel, the
symmetric and affine schemes, the google and cambricon formulas, 2 and 8 bits, float32 and
float64; the straight-through gradient; the moving averages over train calls (and a predict
job that only reads them); several devices against one; the errors."""
import math
import typing

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(300)


def reference_parameters(x, bit, scheme, formula, per_layer):
    """(scale, zero_point) arrays, one entry per layer or per channel (axis 0); cambricon is
    per layer whatever per_layer says, as in OneFlow."""
    rows = x.reshape(1 if per_layer or formula == "cambricon" else x.shape[0], -1)
    scales, zero_points = [], []
    for row in rows.astype(np.float64):
        if formula == "cambricon":
            scales.append(math.floor(math.log2(np.abs(row).max())) - (bit - 2))
            zero_points.append(0.0)
        elif scheme == "symmetric":
            scales.append(np.abs(row).max() / (2.0 ** (bit - 1) - 1))
            zero_points.append(0.0)
        else:
            scale = (row.max() - row.min()) / (2.0 ** bit - 1)
            scales.append(scale)
            zero_points.append(-row.min() / scale)
    return np.array(scales), np.array(zero_points)


def reference_fake_quantization(x, scales, zero_points, bit, scheme, formula):
    rows = x.reshape(len(scales), -1).astype(np.float64)
    out = np.empty_like(rows)
    for c, row in enumerate(rows):
        top = 2.0 ** (bit - 1) - 1  # signed levels are symmetric: -top .. top
        if formula == "cambricon":
            scale, zero_point, low, high = 2.0 ** scales[c], 0.0, -top, top
        elif scheme == "symmetric":
            scale, zero_point, low, high = scales[c], 0.0, -top, top
        else:
            scale, zero_point, low, high = scales[c], zero_points[c], 0.0, 2.0 ** bit - 1
        out[c] = (np.clip(np.rint(row / scale + zero_point), low, high) - zero_point) * scale
    return out.reshape(x.shape)


CASES = [(bit, scheme, formula, per_layer)
         for bit in (8, 2) for scheme in ("symmetric", "affine")
         for formula in ("google", "cambricon") for per_layer in (True, False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bit, scheme, formula, per_layer", CASES)
def test_min_max_observer_and_fake_quantization(bit, scheme, formula, per_layer, dtype):
    flow.clear_default_session()
    shape = (6, 5, 4)
    flow_dtype = flow.float32 if dtype == np.float32 else flow.float64
    seen = {}

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder(shape, dtype=flow_dtype)) -> typing.Tuple[
            tp.Numpy, tp.Numpy, tp.Numpy]:
        v = flow.get_variable("v", shape, dtype=flow_dtype,
                              initializer=flow.zeros_initializer())
        x = x + v
        flow.watch_diff(x, lambda d: seen.setdefault("dx", d))
        scale, zero_point = flow.quantization.min_max_observer(
            x, bit, scheme, formula, per_layer_quantization=per_layer)
        out = flow.quantization.fake_quantization(x, scale, zero_point, bit, scheme, formula)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
            flow.math.reduce_mean(out))
        return scale, zero_point, out

    x = (np.random.RandomState(bit).random_sample(shape) - 0.3).astype(dtype)
    scale, zero_point, out = job(x)
    expected_scale, expected_zero_point = reference_parameters(x, bit, scheme, formula,
                                                               per_layer)
    assert scale.dtype == dtype and zero_point.dtype == dtype
    np.testing.assert_allclose(scale, expected_scale, rtol=1e-6)
    np.testing.assert_allclose(zero_point, expected_zero_point, rtol=1e-5)
    # Quantize with the observed parameters: the same levels (up to rounding of the product),
    # except where x / scale lands within rounding of a tie.
    expected = reference_fake_quantization(x, scale.astype(np.float64), zero_point, bit, scheme,
                                           formula)
    step = np.broadcast_to(
        (2.0 ** scale if formula == "cambricon" else scale).reshape(
            (-1,) + (1,) * (len(shape) - 1)), shape)
    assert np.mean(np.abs(out - expected) > 1e-3 * step) < 0.01
    np.testing.assert_allclose(out, expected, atol=1.0001 * step.max())
    np.testing.assert_allclose(seen["dx"], np.full(shape, 1.0 / x.size), rtol=1e-6)


def test_fake_quantization_rounds_ties_to_even_and_clamps():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((8,)), scale: tp.Numpy.Placeholder((1,)),
            zero_point: tp.Numpy.Placeholder((1,))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        symmetric = flow.quantization.fake_quantization(x, scale, zero_point, 2)
        affine = flow.quantization.fake_quantization(x, scale, zero_point, 2, "affine")
        return symmetric, affine

    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 9.0, -9.0], np.float32)
    symmetric, affine = job(x, np.array([1.0], np.float32), np.array([1.0], np.float32))
    # 2-bit signed: levels -1..1 (symmetric, as OneFlow 0.3); ties to even.
    np.testing.assert_array_equal(symmetric, [0, 1, 1, -0, -1, -1, 1, -1])
    # 2-bit unsigned with zero point 1: levels 0..3 (rint(x + 1)), values -1..2.
    np.testing.assert_array_equal(affine, [1, 1, 2, -1, -1, -1, 2, -1])
    # A fractional zero point is used as it is (not rounded first): rint(x + 0.6) - 0.6.
    _, shifted = job(x, np.array([1.0], np.float32), np.array([0.6], np.float32))
    np.testing.assert_allclose(shifted, np.clip(np.rint(x + 0.6), 0, 3) - 0.6, rtol=1e-6)


def test_constant_input_gets_scale_zero_and_passes_unchanged():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3, 4))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        scale, zero_point = flow.quantization.min_max_observer(x, quantization_scheme="affine")
        return scale, flow.quantization.fake_quantization(x, scale, zero_point,
                                                          quantization_scheme="affine")

    x = np.full((3, 4), 0.25, np.float32)
    scale, out = job(x)
    np.testing.assert_array_equal(scale, [0.0])
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("scheme, formula", [("symmetric", "google"), ("affine", "google"),
                                             ("symmetric", "cambricon")])
def test_moving_average_observer_follows_its_formula(scheme, formula):
    flow.clear_default_session()
    momentum, bit = 0.9, 8

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((16,))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        v = flow.get_variable("v", (16,), initializer=flow.zeros_initializer())
        scale, zero_point = flow.quantization.moving_average_min_maxObserver(
            x, bit, scheme, formula, momentum, name="observer")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
            flow.math.reduce_mean(x + v))
        return scale, zero_point

    @flow.global_function()
    def evaluate(x: tp.Numpy.Placeholder((16,))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        return flow.quantization.moving_average_min_maxObserver(x, bit, scheme, formula,
                                                                momentum, name="observer")

    rng = np.random.RandomState(4)
    moving_max = moving_min = None
    for step in range(5):
        x = (rng.random_sample(16) * (step + 1) - 0.3).astype(np.float32)
        high = np.abs(x).max() if scheme == "symmetric" else x.max()
        low = high if scheme == "symmetric" else x.min()
        moving_max = high if moving_max is None else moving_max * momentum + high * (1 - momentum)
        moving_min = low if moving_min is None else moving_min * momentum + low * (1 - momentum)
        scale, zero_point = train(x)
        if formula == "cambricon":
            np.testing.assert_array_equal(scale, [math.floor(math.log2(moving_max)) - (bit - 2)])
        elif scheme == "symmetric":
            np.testing.assert_allclose(scale, [moving_max / 127.0], rtol=1e-5)
            np.testing.assert_array_equal(zero_point, [0.0])
        else:
            expected = (moving_max - moving_min) / 255.0
            np.testing.assert_allclose(scale, [expected], rtol=1e-5)
            np.testing.assert_allclose(zero_point, [-moving_min / expected], rtol=1e-5)
    # A predict job reads the averages and leaves them as they are.
    before = evaluate(np.full(16, 100.0, np.float32))
    after = evaluate(np.full(16, -100.0, np.float32))
    np.testing.assert_array_equal(before[0], scale)
    np.testing.assert_array_equal(after[0], scale)
    assert flow.get_all_variables()["observer-moving_max"].shape == (1,)


def test_several_devices_match_one():
    x = (np.random.RandomState(1).random_sample((8, 6)) - 0.5).astype(np.float32)
    results = []
    for devices in (1, 2):
        flow.clear_default_session()
        flow.config.cpu_device_num(devices)

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((8, 6))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
            with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
                scale, zero_point = flow.quantization.min_max_observer(
                    x, quantization_scheme="affine", per_layer_quantization=False)
                return scale, flow.quantization.fake_quantization(
                    x, scale, zero_point, quantization_scheme="affine")

        results.append(job(x))
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)


def _observe_and_quantize(device, x, bit, scheme, formula, per_layer, steps):
    """scale, zero_point, fake-quantized x of min_max_observer and, over `steps` train calls, of
    the moving-average observer, with every quantization op on `device` ("cpu" or "gpu")."""
    flow.clear_default_session()
    flow_dtype = flow.float32 if x.dtype == np.float32 else flow.float64

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder(x.shape, dtype=flow_dtype)) -> typing.Tuple[
            tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy]:
        v = flow.get_variable("v", x.shape, dtype=flow_dtype,
                              initializer=flow.zeros_initializer())
        with flow.scope.placement(device, "0:0"):
            y = x + v
            scale, zero_point = flow.quantization.min_max_observer(
                y, bit, scheme, formula, per_layer_quantization=per_layer)
            out = flow.quantization.fake_quantization(y, scale, zero_point, bit, scheme, formula)
            moving_scale, moving_zero_point = flow.quantization.moving_average_min_maxObserver(
                y, bit, scheme, formula, 0.9, name="observer")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
            flow.math.reduce_mean(out))
        return scale, zero_point, out, moving_scale, moving_zero_point

    return [job(x * (step + 1)) for step in range(steps)]


@pytest.mark.skipif(flow.sysconfig.gpus_in_use() == 0,
                    reason="GPU kernels of the quantization ops: no GPU in use "
                           "(flow.sysconfig.gpus_in_use() == 0)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bit, scheme, formula, per_layer", CASES)
def test_gpu_kernels_match_the_cpu(bit, scheme, formula, per_layer, dtype):
    x = (np.random.RandomState(bit).random_sample((6, 5, 4)) - 0.3).astype(dtype)
    cpu = _observe_and_quantize("cpu", x, bit, scheme, formula, per_layer, steps=3)
    gpu = _observe_and_quantize("gpu", x, bit, scheme, formula, per_layer, steps=3)
    for cpu_step, gpu_step in zip(cpu, gpu):
        for expected, actual in zip(cpu_step, gpu_step):
            np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("body, error, pattern", [
    (lambda x: flow.quantization.min_max_observer(x, quantization_bit=9), ValueError,
     r"min_max_observer: quantization_bit must be in \[2, 8\], got 9"),
    (lambda x: flow.quantization.min_max_observer(x, quantization_scheme="asymmetric"),
     ValueError, 'quantization_scheme must be "symmetric" or "affine", got "asymmetric"'),
    (lambda x: flow.quantization.min_max_observer(x, quantization_formula="tensorrt"),
     ValueError, 'quantization_formula must be "google" or "cambricon", got "tensorrt"'),
    (lambda x: flow.quantization.fake_quantization(
        x, *flow.quantization.min_max_observer(x, per_layer_quantization=False),
        quantization_formula="cambricon"),
     ValueError, "the cambricon formula quantizes per layer only"),
    (lambda x: flow.quantization.fake_quantization(
        x, *flow.quantization.min_max_observer(flow.transpose(x, [1, 0]),
                                               per_layer_quantization=False)),
     ValueError, r"fake_quantization: scale must have shape \(1,\) \(per layer\) or \(4,\)"),
    (lambda x: flow.quantization.min_max_observer(flow.cast(x, flow.int32)), TypeError,
     "min_max_observer"),
    (lambda x: flow.quantization.min_max_observer(x, quantization_bit=8.0), TypeError,
     "quantization_bit must be an int"),
])
def test_errors(body, error, pattern):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        return body(x)[0]

    with pytest.raises(error, match=pattern):
        job(np.ones((4, 3), np.float32))
