"""float16 compute on CPU devices (where gpu placements run without GPUs): ops without a float16
CPU kernel compute in float32 on the float16 values and round once (half_via_float_kernel.h);
batch normalization of float16 data keeps float32 parameters and statistics. References: the
same computation in PyTorch in float32 on the float16-rounded values."""
import typing

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


def rounded(array):
    return array.astype(np.float16).astype(np.float32)


def half(tensor):
    """A torch float32 tensor rounded to float16 values."""
    return tensor.half().float()


@pytest.mark.parametrize("device_tag", ["cpu", "gpu"])
def test_matmul_relu_softmax_forward_and_backward(device_tag):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 5)).astype(np.float32)
    seen = {}

    @flow.global_function(type="train")
    def job(x_in: tp.Numpy.Placeholder((4, 6))) -> tp.Numpy:
        with flow.scope.placement(device_tag, "0:0"):
            weight = flow.get_variable("w", shape=(6, 5),
                                       initializer=flow.constant_initializer(0.0))
            offset = flow.get_variable("offset", shape=(4, 6),
                                       initializer=flow.constant_initializer(0.0))
            h = flow.matmul(flow.cast(x_in + offset, flow.float16),
                            flow.cast(weight, flow.float16))
            y = flow.nn.softmax(flow.nn.relu(h))
            flow.watch(y, lambda blob: seen.setdefault("y", blob.numpy()))
            flow.watch_diff(offset, lambda blob: seen.setdefault("dx", blob.numpy()))
            loss = flow.math.reduce_sum(flow.cast(y * h, flow.float))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(loss)
        return loss

    flow.load_variables({"w": w})
    loss = job(x)
    tx = torch.tensor(rounded(x), requires_grad=True)
    th = half(tx @ torch.tensor(rounded(w)))
    ty = half(torch.softmax(torch.relu(th), dim=1))
    tloss = half(ty * th).sum()
    tloss.backward()
    assert seen["y"].dtype == np.float16
    np.testing.assert_allclose(seen["y"].astype(np.float32), ty.detach().numpy(), atol=2e-3)
    np.testing.assert_allclose(loss, tloss.item(), rtol=5e-3)
    assert seen["dx"].dtype == np.float32
    np.testing.assert_allclose(seen["dx"], tx.grad.numpy(), rtol=2e-2, atol=2e-2)


def test_batch_norm_of_float16_data_trains_float32_parameters():
    x = np.random.RandomState(1).standard_normal((8, 3, 4, 4)).astype(np.float32) * 2 + 1

    @flow.global_function(type="train")
    def job(images: tp.Numpy.Placeholder((8, 3, 4, 4))) -> tp.Numpy:
        y = flow.layers.batch_normalization(flow.cast(images, flow.float16), axis=1,
                                            momentum=0.9, name="bn")
        loss = flow.math.reduce_sum(flow.cast(y, flow.float) * flow.cast(y, flow.float)) * 0.5
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01])).minimize(loss)
        return flow.cast(y, flow.float)

    y = job(x)
    variables = flow.get_all_variables()
    for name in ("bn-gamma", "bn-beta", "bn-moving_mean", "bn-moving_variance"):
        assert variables[name].numpy().dtype == np.float32, name

    tx = torch.tensor(rounded(x))
    gamma = torch.ones(3, requires_grad=True)
    beta = torch.zeros(3, requires_grad=True)
    running_mean, running_var = torch.zeros(3), torch.ones(3)
    ty = torch.nn.functional.batch_norm(tx, running_mean, running_var, gamma, beta,
                                        training=True, momentum=0.1, eps=1e-3)
    (half(ty) ** 2 / 2).sum().backward()
    np.testing.assert_allclose(y, ty.detach().numpy(), atol=4e-3)
    np.testing.assert_allclose(variables["bn-moving_mean"].numpy(), running_mean.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variables["bn-moving_variance"].numpy(), running_var.numpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(variables["bn-gamma"].numpy(), 1 - 0.01 * gamma.grad.numpy(),
                               rtol=1e-3)


def test_float16_variables_are_refused_clearly():
    @flow.global_function()
    def job() -> tp.Numpy:
        return flow.get_variable("v", shape=(2,), dtype=flow.float16,
                                 initializer=flow.zeros_initializer())

    with pytest.raises(NotImplementedError, match=r"no CPU kernel for op 'v' \(variable\) with "
                                                  r"dtype float16"):
        job()


FLOAT16_LOSS_CASES = {
    # name: (flow function of (prediction, label), torch function of the same, label kind)
    "softmax_cross_entropy": (
        lambda p, l: flow.nn.softmax_cross_entropy_with_logits(labels=l, logits=p),
        lambda p, l: -(l * torch.log_softmax(p, dim=1)).sum(dim=1), "probabilities"),
    "sigmoid_cross_entropy": (
        lambda p, l: flow.nn.sigmoid_cross_entropy_with_logits(labels=l, logits=p),
        lambda p, l: torch.nn.functional.binary_cross_entropy_with_logits(
            p, l, reduction="none"), "probabilities"),
    "sparse_softmax_cross_entropy": (
        lambda p, l: flow.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=p),
        lambda p, l: torch.nn.functional.cross_entropy(p, l, reduction="none"), "classes"),
}


