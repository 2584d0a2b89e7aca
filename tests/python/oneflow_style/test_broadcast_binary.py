import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)

_of_ops = {
    "add": flow.math.add,
    "subtract": flow.math.subtract,
    "multiply": flow.math.multiply,
    "divide": flow.math.divide,
}
_torch_ops = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
}


def compare_with_torch(test_case, device_type, op_name, shapes, data_type):
    x_shape, y_shape = shapes
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def BinaryJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type),
                  y: tp.Numpy.Placeholder(y_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            y += flow.get_variable("y0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            out = _of_ops[op_name](x, y)
            zero_lr_sgd().minimize(out)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch_diff(y, test_global_storage.Setter("y_diff"))
            flow.watch_diff(out, test_global_storage.Setter("out_diff"))
            return out

    flow.train.CheckPoint().init()
    x = np.random.uniform(-2, 2, x_shape).astype(np_type)
    y = np.random.uniform(0.5, 2, y_shape).astype(np_type)
    y *= np.where(np.random.rand(*y_shape) > 0.5, 1, -1).astype(np_type)
    of_out = BinaryJob(x, y)

    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tensor(y, requires_grad=True)
    tout = _torch_ops[op_name](tx, ty)
    tout.backward(torch.tensor(test_global_storage.Get("out_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.shape, tuple(tout.shape))
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol))
    test_case.assertEqual(test_global_storage.Get("x_diff").shape, x_shape)
    test_case.assertEqual(test_global_storage.Get("y_diff").shape, y_shape)
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol))
    test_case.assertTrue(np.allclose(test_global_storage.Get("y_diff"), ty.grad.numpy(),
                                     rtol=rtol, atol=atol * 10))


def compare_scalar_with_numpy(test_case, device_type, expr_name, x_shape, data_type):
    flow.clear_default_session()
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    exprs = {
        "x+2": (lambda x: x + 2, lambda x: np.ones_like(x)),
        "3+x": (lambda x: 3 + x, lambda x: np.ones_like(x)),
        "x-1.5": (lambda x: x - 1.5, lambda x: np.ones_like(x)),
        "4-x": (lambda x: 4 - x, lambda x: -np.ones_like(x)),
        "x*2.5": (lambda x: x * 2.5, lambda x: np.full_like(x, 2.5)),
        "-3*x": (lambda x: -3 * x, lambda x: np.full_like(x, -3)),
        "x/4": (lambda x: x / 4, lambda x: np.full_like(x, 0.25)),
        "2/x": (lambda x: 2 / x, lambda x: -2 / (x * x)),
        "-x": (lambda x: -x, lambda x: -np.ones_like(x)),
        "x*x+x": (lambda x: x * x + x, lambda x: 2 * x + 1),
    }
    fn, grad_fn = exprs[expr_name]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def ScalarJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            out = fn(x)
            zero_lr_sgd().minimize(out)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            return out

    flow.train.CheckPoint().init()
    x = np.random.uniform(0.5, 2, x_shape).astype(np_type)
    of_out = ScalarJob(x)
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.dtype, np_type)
    test_case.assertTrue(np.allclose(of_out, fn(x.astype(np.float64)), rtol=rtol, atol=atol))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"),
                                     grad_fn(x.astype(np.float64)), rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestBroadcastBinary(flow.unittest.TestCase):
    def test_same_shape(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["op_name"] = list(_of_ops.keys())
        arg_dict["shapes"] = [((5,), (5,)), ((3, 4), (3, 4)), ((2, 3, 4), (2, 3, 4))]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_broadcast(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = ["cpu"]
        arg_dict["op_name"] = list(_of_ops.keys())
        arg_dict["shapes"] = [
            ((3, 4), (1, 4)),
            ((3, 4), (3, 1)),
            ((3, 4), (4,)),
            ((3, 1), (1, 4)),
            ((2, 3, 4), (3, 1)),
            ((1,), (2, 3)),
            ((2, 1, 4), (1, 3, 1)),
            ((4, 1, 3, 1), (5, 1, 2)),
        ]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_scalar_operators(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["expr"] = ["x+2", "3+x", "x-1.5", "4-x", "x*2.5", "-3*x", "x/4", "2/x", "-x",
                            "x*x+x"]
        arg_dict["x_shape"] = [(6,), (2, 3, 2)]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_scalar_with_numpy(test_case, *arg)


if __name__ == "__main__":
    unittest.main()
