"""flow.get_variable: initializers, sharing by name, and the zero-variable idiom
`x += flow.get_variable("v1", shape=(1,), initializer=zeros)` that makes x differentiable."""
from typing import Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def test_zero_variable_of_shape_1_broadcasts_and_reduces_its_gradient(sgd):
    seen = {}

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        v = flow.get_variable("v1", shape=(1,), initializer=flow.zeros_initializer())
        flow.watch_diff(v, lambda diff: seen.__setitem__("v", np.array(diff)))
        x += v
        flow.watch_diff(x, lambda diff: seen.__setitem__("x", np.array(diff)))
        loss = flow.math.square(x)
        sgd(0.6).minimize(loss)
        return loss

    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("v1", shape=(1,))

    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    np.testing.assert_allclose(train(x), x * x, rtol=1e-6)
    np.testing.assert_allclose(seen["x"], 2 * x, rtol=1e-6)
    assert seen["v"].shape == (1,)
    np.testing.assert_allclose(seen["v"], [np.sum(2 * x)], rtol=1e-6)
    # Update: v -= lr * grad / elem_cnt(loss).
    np.testing.assert_allclose(read(), [-0.6 * np.sum(2 * x) / 6], rtol=1e-5)


@pytest.mark.parametrize("initializer, check", [
    (flow.zeros_initializer(), lambda v: np.all(v == 0)),
    (flow.ones_initializer(), lambda v: np.all(v == 1)),
    (flow.constant_initializer(-2.5), lambda v: np.all(v == -2.5)),
    (flow.random_uniform_initializer(-0.1, 0.3), lambda v: v.min() >= -0.1 and v.max() <= 0.3
     and v.std() > 0.05),
    # Reversed bounds sample between them (OneFlow 0.3: random_uniform_initializer(2) is [1, 2]).
    (flow.random_uniform_initializer(2), lambda v: v.min() >= 1 and v.max() <= 2
     and v.std() > 0.2),
    (flow.random_normal_initializer(0.0, 1.0), lambda v: abs(v.mean()) < 0.2
     and 0.8 < v.std() < 1.2),
    (flow.truncated_normal_initializer(0.0, 1.0), lambda v: np.all(np.abs(v) <= 2.0)
     and v.std() > 0.5),
], ids=["zeros", "ones", "constant", "uniform", "uniform_reversed", "normal",
        "truncated_normal"])
@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
def test_initializers(initializer, check, dtype):
    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("v", shape=(20, 25), dtype=dtype, initializer=initializer)

    value = read()
    assert value.shape == (20, 25)
    assert value.dtype == flow.convert_oneflow_dtype_to_numpy_dtype(dtype)
    assert check(value)


@pytest.mark.parametrize("dtype, initializer, check", [
    (flow.int32, flow.constant_initializer(3.7), lambda v: np.all(v == 3)),  # truncated
    (flow.uint8, flow.constant_initializer(255), lambda v: np.all(v == 255)),
    (flow.int64, flow.constant_initializer(-2**40), lambda v: np.all(v == -2**40)),
    # integer bounds [low, high], both included (OneFlow 0.3's RngIntUniform draws from
    # uniform_int_distribution(min, max)): every integer from low to high, none other
    (flow.int32, flow.random_uniform_initializer(-3, 3, dtype=flow.int32),
     lambda v: set(np.unique(v)) == set(range(-3, 4))),
    (flow.int64, flow.random_uniform_initializer(0, 1, dtype=flow.int64),
     lambda v: set(np.unique(v)) == {0, 1} and 0.4 < v.mean() < 0.6),
    # a normal sample beyond the dtype saturates at its limits
    (flow.int8, flow.random_normal_initializer(0.0, 1000.0),
     lambda v: v.min() == -128 and v.max() == 127),
], ids=["constant_truncates", "uint8_max", "int64", "uniform_int", "uniform_int_0_1",
        "normal_saturates"])
def test_integer_initializers(dtype, initializer, check):
    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("v", shape=(40, 50), dtype=dtype, initializer=initializer)

    value = read()
    assert value.dtype == flow.convert_oneflow_dtype_to_numpy_dtype(dtype)
    assert check(value)