@pytest.mark.parametrize("name", sorted(FLOAT16_LOSS_CASES))
def test_float16_losses_forward_and_backward(name):
    """The losses take float16 logits (OneFlow 0.3's float16 GPU cases); on the CPU they compute
    in float32 on the float16 values, forward and backward, as PyTorch does in float32."""
    flow_loss, torch_loss, label_kind = FLOAT16_LOSS_CASES[name]
    rng = np.random.RandomState(2)
    logits = rng.uniform(-3, 3, (6, 5)).astype(np.float32)
    if label_kind == "classes":
        labels = rng.randint(0, 5, (6,)).astype(np.int32)
        label_type = tp.Numpy.Placeholder((6,), dtype=flow.int32)
    else:
        labels = rng.dirichlet(np.ones(5), 6).astype(np.float32)
        label_type = tp.Numpy.Placeholder((6, 5))
    seen = {}
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((6, 5)), label: label_type) -> tp.Numpy:
        offset = flow.get_variable("offset", shape=(6, 5),
                                   initializer=flow.constant_initializer(0.0))
        x = flow.cast(x + offset, flow.float16)
        if label_kind != "classes":
            label = flow.cast(label, flow.float16)
        loss = flow_loss(x, label)
        flow.watch_diff(offset, lambda blob: seen.setdefault("dx", blob.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
            flow.cast(loss, flow.float))
        return flow.cast(loss, flow.float)

    loss = job(logits, labels)
    tx = torch.tensor(rounded(logits), requires_grad=True)
    tl = (torch.tensor(labels, dtype=torch.int64) if label_kind == "classes"
          else torch.tensor(rounded(labels)))
    expected = torch_loss(tx, tl)
    expected.sum().backward()
    np.testing.assert_allclose(loss, rounded(expected.detach().numpy()), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(seen["dx"], tx.grad.numpy(), rtol=1e-2, atol=2e-3)


def test_float16_fused_cast_scale_constant_prelu_upsample():
    """fused_cast_scale of float16 x (OneFlow 0.3's mixed-precision use), a float16 constant,
    prelu and upsample of float16 blobs: exact on float16-representable values."""
    x = np.random.RandomState(3).uniform(-2, 2, (2, 3, 4, 4)).astype(np.float32)
    flow.clear_default_session()

    @flow.global_function()
    def job(x_in: tp.Numpy.Placeholder((2, 3, 4, 4))) -> typing.Tuple[
            tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy]:
        h = flow.cast(x_in, flow.float16)
        scale = flow.constant(0.5, dtype=flow.float32, shape=(1,))
        scaled = (flow.user_op_builder("FusedCastScale").Op("fused_cast_scale")
                  .Input("x", [h]).Input("scalar", [scale]).Output("y").Build()
                  .InferAndTryRun().RemoteBlobList()[0])
        filled = flow.constant(1.5, dtype=flow.float16, shape=(2, 3))
        alpha = flow.cast(flow.constant(0.25, dtype=flow.float32, shape=(3, 1, 1)), flow.float16)
        prelu = (flow.user_op_builder("Prelu").Op("prelu").Input("x", [h])
                 .Input("alpha", [alpha]).Output("y").Build().InferAndTryRun()
                 .RemoteBlobList()[0])
        upsampled = flow.layers.upsample_2d(h, size=(2, 2))
        # float32 x, float16 scalar: x rounded to float16, then a float16 multiply.
        scaled16 = (flow.user_op_builder("FusedCastScale16").Op("fused_cast_scale")
                    .Input("x", [x_in])
                    .Input("scalar", [flow.constant(0.3, dtype=flow.float16, shape=(1,))])
                    .Output("y").Build().InferAndTryRun().RemoteBlobList()[0])
        return (scaled, flow.cast(filled, flow.float), flow.cast(prelu, flow.float),
                flow.cast(upsampled, flow.float), scaled16)

    scaled, filled, prelu, upsampled, scaled16 = job(x)
    hx = rounded(x)
    assert scaled.dtype == np.float32
    np.testing.assert_array_equal(scaled, hx * 0.5)
    assert scaled16.dtype == np.float16
    np.testing.assert_array_equal(scaled16, x.astype(np.float16) * np.float16(0.3))
    np.testing.assert_array_equal(filled, np.full((2, 3), 1.5, np.float32))
    np.testing.assert_array_equal(prelu, np.where(hx > 0, hx, hx * 0.25))
    np.testing.assert_array_equal(upsampled, hx.repeat(2, axis=2).repeat(2, axis=3))


def test_float16_python_ops_keep_fractional_values():
    """Python-side ops that read a number for a float16 blob (constant, pad, clip, divide by a
    scalar, reduce_mean) treat float16 as floating, not as an integer dtype; where selects it."""
    x = np.array([[0.75, -1.5, 2.25], [3.0, -0.25, 1.0]], np.float32)
    flow.clear_default_session()

    @flow.global_function()
    def job(x_in: tp.Numpy.Placeholder((2, 3))) -> typing.Tuple[
            tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy]:
        h = flow.cast(x_in, flow.float16)
        results = (flow.constant(0.5, dtype=flow.float16, shape=(2,)),
                   flow.pad(h, paddings=((0, 0), (1, 0)), constant_value=0.5),
                   flow.clip_by_value(h, -0.5, 1.5),
                   h / 4.0,
                   flow.math.reduce_mean(h, axis=1),
                   flow.where(flow.cast(x_in > 0.5, flow.int8), h, h * 2.0))
        return tuple(flow.cast(r, flow.float) for r in results)

    constant, padded, clipped, divided, mean, selected = job(x)
    np.testing.assert_array_equal(constant, [0.5, 0.5])
    np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (1, 0)), constant_values=0.5))
    np.testing.assert_array_equal(clipped, np.clip(x, -0.5, 1.5))
    np.testing.assert_array_equal(divided, x / 4)
    np.testing.assert_allclose(mean, x.mean(axis=1), rtol=1e-3)
    np.testing.assert_array_equal(selected, np.where(x > 0.5, x, x * 2))
