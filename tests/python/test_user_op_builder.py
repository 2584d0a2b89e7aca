"""flow.user_op_builder: any registered op by type, as OneFlow 0.3 scripts add ops that have no
Python wrapper; the numbers come from the op (checked against NumPy), errors name the op."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


def test_relu_forward_and_gradient():
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4)).astype(np.float32)
    grads = {}

    @flow.global_function(type="train")
    def job(x_in: tp.Numpy.Placeholder((3, 4))) -> tp.Numpy:
        offset = flow.get_variable("offset", shape=(3, 4), initializer=flow.zeros_initializer())
        y = (flow.user_op_builder("my_relu").Op("relu").Input("x", [x_in + offset])
             .Output("y").Build().InferAndTryRun().SoleOutputBlob())
        flow.watch_diff(offset, lambda blob: grads.setdefault("offset", blob.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
            flow.math.reduce_sum(y * y))
        return y

    y = job(x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_allclose(grads["offset"], 2 * np.maximum(x, 0), rtol=1e-6)


def test_dtype_attribute_and_list_of_outputs():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        op = (flow.user_op_builder("to_int").Op("cast").Input("in", [x]).Output("out")
              .Attr("dtype", flow.int32, "AttrTypeDataType").Build().InferAndTryRun())
        blobs = op.RemoteBlobList()
        assert len(blobs) == 1 and blobs[0].dtype == flow.int32
        return blobs[0]

    out = job(np.array([1.7, -2.2, 3.0, 0.4], np.float32))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, -2, 3, 0])


def test_random_seed_makes_ops_repeat():
    def uniform(name, seed):
        return (flow.user_op_builder(name).Op("random_uniform").Output("out")
                .Attr("shape", (5,)).Attr("dtype", flow.float).Attr("low", 0.0).Attr("high", 1.0)
                .SetRandomSeed(seed).Build().InferAndTryRun().SoleOutputBlob())

    @flow.global_function()
    def job() -> tp.Numpy:
        return flow.concat([uniform("a", 7), uniform("b", 7), uniform("c", 8)], axis=0)

    values = job()
    np.testing.assert_array_equal(values[:5], values[5:10])
    assert not np.array_equal(values[:5], values[10:])
    assert values.min() >= 0 and values.max() < 1


def test_errors_name_the_op():
    def trace(build):
        flow.clear_default_session()

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
            return build(x)

        return job

    with pytest.raises(NotImplementedError, match="no_such_op"):
        trace(lambda x: flow.user_op_builder("a").Op("no_such_op").Input("x", [x]).Output("y")
              .Build().InferAndTryRun().SoleOutputBlob())(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="has no attribute 'alpha'"):
        trace(lambda x: flow.user_op_builder("b").Op("relu").Input("x", [x]).Output("y")
              .Attr("alpha", 0.1).Build().InferAndTryRun().SoleOutputBlob())(
            np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="op type relu has 1 'y' output"):
        trace(lambda x: flow.user_op_builder("c").Op("relu").Input("x", [x]).Output("y", 2)
              .Build().InferAndTryRun().SoleOutputBlob())(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"call \.Op\(op_type\) before \.Build\(\)"):
        flow.user_op_builder("d").Build()
    with pytest.raises(TypeError, match="expected a non-empty list of blobs"):
        flow.user_op_builder("e").Op("relu").Input("x", None)


def _split_like(x, likes, axis):
    return (flow.user_op_builder("split").Op("split_like").Input("in", [x]).Input("like", likes)
            .Output("out", len(likes)).Attr("axis", axis).Build().InferAndTryRun()
            .RemoteBlobList())


@pytest.mark.parametrize("devices", [1, 2])
def test_split_like_forward_and_gradient(devices):
    """split_like (a variadic output): pieces of x along axis 1 sized by the likes; x's gradient
    is the pieces' gradients concatenated, zeros for the unused piece."""
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    x = np.random.RandomState(1).randn(4, 6, 3).astype(np.float32)
    seen = {}

    @flow.global_function(type="train")
    def job(a: tp.Numpy.Placeholder((4, 6, 3))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            a = a + flow.get_variable("v", shape=(1,), initializer=flow.zeros_initializer())
            likes = [flow.constant(0.0, shape=(1, n)) for n in (1, 2, 3)]
            first, second, third = _split_like(a, likes, axis=1)
            flow.watch(third, lambda b: seen.setdefault("third", b.numpy()))
            flow.watch_diff(a, lambda d: seen.setdefault("da", d.numpy()))
            loss = flow.math.reduce_sum(first * 2.0) + flow.math.reduce_sum(second)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(loss)
            return second

    np.testing.assert_array_equal(job(x), x[:, 1:3])
    np.testing.assert_array_equal(seen["third"], x[:, 3:])
    expected = np.zeros_like(x)
    expected[:, 0:1], expected[:, 1:3] = 2.0, 1.0
    np.testing.assert_array_equal(seen["da"], expected)


def test_split_like_sizes_must_add_up():
    flow.clear_default_session()

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder((5, 2))):
        _split_like(a, [flow.constant(0.0, shape=(2,)), flow.constant(0.0, shape=(2,))], 0)

    with pytest.raises(ValueError, match=r"split_like.*add up to 4.*\(5, 2\) has 5"):
        job(np.zeros((5, 2), np.float32))


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
def test_multi_square_sum(dtype):
    """OneFlow 0.3's multi_square_sum user op: the sum of the squares of every input, (1,), in
    their dtype; on 2-4 devices each part sums its own rows (every SBP signature is checked)."""
    def multi_square_sum(a, b, c):
        return (flow.user_op_builder("MultiSquareSum").Op("multi_square_sum")
                .Input("x", [a, b, c]).Output("y").Build().InferAndTryRun()
                .RemoteBlobList()[0])

    def reference(a, b, c):
        total = sum(np.sum(np.square(v.astype(np.float64))) for v in (a, b, c))
        return np.array([total], a.dtype)

    check_op(multi_square_sum, reference, [(6, 5), (4,), (2, 3, 2)], dtype, differentiable=[])


