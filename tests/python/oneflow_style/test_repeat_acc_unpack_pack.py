"""OneFlow 0.3's test_repeat_acc.py and test_unpack_pack.py, as their scripts are written: the
pieces an iteration makes after flow.repeat / flow.unpack come back through flow.acc /
flow.pack."""
import unittest
from collections import OrderedDict

import numpy as np

import oneflow as flow
import oneflow.typing as oft
from test_util import GenArgList, device_types


def run_repeat_acc(test_case, device_type, shape, acc_num):
    flow.clear_default_session()
    func_config = flow.FunctionConfig()
    func_config.default_data_type(flow.float)
    func_config.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=func_config)
    def RepeatAccJob(a: oft.Numpy.Placeholder(shape)):
        with flow.scope.placement(device_type, "0:0"):
            return flow.acc(flow.repeat(a, acc_num), acc_num)

    x = np.random.rand(*shape).astype(np.float32)
    y = RepeatAccJob(x).get().numpy()
    test_case.assertTrue(np.allclose(y, x * acc_num, rtol=1e-6))


def run_unpack_pack(test_case, device_type, shape, pack_num):
    flow.clear_default_session()
    func_config = flow.FunctionConfig()
    func_config.default_data_type(flow.float)

    @flow.global_function(function_config=func_config)
    def UnpackPackJob(a: oft.Numpy.Placeholder(shape)):
        with flow.scope.placement(device_type, "0:0"):
            return flow.pack(flow.unpack(a, pack_num), pack_num)

    x = np.random.rand(*shape).astype(np.float32)
    y = UnpackPackJob(x).get().numpy()
    test_case.assertTrue(np.array_equal(y, x))


@flow.unittest.skip_unless_1n1d()
class TestRepeatAccUnpackPack(flow.unittest.TestCase):
    def test_repeat_acc(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["shape"] = [(1024, 1024), (1000, 10), (10, 10, 3)]
        arg_dict["acc_num"] = [1, 5]
        for arg in GenArgList(arg_dict):
            run_repeat_acc(test_case, *arg)

    def test_unpack_pack(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["shape"] = [(6, 4), (12, 3, 2)]
        arg_dict["pack_num"] = [1, 3, 6]
        for arg in GenArgList(arg_dict):
            run_unpack_pack(test_case, *arg)


if __name__ == "__main__":
    unittest.main()
