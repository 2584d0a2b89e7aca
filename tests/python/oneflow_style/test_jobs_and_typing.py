import threading
import typing
import unittest

import numpy as np

import oneflow as flow
import oneflow.typing as tp
from test_util import make_func_config


@flow.unittest.skip_unless_1n1d()
class TestJobsAndTyping(flow.unittest.TestCase):
    def test_future_get(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job(x: tp.Numpy.Placeholder((3,))):
            return flow.math.relu(x)

        x = np.array([-1, 0, 2], np.float32)
        out = Job(x).get()
        test_case.assertTrue(np.array_equal(out.numpy(), [0, 0, 2]))
        test_case.assertTrue(np.array_equal(Job(x).get().numpy(), [0, 0, 2]))

    def test_callback(test_case):
        flow.clear_default_session()
        results = []
        done = threading.Event()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob(x: tp.Numpy.Placeholder((4, 2))) -> tp.Callback[tp.Numpy]:
            w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
            loss = flow.math.reduce_mean(x * w)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                               momentum=0.9).minimize(loss)
            return loss

        def cb(loss: tp.Numpy):
            results.append(loss.item())
            if len(results) == 5:
                done.set()

        x = np.random.rand(4, 2).astype(np.float32)
        for _ in range(5):
            TrainJob(x)(cb)
        flow.sync_default_session()
        test_case.assertTrue(done.wait(10))
        test_case.assertEqual(len(results), 5)
        test_case.assertTrue(all(b < a for a, b in zip(results, results[1:])), results)

    def test_several_jobs_and_late_definition(test_case):
        flow.clear_default_session()
        cfg = make_func_config("float32")

        @flow.global_function(type="train", function_config=cfg)
        def TrainJob(x: tp.Numpy.Placeholder((8, 3)), y: tp.Numpy.Placeholder((8,), dtype=flow.int32)
                     ) -> tp.Numpy:
            logits = flow.layers.dense(x, 4, name="fc")
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                               momentum=0).minimize(loss)
            return loss

        @flow.global_function(function_config=cfg)
        def EvalJob(x: tp.Numpy.Placeholder((8, 3))) -> tp.Numpy:
            return flow.nn.softmax(flow.layers.dense(x, 4, name="fc"))

        np.random.seed(1)
        x = np.random.randn(8, 3).astype(np.float32)
        y = np.random.randint(0, 4, 8).astype(np.int32)
        first = TrainJob(x, y).mean()
        p1 = EvalJob(x)
        for _ in range(30):
            TrainJob(x, y)

        # defined after the session has started running
        @flow.global_function(function_config=cfg)
        def ReadWeight() -> tp.Numpy:
            return flow.get_variable("fc-weight", shape=(4, 3))

        w = ReadWeight()
        p2 = EvalJob(x)
        test_case.assertEqual(w.shape, (4, 3))
        test_case.assertLess(TrainJob(x, y).mean(), first)
        test_case.assertTrue(np.allclose(p1.sum(1), 1, atol=1e-5))
        test_case.assertGreater(p2[np.arange(8), y].mean(), p1[np.arange(8), y].mean())

    def test_keyword_arguments(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job(a: tp.Numpy.Placeholder((2,)), b: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
            return a - b

        a = np.array([5, 6], np.float32)
        b = np.array([1, 2], np.float32)
        test_case.assertTrue(np.array_equal(Job(b=b, a=a), [4, 4]))

    def test_tuple_return(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job(x: tp.Numpy.Placeholder((3,))) -> typing.Tuple[tp.Numpy, tp.Numpy]:
            return x + 1, x * 2

        a, b = Job(np.ones(3, np.float32))
        test_case.assertTrue(np.array_equal(a, [2, 2, 2]))
        test_case.assertTrue(np.array_equal(b, [2, 2, 2]))

    def test_placement_outside_scope_and_default_placement(test_case):
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("float32"))
        def TrainJob(x: tp.Numpy.Placeholder((2, 2))) -> tp.Numpy:
            with flow.scope.placement("gpu", "0:0"):
                h = flow.layers.dense(x, 3, name="d1")
            loss = flow.math.reduce_sum(flow.math.square(h))  # outside any placement scope
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                               momentum=0).minimize(loss)
            return loss

        out = TrainJob(np.ones((2, 2), np.float32))
        test_case.assertEqual(out.shape, (1,))  # OneFlow 0.3: no 0-d results

    def test_checkpoint_init_is_noop(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def Job() -> tp.Numpy:
            return flow.get_variable("v", shape=(2,), initializer=flow.constant_initializer(4))

        check_point = flow.train.CheckPoint()
        check_point.init()
        test_case.assertTrue(np.array_equal(Job(), [4, 4]))
        check_point.init()
        test_case.assertTrue(np.array_equal(Job(), [4, 4]))


if __name__ == "__main__":
    unittest.main()