@pytest.mark.parametrize("x_dtype, scalar_dtype", [(np.float32, np.float64),
                                                   (np.float64, np.float32),
                                                   (np.float32, np.float32)])
def test_fused_cast_scale(x_dtype, scalar_dtype):
    """OneFlow 0.3's fused_cast_scale user op: x converted to scalar's dtype, times scalar[0];
    every SBP signature on 2-4 devices."""
    def fused_cast_scale(x, scalar):
        return (flow.user_op_builder("FusedCastScale").Op("fused_cast_scale")
                .Input("x", [x]).Input("scalar", [scalar]).Output("y").Build()
                .InferAndTryRun().RemoteBlobList()[0])

    rng = np.random.RandomState(4)
    x = rng.uniform(-2, 2, (6, 4)).astype(x_dtype)
    scalar = np.array([2.5], scalar_dtype)
    out, _ = check_op(fused_cast_scale, lambda a, s: a.astype(scalar_dtype) * s[0],
                      inputs=[x, scalar], differentiable=[])
    assert out.dtype == scalar_dtype


@pytest.mark.parametrize("train", [True, False])
def test_oneflow_normalization_user_op(train):
    """OneFlow 0.3's "normalization" user op built by hand (OneFlow-Benchmark's dcgan layers.py):
    the same outputs and moving statistics as flow.layers.batch_normalization, and in training
    the batch mean and 1 / sqrt(variance + epsilon)."""
    import typing

    x = np.random.RandomState(0).uniform(-1, 3, (4, 3, 2, 2)).astype(np.float32)
    results = {}
    for way in ("user_op", "layer"):
        flow.clear_default_session()

        def body(a):
            if way == "layer":
                y = flow.layers.batch_normalization(a, axis=1, momentum=0.9, epsilon=1e-3,
                                                    name="bn")
                return y, y, y
            with flow.scope.namespace("bn"):
                variables = {
                    n: flow.get_variable(n, (3,), initializer=flow.constant_initializer(init),
                                         trainable=n in ("gamma", "beta"))
                    for n, init in (("gamma", 1.0), ("beta", 0.0), ("moving_mean", 0.0),
                                    ("moving_variance", 1.0))}
            builder = (flow.user_op_builder("bn").Op("normalization").Input("x", [a])
                       .Input("moving_mean", [variables["moving_mean"]])
                       .Input("moving_variance", [variables["moving_variance"]])
                       .Input("gamma", [variables["gamma"]]).Input("beta", [variables["beta"]])
                       .Output("y").Attr("axis", 1).Attr("epsilon", 1e-3)
                       .Attr("training", train).Attr("momentum", 0.9))
            if train:
                builder = builder.Output("mean").Output("inv_variance")
            blobs = builder.Build().InferAndTryRun().RemoteBlobList()
            return tuple(blobs) if train else (blobs[0],) * 3

        @flow.global_function(type="train" if train else "predict")
        def job(a: tp.Numpy.Placeholder(x.shape)) -> typing.Tuple[tp.Numpy, tp.Numpy,
                                                                   tp.Numpy]:
            y, mean, inv_variance = body(a)
            if train:
                flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
                    flow.math.reduce_mean(y * y))
            return y, mean, inv_variance

        results[way] = job(x) + (flow.get_all_variables()["bn-moving_mean"].numpy(),)
    np.testing.assert_allclose(results["user_op"][0], results["layer"][0], rtol=1e-6)
    np.testing.assert_allclose(results["user_op"][3], results["layer"][3], rtol=1e-6)
    if train:
        batch_mean = x.mean(axis=(0, 2, 3))
        np.testing.assert_allclose(results["user_op"][1], batch_mean, rtol=1e-5)
        np.testing.assert_allclose(results["user_op"][2],
                                   1 / np.sqrt(x.var(axis=(0, 2, 3)) + 1e-3), rtol=1e-5)
        np.testing.assert_allclose(results["user_op"][3], 0.1 * batch_mean, rtol=1e-5)


