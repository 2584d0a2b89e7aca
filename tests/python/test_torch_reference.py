"""An MLP's loss and gradients against PyTorch 1.13 computed in the same process (the two
libraries must coexist: both register protobuf files)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

torch = pytest.importorskip("torch")

N, D, H, C = 8, 5, 7, 3


def differentiable(placeholder, name):
    """placeholder + a zero variable: the blob gets a gradient (OneFlow's test idiom)."""
    return placeholder + flow.get_variable(name, shape=placeholder.shape, dtype=placeholder.dtype,
                                           initializer=flow.zeros_initializer())


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_mlp_loss_and_gradients_match_torch(dtype, sgd, rng):
    np_dtype = flow.convert_oneflow_dtype_to_numpy_dtype(dtype)
    values = {
        "x": rng.randn(N, D), "w1": rng.randn(H, D) * 0.5, "b1": rng.randn(H) * 0.1,
        "w2": rng.randn(C, H) * 0.5, "b2": rng.randn(C) * 0.1,
    }
    values = {k: v.astype(np_dtype) for k, v in values.items()}
    labels = rng.randint(0, C, N).astype(np.int32)
    grads = {}

    def keep(name):
        def handler(diff: tp.Numpy):
            grads[name] = diff
        return handler

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((N, D), dtype=dtype),
            w1: tp.Numpy.Placeholder((H, D), dtype=dtype),
            b1: tp.Numpy.Placeholder((H,), dtype=dtype),
            w2: tp.Numpy.Placeholder((C, H), dtype=dtype),
            b2: tp.Numpy.Placeholder((C,), dtype=dtype),
            y: tp.Numpy.Placeholder((N,), dtype=flow.int32)) -> tp.Numpy:
        params = {}
        for name, blob in (("x", x), ("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)):
            params[name] = differentiable(blob, name + "_zero")
            flow.watch_diff(params[name], keep(name))
        hidden = flow.nn.relu(flow.nn.bias_add(
            flow.matmul(params["x"], params["w1"], transpose_b=True), params["b1"]))
        logits = flow.nn.bias_add(flow.matmul(hidden, params["w2"], transpose_b=True), params["b2"])
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
        sgd(0.0).minimize(loss)
        return loss

    loss = job(values["x"], values["w1"], values["b1"], values["w2"], values["b2"], labels)

    tensors = {k: torch.tensor(v, requires_grad=True) for k, v in values.items()}
    hidden = torch.relu(tensors["x"] @ tensors["w1"].T + tensors["b1"])
    logits = hidden @ tensors["w2"].T + tensors["b2"]
    expected = torch.nn.functional.cross_entropy(logits, torch.tensor(labels, dtype=torch.long),
                                                 reduction="none")
    expected.sum().backward()  # OneFlow seeds the loss diff with ones

    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == flow.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loss, expected.detach().numpy(), **tolerance)
    for name, tensor in tensors.items():
        np.testing.assert_allclose(grads[name], tensor.grad.numpy(), err_msg=name, **tolerance)