@pytest.mark.parametrize("dtype, initializer, pattern", [
    (flow.int32, flow.constant_initializer(1e20), "constant initializer value 1e\\+20 does not "
     "fit its dtype int32 \\(range \\[-2147483648, 2147483647\\]\\)"),
    (flow.uint8, flow.constant_initializer(-1), "constant initializer value -1 does not fit its dtype uint8"),
    (flow.int8, flow.constant_initializer(128), "constant initializer value 128 does not fit its dtype int8"),
    (flow.int32, flow.constant_initializer(float("nan")), "constant initializer value nan does not fit"),
    (flow.int32, flow.random_uniform_initializer(-1e12, 0), "random_uniform initializer value "
     "-1000000000000 does not fit"),
])
def test_integer_initializer_out_of_range_is_an_error(dtype, initializer, pattern):
    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable("v", shape=(2,), dtype=dtype, initializer=initializer)

    with pytest.raises(ValueError, match="variable 'v': " + pattern):
        read()


def test_random_initialization_is_deterministic_per_name():
    def read_twice():
        flow.clear_default_session()

        @flow.global_function()
        def read() -> Tuple[tp.Numpy, tp.Numpy]:
            a = flow.get_variable("a", shape=(8,), initializer=flow.random_normal_initializer())
            b = flow.get_variable("b", shape=(8,), initializer=flow.random_normal_initializer())
            return a, b

        return read()

    first, second = read_twice(), read_twice()
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])  # different names, different values


def _initializer_conf(kind=None, **fields):
    """An InitializerConf message setting `kind` (none when None) with `fields`."""
    import oneflow.core.job.initializer_conf_pb2 as initializer_conf_util

    conf = initializer_conf_util.InitializerConf()
    if kind is None:
        return conf
    getattr(conf, kind).SetInParent()
    for name, value in fields.items():
        setattr(getattr(conf, kind), name, value)
    return conf


@pytest.mark.parametrize("given, equivalent", [
    (lambda: _initializer_conf("truncated_normal_conf", std=0.5),
     lambda: flow.truncated_normal_initializer(0.0, 0.5)),
    (lambda: _initializer_conf("random_uniform_conf", min=-2.0, max=3.0),
     lambda: flow.random_uniform_initializer(-2.0, 3.0)),
    (lambda: _initializer_conf("constant_conf", value=1.5), lambda: flow.constant_initializer(1.5)),
    (lambda: _initializer_conf("variance_scaling_conf", scale=2.0, variance_norm=1,
                               distribution=1, data_format=""),
     lambda: flow.variance_scaling_initializer(2.0, "fan_out", "random_normal")),
    (lambda: {"random_normal_conf": {"mean": 1.0, "std": 0.25}},
     lambda: flow.random_normal_initializer(1.0, 0.25)),
], ids=["truncated_normal_message", "uniform_message", "constant_message",
        "variance_scaling_message", "normal_dict"])
def test_initializer_conf_messages_and_dicts_initialize_as_the_initializer_they_name(
        given, equivalent):
    """OneFlow's own AlexNet and VGG16 build InitializerConf messages by hand (layers.dense(...,
    kernel_initializer=conf)); same name and seed, so the values are the equivalent one's."""
    def read(initializer):
        flow.clear_default_session()

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((4, 6))) -> Tuple[tp.Numpy, tp.Numpy]:
            dense = flow.layers.dense(x, 64, kernel_initializer=initializer, name="fc")
            return dense, flow.get_variable("v", shape=(30, 40), initializer=initializer)

        return job(np.ones((4, 6), np.float32))

    for got, want in zip(read(given()), read(equivalent())):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_bad_initializer_conf_is_named():
    with pytest.raises(ValueError, match="sets no initializer"):
        _read_with(_initializer_conf())
    with pytest.raises(NotImplementedError, match="'range_conf' is not supported"):
        _read_with(_initializer_conf("range_conf", start=1.0))
    with pytest.raises(TypeError, match="InitializerConf message or its dict form, got str"):
        _read_with("zeros")
    with pytest.raises(TypeError, match="constant initializer: its values must be real "
                                        "numbers, got 'a'"):
        flow.constant_initializer("a")


