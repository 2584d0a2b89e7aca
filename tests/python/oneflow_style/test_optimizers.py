import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
from test_util import GenArgList, device_types, make_func_config, type_name_to_flow_type, \
    type_name_to_np_type


def compare_with_torch_sgd(test_case, device_type, x_shape, momentum, learning_rate, train_iters,
                           data_type):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    random_masks_seq = [np.random.randint(0, 2, x_shape).astype(np_type)
                        for _ in range(train_iters + 1)]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def TestJob(mask: tp.Numpy.Placeholder(x_shape, dtype=flow_type)) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x = flow.get_variable(name="x", shape=x_shape, dtype=flow_type,
                                  initializer=flow.constant_initializer(0), trainable=True)
            loss = flow.math.reduce_mean(x * mask + mask * 0.5)
            flow.optimizer.SGD(
                flow.optimizer.PiecewiseConstantScheduler([], [learning_rate]),
                momentum=momentum).minimize(loss)
            return x

    # OneFlow's test_optimizers reads the initial value back with a checkpoint; checkpoints are not
    # in scope here, so both frameworks start from zeros.
    flow.train.CheckPoint().init()
    for i in range(train_iters + 1):
        x = TestJob(random_masks_seq[i])  # value read before the update of iteration i

    var = torch.zeros(x_shape, dtype=torch.float64 if data_type == "double" else torch.float32,
                      requires_grad=True)
    opt = torch.optim.SGD([var], lr=learning_rate, momentum=momentum)
    for i in range(train_iters):
        mask = torch.tensor(random_masks_seq[i])
        loss = torch.mean(var * mask + mask * 0.5)
        opt.zero_grad()
        loss.backward()
        opt.step()
    test_case.assertTrue(np.allclose(x, var.detach().numpy(), rtol=1e-4, atol=1e-4),
                         (x, var.detach().numpy()))


def piecewise_check(test_case, boundaries, values, iters):
    flow.clear_default_session()
    seen = []

    @flow.global_function(type="train", function_config=make_func_config("double"))
    def TrainJob() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), dtype=flow.double,
                              initializer=flow.zeros_initializer())
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler(boundaries, values),
                           momentum=0).minimize(w)
        return w

    for _ in range(iters):
        seen.append(float(TrainJob()[0]))
    seen.append(float(TrainJob()[0]))
    steps = -np.diff(seen)  # lr applied at each step (grad 1, scale 1)
    # OneFlow 0.3: values[i] for the first boundary with step <= boundaries[i].
    expected = [values[np.searchsorted(boundaries, i, side="left")] for i in range(iters)]
    test_case.assertTrue(np.allclose(steps, expected), (steps, expected))


@flow.unittest.skip_unless_1n1d()
class TestOptimizers(flow.unittest.TestCase):
    def test_sgd(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["x_shape"] = [(10,), (3, 4)]
        arg_dict["momentum"] = [0.0, 0.9]
        arg_dict["learning_rate"] = [1.0, 0.1]
        arg_dict["train_iters"] = [10]
        arg_dict["data_type"] = ["float32", "double"]
        for arg in GenArgList(arg_dict):
            compare_with_torch_sgd(test_case, *arg)

    def test_sgd_default_momentum_is_0_9(test_case):
        flow.clear_default_session()

        @flow.global_function(type="train", function_config=make_func_config("double"))
        def TrainJob() -> tp.Numpy:
            w = flow.get_variable("w", shape=(1,), dtype=flow.double,
                                  initializer=flow.zeros_initializer())
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0])).minimize(w)
            return w

        values = [float(TrainJob()[0]) for _ in range(4)]
        # v1 = -1, w1 = -1; v2 = -0.9 - 1 = -1.9, w2 = -2.9; v3 = -2.71, w3 = -5.61
        test_case.assertTrue(np.allclose(values, [0, -1, -2.9, -5.61]), values)

    def test_piecewise_constant_scheduler(test_case):
        piecewise_check(test_case, [], [0.5], 4)
        piecewise_check(test_case, [3], [1.0, 0.25], 6)
        piecewise_check(test_case, [2, 5], [1.0, 0.5, 0.125], 8)

    def test_momentum_with_piecewise_lr_matches_oneflow_formula(test_case):
        """v = m * v - lr * g; w += v (OneFlow's form), with lr changing after step 3."""
        flow.clear_default_session()
        m = 0.5

        @flow.global_function(type="train", function_config=make_func_config("double"))
        def TrainJob() -> tp.Numpy:
            w = flow.get_variable("w", shape=(1,), dtype=flow.double,
                                  initializer=flow.zeros_initializer())
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([3], [1.0, 0.1]),
                               momentum=m).minimize(w)
            return w

        got = [float(TrainJob()[0]) for _ in range(7)]
        w, v, expected = 0.0, 0.0, []
        for step in range(7):
            expected.append(w)
            lr = 1.0 if step <= 3 else 0.1
            v = m * v - lr * 1.0
            w += v
        test_case.assertTrue(np.allclose(got, expected), (got, expected))


if __name__ == "__main__":
    unittest.main()
