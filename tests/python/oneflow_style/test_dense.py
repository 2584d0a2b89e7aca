import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, x_shape, units, use_bias, activation, data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    of_act = {"none": None, "relu": flow.nn.relu, "sigmoid": flow.math.sigmoid,
              "tanh": flow.math.tanh}[activation]
    t_act = {"none": lambda t: t, "relu": torch.relu, "sigmoid": torch.sigmoid,
             "tanh": torch.tanh}[activation]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def DenseJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            out = flow.layers.dense(
                x, units, activation=of_act, use_bias=use_bias,
                kernel_initializer=flow.random_uniform_initializer(-1, 1),
                bias_initializer=flow.random_uniform_initializer(-1, 1),
                name="dense")
            zero_lr_sgd().minimize(out)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch_diff(out, test_global_storage.Setter("out_diff"))
            return out

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    # variable values are read back with a predict job defined after the first call
    of_out = DenseJob(x)

    @flow.global_function(function_config=make_func_config(data_type))
    def ReadWeights() -> tp.Numpy:
        return flow.get_variable("dense-weight", shape=(units, x_shape[-1]), dtype=flow_type)

    w = ReadWeights()
    test_case.assertEqual(w.shape, (units, x_shape[-1]))
    tx = torch.tensor(x, requires_grad=True)
    tout = tx.reshape(-1, x_shape[-1]) @ torch.tensor(w).t()
    if use_bias:
        @flow.global_function(function_config=make_func_config(data_type))
        def ReadBias() -> tp.Numpy:
            return flow.get_variable("dense-bias", shape=(units,), dtype=flow_type)

        tout = tout + torch.tensor(ReadBias())
    tout = t_act(tout).reshape(list(x_shape[:-1]) + [units])
    tout.backward(torch.tensor(test_global_storage.Get("out_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.shape, tuple(tout.shape))
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol * 10))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol * 10))


@flow.unittest.skip_unless_1n1d()
class TestDense(flow.unittest.TestCase):
    def test_dense(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape"] = [(1, 3), (8, 16), (2, 3, 5)]
        arg_dict["units"] = [1, 7]
        arg_dict["use_bias"] = [True, False]
        arg_dict["activation"] = ["none", "relu", "sigmoid", "tanh"]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_dense_trains(test_case):
        flow.clear_default_session()
        np.random.seed(0)
        x = np.random.randn(32, 4).astype(np.float32)
        y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.7).astype(np.float32)

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob(x_: tp.Numpy.Placeholder((32, 4)),
                     y_: tp.Numpy.Placeholder((32, 1))) -> tp.Numpy:
            pred = flow.layers.dense(x_, 1, name="fc")
            loss = flow.math.reduce_mean(flow.math.square(pred - y_))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                               momentum=0).minimize(loss)
            return loss

        first = TrainJob(x, y)
        for _ in range(200):
            last = TrainJob(x, y)
        test_case.assertLess(last.item(), 1e-3 * first.item() + 1e-6)


if __name__ == "__main__":
    unittest.main()
