import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, a_shape, b_shape, transpose_a, transpose_b,
                       data_type, alpha=1.0):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def MatmulJob(a: tp.Numpy.Placeholder(a_shape, dtype=flow_type),
                  b: tp.Numpy.Placeholder(b_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            a += flow.get_variable("a0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            b += flow.get_variable("b0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            out = flow.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                              alpha=alpha)
            zero_lr_sgd().minimize(out)
            flow.watch_diff(a, test_global_storage.Setter("a_diff"))
            flow.watch_diff(b, test_global_storage.Setter("b_diff"))
            flow.watch_diff(out, test_global_storage.Setter("out_diff"))
            return out

    flow.train.CheckPoint().init()
    a = np.random.uniform(-1, 1, a_shape).astype(np_type)
    b = np.random.uniform(-1, 1, b_shape).astype(np_type)
    of_out = MatmulJob(a, b)

    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    x = ta.t() if transpose_a else ta
    y = tb.t() if transpose_b else tb
    tout = torch.matmul(x, y) * alpha
    tout.backward(torch.tensor(test_global_storage.Get("out_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.shape, tuple(tout.shape))
    test_case.assertEqual(of_out.dtype, np_type)
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol * 10))
    test_case.assertTrue(np.allclose(test_global_storage.Get("a_diff"), ta.grad.numpy(),
                                     rtol=rtol, atol=atol * 10))
    test_case.assertTrue(np.allclose(test_global_storage.Get("b_diff"), tb.grad.numpy(),
                                     rtol=rtol, atol=atol * 10))


def _shapes(m, k, n, transpose_a, transpose_b):
    return ((k, m) if transpose_a else (m, k)), ((n, k) if transpose_b else (k, n))


@flow.unittest.skip_unless_1n1d()
class TestMatmul(flow.unittest.TestCase):
    def test_matmul(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["mkn"] = [(1, 1, 1), (2, 3, 4), (17, 5, 9), (64, 33, 10)]
        arg_dict["transpose_a"] = [False, True]
        arg_dict["transpose_b"] = [False, True]
        arg_dict["data_type"] = ["float32", "double"]
        for device_type, mkn, ta, tb, data_type in GenArgList(arg_dict):
            a_shape, b_shape = _shapes(*mkn, ta, tb)
            compare_with_torch(test_case, device_type, a_shape, b_shape, ta, tb, data_type)

    def test_matmul_alpha(test_case):
        for data_type in ["float32", "double"]:
            compare_with_torch(test_case, "cpu", (3, 4), (4, 5), False, False, data_type, alpha=2.5)

    def test_matmul_predict_large(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def MatmulJob(a: tp.Numpy.Placeholder((128, 256)),
                      b: tp.Numpy.Placeholder((256, 96))) -> tp.Numpy:
            return flow.matmul(a, b)

        a = np.random.randn(128, 256).astype(np.float32)
        b = np.random.randn(256, 96).astype(np.float32)
        test_case.assertTrue(np.allclose(MatmulJob(a, b), a.astype(np.float64) @ b, atol=1e-3))


if __name__ == "__main__":
    unittest.main()
