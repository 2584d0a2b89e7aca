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
    "nn.relu": flow.nn.relu,
    "math.relu": flow.math.relu,
    "sigmoid": flow.math.sigmoid,
    "tanh": flow.math.tanh,
    "square": flow.math.square,
}
_torch_ops = {
    "nn.relu": torch.relu,
    "math.relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "square": torch.square,
}


def compare_with_torch(test_case, device_type, op_name, x_shape, data_type):
    assert device_type in ["gpu", "cpu"]
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def ActivationJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable(name="v1", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            loss = _of_ops[op_name](x)
            zero_lr_sgd().minimize(loss)
            flow.watch(x, test_global_storage.Setter("x"))
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch(loss, test_global_storage.Setter("loss"))
            flow.watch_diff(loss, test_global_storage.Setter("loss_diff"))
            return loss

    check_point = flow.train.CheckPoint()
    check_point.init()
    x = (np.random.randn(*x_shape) * 3).astype(np_type)
    if op_name.endswith("relu"):
        x[np.abs(x) < 1e-3] = 0.5  # stay away from the kink
    of_out = ActivationJob(x)

    torch_x = torch.tensor(x, requires_grad=True)
    torch_y = _torch_ops[op_name](torch_x)
    torch_y.backward(torch.tensor(test_global_storage.Get("loss_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.dtype, np_type)
    test_case.assertEqual(of_out.shape, x_shape)
    test_case.assertTrue(np.allclose(test_global_storage.Get("x"), x))
    test_case.assertTrue(np.allclose(of_out, torch_y.detach().numpy(), rtol=rtol, atol=atol))
    test_case.assertTrue(np.allclose(test_global_storage.Get("loss"), of_out))
    test_case.assertTrue(np.array_equal(test_global_storage.Get("loss_diff"), np.ones(x_shape)))
    test_case.assertTrue(
        np.allclose(test_global_storage.Get("x_diff"), torch_x.grad.numpy(), rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestActivations(flow.unittest.TestCase):
    def test_activations(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["op_name"] = list(_of_ops.keys())
        arg_dict["x_shape"] = [(1,), (7,), (4, 5), (2, 3, 4), (2, 1, 3, 5)]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_sigmoid_saturation(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def SigmoidJob(x: tp.Numpy.Placeholder((6,))) -> tp.Numpy:
            return flow.math.sigmoid(x)

        x = np.array([-100, -30, 0, 30, 100, 1e4], dtype=np.float32)
        y = SigmoidJob(x)
        test_case.assertTrue(np.all(np.isfinite(y)))
        test_case.assertTrue(np.allclose(y, 1 / (1 + np.exp(-x.astype(np.float64))), atol=1e-7))

    def test_tanh_saturation(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("double"))
        def TanhJob(x: tp.Numpy.Placeholder((5,), dtype=flow.double)) -> tp.Numpy:
            return flow.math.tanh(x)

        x = np.array([-1000, -20, 0, 20, 1000], dtype=np.float64)
        test_case.assertTrue(np.allclose(TanhJob(x), np.tanh(x)))


if __name__ == "__main__":
    unittest.main()
