"""flow.nn: moments, sparse_cross_entropy, softmax_grad, fused_bias_add_gelu,
fused_bias_add_dropout, random_mask_like (an op, oneflow/ops/dropout.cpp), MarginRankingLoss,
TripletMarginLoss, PixelShuffle, PixelShufflev2 and flow.combined_margin_loss; flow.keras.activations: gelu_grad and tanh_grad. OneFlow 0.3's names,
arguments and defaults. Everything but random_mask_like and the *_grad entry points is a
composition of existing ops, whose gradient rules give the gradient."""
import numbers
import random

import numpy as np

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.ops import (
    array_ops, index_ops, loss_ops, math_ops, nn_ops, norm_ops, reduce_ops, shape_ops,
)

_FLOATING = (dtypes.float32, dtypes.float64)

# OneFlow 0.3's sparse_cross_entropy takes log(max(p, 1e-20)) (its kernels' kLogThreshold).
_LOG_THRESHOLD = 1e-20


def _sub_name(name, suffix):
    return None if name is None else "%s_%s" % (name, suffix)


def _real(value, op, what):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)):
        raise TypeError("%s: %s must be a real number, got %r" % (op, what, value))
    return float(value)


def moments(x, axes, keepdims=False, name=None):
    """(mean, variance) of x over `axes` (a list of ints; the population variance)."""
    op_builder.check_blob(x, "moments", "x")
    if not isinstance(axes, (list, tuple)):
        raise TypeError("moments: axes must be a list of ints, got %r" % (axes,))
    mean = reduce_ops.reduce_mean(x, list(axes), keepdims, name=_sub_name(name, "mean"))
    variance = reduce_ops.reduce_variance(x, list(axes), keepdims,
                                          name=_sub_name(name, "variance"))
    return mean, variance


def sparse_cross_entropy(labels, prediction, name=None):
    """-log(prediction[..., label]) for probabilities `prediction` (..., num_classes) and int
    labels (...) (or (..., 1)); log's argument is clamped at 1e-20 as in OneFlow 0.3."""
    op = "sparse_cross_entropy"
    op_builder.check_blob(labels, op, "labels")
    op_builder.check_blob(prediction, op, "prediction")
    index_ops._check_indices(labels, op, "labels")
    if prediction.dtype not in _FLOATING:
        raise TypeError("%s: prediction must be float32 or float64, got %s"
                        % (op, prediction.dtype.name))
    rank = len(prediction.shape)
    if rank == 0:
        raise ValueError("%s: prediction must have at least one axis (the classes)" % op)
    # Named after the op even without a name, so that a label out of range names it.
    name = op_builder.layer_name(name, "SparseCrossEntropy")
    if len(labels.shape) == rank and labels.shape[-1] == 1:
        labels = array_ops.reshape(labels, tuple(labels.shape[:-1]),
                                   name=_sub_name(name, "squeeze"))
    if tuple(labels.shape) != tuple(prediction.shape[:-1]):
        raise ValueError("%s: labels shape %r must be prediction's shape %r without its last "
                         "(class) axis, i.e. %r" % (op, tuple(labels.shape),
                                                    tuple(prediction.shape),
                                                    tuple(prediction.shape[:-1])))
    picked = index_ops.batch_gather(prediction, labels, rank - 1, rank - 1,
                                    name=_sub_name(name, "gather"))
    clamped = math_ops.maximum(picked, _LOG_THRESHOLD, name=_sub_name(name, "clamp"))
    return math_ops.negative(math_ops.log(clamped, name=_sub_name(name, "log")), name=name)


def softmax_grad(y, dy, axis=None, name=None):
    """dx = y * (dy - sum(dy * y, axis)): the gradient of softmax's input given its output y and
    the gradient dy of y, along `axis` (default the last)."""
    op_builder.check_blob(y, "softmax_grad", "y")
    op_builder.check_blob(dy, "softmax_grad", "dy")
    rank = len(y.shape)
    axis = -1 if axis is None else axis
    if not shapes.is_int(axis):
        raise TypeError("softmax_grad: axis must be an int, got %r" % (axis,))
    if not -rank <= axis < rank:
        raise ValueError("softmax_grad: axis %d is out of range for y of shape %r (rank %d)"
                         % (axis, tuple(y.shape), rank))
    return op_builder.add_single_output_op("softmax_grad", name, "SoftmaxGrad",
                                           {"y": y, "dy": dy}, {"axis": int(axis) % rank},
                                           output="dx")


