"""Batch normalization: flow.nn.batch_normalization (given statistics, differentiable in every
input), flow.layers.batch_normalization (batch statistics in train jobs, global over devices;
moving statistics updated in place and used in predict jobs), its _relu / _add_relu variants,
and errors."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, run_op


def numpy_normalize(x, mean, variance, offset, scale, epsilon, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = 1.0 / np.sqrt(variance.reshape(shape) + epsilon)
    return (x - mean.reshape(shape)) * inv * scale.reshape(shape) + offset.reshape(shape)


def numpy_batch_norm(x, axis, epsilon=1e-3):
    axes = tuple(a for a in range(x.ndim) if a != axis)
    mean = x.mean(axis=axes)
    variance = x.var(axis=axes)
    ones = np.ones_like(mean)
    return numpy_normalize(x, mean, variance, 0 * ones, ones, epsilon, axis)


@pytest.mark.parametrize("axis", [1, -1])
def test_nn_batch_normalization_all_gradients(axis):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(3, 4, 5))
    channels = x.shape[axis]
    mean = rng.uniform(-0.5, 0.5, size=channels)
    variance = rng.uniform(0.5, 1.5, size=channels)
    offset = rng.uniform(-1, 1, size=channels)
    scale = rng.uniform(0.5, 2, size=channels)
    check_op(
        lambda x, m, v, o, s: flow.nn.batch_normalization(x, m, v, o, s, 1e-5, axis=axis),
        lambda x, m, v, o, s: numpy_normalize(x, m, v, o, s, 1e-5, axis % 3),
        inputs=[x, mean, variance, offset, scale], weight_output=True)


def test_nn_batch_normalization_without_offset_and_scale():
    rng = np.random.RandomState(1)
    x = rng.randn(2, 3, 4).astype(np.float32)
    mean, variance = rng.randn(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    check_op(lambda x, m, v: flow.nn.batch_normalization(x, m, v, variance_epsilon=1e-3),
             lambda x, m, v: numpy_normalize(x, m, v, np.zeros(3), np.ones(3), 1e-3, 1)
             .astype(np.float32), inputs=[x, mean, variance])


@pytest.mark.parametrize("shape,axis", [((6, 3, 4, 5), 1), ((8, 5), -1), ((4, 3, 2), 2)],
                         ids=str)
def test_train_batch_norm_matches_numpy_and_finite_differences(shape, axis):
    # Batch statistics over every axis but `axis`; the gradient goes through them. The
    # multi-device pass splits the batch (partial sums of the statistics) and the channels.
    check_op(lambda x: flow.layers.batch_normalization(x, axis=axis, name="bn"),
             lambda x: numpy_batch_norm(x, axis % len(shape)), [shape], flow.float64,
             weight_output=True)


def test_train_batch_norm_float32_forward_and_backward_match_torch():
    rng = np.random.RandomState(2)
    x = (rng.randn(8, 6, 5, 5) * 2 + 3).astype(np.float32)
    weight = rng.uniform(0.5, 2, size=x.shape).astype(np.float32)
    out, gradients = run_op(lambda b: flow.layers.batch_normalization(b, axis=1, epsilon=1e-5),
                            [x], differentiable=[0], weight=weight)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.batch_norm(tx, None, None, training=True, eps=1e-5)
    (ty * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(out, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_float32_statistics_are_accurate_for_many_elements():
    # 2^18 elements per channel, far from zero: blocked float sums into double keep the
    # normalised output at float32 rounding level.
    rng = np.random.RandomState(3)
    x = (rng.randn(64, 2, 64, 64) + 50.0).astype(np.float32)
    out, _ = run_op(lambda b: flow.layers.batch_normalization(b, axis=1), [x], differentiable=[0])
    expected = numpy_batch_norm(x.astype(np.float64), 1)
    np.testing.assert_allclose(out, expected, atol=2e-5)


def _train_and_predict(steps, x_batches, x_eval, momentum, axis=1):
    flow.clear_default_session()
    shape = x_batches[0].shape

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        y = flow.layers.batch_normalization(x, axis=axis, momentum=momentum, epsilon=1e-5,
                                            name="bn")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(y)
        return y

    @flow.global_function(type="predict")
    def predict(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return flow.layers.batch_normalization(x, axis=axis, momentum=momentum, epsilon=1e-5,
                                               name="bn")

    for step in range(steps):
        train(x_batches[step])
    out = predict(x_eval)
    variables = flow.get_all_variables()
    return out, variables["bn-moving_mean"].numpy(), variables["bn-moving_variance"].numpy()


@pytest.mark.parametrize("devices", [1, 2])
def test_moving_statistics_follow_torch_after_several_steps(devices):
    rng = np.random.RandomState(4)
    batches = [(rng.randn(6, 3, 4, 4) * (i + 1) + i).astype(np.float32) for i in range(3)]
    x_eval = rng.randn(6, 3, 4, 4).astype(np.float32)
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    out, moving_mean, moving_variance = _train_and_predict(3, batches, x_eval, momentum=0.9)
    # OneFlow's momentum keeps the old value; PyTorch's momentum weighs the new one.
    bn = torch.nn.BatchNorm2d(3, momentum=0.1, eps=1e-5)
    for batch in batches:
        bn(torch.tensor(batch))
    np.testing.assert_allclose(moving_mean, bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moving_variance, bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
    bn.eval()
    np.testing.assert_allclose(out, bn(torch.tensor(x_eval)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    flow.clear_default_session()


def test_predict_job_and_training_false_use_moving_statistics():
    x = np.random.RandomState(5).randn(4, 3).astype(np.float32)
    for training in (True, False):
        flow.clear_default_session()

        @flow.global_function(type="predict")
        def predict(b: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
            return flow.layers.batch_normalization(b, training=training)

        # Fresh moving statistics: mean 0, variance 1.
        np.testing.assert_allclose(predict(x), x / np.sqrt(1 + 1e-3), rtol=1e-6)
    out, _ = run_op(lambda b: flow.layers.batch_normalization(b, training=False), [x],
                    differentiable=[0])
    np.testing.assert_allclose(out, x / np.sqrt(1 + 1e-3), rtol=1e-6)


def test_relu_variants():
    rng = np.random.RandomState(6)
    x, addend = rng.randn(5, 4), rng.randn(5, 4)
    check_op(lambda x: flow.layers.batch_normalization_relu(x, axis=1),
             lambda x: np.maximum(numpy_batch_norm(x, 1), 0), inputs=[x], weight_output=True,
             multi_device=False)
    check_op(lambda x, a: flow.layers.batch_normalization_add_relu(x, a, axis=1),
             lambda x, a: np.maximum(numpy_batch_norm(x, 1) + a, 0), inputs=[x, addend],
             weight_output=True, multi_device=False)


def _build(fn, shapes):
    flow.clear_default_session()
    placeholders = [tp.Numpy.Placeholder(s) for s in shapes]

    def job(*blobs):
        return fn(*blobs)

    names = ["a%d" % i for i in range(len(shapes))]
    namespace = {"job": job}
    exec("def f(%s):\n    return job(%s)\n" % (", ".join(names), ", ".join(names)), namespace)
    f = namespace["f"]
    f.__annotations__ = dict(zip(names, placeholders), **{"return": tp.Numpy})
    compiled = flow.global_function(type="predict")(f)
    return compiled(*[np.zeros(s, np.float32) for s in shapes])


def test_errors_name_the_op_and_the_rule():
    with pytest.raises(ValueError, match=r"batch_normalization: axis 4 is out of range"):
        _build(lambda x: flow.layers.batch_normalization(x, axis=4), [(2, 3)])
    with pytest.raises(ValueError, match=r"mean \(4,\) must have shape \(3,\)"):
        _build(lambda x, m, v: flow.nn.batch_normalization(x, m, v, axis=1),
               [(2, 3), (4,), (3,)])
    with pytest.raises(ValueError, match="momentum must be in"):
        _build(lambda x: flow.layers.batch_normalization(x, momentum=1.5), [(2, 3)])


def test_one_layer_applied_twice_updates_its_moving_statistics_in_turn():
    """A GAN's discriminator applied to fake and real images in one train step (OneFlow-
    Benchmark's pix2pix) runs one batch normalization twice on shared variables: both update the
    moving statistics, in job order, as a torch BatchNorm2d called on both batches does."""
    flow.clear_default_session()

    def batch_norm(x, op_name):
        def variable(name, initializer, trainable):
            return flow.get_variable("bn-" + name, shape=(3,), initializer=initializer,
                                     trainable=trainable)
        return (flow.user_op_builder(op_name).Op("normalization")
                .Input("x", [x])
                .Input("moving_mean", [variable("moving_mean", flow.zeros_initializer(), False)])
                .Input("moving_variance",
                       [variable("moving_variance", flow.ones_initializer(), False)])
                .Input("gamma", [variable("gamma", flow.ones_initializer(), True)])
                .Input("beta", [variable("beta", flow.zeros_initializer(), True)])
                .Output("y").Output("mean").Output("inv_variance")
                .Attr("axis", 1).Attr("epsilon", 1e-5).Attr("training", True)
                .Attr("momentum", 0.9)
                .Build().InferAndTryRun().RemoteBlobList()[0])

    @flow.global_function(type="train")
    def step(fake: tp.Numpy.Placeholder((4, 3, 2, 2)), real: tp.Numpy.Placeholder((4, 3, 2, 2))
             ) -> tp.Numpy:
        loss = flow.math.reduce_mean(batch_norm(fake, "bn") + batch_norm(real, "bn_reuse") ** 2)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(loss)
        return loss

    rng = np.random.RandomState(5)
    bn = torch.nn.BatchNorm2d(3, momentum=0.1, eps=1e-5)
    for _ in range(2):
        fake = (rng.randn(4, 3, 2, 2) * 2 + 1).astype(np.float32)
        real = (rng.randn(4, 3, 2, 2) - 3).astype(np.float32)
        step(fake, real)
        bn(torch.tensor(fake))
        bn(torch.tensor(real))
    variables = flow.get_all_variables()
    np.testing.assert_allclose(variables["bn-moving_mean"].numpy(), bn.running_mean.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variables["bn-moving_variance"].numpy(),
                               bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
