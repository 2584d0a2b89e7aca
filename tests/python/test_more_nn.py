"""flow.nn.moments, sparse_cross_entropy, softmax_grad, fused_bias_add_gelu,
fused_bias_add_dropout, MarginRankingLoss, TripletMarginLoss and flow.keras.activations
gelu_grad / tanh_grad: forward against NumPy or PyTorch, float64 gradients against finite
differences (op_checker, with the multi-device pass), error messages."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
from op_checker import check_op, run_op


def _build(fn, *arrays):
    """Runs fn over placeholders holding arrays in a predict job; returns its output."""
    return run_op(fn, list(arrays), train=False)[0]


@pytest.mark.parametrize("axes, keepdims", [([0], False), ([1, 2], True), ([0, 2], False),
                                            ([-1], True)])
def test_moments(axes, keepdims):
    x = np.random.RandomState(0).uniform(-2, 2, size=(3, 4, 5))
    mean, _ = check_op(lambda a: flow.nn.moments(a, axes, keepdims)[0],
                       lambda a: np.mean(a, axis=tuple(axes), keepdims=keepdims), inputs=[x],
                       weight_output=True)
    variance, _ = check_op(lambda a: flow.nn.moments(a, axes, keepdims)[1],
                           lambda a: np.var(a, axis=tuple(axes), keepdims=keepdims), inputs=[x],
                           weight_output=True)
    torch_variance, torch_mean = torch.var_mean(torch.tensor(x), dim=axes, unbiased=False,
                                                keepdim=keepdims)
    np.testing.assert_allclose(mean, torch_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(variance, torch_variance.numpy(), rtol=1e-12)


def test_moments_oneflow_example_and_errors():
    x = np.array([1, 2, 3, 4, 5], np.float32)
    np.testing.assert_allclose(_build(lambda a: flow.nn.moments(a, axes=[0])[0], x), [3.0])
    np.testing.assert_allclose(_build(lambda a: flow.nn.moments(a, axes=[0])[1], x), [2.0])
    with pytest.raises(TypeError, match="moments: axes must be a list of ints"):
        _build(lambda a: flow.nn.moments(a, 0)[0], x)
    with pytest.raises(ValueError, match=r"axis 1 is out of range.*\(5,\)"):
        _build(lambda a: flow.nn.moments(a, [1])[0], x)


def _probabilities(shape, seed=0):
    logits = np.random.RandomState(seed).normal(size=shape)
    exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


def _sparse_cross_entropy(labels, prediction):
    picked = np.take_along_axis(prediction, labels.reshape(prediction.shape[:-1] + (1,)), -1)
    return -np.log(np.maximum(picked[..., 0], 1e-20))


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 6)])
def test_sparse_cross_entropy(shape, label_dtype):
    prediction = _probabilities(shape)
    labels = np.random.RandomState(1).randint(0, shape[-1], size=shape[:-1]).astype(label_dtype)
    out, gradients = check_op(lambda l, p: flow.nn.sparse_cross_entropy(l, p),
                              _sparse_cross_entropy, inputs=[labels, prediction],
                              weight_output=True)
    torch_out = F.nll_loss(torch.log(torch.tensor(prediction)).reshape(-1, shape[-1]),
                           torch.tensor(labels.astype(np.int64)).reshape(-1), reduction="none")
    np.testing.assert_allclose(out.ravel(), torch_out.numpy(), rtol=1e-12)


def test_sparse_cross_entropy_label_out_of_range_names_the_op():
    prediction = np.full((2, 5), 0.2, np.float32)
    with pytest.raises(ValueError, match=r"op 'SparseCrossEntropy_\d+_gather'\): index 7 at "
                                         r"position 1 is out of range \[0, 5\)"):
        _build(flow.nn.sparse_cross_entropy, np.array([1, 7], np.int32), prediction)


def test_sparse_cross_entropy_oneflow_example_trailing_label_axis_and_zero_probability():
    prediction = np.array([[0.3, 0.7], [0.4, 0.6], [0.5, 0.5], [0.1, 0.9], [0.2, 0.8]],
                          np.float32)
    labels = np.array([0, 1, 1, 0, 1], np.int32)
    out = _build(lambda l, p: flow.nn.sparse_cross_entropy(labels=l, prediction=p), labels,
                 prediction)
    np.testing.assert_allclose(out, [1.2039728, 0.5108256, 0.6931472, 2.3025851, 0.22314353],
                               rtol=1e-6)
    out = _build(flow.nn.sparse_cross_entropy, labels.reshape(5, 1), prediction)
    assert out.shape == (5,)
    out = _build(flow.nn.sparse_cross_entropy, np.array([1], np.int64),
                 np.array([[1.0, 0.0]], np.float64))
    np.testing.assert_allclose(out, [-np.log(1e-20)])  # clamped, not inf


def test_sparse_cross_entropy_errors():
    prediction = np.full((3, 4), 0.25, np.float32)
    with pytest.raises(ValueError, match=r"sparse_cross_entropy: labels shape \(4,\) must be "
                                         r"prediction's shape \(3, 4\) without"):
        _build(flow.nn.sparse_cross_entropy, np.zeros(4, np.int32), prediction)
    with pytest.raises(TypeError, match="sparse_cross_entropy: labels must be int32 or int64"):
        _build(flow.nn.sparse_cross_entropy, np.zeros(3, np.float32), prediction)
    with pytest.raises(TypeError, match="sparse_cross_entropy: prediction must be float32"):
        _build(flow.nn.sparse_cross_entropy, np.zeros(3, np.int32), prediction.astype(np.int32))
    with pytest.raises(ValueError, match=r"index 4 .* out of range \[0, 4\)"):
        _build(flow.nn.sparse_cross_entropy, np.array([0, 4, 1], np.int32), prediction)


def _softmax(x, axis):
    exp = np.exp(x - x.max(axis=axis, keepdims=True))
    return exp / exp.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [None, -1, 0, 1])
def test_softmax_grad_matches_torch_autograd(axis):
    rng = np.random.RandomState(2)
    x = rng.normal(size=(3, 4, 5))
    dim = -1 if axis is None else axis
    y, dy = _softmax(x, dim), rng.normal(size=(3, 4, 5))
    expected = y * (dy - np.sum(dy * y, axis=dim, keepdims=True))
    out, _ = check_op(lambda a, b: flow.nn.softmax_grad(a, b, axis=axis),
                      lambda a, b: a * (b - np.sum(a * b, axis=dim, keepdims=True)),
                      inputs=[y, dy], differentiable=[])
    tx = torch.tensor(x, requires_grad=True)
    torch.softmax(tx, dim).backward(torch.tensor(dy))
    np.testing.assert_allclose(out, tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_softmax_grad_errors():
    y = np.full((2, 3), 1 / 3, np.float32)
    with pytest.raises(ValueError, match=r"softmax_grad: axis 2 is out of range.*\(2, 3\)"):
        _build(lambda a: flow.nn.softmax_grad(a, a, axis=2), y)
    with pytest.raises(ValueError, match="softmax_grad"):
        _build(flow.nn.softmax_grad, y, np.zeros((3, 2), np.float32))


def _gelu(x):
    return F.gelu(torch.tensor(x)).numpy()


@pytest.mark.parametrize("data_format, shapes", [(None, ((4, 3, 2), (3,))),
                                                 ("NHWC", ((4, 2, 3), (3,))),
                                                 ("NCHW", ((2, 3), (3,)))])
def test_fused_bias_add_gelu(data_format, shapes):
    axis = 1 if data_format != "NHWC" else 2
    expand = [1] * len(shapes[0])
    expand[axis] = -1
    check_op(lambda a, b: flow.nn.fused_bias_add_gelu(a, b, data_format=data_format),
             lambda a, b: _gelu(a + b.reshape(expand)), shapes, low=-2.0, high=2.0)


def test_fused_bias_add_dropout_is_bias_add_with_the_seeded_dropout_mask():
    rng = np.random.RandomState(3)
    x, bias = rng.uniform(1, 2, size=(6, 5)), rng.uniform(0, 1, size=(5,))

    def fused(a, b):
        return flow.nn.fused_bias_add_dropout(a, b, data_format="NHWC", rate=0.4, seed=9)

    def mask_reference(a, b):
        return flow.cast(flow.nn.random_mask_like(a, rate=0.4, seed=9), flow.float64)

    out, gradients = run_op(fused, [x, bias], differentiable=[0, 1])
    mask = run_op(mask_reference, [x, bias], train=False)[0]
    np.testing.assert_allclose(out, (x + bias) * mask / 0.6, rtol=1e-12)
    np.testing.assert_allclose(gradients[0], mask / 0.6, rtol=1e-12)
    np.testing.assert_allclose(gradients[1], (mask / 0.6).sum(axis=0), rtol=1e-12)
    assert 0 < mask.mean() < 1
    # rate 0 and predict jobs: bias_add alone.
    check_op(lambda a, b: flow.nn.fused_bias_add_dropout(a, b, data_format="NHWC"),
             lambda a, b: a + b, inputs=[x, bias], multi_device=False)
    np.testing.assert_allclose(_build(fused, x, bias), x + bias, rtol=1e-15)
    with pytest.raises(ValueError, match=r"dropout: rate must be a number in \[0, 1\)"):
        _build(lambda a, b: flow.nn.fused_bias_add_dropout(a, b, rate=1.0), x, bias)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("margin", [0.0, 0.7])
def test_margin_ranking_loss_matches_torch(reduction, margin):
    rng = np.random.RandomState(4)
    x1, x2 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    target = np.where(rng.uniform(size=(4, 3)) < 0.5, -1.0, 1.0)

    def reference(a, b, t):
        return F.margin_ranking_loss(torch.tensor(a), torch.tensor(b), torch.tensor(t),
                                     margin=margin, reduction=reduction).numpy()

    check_op(lambda a, b, t: flow.nn.MarginRankingLoss(a, b, t, margin=margin,
                                                       reduction=reduction),
             reference, inputs=[x1, x2, target], differentiable=[0, 1])


def test_margin_ranking_loss_oneflow_example_and_errors():
    x1 = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    x2 = np.full((3, 3), 2, np.float32)
    target = np.full((3, 3), 3, np.float32)
    out = _build(lambda a, b, t: flow.nn.MarginRankingLoss(a, b, t, margin=1.0), x1, x2, target)
    np.testing.assert_allclose(out, 0.5555556, rtol=1e-6)
    with pytest.raises(ValueError, match=r"MarginRankingLoss: input2 shape \(3, 2\) must equal "
                                         r"input1 shape \(3, 3\)"):
        _build(flow.nn.MarginRankingLoss, x1, x2[:, :2], target)
    with pytest.raises(ValueError, match="MarginRankingLoss: reduction must be one of"):
        _build(lambda a, b, t: flow.nn.MarginRankingLoss(a, b, t, reduction="max"), x1, x2,
               target)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_loss_matches_torch(p, swap, reduction):
    rng = np.random.RandomState(5)
    anchor, positive, negative = (rng.normal(size=(5, 4)) for _ in range(3))

    def reference(a, b, c):
        return F.triplet_margin_loss(torch.tensor(a), torch.tensor(b), torch.tensor(c),
                                     margin=1.0, p=p, eps=1e-6, swap=swap,
                                     reduction=reduction).numpy()

    out, _ = check_op(lambda a, b, c: flow.nn.TripletMarginLoss(a, b, c, p=p, swap=swap,
                                                                reduction=reduction),
                      reference, inputs=[anchor, positive, negative],
                      multi_device=(p == 2.0 and reduction == "mean"))
    assert out.shape == ((5,) if reduction == "none" else (1,))


def test_triplet_margin_loss_oneflow_example_and_errors():
    anchor = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    positive = np.full((3, 3), 2, np.float32)
    negative = np.full((3, 3), 3, np.float32)
    out = _build(lambda a, b, c: flow.nn.TripletMarginLoss(a, b, c, margin=1.0, p=2.0), anchor,
                 positive, negative)
    np.testing.assert_allclose(out, 1.8449262, rtol=1e-6)
    with pytest.raises(ValueError, match=r"TripletMarginLoss: negative shape \(3, 2\) must "
                                         r"equal anchor shape \(3, 3\)"):
        _build(flow.nn.TripletMarginLoss, anchor, positive, negative[:, :2])
    with pytest.raises(ValueError, match="TripletMarginLoss: the norm degree p must be > 0"):
        _build(lambda a, b, c: flow.nn.TripletMarginLoss(a, b, c, p=0), anchor, positive,
               negative)
    with pytest.raises(ValueError, match="TripletMarginLoss: inputs must have at least two axes"):
        _build(flow.nn.TripletMarginLoss, anchor[0], positive[0], negative[0])


def test_gelu_grad_and_tanh_grad_match_torch_autograd():
    rng = np.random.RandomState(6)
    x, dy = rng.uniform(-3, 3, size=(4, 5)), rng.normal(size=(4, 5))
    tx = torch.tensor(x, requires_grad=True)
    F.gelu(tx).backward(torch.tensor(dy))
    out, _ = check_op(flow.keras.activations.gelu_grad, lambda a, b: tx.grad.numpy(),
                      inputs=[x, dy], differentiable=[])
    y = np.tanh(x)
    out, _ = check_op(flow.keras.activations.tanh_grad, lambda a, b: b * (1 - a * a),
                      inputs=[y, dy], differentiable=[])
    tx = torch.tensor(x, requires_grad=True)
    torch.tanh(tx).backward(torch.tensor(dy))
    np.testing.assert_allclose(out, tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="gelu_grad"):
        _build(flow.keras.activations.gelu_grad, x, dy[:, :2])
    with pytest.raises(TypeError, match="tanh_grad: input 'dy' must be a blob"):
        _build(lambda a: flow.keras.activations.tanh_grad(a, 1.0), y)


@pytest.mark.parametrize("shape, axis", [((2, 3, 4, 5), 1), ((2, 4, 5, 3), -1), ((6, 4), 1)])
def test_affine_channel_trains_like_torch(shape, axis):
    """flow.layers.affine_channel: x * scale + bias per channel along axis, with activation;
    one SGD step of scale and bias against PyTorch's autograd."""
    import oneflow.typing as tp

    flow.clear_default_session()
    channels = shape[axis]
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    scale0 = rng.uniform(0.5, 1.5, channels).astype(np.float32)
    bias0 = rng.uniform(-0.5, 0.5, channels).astype(np.float32)
    view = [1] * len(shape)
    view[axis] = channels

    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        out = flow.layers.affine_channel(
            x, axis, scale_initializer=flow.constant_initializer(0.0),
            bias_initializer=flow.constant_initializer(0.0), activation=flow.math.tanh,
            name="affine")
        loss = flow.math.reduce_sum(out * out)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return out

    step(x)  # traces and creates "affine-scale" and "affine-bias" (zeros)
    flow.load_variables({"affine-scale": scale0.reshape(view), "affine-bias": bias0})
    out = step(x)
    scale = torch.tensor(scale0.reshape(view), requires_grad=True)
    bias = torch.tensor(bias0, requires_grad=True)
    expected = torch.tanh(torch.tensor(x) * scale + bias.reshape(view))
    (expected * expected).sum().backward()
    np.testing.assert_allclose(out, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    trained = flow.get_all_variables()
    assert trained["affine-scale"].shape == tuple(view) and trained["affine-bias"].shape == (
        channels,)
    # The update divides by the loss's element count: 1 (a reduce_sum).
    np.testing.assert_allclose(trained["affine-scale"].numpy(),
                               (scale - 0.1 * scale.grad).detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(trained["affine-bias"].numpy(),
                               (bias - 0.1 * bias.grad).detach().numpy(), rtol=1e-5)


def test_affine_channel_errors():
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.layers.affine_channel(x, 2)

    with pytest.raises(ValueError, match=r"layers.affine_channel: axis must be an int in "
                                         r"\[-2, 2\) for inputs of shape \(2, 3\), got 2"):
        job(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("shape, kernel, strides, dilation, padding, torch_pad", [
    ((1, 3, 8, 8), 3, 2, 1, "SAME", (0, 1, 0, 1)),           # OneFlow's docstring example
    ((2, 2, 7, 6), [2, 3], [1, 2], [2, 1], "VALID", (0, 0, 0, 0)),
    ((2, 3, 5, 5), 3, 1, 1, 1, (1, 1, 1, 1)),                # an int pads every side
    ((1, 2, 6, 7), 2, 2, 1, [(0, 0), (0, 0), (1, 0), (0, 1)], (0, 1, 1, 0)),
    ((1, 1, 6, 6), 3, 2, 2, "SAME_LOWER", (2, 2, 2, 2)),
])
def test_unfold2d_matches_torch(shape, kernel, strides, dilation, padding, torch_pad):
    """flow.nn.unfold2d against torch.nn.functional.unfold of the input padded the same way;
    float64 gradients against finite differences (and the multi-device pass)."""
    def reference(x):
        padded = F.pad(torch.from_numpy(x), torch_pad)
        return F.unfold(padded, kernel, dilation=dilation, stride=strides).numpy()

    check_op(lambda x: flow.nn.unfold2d(x, kernel, strides, dilation, padding), reference,
             [shape], flow.float64, weight_output=True)


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(data_format="NHWC"), NotImplementedError, "only data_format 'NCHW'"),
    (dict(ceil_mode=True), NotImplementedError, "ceil_mode=True is not supported"),
    (dict(kernel_size=9), ValueError, r"a \[9, 9\] window .* does not fit input \(1, 2, 4, 4\)"),
    (dict(strides=0), ValueError, r"strides must be positive"),
])
def test_unfold2d_errors(kwargs, error, pattern):
    arguments = dict(kernel_size=2, strides=1, dilation_rate=1, padding="VALID")
    arguments.update(kwargs)
    with pytest.raises(error, match="unfold2d: " + pattern):
        _build(lambda x: flow.nn.unfold2d(x, **arguments), np.zeros((1, 2, 4, 4), np.float32))