def fused_bias_add_gelu(value, bias, data_format=None, name=None):
    """gelu(bias_add(value, bias, data_format))."""
    biased = nn_ops.bias_add(value, bias, data_format, name=_sub_name(name, "bias_add"))
    return math_ops.gelu(biased, name=name)


def fused_bias_add_dropout(value, bias, data_format=None, rate=0.0, noise_shape=None, seed=None,
                           name=None):
    """dropout(bias_add(value, bias, data_format), rate, noise_shape, seed): bias_add alone in
    predict jobs and for rate 0, as flow.nn.dropout."""
    biased = nn_ops.bias_add(value, bias, data_format, name=_sub_name(name, "bias_add"))
    return norm_ops.dropout(biased, rate, noise_shape=noise_shape, seed=seed, name=name)


def random_mask_like(like, rate, seed=None, noise_shape=None, name=None):
    """An int8 blob shaped like `like`: 0 with probability `rate`, else 1, a new mask each
    iteration. With the same seed and rate it is the mask flow.nn.dropout applies."""
    op_builder.check_blob(like, "random_mask_like", "like")
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0.0 <= rate < 1.0:
        raise ValueError("random_mask_like: rate must be a number in [0, 1), got %r" % (rate,))
    if noise_shape is not None:
        raise NotImplementedError("random_mask_like: noise_shape is not supported (OneFlow 0.3 "
                                  "did not support it either); got %r" % (noise_shape,))
    if seed is None:
        seed = random.getrandbits(63)
    elif not shapes.is_int(seed):
        raise TypeError("random_mask_like: seed must be an int or None, got %r" % (seed,))
    return op_builder.add_single_output_op(
        "random_mask_like", name, "RandomMaskLike", {"like": like},
        {"rate": float(rate), "seed": int(seed) & ((1 << 63) - 1)})


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean", name=None):
    """max(0, -target * (input1 - input2) + margin), then reduced ("none", "mean", "sum");
    target (+1 or -1 per pair) broadcasts with the inputs."""
    op = "MarginRankingLoss"
    loss_ops._check_pair(op, input1, input2, "input1", "input2")
    op_builder.check_blob(target, op, "target")
    loss_ops._check_reduction(op, reduction)
    margin = _real(margin, op, "margin")
    name = op_builder.op_name(name, op)
    difference = math_ops.subtract(input2, input1, name=name + "_difference")
    loss = math_ops.multiply(target, difference, name=name + "_signed")
    if margin != 0.0:
        loss = math_ops.add(loss, margin, name=name + "_margin")
    loss = math_ops.relu(loss, name=name + "_clip")
    return loss_ops._reduce(loss, reduction, name)


