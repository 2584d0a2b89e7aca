import unittest
from collections import OrderedDict

import numpy as np

import oneflow as flow
import oneflow.typing as tp
from test_util import GenArgList, device_types, make_func_config, type_name_to_flow_type, \
    type_name_to_np_type


def closed_form_check(test_case, device_type, shape, lr, data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    func_config = make_func_config(data_type)

    def get_var():
        return flow.get_variable(name="var", shape=shape, dtype=flow_type,
                                 initializer=flow.random_uniform_initializer(), trainable=True)

    @flow.global_function(type="train", function_config=func_config)
    def TrainJob(x: tp.Numpy.Placeholder(shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            var = get_var()
            loss = var + x
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [lr]),
                               momentum=0).minimize(loss)
            return loss

    @flow.global_function(function_config=func_config)
    def EvalJob() -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            return get_var()

    flow.train.CheckPoint().init()
    var = EvalJob()
    test_case.assertEqual(var.shape, tuple(shape))
    test_case.assertEqual(var.dtype, np_type)
    test_case.assertTrue(np.all(var >= 0) and np.all(var <= 1))
    for _ in range(10):
        x = np.random.rand(*shape).astype(np_type)
        loss = TrainJob(x)
        test_case.assertTrue(np.allclose(loss, var + x))
        var_new = EvalJob()
        test_case.assertTrue(np.allclose(var_new, var - lr / var.size,
                                         rtol=1e-5, atol=1e-6), (var_new, var))
        var = var_new


def run_initializer(test_case, name, initializer, shape, check):
    flow.clear_default_session()

    @flow.global_function(function_config=make_func_config("float32"))
    def InitJob() -> tp.Numpy:
        return flow.get_variable(name, shape=shape, initializer=initializer)

    value = InitJob()
    test_case.assertEqual(value.shape, shape)
    test_case.assertTrue(check(value), (name, value.mean(), value.std(), value.min(), value.max()))
    # a second call returns the same (unchanged) variable
    test_case.assertTrue(np.array_equal(InitJob(), value))


@flow.unittest.skip_unless_1n1d()
class TestGetVariable(flow.unittest.TestCase):
    def test_closed_form_sgd_update(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["shape"] = [(1,), (10,), (3, 4), (2, 3, 5)]
        arg_dict["lr"] = [1.0, 0.1]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            closed_form_check(test_case, *arg)

    def test_initializers(test_case):
        n = (200, 250)
        cases = [
            ("c", flow.constant_initializer(3.5), lambda v: np.all(v == 3.5)),
            ("z", flow.zeros_initializer(), lambda v: np.all(v == 0)),
            ("o", flow.ones_initializer(), lambda v: np.all(v == 1)),
            ("u", flow.random_uniform_initializer(-2, 3),
             lambda v: v.min() >= -2 and v.max() <= 3 and abs(v.mean() - 0.5) < 0.05),
            ("n", flow.random_normal_initializer(mean=1.0, stddev=2.0),
             lambda v: abs(v.mean() - 1) < 0.05 and abs(v.std() - 2) < 0.05),
            ("t", flow.truncated_normal_initializer(mean=0.0, stddev=1.0),
             lambda v: np.abs(v).max() <= 2.0 + 1e-6 and 0.8 < v.std() < 0.9),
            ("xu", flow.xavier_uniform_initializer(),
             lambda v: np.abs(v).max() <= np.sqrt(6 / (200 + 250)) + 1e-6),
            ("xn", flow.xavier_normal_initializer(),
             lambda v: abs(v.std() - np.sqrt(2 / (200 + 250))) < 0.01),
            ("vs", flow.variance_scaling_initializer(2.0, "fan_in", "random_normal"),
             lambda v: abs(v.std() - np.sqrt(2 / 250)) < 0.01),
        ]
        for name, init, check in cases:
            run_initializer(test_case, name, init, n, check)

    def test_same_name_returns_same_variable(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job() -> tp.Numpy:
            a = flow.get_variable("shared", shape=(4,), initializer=flow.random_normal_initializer())
            b = flow.get_variable("shared", shape=(4,), initializer=flow.random_normal_initializer())
            return a - b

        test_case.assertTrue(np.array_equal(Job(), np.zeros(4, np.float32)))

    def test_variable_shared_between_jobs(test_case):
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob() -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))
            loss = w * 1.0
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [3.0]),
                               momentum=0).minimize(loss)
            return loss

        @flow.global_function(function_config=make_func_config("float32"))
        def EvalJob() -> tp.Numpy:
            return flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))

        test_case.assertTrue(np.allclose(EvalJob(), 1.0))
        TrainJob()
        test_case.assertTrue(np.allclose(EvalJob(), 0.0, atol=1e-6))  # 1 - 3 * 1 / 3
        TrainJob()
        test_case.assertTrue(np.allclose(EvalJob(), -1.0, atol=1e-6))

    def test_non_trainable_not_updated(test_case):
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob() -> tp.Numpy:
            w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
            c = flow.get_variable("c", shape=(2,), initializer=flow.ones_initializer(),
                                  trainable=False)
            loss = w * c
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0]),
                               momentum=0).minimize(loss)
            return c

        for _ in range(3):
            test_case.assertTrue(np.array_equal(TrainJob(), np.ones(2, np.float32)))

    def test_namespace(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job() -> tp.Numpy:
            with flow.scope.namespace("scope1"):
                a = flow.get_variable("v", shape=(2,), initializer=flow.constant_initializer(1))
            b = flow.get_variable("v", shape=(2,), initializer=flow.constant_initializer(2))
            return a + b * 10

        test_case.assertTrue(np.array_equal(Job(), np.full(2, 21, np.float32)))

    def test_seeded_initializer_is_reproducible(test_case):
        values = []
        for _ in range(2):
            flow.clear_default_session()

            @flow.global_function(function_config=make_func_config("float32"))
            def Job() -> tp.Numpy:
                return flow.get_variable(
                    "s", shape=(5,), initializer=flow.random_uniform_initializer(seed=123))

            values.append(Job())
        test_case.assertTrue(np.array_equal(values[0], values[1]))


if __name__ == "__main__":
    unittest.main()