def _read_with(initializer):
    flow.clear_default_session()

    @flow.global_function()
    def job() -> tp.Numpy:
        return flow.get_variable("v", shape=(2,), initializer=initializer)

    return job()


def test_same_name_in_one_job_is_the_same_variable():
    @flow.global_function()
    def job() -> tp.Numpy:
        a = flow.get_variable("v", shape=(2,), initializer=flow.constant_initializer(3.0))
        b = flow.get_variable("v", shape=(2,), initializer=flow.constant_initializer(3.0))
        assert a.lbn == b.lbn
        return a + b

    np.testing.assert_allclose(job(), [6.0, 6.0])


def test_same_name_with_another_shape_is_an_error():
    @flow.global_function()
    def first() -> tp.Numpy:
        return flow.get_variable("v", shape=(2,))

    @flow.global_function()
    def second() -> tp.Numpy:
        return flow.get_variable("v", shape=(3,))

    first()
    with pytest.raises(ValueError) as info:
        second()
    assert "(2,)" in str(info.value) and "(3,)" in str(info.value)


def test_namespace_prefixes_variable_names():
    names = []

    @flow.global_function()
    def job() -> tp.Numpy:
        with flow.scope.namespace("block"):
            v = flow.get_variable("v", shape=(1,), initializer=flow.ones_initializer())
        names.append(v.op_name)
        return flow.get_variable("block-v", shape=(1,))

    np.testing.assert_allclose(job(), [1.0])
    assert names == ["block-v"]


@pytest.mark.parametrize("scope", [lambda: flow.name_scope, lambda: flow.experimental.name_scope,
                                   lambda: flow.deprecated.variable_scope],
                         ids=["name_scope", "experimental", "variable_scope"])
def test_oneflow_03_deprecated_name_scopes_are_namespaces(scope):
    @flow.global_function()
    def job() -> tp.Numpy:
        with scope()("outer"):
            with flow.scope.namespace("inner"):
                v = flow.get_variable("v", shape=(1,), initializer=flow.constant_initializer(3))
        assert v.op_name == "outer-inner-v", v.op_name
        return flow.get_variable("outer-inner-v", shape=(1,))

    with pytest.warns(FutureWarning, match="use oneflow.scope.namespace"):
        np.testing.assert_allclose(job(), [3.0])


def test_non_trainable_variable_is_not_updated(sgd):
    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        frozen = flow.get_variable("frozen", shape=(2,), trainable=False,
                                   initializer=flow.ones_initializer())
        trained = flow.get_variable("trained", shape=(2,), initializer=flow.ones_initializer())
        loss = x * frozen + trained
        sgd(1.0).minimize(loss)
        return loss

    @flow.global_function()
    def read() -> Tuple[tp.Numpy, tp.Numpy]:
        return flow.get_variable("frozen", shape=(2,)), flow.get_variable("trained", shape=(2,))

    train(np.ones(2, np.float32))
    frozen, trained = read()
    np.testing.assert_array_equal(frozen, [1.0, 1.0])
    np.testing.assert_allclose(trained, [0.5, 0.5], rtol=1e-6)


def test_assignments_of_one_variable_run_in_the_order_made():
    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    @flow.global_function()
    def write(x: tp.Numpy.Placeholder((4, 6))):
        with flow.scope.placement("cpu", "0:0-1"):
            w = flow.get_variable("w", shape=(4, 6), initializer=flow.zeros_initializer(),
                                  distribute=flow.distribute.split(1))
            flow.assign(w, x)
            first_columns = flow.slice_v2(x, [(None, None, None), (0, 2, 1)])
            flow.experimental.logical_slice_assign(w, first_columns * 10,
                                                   [(None, None, None), (1, 6, 3)])
            first_rows = flow.slice_v2(x, [(0, 2, 1)])
            flow.experimental.logical_slice_assign(w, first_rows * 0 - 1, [(2, 4, 1)])

    @flow.global_function()
    def read() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-1"):
            return flow.identity(flow.get_variable("w", shape=(4, 6),
                                                   initializer=flow.zeros_initializer(),
                                                   distribute=flow.distribute.split(1)))

    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    write(x)
    expected = x.copy()
    expected[:, 1:6:3] = x[:, :2] * 10
    expected[2:4] = -1
    np.testing.assert_array_equal(read(), expected)