class _Add(flow.deprecated.nn.Module):
    """OneFlow 0.3's op module: one add_n op per call, named after the call's number."""

    def __init__(self):
        flow.deprecated.nn.Module.__init__(self)
        self.builder = flow.consistent_user_op_module_builder("add_n")
        self.builder.InputSize("in", 2).Output("out")
        self.builder.user_op_module.InitOpKernel()

    def forward(self, x, y):
        return (self.builder.OpName("Add_%d" % self.call_seq_no).Input("in", [x, y]).Build()
                .InferAndTryRun().RemoteBlobList()[0])


def test_op_modules_add_an_op_per_call():
    flow.clear_default_session()
    names = []

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((5, 2)), y: tp.Numpy.Placeholder((5, 2))) -> tp.Numpy:
        with flow.scope.namespace("job"):
            adder = flow.find_or_create_module("Add", _Add)
            z = adder(x, y)
            again = flow.find_or_create_module("Add", _Add, reuse=True)
            assert again is adder
            out = again(z, x)
            names.extend([z.op_name, out.op_name])
            with pytest.raises(ValueError, match="module 'Add' already exists in this job"):
                flow.find_or_create_module("Add", _Add)
            with pytest.raises(ValueError, match=r"input 'in' takes 2 blob\(s\), got 3"):
                adder.builder.OpName("bad").Input("in", [x, y, z]).Build()
            return out

    rng = np.random.RandomState(7)
    x, y = rng.rand(5, 2).astype(np.float32), rng.rand(5, 2).astype(np.float32)
    np.testing.assert_allclose(job(x, y), 2 * x + y, rtol=1e-6)
    assert names == ["job-Add_0", "job-Add_1"]
