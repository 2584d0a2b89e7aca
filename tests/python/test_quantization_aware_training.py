"""FunctionConfig.enable_qat (the quantization_aware_training pass) against PyTorch models that
fake-quantize the same blobs by hand, written from OneFlow's pass: a conv2d -> bias_add -> relu
-> max_pool -> reshape -> dense network trained with SGD (outputs and weights after each step,
the straight-through gradient, the moving ranges), on one and on two devices; a training batch
normalization; a predict job reading the ranges a train job learnt; the cambricon backend; and
the configuration errors. Inputs have outliers, so 8-bit rounding changes every result far beyond
the tolerances (checked against the unquantized model)."""
import typing

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(300)

BATCH, CHANNELS, SIZE, FILTERS, CLASSES = 4, 2, 6, 3, 5
LR, MOMENTUM = 0.1, 0.95
LEVELS = 127.0  # signed 8 bits, symmetric around 0 as OneFlow's kernels


def qat_config(stop_update_after_iters=1000, **settings):
    config = flow.FunctionConfig()
    config.enable_qat(True)
    config.qat.symmetric(True)
    config.qat.per_channel_weight_quantization(False)
    config.qat.moving_min_max_stop_update_after_iters(stop_update_after_iters)
    for name, value in settings.items():
        getattr(config.qat, name)(value)
    return config


def fake_quantize(t, scale, levels=LEVELS):
    """Rounded to `levels` signed steps of `scale` (a tensor broadcast over t's axis 0, or a
    number); the gradient passes straight through; scale 0 passes t unchanged."""
    scale = torch.as_tensor(scale, dtype=t.dtype)
    if scale.dim() == 1 and scale.numel() > 1:
        scale = scale.reshape((-1,) + (1,) * (t.dim() - 1))
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    q = torch.where(scale == 0, t, torch.clamp(torch.round(t / safe), -levels, levels) * safe)
    return t + (q - t).detach()


class MovingRange:
    """moving_average_min_max_observer (symmetric): max |x| of the first batch, then
    range * momentum + batch max |x| * (1 - momentum) while updating."""

    def __init__(self):
        self.value = 0.0

    def observe(self, t, update=True):
        batch = float(t.detach().abs().max())
        if update:
            self.value = batch if self.value == 0 else self.value * MOMENTUM + batch * (
                1 - MOMENTUM)
        return self.value / LEVELS


def weight_scale(w):
    return float(w.detach().abs().max()) / LEVELS