def _p_norm(x, p, name):
    """The p-norm of x over axis 1, as OneFlow 0.3's TripletMarginLoss."""
    if p == 2.0:
        squares = math_ops.square(x, name=name + "_square")
        return math_ops.sqrt(reduce_ops.reduce_sum(squares, 1, name=name + "_sum"),
                             name=name + "_sqrt")
    magnitude = math_ops.abs(x, name=name + "_abs")
    if p == 1.0:
        return reduce_ops.reduce_sum(magnitude, 1, name=name + "_sum")
    powers = math_ops.pow(magnitude, p, name=name + "_pow")
    return math_ops.pow(reduce_ops.reduce_sum(powers, 1, name=name + "_sum"), 1.0 / p,
                        name=name + "_root")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction="mean", name=None):
    """max(d(a, p) - d(a, n) + margin, 0) per row, d(x, y) = ||x - y + eps||_p over axis 1,
    then reduced ("none", "mean", "sum"). swap=True uses min(d(a, n), d(p, n)) for the negative
    distance (PyTorch's distance swap; OneFlow 0.3 rejected swap=True)."""
    op = "TripletMarginLoss"
    loss_ops._check_pair(op, anchor, positive, "anchor", "positive")
    loss_ops._check_pair(op, anchor, negative, "anchor", "negative")
    if len(anchor.shape) < 2:
        raise ValueError("%s: inputs must have at least two axes (rows, features), got shape %r"
                         % (op, tuple(anchor.shape)))
    loss_ops._check_reduction(op, reduction)
    margin = _real(margin, op, "margin")
    p = _real(p, op, "p")
    if not p > 0:
        raise ValueError("%s: the norm degree p must be > 0, got %r" % (op, p))
    eps = _real(eps, op, "eps")
    name = op_builder.op_name(name, op)

    def distance(x, y, suffix):
        shifted = math_ops.add(math_ops.subtract(x, y, name=name + suffix + "_difference"), eps,
                               name=name + suffix + "_eps")
        return _p_norm(shifted, p, name + suffix)

    positive_distance = distance(anchor, positive, "_distance_1")
    negative_distance = distance(anchor, negative, "_distance_2")
    if swap:
        swapped = distance(positive, negative, "_distance_swap")
        negative_distance = math_ops.minimum(negative_distance, swapped, name=name + "_swap")
    loss = math_ops.subtract(positive_distance, negative_distance, name=name + "_difference")
    loss = math_ops.relu(math_ops.add(loss, margin, name=name + "_margin"), name=name + "_clip")
    return loss_ops._reduce(loss, reduction, name)


def pixel_shufflev2(input, h_upscale_factor, w_upscale_factor, name=None):  # noqa: A002
    """(B, C * h * w, H, W) -> (B, C, H * h, W * w): each group of h * w channels becomes an
    h x w block of pixels (torch.nn.PixelShuffle with separate factors per axis)."""
    op = "PixelShuffle"
    op_builder.check_blob(input, op, "input")
    factors = (h_upscale_factor, w_upscale_factor)
    if not all(shapes.is_int(f) and f > 0 for f in factors):
        raise ValueError("%s: upscale factors must be positive ints, got %r" % (op, factors))
    if len(input.shape) != 4:
        raise ValueError("%s: input must be (B, C, H, W), got shape %r" % (op, tuple(input.shape)))
    batch, channel, height, width = input.shape
    h, w = factors
    if channel % (h * w) != 0:
        raise ValueError("%s: the %d channels of input %r are not divisible by %d x %d"
                         % (op, channel, tuple(input.shape), h, w))
    out_channel = channel // (h * w)
    blocks = array_ops.reshape(input, (batch, out_channel, h, w, height, width),
                               name=_sub_name(name, "split"))
    blocks = array_ops.transpose(blocks, (0, 1, 4, 2, 5, 3), name=_sub_name(name, "transpose"))
    return array_ops.reshape(blocks, (batch, out_channel, height * h, width * w), name=name)


def pixel_shuffle(input, upscale_factor, name=None):  # noqa: A002 - OneFlow's name
    """torch.nn.PixelShuffle: (B, C * r * r, H, W) -> (B, C, H * r, W * r)."""
    return pixel_shufflev2(input, upscale_factor, upscale_factor, name=name)


def combined_margin_loss(x, label, m1=1, m2=0, m3=0, name=None):
    """The logits of the margin losses of face recognition (ArcFace, CosFace, SphereFace):
    x (N, classes) holds cosines; each row's label column becomes cos(m1 * acos(x) + m2) - m3,
    the other columns stay. Differentiable in x."""
    op = "combined_margin_loss"
    op_builder.check_blob(x, op, "x")
    index_ops._check_indices(label, op, "label")
    if len(x.shape) != 2 or tuple(label.shape) != (x.shape[0],):
        raise ValueError("%s: x must be (N, classes) and label (N,), got %r and %r"
                         % (op, tuple(x.shape), tuple(label.shape)))
    m1, m2, m3 = (_real(m, op, what) for m, what in ((m1, "m1"), (m2, "m2"), (m3, "m3")))
    rows = array_ops.reshape(label, (x.shape[0], 1), name=_sub_name(name, "rows"))
    target = index_ops.gather(x, rows, batch_dims=1, name=_sub_name(name, "target"))
    if m1 == 1.0 and m2 == 0.0:
        margin = target - m3
    else:
        theta = math_ops.acos(target, name=_sub_name(name, "theta"))
        margin = math_ops.cos(theta * m1 + m2, name=_sub_name(name, "cos")) - m3
    # where, not x + mask * (margin - target): a NaN or inf stays in its own column.
    mask = index_ops.one_hot(label, x.shape[1], dtype=dtypes.int8, name=_sub_name(name, "mask"))
    return math_ops.where(mask, margin, x, name=name)