def _attention_reference(x, head_size, alpha):
    seq, batch, hidden = x.shape
    heads = hidden // (3 * head_size)
    q, k, v = (x.reshape(seq, batch, heads, 3, head_size)[:, :, :, i].transpose(1, 2, 0, 3)
               for i in range(3))
    return alpha * q @ k.transpose(0, 1, 3, 2), v


@pytest.mark.parametrize("output", [0, 1])
def test_fused_self_attention_query_mul_key_and_value(output):
    """Scores and values against NumPy, gradients against finite differences; the GPT-style
    composition OneFlow 0.3's test compares with."""
    head_size, alpha = 3, 0.5

    def flow_fn(x):
        return flow.nn.fused_self_attention_query_mul_key_and_value(x, head_size, alpha)[output]

    check_op(flow_fn, lambda x: _attention_reference(x, head_size, alpha)[output],
             [(5, 2, 2 * 3 * head_size)], flow.float64, weight_output=True)


def test_fused_self_attention_errors():
    with pytest.raises(ValueError, match=r"fused_self_attention_query_mul_key_and_value: x must "
                                         r"be \(seq, batch, heads \* 3 \* head_size\) with "
                                         r"head_size 4, got shape \(5, 2, 18\)"):
        _build(lambda x: flow.nn.fused_self_attention_query_mul_key_and_value(x, 4)[0],
               np.zeros((5, 2, 18), np.float32))
