import unittest
from collections import OrderedDict

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp
import test_global_storage
from test_util import (GenArgList, device_types, make_func_config, tolerance,
                       type_name_to_flow_type, type_name_to_np_type, zero_lr_sgd)


def compare_with_torch(test_case, device_type, data_type, label_type, batch_size, num_classes):
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow_type = type_name_to_flow_type[data_type]
    np_type = type_name_to_np_type[data_type]
    label_flow_type = type_name_to_flow_type[label_type]
    label_np_type = type_name_to_np_type[label_type]

    @flow.global_function(type="train", function_config=make_func_config(data_type))
    def SparseSoftmaxCrossEntropyWithLogitsJob(
        labels: tp.Numpy.Placeholder((batch_size,), dtype=label_flow_type)
    ) -> tp.Numpy:
        with flow.scope.placement(device_type, "0:0"):
            x = flow.get_variable("x", shape=(batch_size, num_classes), dtype=flow_type,
                                  initializer=flow.random_uniform_initializer(minval=-10, maxval=10),
                                  trainable=True)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
            zero_lr_sgd().minimize(loss)
            flow.watch(x, test_global_storage.Setter("x"))
            flow.watch_diff(x, test_global_storage.Setter("x_diff"))
            flow.watch(loss, test_global_storage.Setter("loss"))
            flow.watch_diff(loss, test_global_storage.Setter("loss_diff"))
            return loss

    flow.train.CheckPoint().init()
    labels = np.random.randint(0, num_classes, size=(batch_size,)).astype(label_np_type)
    of_out = SparseSoftmaxCrossEntropyWithLogitsJob(labels)

    tx = torch.tensor(test_global_storage.Get("x"), requires_grad=True)
    tout = torch.nn.functional.cross_entropy(tx, torch.tensor(labels.astype(np.int64)),
                                             reduction="none")
    tout.backward(torch.tensor(test_global_storage.Get("loss_diff")))
    rtol, atol = tolerance(data_type)
    test_case.assertEqual(of_out.shape, (batch_size,))
    test_case.assertEqual(of_out.dtype, np_type)
    test_case.assertTrue(np.allclose(of_out, tout.detach().numpy(), rtol=rtol, atol=atol * 10))
    test_case.assertTrue(np.allclose(test_global_storage.Get("x_diff"), tx.grad.numpy(),
                                     rtol=rtol, atol=atol))


@flow.unittest.skip_unless_1n1d()
class TestSparseSoftmaxCrossEntropyWithLogits(flow.unittest.TestCase):
    def test_sparse_softmax_cross_entropy_with_logits(test_case):
        arg_dict = OrderedDict()
        arg_dict["device_type"] = device_types()
        arg_dict["data_type"] = ["float32", "double"]
        arg_dict["label_type"] = ["int32", "int64"]
        arg_dict["batch_size"] = [1, 64]
        arg_dict["num_classes"] = [2, 10, 1000]
        for arg in GenArgList(arg_dict):
            compare_with_torch(test_case, *arg)

    def test_predict_with_positional_args(test_case):
        flow.clear_default_session()

        @flow.global_function(function_config=make_func_config("float32"))
        def CEJob(labels: tp.Numpy.Placeholder((3,), dtype=flow.int32),
                  logits: tp.Numpy.Placeholder((3, 4))) -> tp.Numpy:
            return flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

        logits = np.random.randn(3, 4).astype(np.float32)
        labels = np.array([0, 3, 1], dtype=np.int32)
        expected = torch.nn.functional.cross_entropy(
            torch.tensor(logits), torch.tensor(labels.astype(np.int64)), reduction="none")
        test_case.assertTrue(np.allclose(CEJob(labels, logits), expected.numpy(), atol=1e-6))


if __name__ == "__main__":
    unittest.main()
