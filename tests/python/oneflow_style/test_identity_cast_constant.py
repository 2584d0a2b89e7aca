import unittest
from collections import OrderedDict

import numpy as np

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, type_name_to_flow_type,
                       type_name_to_np_type, zero_lr_sgd)


def run_identity(test_case, device_type, x_shape, data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def IdentityJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            y = flow.identity(x)
            loss = y * 2
            zero_lr_sgd().minimize(loss)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            return y

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    y = IdentityJob(x)
    test_case.assertEqual(y.dtype, np_type)
    test_case.assertTrue(np.array_equal(y, x))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), np.full(x_shape, 2.0)))


def run_cast(test_case, device_type, from_type, to_type):
    flow.clear_default_session()
    from_flow, to_flow = type_name_to_flow_type[from_type], type_name_to_flow_type[to_type]
    from_np, to_np = type_name_to_np_type[from_type], type_name_to_np_type[to_type]

    @flow.global_function(function_config=make_func_config("float32"))
    def CastJob(x: tp.Numpy.Placeholder((3, 4), dtype=from_flow)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            return flow.cast(x, dtype=to_flow)

    if from_np in (np.float32, np.float64):
        x = np.random.uniform(-50, 50, (3, 4)).astype(from_np)
    else:
        x = np.random.randint(-50, 50, (3, 4)).astype(from_np)
    y = CastJob(x)
    test_case.assertEqual(y.dtype, to_np)
    test_case.assertTrue(np.array_equal(y, x.astype(to_np)), (x, y))


def run_cast_grad(test_case, from_type, to_type):
    flow.clear_default_session()
    from_flow, to_flow = type_name_to_flow_type[from_type], type_name_to_flow_type[to_type]
    from_np = type_name_to_np_type[from_type]

    @flow.global_function(type="train", function_config=make_func_config(from_type))
    def CastJob(x: tp.Numpy.Placeholder((5,), dtype=from_flow)) -> tp.Numpy:
        x += flow.get_variable("x0", shape=(1,), dtype=from_flow,
                               initializer=flow.zeros_initializer())
        y = flow.cast(x, dtype=to_flow)
        loss = flow.math.square(y)
        zero_lr_sgd().minimize(loss)
        flow.watch_diff(x, test_global_storage.Setter("x_diff"))
        return loss

    flow.train.CheckPoint().init()
    x = np.random.randn(5).astype(from_np)
    CastJob(x)
    diff = test_global_storage.Get("x_diff")
    test_case.assertEqual(diff.dtype, from_np)
    test_case.assertTrue(np.allclose(diff, 2 * x, rtol=1e-5))


def run_constant(test_case, device_type, value, shape, data_type):
    flow.clear_default_session()
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(function_config=make_func_config("float32"))
    def ConstantJob() -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            return flow.constant(value, dtype=flow_type, shape=shape)

    y = ConstantJob()
    test_case.assertEqual(y.dtype, np_type)
    test_case.assertEqual(y.shape, tuple(shape))
    test_case.assertTrue(np.array_equal(y, np.full(shape, value, dtype=np_type)))


@flow.unittest.skip_unless_1n1d()
class TestIdentityCastConstant(flow.unittest.TestCase):
    def test_identity(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape"] = [(1,), (4, 5), (2, 3, 4)]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            run_identity(test_case, *arg)

    def test_cast(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["from_type"] = ["float32", "double", "int32", "int64"]
        arg_dict["to_type"] = ["float32", "double", "int32", "int64"]
        for arg in GenArgList(arg_dict):
            run_cast(test_case, *arg)

    def test_cast_grad(test_case):
        for from_type, to_type in [("float32", "double"), ("double", "float32"),
                                   ("float32", "float32")]:
            run_cast_grad(test_case, from_type, to_type)

    def test_constant(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["value"] = [0, 1, -2.5, 6.0]
        arg_dict["shape"] = [(1,), (3,), (2, 3, 4)]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            run_constant(test_case, *arg)

    def test_constant_int(test_case):
        for data_type in ["int32", "int64"]:
            run_constant(test_case, "cpu", 7, (2, 2), data_type)

    def test_constant_default_dtype_is_float(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def ConstantJob() -> tp.Numpy:
            return flow.constant(1.5, shape=(2,))

        y = ConstantJob()
        test_case.assertEqual(y.dtype, np.float32)
        test_case.assertTrue(np.array_equal(y, [1.5, 1.5]))

    def test_constant_in_expression(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("double"))
        def Job(x: tp.Numpy.Placeholder((2, 3), dtype=flow.double)) -> tp.Numpy:
            return x * flow.constant(2.0, dtype=flow.double, shape=(1, 3)) + 1

        x = np.random.randn(2, 3)
        test_case.assertTrue(np.allclose(Job(x), x * 2 + 1))


if __name__ == "__main__":
    unittest.main()
