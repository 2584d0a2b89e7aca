"""float16 compute on CPU devices (where gpu placements run without GPUs): ops without a float16
CPU kernel compute in float32 on the float16 values and round once (half_via_float_kernel.h);
batch normalization of float16 data keeps float32 parameters and statistics. References: the
same computation in PyTorch in float32 on the float16-rounded values."""
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
