"""OneFlow 0.3's framework-test ops (oneflow/ops/fixture_ops.cpp), built with flow.user_op_builder
as OneFlow 0.3's own tests build them: attributes of every type (lists of shapes and dtypes
among them), several outputs, gradient ops, sources, a dynamic source, a seeded random source.
Expected values come from NumPy (and, for the random source, from NumPy's Mersenne Twister)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(180)


def build(op_type, inputs=None, outputs=(("out", 1),), attrs=None, name=None):
    builder = flow.user_op_builder(name or "my_" + op_type).Op(op_type)
    for argument, blobs in (inputs or {}).items():
        builder = builder.Input(argument, blobs)
    for argument, count in outputs:
        builder = builder.Output(argument, count)
    for key, value in (attrs or {}).items():
        builder = builder.Attr(key, value)
    return builder.Build().InferAndTryRun().RemoteBlobList()


def train_through(op_type, x, loss_weight, attrs=None, devices=1):
    """x -> op (its input "in", on `devices` devices) -> sum(out * loss_weight), one SGD step
    at rate 0; returns the output and the gradient reaching x."""
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    grads = {}

    @flow.global_function(type="train")
    def job(x_in: tp.Numpy.Placeholder(x.shape), weight: tp.Numpy.Placeholder(loss_weight.shape)
            ) -> tp.Numpy:
        offset = flow.get_variable("offset", shape=x.shape, initializer=flow.zeros_initializer())
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            out = build(op_type, {"in": [x_in + offset]}, attrs=attrs)[0]
        flow.watch_diff(offset, lambda blob: grads.setdefault("x", blob.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
            flow.math.reduce_sum(out * weight))
        return out

    out = job(x, loss_weight)
    return out, grads["x"]


@pytest.mark.parametrize("devices", [1, 2])
def test_ccrelu_forward_and_gradient(devices):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
    weight = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
    out, grad = train_through("ccrelu", x, weight, devices=devices)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    np.testing.assert_array_equal(grad, np.where(x > 0, weight, 0))


def test_cpu_only_relu_test():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 5))) -> tp.Numpy:
        y = build("cpu_only_relu_test", {"in": [x]})[0]
        assert y.parallel_conf.device_tag == "cpu"
        assert y.parallel_conf.device_name == ["0:0"]  # the ParallelConf spelling
        return y

    x = np.random.RandomState(1).uniform(-1, 1, (2, 5)).astype(np.float32)
    np.testing.assert_array_equal(job(x), np.maximum(x, 0))


def test_test_reshape_keeps_the_rank_and_the_values():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((10, 2))) -> tp.Numpy:
        return build("TestReshape", {"in": [x]}, attrs={"shape": [5, 4]})[0]

    x = np.random.RandomState(2).rand(10, 2).astype(np.float32)
    np.testing.assert_array_equal(job(x), x.reshape(5, 4))

    flow.clear_default_session()
    with pytest.raises(ValueError, match=r"TestReshape.*rank"):
        @flow.global_function()
        def bad(x: tp.Numpy.Placeholder((10, 2))) -> tp.Numpy:
            return build("TestReshape", {"in": [x]}, attrs={"shape": [20]})[0]

        bad(x)


@pytest.mark.parametrize("shape", [(100, 10), (10, 100), (5, 20, 10)])
def test_test_reshape_keep_header_only_and_its_gradient(shape):
    rng = np.random.RandomState(3)
    x = rng.uniform(-10, 10, (10, 10, 10)).astype(np.float32)
    weight = rng.uniform(-1, 1, shape).astype(np.float32)
    out, grad = train_through("TestReshape4KeepHeaderOnly", x, weight, {"shape": list(shape)})
    np.testing.assert_array_equal(out, x.reshape(shape))
    np.testing.assert_array_equal(grad, weight.reshape(x.shape))


def test_test_reshape_keep_header_only_needs_the_element_count():
    flow.clear_default_session()
    with pytest.raises(ValueError, match=r"TestReshape4KeepHeaderOnly.*\(10, 10\).*\(7, 10\)"):
        @flow.global_function()
        def bad(x: tp.Numpy.Placeholder((10, 10))) -> tp.Numpy:
            return build("TestReshape4KeepHeaderOnly", {"in": [x]}, attrs={"shape": [7, 10]})[0]

        bad(np.zeros((10, 10), np.float32))


def test_sources():
    flow.clear_default_session()
    seen = {}

    @flow.global_function()
    def job():
        with flow.scope.placement("cpu", "0:0"):
            source = build("TestSource")[0]
        with flow.scope.placement("cpu", "0:0-1"):
            ten = build("TestSourceMultiGpuFixedOutNum", attrs={"out_num": 10}, name="ten")[0]
            five = build("TestSourceMultiGpuFixedOutNum", attrs={"out_num": 5}, name="five")[0]
        dynamic = build("TestDynamicSource")[0]
        seen["dynamic"] = dynamic
        return source, ten, five, dynamic, flow.math.reduce_sum(dynamic)

    source, ten, five, dynamic, total = [blob.numpy() for blob in job().get()]
    np.testing.assert_array_equal(source, np.arange(5.0))
    # Split over the two devices, each part counting from 0 (5 + 5, then 3 + 2).
    np.testing.assert_array_equal(ten, np.append(np.arange(5.0), np.arange(5.0)))
    np.testing.assert_array_equal(five, [0, 1, 2, 0, 1])
    assert seen["dynamic"].is_dynamic and seen["dynamic"].shape == (5,)
    np.testing.assert_array_equal(dynamic, [0, 1, 2])
    assert float(total.reshape(-1)[0]) == 3.0


def test_random_source_continues_one_mersenne_twister_stream():
    flow.clear_default_session()

    @flow.global_function()
    def job() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            return build("TestRandomSource", attrs={"seed": 0})[0]

    # std::mt19937 seeded with 0 is NumPy's RandomState(0) generator; OneFlow's CPU generator
    # turned each 32-bit draw into a float by dividing by 2**32.
    draws = np.random.RandomState(0).randint(0, 2 ** 32, size=10, dtype=np.uint64)
    expected = draws.astype(np.float32) / np.float32(2 ** 32)
    first, second = job(), job()
    np.testing.assert_array_equal(first, expected[:5])
    np.testing.assert_array_equal(second, expected[5:])
    # OneFlow 0.3's own test pins the same numbers.
    np.testing.assert_allclose(first, [0.5488136, 0.59284467, 0.7151894, 0.8442659, 0.6027634],
                               rtol=1e-5)


@pytest.mark.parametrize("shape", [(7,), (2, 5), (3, 3, 2)])
def test_multi_output_order(shape):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)):
        return build("TestMultiOutputOrder", {"in": [x]}, outputs=(("out1", 1), ("out2", 1)))

    x = np.random.RandomState(4).rand(*shape).astype(np.float32)
    out1, out2 = [blob.numpy() for blob in job(x).get()]
    np.testing.assert_array_equal(out1, x)
    np.testing.assert_array_equal(out2, np.zeros(shape[:-1] + (2 * shape[-1],), np.float32))


def test_multi_input_gradient_op():
    flow.clear_default_session()
    grads = {}

    @flow.global_function(type="train")
    def job() -> tp.Numpy:
        x1 = flow.get_variable("x1", shape=(3, 3),
                               initializer=flow.random_uniform_initializer(-10, 10))
        x2 = flow.get_variable("x2", shape=(3, 3),
                               initializer=flow.random_uniform_initializer(-10, 10))
        y = build("TestMultiInput", {"x1": [x1], "x2": [x2]}, outputs=(("y", 1),))[0]
        flow.watch(x1, lambda blob: grads.setdefault("x1", blob.numpy()))
        flow.watch_diff(x1, lambda blob: grads.setdefault("x1_diff", blob.numpy()))
        flow.watch_diff(x2, lambda blob: grads.setdefault("x2_diff", blob.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-4]),
                           momentum=0).minimize(y)
        return y

    y = job()
    np.testing.assert_array_equal(y, grads["x1"])
    np.testing.assert_array_equal(grads["x1_diff"], np.ones((3, 3)))
    np.testing.assert_array_equal(grads["x2_diff"], np.full((3, 3), 2.0))


@pytest.mark.parametrize("dtype", ["float32", "double", "int8", "int32", "int64", "uint8"])
def test_data_type_attribute(dtype):
    flow.clear_default_session()
    assert getattr(flow, dtype) in flow.dtypes()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((10, 10))) -> tp.Numpy:
        return build("TestDataTypeAttr", {"in": [x]},
                     attrs={"output_type": getattr(flow, dtype)})[0]

    out = job(np.random.rand(10, 10).astype(np.float32))
    assert out.dtype == np.dtype(dtype) and out.shape == (10, 10)


@pytest.mark.parametrize("types", [["float32", "double", "int8"], ["int32", "int64", "uint8"]])
def test_list_of_shapes_dtypes_and_strings_attributes(types):
    flow.clear_default_session()
    shapes = [(4, 4), (6, 6), (8, 8)]

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((10, 10))):
        return build("TestListDataTypeAndListShapeAndListStringAttr", {"in": [x]},
                     outputs=(("out", 3),),
                     attrs={"out_shapes": shapes,
                            "out_types": [getattr(flow, name) for name in types],
                            "string_list": ["string1", "string2", "string3"]})

    outputs = [blob.numpy() for blob in job(np.zeros((10, 10), np.float32)).get()]
    assert [out.shape for out in outputs] == shapes
    assert [out.dtype for out in outputs] == [np.dtype(name) for name in types]


def test_list_attributes_are_checked():
    def trace(attrs):
        flow.clear_default_session()

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((10, 10))):
            return build("TestListDataTypeAndListShapeAndListStringAttr", {"in": [x]},
                         outputs=(("out", 2),), attrs=attrs)

        job(np.zeros((10, 10), np.float32))

    good = {"out_shapes": [(1,), (2,), (3,)], "out_types": [flow.float] * 3,
            "string_list": ["a"]}
    with pytest.raises(TypeError, match="out_shapes.*shapes"):
        trace(dict(good, out_shapes=[1, 2, 3]))
    with pytest.raises(TypeError, match=r"out_types.*a sequence of dtypes"):
        trace(dict(good, out_types=[1.5, 2.5, 3.5]))
    with pytest.raises(ValueError, match="out_shapes and out_types must have 3"):
        trace(dict(good, out_types=[flow.float] * 2))
    with pytest.raises(ValueError, match="string_list must not be empty"):
        trace(dict(good, string_list=[]))


def test_attributes_take_their_declared_type():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1,))) -> tp.Numpy:
        return build("test_user_op_attr_auto_type", {"in": [x]}, attrs={"int1": 1, "int2": 2})[0]

    np.testing.assert_array_equal(job(np.array([1.0], np.float32)), [1.0])


def test_deprecated_placement_names():
    flow.clear_default_session()

    @flow.global_function()
    def job() -> tp.Numpy:
        with flow.fixed_placement("cpu", "0:0"):
            a = build("TestSource", name="a")[0]
        with flow.device_prior_placement("cpu", "0:0"):
            return a + build("TestSource", name="b")[0]

    np.testing.assert_array_equal(job(), 2 * np.arange(5.0))
