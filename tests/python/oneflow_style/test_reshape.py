import unittest
from collections import OrderedDict

import numpy as np

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, type_name_to_flow_type,
                       type_name_to_np_type, zero_lr_sgd)


def compare_with_numpy(test_case, device_type, shapes, data_type):
    x_shape, new_shape = shapes
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def ReshapeJob(x: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x += flow.get_variable("x0", shape=(1,), dtype=flow_type,
                                   initializer=flow.zeros_initializer())
            y = flow.reshape(x, new_shape)
            loss = y * flow.constant(3.0, dtype=flow_type, shape=(1,))
            zero_lr_sgd().minimize(loss)
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            return y

    flow.train.CheckPoint().init()
    x = np.random.randn(*x_shape).astype(np_type)
    of_out = ReshapeJob(x)
    np_out = x.reshape(new_shape)
    test_case.assertEqual(of_out.shape, np_out.shape)
    test_case.assertTrue(np.array_equal(of_out, np_out))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), np.full(x_shape, 3.0)))


@flow.unittest.skip_unless_1n1d()
class TestReshape(flow.unittest.TestCase):
    def test_reshape(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["shapes"] = [
            ((10, 2), (4, 5)),
            ((10, 2), [5, -1]),
            ((2, 3, 4), (24,)),
            ((2, 3, 4), (-1,)),
            ((2, 3, 4), (4, 1, 6)),
            ((6,), (1, 6, 1)),
            ((1,), ()),
            ((2, 5, 3), (2, -1)),
        ]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_numpy(test_case, *arg)

    def test_reshape_int32_predict(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def ReshapeJob(x: tp.Numpy.Placeholder((3, 4), dtype=flow.int32)) -> tp.Numpy:
            return flow.reshape(x, (2, 6))

        x = np.arange(12, dtype=np.int32).reshape(3, 4)
        out = ReshapeJob(x)
        test_case.assertEqual(out.dtype, np.int32)
        test_case.assertTrue(np.array_equal(out, x.reshape(2, 6)))


if __name__ == "__main__":
    unittest.main()
