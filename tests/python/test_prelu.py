"""flow.layers.prelu and its op prelu: forward against NumPy, float64 gradients of x and alpha
against finite differences with alpha shared over various axes, every declared SBP signature
on 2-4 devices (check_op); the layer's variable, its initializer, shared_axes and training
(one SGD step against the hand-computed alpha update); prelu_grad alone under its signatures;
the errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.ops.prelu_ops import prelu_op
from op_checker import check_op, random_inputs


def numpy_prelu(x, alpha):
    return np.where(x > 0, x, alpha * x)


@pytest.mark.parametrize("x_shape, alpha_shape", [
    ((2, 3, 4, 5), (3, 1, 1)),   # one alpha per channel (shared_axes=[2, 3])
    ((2, 3, 4, 5), (3, 4, 5)),   # the layer's default: no shared axes
    ((3, 4, 5), (1, 5)),         # shared over axis 1
    ((4, 6), (6,)),
])
def test_prelu_float64(x_shape, alpha_shape):
    x, alpha = random_inputs([x_shape, alpha_shape], flow.float64, seed=2)
    alpha = 0.1 + 0.4 * (alpha + 1.0)  # in (0.1, 0.9)
    out, gradients = check_op(prelu_op, numpy_prelu, inputs=[x, alpha], weight_output=True)
    assert out.shape == x_shape and gradients[1].shape == alpha_shape


def test_prelu_float32():
    check_op(prelu_op, numpy_prelu, [(4, 8, 6, 6), (8, 1, 1)], flow.float32)


def test_prelu_grad_op():
    """prelu_grad alone, so that the multi-device pass runs each of its signatures."""
    from oneflow.framework import op_builder

    x, alpha, dy = random_inputs([(3, 4, 5), (4, 1), (3, 4, 5)], flow.float64, seed=6)

    def flow_fn(x_blob, alpha_blob, dy_blob):
        return op_builder.add_op("prelu_grad", op_builder.op_name(None, "PReluGrad"),
                                 {"x": x_blob, "alpha": alpha_blob, "dy": dy_blob})["dx"][0]

    dx, _ = check_op(flow_fn, lambda x, a, dy: np.where(x > 0, dy, a * dy), inputs=[x, alpha, dy],
                     differentiable=[])
    assert np.all(dx[x > 0] == dy[x > 0])


def test_layers_prelu_variable_and_training_step():
    """alpha initialised to 0.25, one alpha per channel; one SGD step (lr 0.5) on
    loss = sum(prelu(x)) moves alpha by -0.5 * sum over batch and space of min(x, 0)."""
    flow.clear_default_session()
    x = random_inputs([(2, 3, 4, 4)], flow.float32, seed=8)[0]

    @flow.global_function(type="train")
    def job(images: tp.Numpy.Placeholder((2, 3, 4, 4))) -> tp.Numpy:
        y = flow.layers.prelu(images, alpha_initializer=flow.constant_initializer(0.25),
                              shared_axes=[2, 3], name="act")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                           momentum=0).minimize(flow.math.reduce_sum(y))
        return y

    out = job(x)
    np.testing.assert_allclose(out, numpy_prelu(x, 0.25), rtol=1e-6)
    alpha = flow.get_all_variables()["act-alpha"].numpy()
    assert alpha.shape == (3, 1, 1)
    expected = 0.25 - 0.5 * np.minimum(x, 0).sum(axis=(0, 2, 3)).reshape(3, 1, 1)
    np.testing.assert_allclose(alpha, expected, rtol=1e-5)


def test_layers_prelu_defaults_and_frozen_alpha():
    """Default alpha is 0 (so prelu is relu) of shape inputs.shape[1:]; trainable=False keeps
    it out of training while the gradient still reaches the input."""
    flow.clear_default_session()
    x = random_inputs([(2, 5)], flow.float32, seed=9)[0]
    gradients = []

    @flow.global_function(type="train")
    def job(values: tp.Numpy.Placeholder((2, 5))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2, 5), initializer=flow.zeros_initializer())
        inputs = values + w
        flow.watch_diff(inputs, lambda diff: gradients.append(np.array(diff)))
        y = flow.layers.prelu(inputs, trainable=False)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(y)
        return y

    out = job(x)
    np.testing.assert_allclose(out, np.maximum(x, 0))
    variables = flow.get_all_variables()
    np.testing.assert_array_equal(variables["PRelu-alpha"].numpy(), np.zeros(5, np.float32))
    np.testing.assert_array_equal(gradients[0], (x > 0).astype(np.float32))


def _prelu_error(shape, **kwargs):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return flow.layers.prelu(x, **kwargs)

    job(np.zeros(shape, np.float32))


@pytest.mark.parametrize("shape, kwargs, error, message", [
    ((2, 3), dict(shared_axes=[0]), ValueError, r"layers.prelu: each shared axis must be an int "
                                                r"in \[1, 2\)"),
    ((2, 3), dict(shared_axes=[2]), ValueError, r"layers.prelu: each shared axis"),
    ((2, 3), dict(shared_axes=1), TypeError, r"layers.prelu: shared_axes must be a list"),
    ((4,), dict(), ValueError, r"layers.prelu: inputs must have at least 2 dims"),
])
def test_layers_prelu_errors(shape, kwargs, error, message):
    with pytest.raises(error, match=message):
        _prelu_error(shape, **kwargs)


def test_prelu_op_rejects_alpha_that_does_not_broadcast():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3, 4)), a: tp.Numpy.Placeholder((4, 1))) -> tp.Numpy:
        return prelu_op(x, a)

    with pytest.raises(ValueError, match=r"prelu: alpha \(4, 1\) must broadcast to x \(2, 3, 4\)"):
        job(np.zeros((2, 3, 4), np.float32), np.zeros((4, 1), np.float32))


def test_layers_prelu_twice_with_one_name_fails_like_oneflow():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.layers.prelu(flow.layers.prelu(x))

    with pytest.raises(ValueError, match="PRelu-alpha.*already exists"):
        job(np.zeros((2, 3), np.float32))