def outlier_data(seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-0.3, 0.3, (BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    x[0, 0, 0, 0] = 6.0  # one outlier: most values land on a few 8-bit levels
    labels = rng.randint(0, CLASSES, BATCH).astype(np.int32)
    return x, labels


def initial_weights():
    rng = np.random.RandomState(3)
    conv = rng.uniform(-0.5, 0.5, (FILTERS, CHANNELS, 3, 3)).astype(np.float32)
    conv[0, 0, 0, 0] = 2.0
    bias = rng.uniform(-0.5, 0.5, (FILTERS,)).astype(np.float32)
    dense = rng.uniform(-0.5, 0.5, (CLASSES, FILTERS * 9)).astype(np.float32)
    dense_bias = rng.uniform(-0.5, 0.5, (CLASSES,)).astype(np.float32)
    return {"conv1-weight": conv, "conv1-bias": bias, "dense1-weight": dense,
            "dense1-bias": dense_bias}


def network(x):
    h = flow.layers.conv2d(x, FILTERS, 3, padding="SAME", activation=flow.nn.relu,
                           name="conv1")
    p = flow.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")
    r = flow.reshape(p, (p.shape[0], -1), name="flatten")
    return flow.layers.dense(r, CLASSES, name="dense1")


class TorchNetwork:
    """network() in PyTorch with the pass's fake quantizations written out."""

    def __init__(self, weights, quantize=True):
        self.w = {name: torch.tensor(value, requires_grad=True)
                  for name, value in weights.items()}
        self.quantize = quantize
        self.ranges = {name: MovingRange() for name in ("x", "relu", "pool", "matmul")}

    def activation(self, name, t, update):
        if not self.quantize:
            return t
        return fake_quantize(t, self.ranges[name].observe(t, update))

    def forward(self, x, update=True):
        w = self.w
        quantize = self.quantize
        x = self.activation("x", torch.tensor(x), update)
        conv_w = fake_quantize(w["conv1-weight"], weight_scale(w["conv1-weight"])) \
            if quantize else w["conv1-weight"]
        bias = w["conv1-bias"]
        if quantize:  # int32 bias of the accumulator's scale
            bias = fake_quantize(bias, self.ranges["x"].value / LEVELS *
                                 weight_scale(w["conv1-weight"]), levels=2.0 ** 31 - 1)
        h = self.activation("relu", F.relu(F.conv2d(x, conv_w, padding=1) + bias.reshape(
            1, -1, 1, 1)), update)
        p = self.activation("pool", F.max_pool2d(h, 2, 2), update)
        r = p.reshape(p.shape[0], -1)
        dense_w = fake_quantize(w["dense1-weight"], weight_scale(w["dense1-weight"])) \
            if quantize else w["dense1-weight"]
        m = self.activation("matmul", r @ dense_w.t(), update)
        return m + w["dense1-bias"]

    def train_step(self, x, labels, devices=1):
        logits = self.forward(x)
        # OneFlow's minimize averages a per-example loss; in the mirrored view each device's,
        # and the devices' gradients add up.
        loss = sum(F.cross_entropy(part, torch.tensor(part_labels, dtype=torch.long))
                   for part, part_labels in zip(logits.chunk(devices), np.split(labels, devices)))
        loss.backward()
        with torch.no_grad():
            for value in self.w.values():
                value -= LR * value.grad
                value.grad = None
        return logits.detach().numpy()


def make_train_job(config, devices=1):
    weights = initial_weights()

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.Numpy.Placeholder((BATCH, CHANNELS, SIZE, SIZE)),
              labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            logits = network(x)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]),
                               momentum=0).minimize(loss)
        return logits

    flow.load_variables(weights)
    return train, weights


def moving_ranges():
    return {name: float(value.numpy()[0]) for name, value in flow.get_all_variables().items()
            if name.endswith("-fake-quant-moving-max")}


@pytest.mark.parametrize("devices", [1, 2])
def test_train_job_matches_the_fake_quantized_torch_model(devices):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    train, weights = make_train_job(qat_config(), devices)
    reference = TorchNetwork(weights)
    unquantized = TorchNetwork(weights, quantize=False)
    for step in range(3):
        x, labels = outlier_data(step)
        logits = train(x, labels)
        expected = reference.train_step(x, labels)
        np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)
        # 8-bit rounding moved the logits far beyond that tolerance.
        assert np.abs(unquantized.train_step(x, labels) - expected).max() > 1e-2
    variables = flow.get_all_variables()
    for name, value in reference.w.items():
        np.testing.assert_allclose(variables[name].numpy(), value.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    # One moving range per activation observer: input, relu, pool and matmul outputs.
    ranges = moving_ranges()
    assert len(ranges) == 4, sorted(ranges)
    assert ranges["conv1-activation-y_0-fake-quant-observer-fake-quant-moving-max"] == \
        pytest.approx(reference.ranges["relu"].value, rel=1e-5)
    assert ranges["pool1-y_0-fake-quant-observer-fake-quant-moving-max"] == pytest.approx(
        reference.ranges["pool"].value, rel=1e-5)
    assert sorted(ranges.values()) == pytest.approx(
        sorted(r.value for r in reference.ranges.values()), rel=1e-5)


def test_mirrored_view_quantizes_with_the_parameters_of_all_devices():
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    config = qat_config()
    config.default_logical_view(flow.scope.mirrored_view())
    half = BATCH // 2

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.ListNumpy.Placeholder((half, CHANNELS, SIZE, SIZE)),
              labels: tp.ListNumpy.Placeholder((half,), dtype=flow.int32)) -> tp.ListNumpy:
        with flow.scope.placement("cpu", "0:0-1"):
            logits = network(x)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]),
                               momentum=0).minimize(loss)
        return logits

    weights = initial_weights()
    flow.load_variables(weights)
    reference = TorchNetwork(weights)
    for step in range(3):
        x, labels = outlier_data(step)
        logits = train([x[:half], x[half:]], [labels[:half], labels[half:]])
        expected = reference.train_step(x, labels, devices=2)
        np.testing.assert_allclose(np.concatenate(logits), expected, rtol=1e-4, atol=1e-5)
    # The observers saw both devices' values, under the consistent view's names.
    ranges = moving_ranges()
    assert ranges["Input_x-out_0-fake-quant-observer-fake-quant-moving-max"] == pytest.approx(
        reference.ranges["x"].value, rel=1e-6)
    assert sorted(ranges.values()) == pytest.approx(
        sorted(r.value for r in reference.ranges.values()), rel=1e-5)


