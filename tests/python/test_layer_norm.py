"""flow.layers.layer_norm / flow.nn.layer_norm (rows from begin_norm_axis on, parameters from
begin_params_axis on) and flow.nn.InstanceNorm1d/2d/3d, against NumPy, finite differences and
PyTorch."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, run_op


def numpy_layer_norm(x, begin_norm_axis, gamma=None, beta=None, epsilon=1e-5):
    axes = tuple(range(begin_norm_axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    variance = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(variance + epsilon)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


@pytest.mark.parametrize("shape,begin_norm_axis,begin_params_axis",
                         [((4, 3, 5), 1, -1), ((4, 6), 1, 1), ((3, 4, 5), 2, 1),
                          ((2, 3, 4), -1, -1)], ids=str)
def test_nn_layer_norm_with_parameters(shape, begin_norm_axis, begin_params_axis):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=shape)
    params = shape[begin_params_axis % len(shape):]
    gamma, beta = rng.uniform(0.5, 2, size=params), rng.uniform(-1, 1, size=params)
    check_op(lambda x, g, b: flow.nn.layer_norm(x, g, b, begin_norm_axis, begin_params_axis),
             lambda x, g, b: numpy_layer_norm(x, begin_norm_axis % len(shape), g, b),
             inputs=[x, gamma, beta], weight_output=True)


def test_layers_layer_norm_without_parameters_float64():
    check_op(lambda x: flow.layers.layer_norm(x, center=False, scale=False),
             lambda x: numpy_layer_norm(x, 1), [(5, 3, 4)], weight_output=True)


def test_layers_layer_norm_float32_matches_torch():
    rng = np.random.RandomState(1)
    x = (rng.randn(16, 64) * 3 + 10).astype(np.float32)
    weight = rng.uniform(0.5, 2, size=x.shape).astype(np.float32)
    out, gradients = run_op(lambda b: flow.layers.layer_norm(b, begin_norm_axis=1), [x],
                            differentiable=[0], weight=weight)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.layer_norm(tx, (64,), eps=1e-5)
    (ty * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(out, ty.detach().numpy(), rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("rank", [3, 4, 5])
def test_instance_norm(rank):
    fn = {3: flow.nn.InstanceNorm1d, 4: flow.nn.InstanceNorm2d, 5: flow.nn.InstanceNorm3d}[rank]
    shape = (2, 3) + (4, 3, 2)[: rank - 2]
    torch_fn = lambda a: torch.nn.functional.instance_norm(torch.tensor(a), eps=1e-5).numpy()
    check_op(lambda x: fn(x, affine=False), torch_fn, [shape], weight_output=True,
             multi_device=rank == 4)
    out, _ = run_op(lambda x: fn(x, name="inorm"), [np.ones(shape) * 2.0], differentiable=[0])
    np.testing.assert_allclose(out, 0.0, atol=1e-12)  # gamma 1, beta 0 at start


def test_layer_norm_errors():
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((2, 3)), g: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        return flow.nn.layer_norm(x, gamma=g)

    with pytest.raises(ValueError, match=r"layer_norm: gamma \(4,\) must have shape \(3,\)"):
        job(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job2(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.layers.layer_norm(x, begin_norm_axis=3)

    with pytest.raises(ValueError, match="begin_norm_axis 3 is out of range"):
        job2(np.zeros((2, 3), np.float32))