def test_assigning_a_trained_variable_is_a_clear_error():
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(4,), initializer=flow.zeros_initializer())
        flow.assign(w, x)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
            flow.math.reduce_sum(w * x))
        return x

    with pytest.raises(ValueError, match=r"'w' is written in place by two ops"):
        job(np.ones(4, np.float32))


# ---- bad arguments -------------------------------------------------------------------------------

def _declare(**kwargs):
    arguments = dict(name="v", shape=(3,), initializer=flow.ones_initializer())
    arguments.update(kwargs)

    @flow.global_function()
    def read() -> tp.Numpy:
        return flow.get_variable(**arguments)

    return read()


@pytest.mark.parametrize("name, words", [
    ("a/b", ["'a/b'", "must not contain '/'", "'a/b/out'"]),
    ("a\0b", ["'a\\x00b'", "NUL"]),
    (".", ["'.'", "folder"]),
    ("..", ["'..'", "folder"]),
    ("snapshot_done", ["'snapshot_done'", "reserved", "finished save"]),
], ids=["slash", "nul", "dot", "dot_dot", "snapshot_done"])
def test_names_a_checkpoint_cannot_hold_are_refused(name, words):
    with pytest.raises(ValueError) as info:
        _declare(name=name)
    assert str(info.value).startswith("get_variable: name ")
    for word in words:
        assert word in str(info.value), str(info.value)


def test_unusual_but_saveable_names_still_work(tmp_path):
    @flow.global_function()
    def read() -> Tuple[tp.Numpy, tp.Numpy]:
        with flow.scope.namespace("snapshot_done"):  # "snapshot_done-x"
            a = flow.get_variable("x", shape=(2,), initializer=flow.ones_initializer())
        b = flow.get_variable(".hidden", shape=(2,), initializer=flow.zeros_initializer())
        return a, b

    read()
    flow.checkpoint.save(str(tmp_path / "c"))
    assert sorted(flow.checkpoint.get(str(tmp_path / "c"))) == [".hidden", "snapshot_done-x"]


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(trainable="no"), TypeError, ["'v'", "trainable must be True or False", "'no'"]),
    (dict(trainable=None), TypeError, ["'v'", "trainable must be True or False", "None"]),
    (dict(trainable=1), TypeError, ["'v'", "trainable must be True or False", "1"]),
    (dict(reuse="no"), TypeError, ["'v'", "reuse must be True or False", "'no'"]),
    (dict(reuse=None), TypeError, ["'v'", "reuse must be True or False", "None"]),
    (dict(random_seed="a"), TypeError, ["'v'", "random_seed must be an int or None", "'a'"]),
    (dict(random_seed=1.5), TypeError, ["'v'", "random_seed must be an int or None", "1.5"]),
    (dict(random_seed=True), TypeError, ["'v'", "random_seed must be an int or None", "True"]),
    (dict(random_seed=2 ** 64), ValueError, ["'v'", "random_seed must fit in 64 bits"]),
], ids=["trainable_str", "trainable_none", "trainable_int", "reuse_str", "reuse_none",
        "seed_str", "seed_float", "seed_bool", "seed_too_big"])
def test_get_variable_flags_must_have_their_types(kwargs, error, words):
    with pytest.raises(error) as info:
        _declare(**kwargs)
    assert str(info.value).startswith("get_variable 'v': ")
    for word in words:
        assert word in str(info.value), str(info.value)


def test_initializer_seed_must_be_an_int():
    with pytest.raises(TypeError, match="random_normal initializer: seed must be an int or None, "
                                        "got 'a'"):
        flow.random_normal_initializer(seed="a")
    _declare(initializer=flow.random_normal_initializer(seed=np.int64(3)))