def test_moving_ranges_stop_updating_after_the_configured_step():
    flow.clear_default_session()
    train, weights = make_train_job(qat_config(stop_update_after_iters=1))
    reference = TorchNetwork(weights)
    for step in range(4):
        x, labels = outlier_data(step)
        train(x, labels)
        if step <= 1:
            reference.train_step(x, labels)
            first_ranges = moving_ranges()
    # Steps 0 and 1 updated the ranges; steps 2 and 3 kept them.
    assert moving_ranges() == first_ranges
    assert sorted(first_ranges.values()) == pytest.approx(
        sorted(r.value for r in reference.ranges.values()), rel=1e-5)


def test_predict_job_reads_the_ranges_the_train_job_learnt():
    flow.clear_default_session()
    config = qat_config()
    train, weights = make_train_job(config)

    @flow.global_function(function_config=config)
    def predict(x: tp.Numpy.Placeholder((BATCH, CHANNELS, SIZE, SIZE))) -> tp.Numpy:
        return network(x)

    reference = TorchNetwork(weights)
    for step in range(2):
        x, labels = outlier_data(step)
        train(x, labels)
        reference.train_step(x, labels)
    learnt = moving_ranges()
    x, _ = outlier_data(5)
    out = predict(x)
    assert moving_ranges() == learnt  # a predict job only reads them
    # Input blobs are named after the argument ("Input_x/out_0"), so the input's range is the
    # train job's too.
    assert "Input_x-out_0-fake-quant-observer-fake-quant-moving-max" in learnt
    with torch.no_grad():
        expected = reference.forward(x, update=False).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_training_batch_normalization_inputs_stay_unrounded_and_its_relu_output_is_rounded():
    flow.clear_default_session()
    rng = np.random.RandomState(0)
    x = rng.uniform(-0.3, 0.3, (BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    x[1, 1, 2, 2] = 5.0
    w = rng.uniform(-0.5, 0.5, (FILTERS, CHANNELS, 3, 3)).astype(np.float32)

    @flow.global_function(type="train", function_config=qat_config())
    def train(x: tp.Numpy.Placeholder(x.shape)) -> tp.Numpy:
        conv = flow.layers.conv2d(x, FILTERS, 3, padding="SAME", use_bias=False, name="conv1")
        bn = flow.layers.batch_normalization(conv, axis=1, name="bn1")
        y = flow.nn.relu(bn, name="relu1")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]),
                           momentum=0).minimize(flow.math.reduce_mean(y))
        return y

    flow.load_variables({"conv1-weight": w})
    y = train(x)
    xt = torch.tensor(x)
    xq = fake_quantize(xt, float(xt.abs().max()) / LEVELS)
    wt = torch.tensor(w)
    conv = F.conv2d(xq, fake_quantize(wt, weight_scale(wt)), padding=1)
    h = F.relu(F.batch_norm(conv, None, None, training=True, eps=0.001))
    # The return op reads the relu, the fused group's output: it is rounded.
    expected = fake_quantize(h, float(h.abs().max()) / LEVELS).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
    # No range for the normalization's input (it folds into the convolution).
    assert len(moving_ranges()) == 2, sorted(moving_ranges())


