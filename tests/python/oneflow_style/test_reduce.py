import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, op_name, x_shape, axis, keepdims, data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    of_op = flow.math.reduce_sum if op_name == "sum" else flow.math.reduce_mean

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def ReduceJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            loss = of_op(x, axis=axis, keepdims=keepdims)
            zero_lr_sgd().minimize(loss)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch_diff(loss, test_global_storage.Setter("loss_diff"))
            return loss

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    of_out = ReduceJob(x)

    tx = torch.tensor(x, requires_grad=True)
    if axis is None:
        dims = list(range(len(x_shape)))
    elif isinstance(axis, int):
        dims = [axis]
    else:
        dims = list(axis)
    if len(dims) == 0:
        tout = tx * 1
    elif op_name == "sum":
        tout = torch.sum(tx, dim=dims, keepdim=keepdims)
    else:
        tout = torch.mean(tx, dim=dims, keepdim=keepdims)
    tout.backward(torch.tensor(test_global_storage.Get("loss_diff")).reshape(tout.shape))
    rtol, atol = tolerance(data_type)
    # OneFlow 0.3 has no 0-d results: every axis reduced gives shape (1,).
    test_case.assertEqual(of_out.shape, tuple(tout.shape) or (1,))
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol * 10))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestReduce(flow.unittest.TestCase):
    def test_reduce(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["op_name"] = ["sum", "mean"]
        arg_dict["x_shape_axis"] = [
            ((5,), None), ((5,), 0), ((4, 3), None), ((4, 3), 0), ((4, 3), 1), ((4, 3), -1),
            ((2, 3, 4), [0, 2]), ((2, 3, 4), (1,)), ((2, 3, 4), [-1, -2]), ((2, 1, 4, 3), [1, 3]),
        ]
        arg_dict["keepdims"] = [False, True]
        arg_dict["data_type"] = ["float32", "double"]
        for device_type, op_name, (x_shape, axis), keepdims, data_type in GenArgList(arg_dict):
            compare_with_torch(test_case, device_type, op_name, x_shape, axis, keepdims, data_type)

    def test_reduce_large_sum_precision(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def SumJob(x: tp.Numpy.Placeholder((1000, 100))) -> tp.Numpy:
            return flow.math.reduce_sum(x, axis=0)

        x = np.random.rand(1000, 100).astype(np.float32)
        test_case.assertTrue(np.allclose(SumJob(x), x.astype(np.float64).sum(0), rtol=1e-5))


if __name__ == "__main__":
    unittest.main()