def test_numpy_bools_and_ints_are_accepted_as_flags(sgd):
    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.ones_initializer(),
                              trainable=np.bool_(False), reuse=np.bool_(True),
                              random_seed=np.int64(7))
        u = flow.get_variable("u", shape=(3,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_mean(x * w * u)
        sgd(0.1).minimize(loss)
        return loss

    train(np.ones((4, 3), np.float32))
    variables = flow.get_all_variables()
    np.testing.assert_array_equal(variables["w"].numpy(), np.ones(3))  # not trained
    assert not np.array_equal(variables["u"].numpy(), np.ones(3))


# ---- initializer arguments ----------------------------------------------------------------------

@pytest.mark.parametrize("make, words", [
    (lambda: flow.variance_scaling_initializer(1.0, data_format="junk"),
     ["variance_scaling_initializer", "data_format", "'junk'"]),
    (lambda: flow.variance_scaling_initializer(1.0, data_format=None),
     ["variance_scaling_initializer", "data_format", "None"]),
    (lambda: flow.glorot_uniform_initializer(data_format="CHWN"),
     ["variance_scaling_initializer", "data_format", "'CHWN'"]),
    (lambda: flow.kaiming_initializer((3, 3, 3, 3), data_format="NXXX"),
     ["kaiming_initializer", "data_format", "'NXXX'"]),
    (lambda: flow.kaiming_initializer((3, 3), nonlinearity="relu6"),
     ["kaiming_initializer", "nonlinearity", "'relu6'"]),
    (lambda: flow.kaiming_initializer((3, 3), mode="fan"),
     ["kaiming_initializer", "mode", "'fan'"]),
    (lambda: flow.kaiming_initializer((3, 3), negative_slope="x"),
     ["kaiming_initializer", "negative_slope", "'x'"]),
    (lambda: flow.kaiming_initializer((3,)), ["kaiming_initializer", "at least 2 axes", "(3,)"]),
    (lambda: flow.kaiming_initializer((3, 0)), ["kaiming_initializer", "(3, 0)"]),
    (lambda: flow.variance_scaling_initializer(mode="fan_x"),
     ["variance_scaling_initializer", "mode", "'fan_x'"]),
], ids=["vs_data_format", "vs_data_format_none", "glorot_data_format", "kaiming_data_format",
        "kaiming_nonlinearity", "kaiming_mode", "kaiming_slope", "kaiming_1d", "kaiming_zero",
        "vs_mode"])
def test_bad_initializer_arguments_are_refused(make, words):
    with pytest.raises(ValueError) as info:
        make()
    for word in words:
        assert word in str(info.value), str(info.value)


@pytest.mark.parametrize("data_format", ["", "NCHW", "NHWC", "NCW", "NDHWC", "nchw",
                                         "channels_first", "channels_last"])
def test_known_data_formats_are_accepted(data_format):
    flow.variance_scaling_initializer(2.0, data_format=data_format)
    flow.glorot_normal_initializer(data_format)
    flow.kaiming_initializer((4, 3, 2, 2), data_format=data_format)


def test_kaiming_fan_comes_from_its_shape_argument_as_in_oneflow_0_3():
    """OneFlow 0.3 computed the fan from kaiming_initializer's shape argument, whatever the
    variable's shape (its documented example passes another shape)."""
    value = _declare(shape=(200, 300), initializer=flow.kaiming_initializer((64, 16, 3, 3)))
    std = np.sqrt(2.0 / (16 * 9))
    assert abs(value.std() / std - 1) < 0.05, (value.std(), std)


@pytest.mark.parametrize("kwargs, shape, std", [
    # He et al.: std = gain / sqrt(fan); gain sqrt(2) for relu and leaky_relu with slope 0
    (dict(), (300, 200), np.sqrt(2.0 / 200)),
    (dict(mode="fan_out", nonlinearity="relu"), (300, 200), np.sqrt(2.0 / 300)),
    (dict(mode="fan_avg", nonlinearity="tanh"), (300, 200), 5.0 / 3 / np.sqrt(250)),
    (dict(nonlinearity="leaky_relu", negative_slope=1.0), (300, 200), np.sqrt(1.0 / 200)),
    # convolution weights: NCHW (out, in, kh, kw), NHWC (out, kh, kw, in)
    (dict(mode="fan_in"), (64, 16, 3, 3), np.sqrt(2.0 / (16 * 9))),
    (dict(mode="fan_out"), (64, 16, 3, 3), np.sqrt(2.0 / (64 * 9))),
    (dict(mode="fan_out", data_format="NHWC"), (64, 3, 3, 16), np.sqrt(2.0 / (64 * 9))),
], ids=["default", "fan_out", "fan_avg_tanh", "leaky_slope_1", "conv_fan_in", "conv_fan_out",
        "conv_nhwc_fan_out"])
def test_kaiming_initializer_uses_the_fan_of_its_shape(kwargs, shape, std):
    value = _declare(shape=shape, initializer=flow.kaiming_initializer(shape, **kwargs))
    assert value.shape == shape
    assert abs(value.mean()) < 0.1 * std
    assert abs(value.std() / std - 1) < 0.05, (value.std(), std)


def test_kaiming_uniform_bound():
    # He et al. uniform: U(-sqrt(6 / fan_in), sqrt(6 / fan_in)) for relu
    bound = np.sqrt(6.0 / 200)
    value = _declare(shape=(300, 200), initializer=flow.kaiming_initializer(
        (300, 200), distribution="random_uniform", nonlinearity="relu"))
    assert np.abs(value).max() <= bound * (1 + 1e-6) and np.abs(value).max() > 0.99 * bound


@pytest.mark.parametrize("fields, words", [
    ({"variance_norm": "kFanX"}, ["'variance_norm'", "'kFanIn'", "got 'kFanX'"]),
    ({"variance_norm": 5}, ["'variance_norm'", "got 5"]),
    ({"variance_norm": ["kFanIn"]}, ["'variance_norm'", "got ['kFanIn']"]),
    ({"distribution": "kNormal"}, ["'distribution'", "'kRandomNormal'", "got 'kNormal'"]),
    ({"data_format": "junk"}, ["'data_format'", "got 'junk'"]),
], ids=["variance_norm", "variance_norm_number", "variance_norm_list", "distribution",
        "data_format"])
def test_bad_variance_scaling_conf_shows_the_bad_value(fields, words):
    with pytest.raises(ValueError) as info:
        flow.FunctionConfig().default_initializer_conf({"variance_scaling_conf": fields})
    message = str(info.value)
    assert message.startswith("FunctionConfig.default_initializer_conf: 'variance_scaling_conf'")
    for word in words:
        assert word in message, message


def test_variance_scaling_conf_spellings_of_oneflow_03_are_accepted():
    config = flow.FunctionConfig()
    config.default_initializer_conf({"variance_scaling_conf": {
        "scale": 2.0, "variance_norm": "kFanOut", "distribution": "kRandomNormal",
        "data_format": "channels_last"}})
    config.default_initializer_conf({"variance_scaling_conf": {
        "variance_norm": 2, "distribution": 0, "data_format": "channels_first"}})

    @flow.global_function(function_config=config)
    def read() -> tp.Numpy:
        return flow.get_variable("v", shape=(400, 100))

    value = read()
    # fan_avg 250, truncated normal with variance scale / fan
    assert abs(value.std() / np.sqrt(1.0 / 250) - 1) < 0.05


@pytest.mark.parametrize("data_format, shape, mode, fan", [
    # OneFlow 0.3's GenInitialFan: fan_in = every axis but the first; fan_out = the first axis
    # times the kernel axes (after it channels first, before the last axis channels last)
    ("NCHW", (32, 8, 3, 5), "fan_in", 8 * 3 * 5),
    ("NCHW", (32, 8, 3, 5), "fan_out", 32 * 3 * 5),
    ("NHWC", (32, 3, 5, 8), "fan_in", 3 * 5 * 8),
    ("NHWC", (32, 3, 5, 8), "fan_out", 32 * 3 * 5),
    ("NHWC", (32, 3, 5, 8), "fan_avg", (3 * 5 * 8 + 32 * 3 * 5) / 2),
    ("", (400, 300), "fan_out", 400),
], ids=["nchw_in", "nchw_out", "nhwc_in", "nhwc_out", "nhwc_avg", "dense_out"])
def test_variance_scaling_fans_follow_the_data_format(data_format, shape, mode, fan):
    initializer = flow.variance_scaling_initializer(2.0, mode, "random_normal", data_format)
    value = _declare(shape=shape, initializer=initializer)
    std = np.sqrt(2.0 / fan)
    assert abs(value.std() / std - 1) < 0.05, (value.std(), std)
