"""flow.nn.sparse_softmax_cross_entropy_with_logits: per-example loss -log softmax(logits)[label]
and its gradient w.r.t. the logits (labels get none)."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

LABEL_DTYPES = pytest.mark.parametrize("label_dtype", [np.int32, np.int64], ids=["int32", "int64"])
DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])


def numpy_cross_entropy(labels, logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_softmax, labels[:, np.newaxis].astype(np.int64), -1)[:, 0]


def _case(label_dtype, dtype, batch=4, classes=5, seed=0):
    rng = np.random.RandomState(seed)
    np_dtype = np.float32 if dtype == flow.float32 else np.float64
    labels = rng.randint(0, classes, size=batch).astype(label_dtype)
    logits = rng.uniform(-2, 2, size=(batch, classes)).astype(np_dtype)
    return labels, logits


@DTYPES
@LABEL_DTYPES
def test_sparse_softmax_cross_entropy(label_dtype, dtype):
    labels, logits = _case(label_dtype, dtype)
    out, gradients = check_op(
        lambda labels, logits: flow.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits),
        numpy_cross_entropy, inputs=[labels, logits], weight_output=True,
    )
    assert out.shape == (4,)
    assert np.all(out > 0)
    if dtype == flow.float64:
        assert set(gradients) == {1}  # integer labels are not differentiated


def test_labels_with_a_trailing_axis_of_one_are_squeezed():
    """OneFlow 0.3 squeezes (N, 1) labels for (N, C) logits (BERT's next-sentence loss)."""
    labels, logits = _case(np.int32, flow.float64, batch=5, classes=3, seed=2)
    out, _ = check_op(
        lambda labels, logits: flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
        lambda labels, logits: numpy_cross_entropy(labels[:, 0], logits),
        inputs=[labels[:, None], logits])
    assert out.shape == (5,)


@LABEL_DTYPES
def test_gradient_is_softmax_minus_one_hot(label_dtype):
    labels, logits = _case(label_dtype, flow.float64, batch=3, classes=4, seed=1)
    _, gradients = check_op(
        lambda labels, logits: flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
        numpy_cross_entropy, inputs=[labels, logits],
    )
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    one_hot = np.eye(4)[labels]
    np.testing.assert_allclose(gradients[1], softmax - one_hot, rtol=1e-10, atol=1e-12)


@DTYPES
@pytest.mark.parametrize("classes", [1, 10, 31, 32, 40, 100])
def test_many_short_rows_with_large_logits(classes, dtype):
    # Rows under 32 classes go 64 at a time through a transposed buffer, longer ones a vector's
    # lanes of rows at a time: 130 rows (whole blocks or groups and a partial one), logits up to +-60 so that some labels' probabilities underflow
    # (the loss stays exact: logsumexp - logit), and the gradient against softmax - one_hot.
    labels, _ = _case(np.int64, dtype, batch=130, classes=classes, seed=classes)
    np_dtype = np.float32 if dtype == flow.float32 else np.float64
    logits = np.random.RandomState(classes).uniform(-60, 60, (130, classes)).astype(np_dtype)
    tolerance = 2e-5 if dtype == flow.float32 else 1e-10
    out, gradients = check_op(
        lambda labels, logits: flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
        numpy_cross_entropy, inputs=[labels, logits], check_backward=dtype == flow.float64,
        multi_device=False, forward_tolerance=dict(rtol=tolerance, atol=tolerance),
        backward_tolerance=dict(rtol=1e-5, atol=2e-6))  # central differences at logits of 60
    assert np.all(np.isfinite(out))
    if classes > 1:
        assert out.max() > 50  # a label whose probability underflows float32


@pytest.mark.timeout(180)
@pytest.mark.parametrize("devices, classes", [(2, 7), (4, 1000)])
def test_logits_split_along_the_classes(devices, classes):
    """Logits hinted split along the class axis over several devices (OneFlow 0.3's
    sparse_softmax_cross_entropy_ms, for a classifier too wide for one device) give the loss and
    gradient of the whole softmax, against torch."""
    import torch
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    rng = np.random.RandomState(devices)
    labels = rng.randint(0, classes, size=16).astype(np.int64)
    logits = rng.uniform(-10, 10, size=(16, classes)).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, size=16).astype(np.float32)
    grads = {}

    @flow.global_function(type="train")
    def job(label: tp.Numpy.Placeholder((16,), dtype=flow.int64),
            x_in: tp.Numpy.Placeholder((16, classes)),
            w: tp.Numpy.Placeholder((16,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            offset = flow.get_variable("offset", shape=(16, classes),
                                       initializer=flow.zeros_initializer())
            x = x_in + offset
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(
                labels=label.with_distribute(flow.distribute.broadcast()),
                logits=x.with_distribute(flow.distribute.split(1)))
        with flow.scope.placement("cpu", "0:0"):
            flow.watch_diff(offset, lambda blob: grads.setdefault("x", blob.numpy()))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
                loss * w)
            return flow.identity(loss)

    loss = job(labels, logits, weight)
    torch_logits = torch.tensor(logits, requires_grad=True)
    torch_loss = torch.nn.functional.cross_entropy(torch_logits, torch.tensor(labels),
                                                   reduction="none")
    (torch_loss * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(loss, torch_loss.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads["x"], torch_logits.grad.numpy(), rtol=1e-5, atol=1e-6)
