import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, x_shape, data_type, data_format):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    channel_axis = 1 if data_format == "NCHW" else len(x_shape) - 1
    if len(x_shape) == 2:
        channel_axis = 1
    b_shape = (x_shape[channel_axis],)

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def BiasAddJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type),
                   b: tp.Numpy.Placeholder(b_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            b += flow.get_variable("b0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            out = flow.nn.bias_add(x, b, data_format=data_format)
            zero_lr_sgd().minimize(out)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch_diff(b, test_global_storage.Setter("b_diff"))
            flow.watch_diff(out, test_global_storage.Setter("out_diff"))
            return out

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    b = np.random.randn(*b_shape).astype(np_type)
    of_out = BiasAddJob(x, b)

    bshape = [1] * len(x_shape)
    bshape[channel_axis] = b_shape[0]
    tx = torch.tensor(x, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    tout = tx + tb.reshape(bshape)
    tout.backward(torch.tensor(test_global_storage.Get("out_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy()))
    test_case.assertTrue(np.allclose(test_global_storage.Get("b_diff"), tb.grad.numpy(),
                                     rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestBiasAdd(flow.unittest.TestCase):
    def test_bias_add_nchw(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape"] = [(4, 5), (2, 3, 4), (2, 4, 3, 3), (1, 7, 2, 2, 2)]
        arg_dict["data_type"] = ["float32", "double"]
        arg_dict["data_format"] = ["NCHW"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_bias_add_nhwc(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape"] = [(2, 3, 4), (2, 4, 3, 6)]
        arg_dict["data_type"] = ["float32", "double"]
        arg_dict["data_format"] = ["NHWC"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)


if __name__ == "__main__":
    unittest.main()
