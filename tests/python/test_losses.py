"""Losses: softmax_cross_entropy_with_logits (dense labels), sigmoid_cross_entropy_with_logits,
flow.smooth_l1_loss and the composite MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss, KLDivLoss
with their reductions and weights, against PyTorch 1.13 and finite differences."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op

REDUCTIONS = pytest.mark.parametrize("reduction", ["none", "mean", "sum"])


def _torch(fn):
    def wrapped(*arrays):
        return np.asarray(fn(*[torch.tensor(a) for a in arrays]).numpy())
    return wrapped


def _probabilities(shape, seed):
    rng = np.random.RandomState(seed)
    p = rng.uniform(0.1, 1.0, size=shape)
    return p / p.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("classes", [5, 16, 20, 40])
def test_softmax_cross_entropy_dense_labels(classes, dtype):
    # Rows shorter than a 64-byte vector, whole vectors, and a vector tail overlapping the body.
    rng = np.random.RandomState(0)
    logits = rng.uniform(-3, 3, size=(4, 3, classes)).astype(dtype)
    labels = _probabilities((4, 3, classes), 1).astype(dtype)
    check_op(lambda lab, x: flow.nn.softmax_cross_entropy_with_logits(lab, x),
             _torch(lambda lab, x: -(lab * torch.log_softmax(x, -1)).sum(-1)),
             inputs=[labels, logits], differentiable=[1], weight_output=True)


def test_softmax_cross_entropy_large_logits_are_finite():
    logits = np.array([[1000.0, 0.0, -1000.0]])
    labels = np.array([[0.0, 0.5, 0.5]])
    out, _ = check_op(lambda lab, x: flow.nn.softmax_cross_entropy_with_logits(lab, x),
                      _torch(lambda lab, x: -(lab * torch.log_softmax(x, -1)).sum(-1)),
                      inputs=[labels, logits], differentiable=[1])
    assert np.isfinite(out).all()


def test_sigmoid_cross_entropy_with_logits():
    rng = np.random.RandomState(2)
    logits = rng.uniform(-30, 30, size=(6, 7))
    labels = rng.uniform(0, 1, size=(6, 7))
    check_op(lambda lab, x: flow.nn.sigmoid_cross_entropy_with_logits(lab, x),
             _torch(lambda lab, x: F.binary_cross_entropy_with_logits(x, lab, reduction="none")),
             inputs=[labels, logits], differentiable=[1], weight_output=True)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int8])
def test_sigmoid_cross_entropy_with_integer_labels(label_dtype):
    """OneFlow 0.3 takes int32 / int8 labels (Wide&Deep decodes its labels as int32)."""
    rng = np.random.RandomState(4)
    logits = rng.uniform(-5, 5, size=(6, 1))
    labels = rng.randint(0, 2, size=(6, 1)).astype(label_dtype)
    check_op(lambda lab, x: flow.nn.sigmoid_cross_entropy_with_logits(lab, x),
             _torch(lambda lab, x: F.binary_cross_entropy_with_logits(x, lab.double(),
                                                                      reduction="none")),
             inputs=[labels, logits], differentiable=[1], weight_output=True)


@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
def test_smooth_l1_loss(beta):
    rng = np.random.RandomState(3)
    prediction, label = rng.uniform(-2, 2, size=(5, 8)), rng.uniform(-2, 2, size=(5, 8))
    check_op(lambda p, t: flow.smooth_l1_loss(p, t, beta=beta),
             _torch(lambda p, t: F.smooth_l1_loss(p, t, reduction="none", beta=beta)),
             inputs=[prediction, label], differentiable=[0], weight_output=True)


def test_smooth_l1_loss_example_from_oneflow_docs():
    prediction = np.array([0.1, 0.4, 0.3, 0.5, 0.9], np.float32)
    label = np.array([0.3, 0.9, 2.5, 0.4, 0.3], np.float32)
    check_op(flow.smooth_l1_loss, lambda p, t: np.array([0.02, 0.125, 1.7, 0.005, 0.18],
                                                        np.float32),
             inputs=[prediction, label], differentiable=[0])


@REDUCTIONS
def test_mse_and_l1(reduction):
    rng = np.random.RandomState(4)
    x, t = rng.uniform(-1, 1, size=(3, 4)), rng.uniform(-1, 1, size=(3, 4))
    check_op(lambda x, t: flow.nn.MSELoss(x, t, reduction=reduction),
             _torch(lambda x, t: F.mse_loss(x, t, reduction=reduction)), inputs=[x, t],
             multi_device=reduction == "mean")
    check_op(lambda x, t: flow.nn.L1Loss(x, t, reduction=reduction),
             _torch(lambda x, t: F.l1_loss(x, t, reduction=reduction)), inputs=[x, t],
             multi_device=False)


@REDUCTIONS
def test_bce_loss_with_weight(reduction):
    """OneFlow 0.3's BCELoss takes logits: it applies a sigmoid to the input first (torch's
    binary_cross_entropy of sigmoid(x)), so inputs outside (0, 1) are fine."""
    rng = np.random.RandomState(5)
    x = rng.uniform(-4, 4, size=(3, 4))
    t = rng.uniform(0, 1, size=(3, 4))
    w = rng.uniform(0.5, 2, size=(3, 4))
    check_op(lambda x, t, w: flow.nn.BCELoss(x, t, w, reduction=reduction),
             _torch(lambda x, t, w: F.binary_cross_entropy(torch.sigmoid(x), t, w,
                                                           reduction=reduction)),
             inputs=[x, t, w], differentiable=[0], multi_device=False)


def test_bce_loss_stays_finite_for_large_logits():
    x = np.array([[-60.0, -20.0, 0.0, 20.0, 60.0]])
    t = np.array([[0.0, 1.0, 0.5, 0.0, 1.0]])
    out, _ = check_op(lambda x, t: flow.nn.BCELoss(x, t, reduction="none"),
                      _torch(lambda x, t: F.binary_cross_entropy_with_logits(
                          x, t, reduction="none")),
                      inputs=[x, t], differentiable=[0], multi_device=False)
    assert np.isfinite(out).all()


@REDUCTIONS
@pytest.mark.parametrize("with_pos_weight", [False, True])
def test_bce_with_logits_loss(reduction, with_pos_weight):
    rng = np.random.RandomState(6)
    x, t = rng.uniform(-4, 4, size=(3, 4)), rng.uniform(0, 1, size=(3, 4))
    w, pw = rng.uniform(0.5, 2, size=(3, 4)), rng.uniform(0.5, 2, size=(4,))
    if with_pos_weight:
        flow_fn = lambda x, t, w, pw: flow.nn.BCEWithLogitsLoss(x, t, w, pw, reduction=reduction)
        torch_fn = lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
            x, t, w, reduction=reduction, pos_weight=pw)
        inputs = [x, t, w, pw]
    else:
        flow_fn = lambda x, t, w: flow.nn.BCEWithLogitsLoss(x, t, w, reduction=reduction)
        torch_fn = lambda x, t, w: F.binary_cross_entropy_with_logits(x, t, w,
                                                                      reduction=reduction)
        inputs = [x, t, w]
    check_op(flow_fn, _torch(torch_fn), inputs=inputs, differentiable=[0], multi_device=False)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_loss(reduction, log_target):
    rng = np.random.RandomState(7)
    x = np.log(_probabilities((3, 5), 8))
    t = _probabilities((3, 5), 9)
    t[0, 0] = 0.0  # 0 log 0 = 0
    if log_target:
        t = np.log(np.maximum(t, 1e-3))
    check_op(lambda x, t: flow.nn.KLDivLoss(x, t, log_target=log_target, reduction=reduction),
             _torch(lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target)),
             inputs=[x, t], differentiable=[0], multi_device=False)


def _error(fn, shapes, dtypes=None):
    flow.clear_default_session()
    dtypes = dtypes or [flow.float32] * len(shapes)
    names = ["a%d" % i for i in range(len(shapes))]
    namespace = {"fn": fn}
    exec("def f(%s):\n    return fn(%s)\n" % (", ".join(names), ", ".join(names)), namespace)
    f = namespace["f"]
    f.__annotations__ = {n: tp.Numpy.Placeholder(s, dtype=d)
                         for n, s, d in zip(names, shapes, dtypes)}
    f.__annotations__["return"] = tp.Numpy
    job = flow.global_function(type="predict")(f)
    return job(*[np.zeros(s, flow.convert_oneflow_dtype_to_numpy_dtype(d))
                 for s, d in zip(shapes, dtypes)])


def test_errors_name_the_op_and_the_rule():
    with pytest.raises(ValueError, match=r"MSELoss: target shape \(3, 5\) must equal input"):
        _error(lambda x, t: flow.nn.MSELoss(x, t), [(3, 4), (3, 5)])
    with pytest.raises(ValueError, match="L1Loss: reduction must be one of"):
        _error(lambda x, t: flow.nn.L1Loss(x, t, reduction="avg"), [(3, 4), (3, 4)])
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be"):
        _error(lambda x, t: flow.smooth_l1_loss(x, t, beta=-1), [(3,), (3,)])
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be a number >= 0, got nan"):
        _error(lambda x, t: flow.smooth_l1_loss(x, t, beta=float("nan")), [(3,), (3,)])
    with pytest.raises(TypeError, match="softmax_cross_entropy_with_logits: labels dtype"):
        _error(lambda lab, x: flow.nn.softmax_cross_entropy_with_logits(lab, x), [(2, 3), (2, 3)],
               [flow.int32, flow.float32])
    with pytest.raises(ValueError, match=r"pos_weight shape \(3,\) must be \(4,\)"):
        _error(lambda x, t, p: flow.nn.BCEWithLogitsLoss(x, t, pos_weight=p),
               [(2, 4), (2, 4), (3,)])