def gelu_grad(x, dy, name=None):
    """The gradient of gelu's input x given the gradient dy of its output."""
    op_builder.check_blob(x, "gelu_grad", "x")
    op_builder.check_blob(dy, "gelu_grad", "dy")
    return op_builder.add_single_output_op("gelu_grad", name, "GeluGrad", {"x": x, "dy": dy},
                                           output="dx")


def tanh_grad(y, dy, name=None):
    """dy * (1 - y^2): the gradient of tanh's input given its output y and the gradient dy."""
    op_builder.check_blob(y, "tanh_grad", "y")
    op_builder.check_blob(dy, "tanh_grad", "dy")
    return op_builder.add_single_output_op("tanh_grad", name, "TanhGrad", {"y": y, "dy": dy},
                                           output="dx")


def fused_self_attention_query_mul_key_and_value(x, head_size, alpha=1.0, name=None):
    """Self-attention scores and values from fused projections: x (seq, batch, heads * 3 *
    head_size), each head's query, key and value side by side. Returns (alpha * query @ key^T
    of shape (batch, heads, seq, seq), value (batch, heads, seq, head_size)), as OneFlow 0.3's
    GPU-fused op; here made of reshape, slice, transpose and a batched matmul."""
    op = "fused_self_attention_query_mul_key_and_value"
    op_builder.check_blob(x, op, "x")
    if not shapes.is_int(head_size) or head_size < 1:
        raise ValueError("%s: head_size must be a positive int, got %r" % (op, head_size))
    alpha = _real(alpha, op, "alpha")
    if len(x.shape) != 3 or x.shape[2] % (3 * head_size) != 0:
        raise ValueError("%s: x must be (seq, batch, heads * 3 * head_size) with head_size %d, "
                         "got shape %r" % (op, head_size, tuple(x.shape)))
    seq, batch, hidden = x.shape
    heads = hidden // (3 * head_size)
    name = op_builder.layer_name(name, "FusedSelfAttentionQueryMulKeyAndValue")
    split = array_ops.reshape(x, (seq, batch, heads, 3, head_size), name=name + "-split")
    query, key, value = (
        array_ops.transpose(
            array_ops.reshape(
                shape_ops.slice_v2(split, [(None, None, None)] * 3 + [(i, i + 1, 1)],
                                   name="%s-slice%d" % (name, i)),
                (seq, batch, heads, head_size), name="%s-squeeze%d" % (name, i)),
            (1, 2, 0, 3), name="%s-transpose%d" % (name, i))
        for i in range(3))
    scores = array_ops.matmul(query, key, transpose_b=True, alpha=alpha, name=name + "-qmk")
    return scores, value


def distributed_partial_fc_sample(weight, label, num_sample, name=None):
    """Partial FC (OneFlow 0.3): keeps num_sample of weight's classes, its rows split over the
    devices of the current placement (the weight is laid out split along axis 0): each device
    keeps num_sample / devices classes of its range, the labels' classes first (ascending), then
    random others. Returns (mapped_label, sampled_label, sampled_weight): each label's position
    in sampled_label, the kept class ids and their weight rows (gradients flow back into those
    rows of the weight)."""
    op = "distributed_partial_fc_sample"
    op_builder.check_blob(weight, op, "weight")
    index_ops._check_indices(label, op, "label")
    if not shapes.is_int(num_sample):
        raise TypeError("%s: num_sample must be an int, got %r" % (op, num_sample))
    outputs = op_builder.add_op(op, op_builder.op_name(name, "DistributedPartialFcSample"),
                                {"weight": weight, "label": label},
                                {"num_sample": int(num_sample), "seed": random.getrandbits(62)},
                                mirrored=False)
    return tuple(outputs[key][0] for key in ("mapped_label", "sampled_label", "sampled_weight"))
