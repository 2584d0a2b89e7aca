import unittest

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import make_func_config


@flow.unittest.skip_unless_1n1d()
def _define_job_with_failing_watch():
    """A job whose watch handler fails an assertion on every call."""

    def bad(x):
        assert False, "assertion inside watch callback"

    @flow.global_function(function_config=make_func_config("float32"))
    def Job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        flow.watch(x, bad)
        return x

    return Job


class TestWatch(flow.unittest.TestCase):
    def test_simple(test_case):
        flow.clear_default_session()
        flow.config.gpu_device_num(1)
        data = np.ones((10,), dtype=np.float32)

        def EqOnes(x):
            test_case.assertTrue(np.allclose(data, x.numpy()))

        @flow.global_function(function_config=make_func_config("float32"))
        def ReluJob(x: tp.Numpy.Placeholder((10,))):
            flow.watch(x, EqOnes)

        ReluJob(data)

    def test_numpy_annotated_handler(test_case):
        flow.clear_default_session()
        seen = []

        def handler(x: tp.Numpy):
            test_case.assertIsInstance(x, np.ndarray)
            seen.append(x.copy())

        @flow.global_function(function_config=make_func_config("float32"))
        def Job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            y = flow.math.relu(x)
            flow.watch(y, handler)
            return y * 2

        x = np.random.randn(2, 3).astype(np.float32)
        out = Job(x)
        test_case.assertEqual(len(seen), 1)
        test_case.assertTrue(np.array_equal(seen[0], np.maximum(x, 0)))
        test_case.assertTrue(np.allclose(out, np.maximum(x, 0) * 2))

    def test_watch_every_iteration(test_case):
        flow.clear_default_session()
        seen = []

        @flow.global_function(function_config=make_func_config("double"))
        def Job(x: tp.Numpy.Placeholder((4,), dtype=flow.double)) -> tp.Numpy:
            flow.watch(x, lambda b: seen.append(b.numpy().copy()))
            return x + 1

        inputs = [np.random.randn(4) for _ in range(5)]
        for x in inputs:
            Job(x)
        test_case.assertEqual(len(seen), 5)
        for x, s in zip(inputs, seen):
            test_case.assertTrue(np.array_equal(x, s))
            test_case.assertEqual(s.dtype, np.float64)

    def test_watch_in_train_job_and_variable(test_case):
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def Job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(2.0))
            flow.watch(w, test_global_storage.Setter("w"))
            loss = flow.math.reduce_sum(w * x)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                               momentum=0).minimize(loss)
            return loss

        x = np.array([1, 2, 3], np.float32)
        test_case.assertTrue(np.allclose(Job(x), 12.0))
        test_case.assertTrue(np.allclose(test_global_storage.Get("w"), 2.0))
        Job(x)
        # the watched value is the one read in this iteration (before its update)
        test_case.assertTrue(np.allclose(test_global_storage.Get("w"), 2.0 - 0.5 * x))

    def test_failed_assert_in_callback_surfaces(test_case):
        flow.clear_default_session()

        Job = _define_job_with_failing_watch()
        with test_case.assertRaises(AssertionError):
            Job(np.zeros(2, np.float32))

    def test_callback_error_raised_once_then_session_works(test_case):
        flow.clear_default_session()

        Job = _define_job_with_failing_watch()
        with test_case.assertRaises(AssertionError):
            Job(np.zeros(2, np.float32))

        # the session keeps working afterwards
        @flow.global_function(function_config=make_func_config("float32"))
        def Ok(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
            return x + 1

        test_case.assertTrue(np.array_equal(Ok(np.zeros(2, np.float32)), [1, 1]))


if __name__ == "__main__":
    unittest.main()
