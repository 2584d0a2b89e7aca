import unittest
from collections import OrderedDict

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import GenArgList, device_types, make_func_config, type_name_to_flow_type, \
    type_name_to_np_type


def WatchDiff(test_case, device_type, input_shape, dtype):
    assert device_type in ["gpu", "cpu"]
    assert dtype in ["float32", "double"]
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[dtype]
    np_type = type_name_to_np_type[dtype]

    def CheckOnes(diff):
        ones = np.ones(input_shape)
        test_case.assertTrue(np.allclose(diff.numpy(), ones, rtol=1e-5, atol=1e-5))

    @flow.global_function(type="train", function_config=make_func_config(dtype))
    def TrainJob():
        with flow.scope.placement(device_type, "0:0"):
            x = flow.get_variable("in", shape=input_shape, dtype=flow_type,
                                  initializer=flow.random_uniform_initializer(), trainable=True)
            flow.watch_diff(x, CheckOnes)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-4]),
                               momentum=0).minimize(x)

    flow.train.CheckPoint().init()
    TrainJob()


@flow.unittest.skip_unless_1n1d()
def _define_train_job_with_failing_diff_callback(test_case):
    """A train job returning nothing whose watch_diff handler fails an assertion."""

    def bad(d):
        test_case.assertTrue(False, "deliberate")

    @flow.global_function(type="train", function_config=make_func_config("float32"))
    def TrainJob():
        w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
        flow.watch_diff(w, bad)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(w)

    return TrainJob


class TestWatchDiff(flow.unittest.TestCase):
    def test_watch_diff(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["input_shape"] = [(10,), (2, 3), (2, 3, 4)]
        arg_dict["dtype"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            WatchDiff(test_case, *arg)

    def test_watch_diff_is_unscaled(test_case):
        """The watched diff of a variable is the raw gradient; the update uses grad / loss.size."""
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))
            loss = x * w
            flow.watch_diff(w, test_global_storage.Setter("w_diff"))
            flow.watch(w, test_global_storage.Setter("w"))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0]),
                               momentum=0).minimize(loss)
            return loss

        x = np.random.rand(4, 3).astype(np.float32)
        TrainJob(x)
        test_case.assertTrue(np.allclose(test_global_storage.Get("w_diff"), x.sum(0), rtol=1e-5))
        TrainJob(x)
        test_case.assertTrue(np.allclose(test_global_storage.Get("w"), 1.0 - x.sum(0) / 12,
                                         rtol=1e-5))

    def test_watch_diff_numpy_handler_and_chain(test_case):
        flow.clear_default_session()
        got = {}

        def handler(d: tp.Numpy):
            got["d"] = d.copy()

        @flow.global_function(type="train", function_config=make_func_config("double"))
        def TrainJob(x: tp.Numpy.Placeholder((5,), dtype=flow.double)) -> tp.Numpy:
            x += flow.get_variable("v", shape=(1,), dtype=flow.double,
                                   initializer=flow.zeros_initializer())
            y = flow.math.square(x)
            z = flow.math.reduce_sum(y * 3.0)
            flow.watch_diff(x, handler)
            flow.watch_diff(y, test_global_storage.Setter("y_diff"))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0]),
                               momentum=0).minimize(z)
            return z

        x = np.random.randn(5)
        z = TrainJob(x)
        test_case.assertTrue(np.allclose(z, 3 * (x ** 2).sum()))
        test_case.assertTrue(np.allclose(got["d"], 6 * x))
        test_case.assertTrue(np.allclose(test_global_storage.Get("y_diff"), 3.0))

    def test_failed_assert_in_diff_callback_surfaces(test_case):
        flow.clear_default_session()

        TrainJob = _define_train_job_with_failing_diff_callback(test_case)
        with test_case.assertRaises(AssertionError):
            TrainJob()
            flow.clear_default_session()  # at the latest when the session goes away

    def test_failed_assert_in_diff_callback_surfaces_on_sync(test_case):
        flow.clear_default_session()

        TrainJob = _define_train_job_with_failing_diff_callback(test_case)
        with test_case.assertRaises(AssertionError):
            TrainJob()
            flow.sync_default_session()


if __name__ == "__main__":
    unittest.main()