def test_cambricon_backend_rounds_matmul_inputs_to_power_of_two_scales():
    flow.clear_default_session()
    rng = np.random.RandomState(1)
    x = rng.uniform(-3, 3, (BATCH, 6)).astype(np.float32)
    w = rng.uniform(-0.7, 0.7, (CLASSES, 6)).astype(np.float32)

    @flow.global_function(type="train", function_config=qat_config(target_backend="cambricon"))
    def train(x: tp.Numpy.Placeholder(x.shape)) -> tp.Numpy:
        out = flow.layers.dense(x, CLASSES, use_bias=False, name="dense1")
        y = flow.math.sigmoid(out)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]),
                           momentum=0).minimize(flow.math.reduce_mean(y))
        return y

    flow.load_variables({"dense1-weight": w})
    y = train(x)

    def power_of_two(t):  # cambricon: 2^(floor(log2(max|t|)) - 6) for 8 bits
        return 2.0 ** (np.floor(np.log2(np.abs(t).max())) - 6)

    expected = torch.sigmoid(fake_quantize(torch.tensor(x), power_of_two(x)) @ fake_quantize(
        torch.tensor(w), power_of_two(w)).t()).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    assert np.abs(expected - 1 / (1 + np.exp(-(x @ w.T)))).max() > 1e-3


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("use_bias", [True, False])
def test_oneflow_qat_test_configurations_train(per_channel, symmetric, use_bias):
    # OneFlow's test_qat.py: a conv2d layer under each QAT configuration trains.
    flow.clear_default_session()
    shape = (2, 8, 10, 12)

    @flow.global_function(type="train", function_config=qat_config(
        per_channel_weight_quantization=per_channel, symmetric=symmetric))
    def foo(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        y = flow.layers.conv2d(x, 4, 3, 1, "SAME", use_bias=use_bias, name="conv")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [5]),
                           momentum=0).minimize(y)
        return y

    x = np.random.RandomState(0).uniform(-1, 1, shape).astype(np.float32)
    y0 = foo(x)
    y1 = foo(x)
    assert y0.shape == (2, 4, 10, 12) and np.isfinite(y0).all() and np.isfinite(y1).all()
    assert not np.allclose(y0, y1)  # the weights moved
    # Ranges of the input and of the layer's output (the conv2d, or its bias_add).
    assert len(moving_ranges()) == 2, sorted(moving_ranges())
    if use_bias:  # the bias's zero point: one per output channel with per-channel weights
        zero_point = flow.get_all_variables()["conv-bias-out_0-fake-quant-zp"].numpy()
        assert zero_point.shape == ((4,) if per_channel else (1,))


def test_configuration_errors_are_clear():
    flow.clear_default_session()
    config = flow.FunctionConfig()
    config.enable_qat(True)

    @flow.global_function(function_config=config)
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.layers.dense(x, 4, name="dense1")

    with pytest.raises(ValueError, match="moving_min_max_stop_update_after_iters"):
        job(np.zeros((2, 3), np.float32))
    config = flow.FunctionConfig()
    with pytest.raises(ValueError, match="target_backend must be one of"):
        config.qat.target_backend("tensorrt8")
    with pytest.raises(ValueError, match="moving_min_max_momentum"):
        config.qat.moving_min_max_momentum(1.5)
    with pytest.raises(ValueError, match="stop_update_after_iters takes an int"):
        config.qat.moving_min_max_stop_update_after_iters(-1)
    with pytest.raises(TypeError, match="enable_qat takes a bool"):
        config.enable_qat("yes")
    with pytest.raises(TypeError, match="qat.symmetric takes a bool"):
        config.qat.symmetric(1)
    config.enable_quantization_aware_training(True)
    assert config.function_desc.enable_qat is True


def test_jobs_without_int8_ops_are_unchanged_and_float64_blobs_are_left_alone():
    flow.clear_default_session()
    config = qat_config()
    config.default_data_type(flow.float64)

    @flow.global_function(function_config=config)
    def job(x: tp.Numpy.Placeholder((2, 3), dtype=flow.float64)) -> typing.Tuple[
            tp.Numpy, tp.Numpy]:
        w = flow.get_variable("w", (4, 3), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.3))
        return flow.matmul(x, w, transpose_b=True), flow.math.tanh(x)

    x = np.random.RandomState(0).uniform(-1, 1, (2, 3))
    product, tanh = job(x)
    np.testing.assert_allclose(product, x @ np.full((4, 3), 0.3).T, rtol=1e-12)
    np.testing.assert_allclose(tanh, np.tanh(x), rtol=1e-12)
    assert not moving_ranges()
