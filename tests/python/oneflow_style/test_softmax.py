import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, x_shape, axis, data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def SoftmaxJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.random_uniform_initializer(0, 0))
            y = flow.nn.softmax(x, axis=axis)
            # a non-uniform output diff, so the softmax gradient is not trivially zero
            loss = y
            zero_lr_sgd().minimize(loss)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch_diff(loss, test_global_storage.Setter("loss_diff"))
            return y

    flow.train.CheckPoint().init()
    x = (np.random.randn(*x_shape) * 4).astype(np_type)
    of_out = SoftmaxJob(x)
    tx = torch.tensor(x, requires_grad=True)
    tout = torch.softmax(tx, dim=-1 if axis is None else axis)
    tout.backward(torch.tensor(test_global_storage.Get("loss_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol))


def compare_grad_with_torch(test_case, x_shape, axis, data_type):
    """softmax followed by a weighting, so the incoming diff is not all ones."""
    flow.clear_default_session()
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def SoftmaxJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type),
                   w: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                               initializer=flow.zeros_initializer())
        y = flow.nn.softmax(x, axis=axis)
        loss = y * w
        zero_lr_sgd().minimize(loss)
        flow.watch_diff(x, test_global_storage.Setter("x_diff"))
        return loss

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    w = np.random.randn(*x_shape).astype(np_type)
    SoftmaxJob(x, w)
    tx = torch.tensor(x, requires_grad=True)
    (torch.softmax(tx, dim=-1 if axis is None else axis) * torch.tensor(w)).sum().backward()
    rtol, atol = tolerance(data_type)
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestSoftmax(flow.unittest.TestCase):
    def test_softmax(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape_axis"] = [((10,), None), ((4, 10), None), ((4, 10), -1), ((4, 10), 1),
                                    ((2, 3, 5), None), ((2, 3, 5), 2), ((1, 1000), None)]
        arg_dict["data_type"] = ["float32", "double"]
        for device_type, (x_shape, axis), data_type in GenArgList(arg_dict):
            compare_with_torch(test_case, device_type, x_shape, axis, data_type)

    def test_softmax_non_last_axis(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape_axis"] = [((4, 10), 0), ((2, 3, 5), 1), ((2, 3, 5), 0), ((2, 3, 5), -2)]
        arg_dict["data_type"] = ["float32", "double"]
        for device_type, (x_shape, axis), data_type in GenArgList(arg_dict):
            compare_with_torch(test_case, device_type, x_shape, axis, data_type)

    def test_softmax_weighted_grad(test_case):
        arg_dict = OrderedDict()
        arg_dict["x_shape_axis"] = [((4, 10), None), ((3, 7), 1), ((2, 3, 5), -1)]
        arg_dict["data_type"] = ["float32", "double"]
        for (x_shape, axis), data_type in GenArgList(arg_dict):
            compare_grad_with_torch(test_case, x_shape, axis, data_type)

    def test_softmax_weighted_grad_non_last_axis(test_case):
        for data_type in ["float32", "double"]:
            compare_grad_with_torch(test_case, (3, 7), 0, data_type)

    def test_softmax_large_logits_stable(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def SoftmaxJob(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            return flow.nn.softmax(x)

        x = np.array([[1000, 1001, 1002], [-1000, -1000, -1000]], dtype=np.float32)
        y = SoftmaxJob(x)
        test_case.assertTrue(np.all(np.isfinite(y)))
        test_case.assertTrue(np.allclose(y, torch.softmax(torch.tensor(x), -1).numpy()))


if __name__ == "__main__":
    unittest.main()
