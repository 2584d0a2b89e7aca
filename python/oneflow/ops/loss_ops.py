"""Losses and log-softmax: flow.nn.softmax_cross_entropy_with_logits,
sigmoid_cross_entropy_with_logits, logsoftmax, MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss,
KLDivLoss, CTCLoss (also flow.ctc_loss), flow.nn.ctc_greedy_decoder and flow.smooth_l1_loss, with OneFlow 0.3's names,
arguments and defaults. The fused ones are ops (oneflow/ops/losses.cpp, log_softmax in
softmax.cpp, ctc_loss.cpp); the others are exact compositions of elementwise ops and a
reduction (ctc_greedy_decoder: oneflow/ops/ctc_greedy_decoder.cpp)."""
import numbers

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.framework.blob import LazyBlob
from oneflow.ops import array_ops, index_ops, math_ops

_REDUCTIONS = ("none", "mean", "sum")


def _check_pair(op, input, target, input_name="input", target_name="target"):
    op_builder.check_blob(input, op, input_name)
    op_builder.check_blob(target, op, target_name)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError("%s: %s shape %r must equal %s shape %r"
                         % (op, target_name, tuple(target.shape), input_name, tuple(input.shape)))


def _check_reduction(op, reduction, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError("%s: reduction must be one of %s, got %r"
                         % (op, ", ".join(repr(r) for r in allowed), reduction))


def _reduce(loss, reduction, name):
    if reduction == "mean":
        return math_ops.reduce_mean(loss, name=name + "_reduce_mean")
    if reduction == "sum":
        return math_ops.reduce_sum(loss, name=name + "_reduce_sum")
    return loss


def _weighted(op, loss, weight, like):
    if weight is None:
        return loss
    op_builder.check_blob(weight, op, "weight")
    if tuple(weight.shape) != tuple(like.shape):
        raise ValueError("%s: weight shape %r must equal input shape %r"
                         % (op, tuple(weight.shape), tuple(like.shape)))
    return math_ops.multiply(weight, loss)


def logsoftmax(logits, axis=None, name=None):
    """log(softmax(logits)) along `axis` (default the last), computed as x - logsumexp(x)."""
    op_builder.check_blob(logits, "logsoftmax", "logits")
    rank = len(logits.shape)
    if axis is None:
        axis = -1
    if not shapes.is_int(axis):
        raise TypeError("logsoftmax: axis must be an int, got %r" % (axis,))
    if not -rank <= axis < rank:
        raise ValueError("logsoftmax: axis %d is out of range for logits of shape %r (rank %d)"
                         % (axis, tuple(logits.shape), rank))
    return op_builder.add_single_output_op("log_softmax", name, "LogSoftmax", {"in": logits},
                                           {"axis": axis % rank})


def softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-sum(labels * log softmax(logits)) over the last axis; labels are dense probabilities of
    logits' shape and get no gradient. The result has logits' shape without its last axis."""
    _check_pair("softmax_cross_entropy_with_logits", logits, labels, "logits", "labels")
    if logits.dtype != labels.dtype:
        raise TypeError("softmax_cross_entropy_with_logits: labels dtype %s must equal logits "
                        "dtype %s" % (labels.dtype.name, logits.dtype.name))
    return op_builder.add_op(
        "softmax_cross_entropy", op_builder.op_name(name, "SoftmaxCrossEntropy"),
        {"prediction": logits, "label": labels})["out"][0]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z. Integer
    labels (int8, int32, int64; OneFlow 0.3 takes int32 and int8) are read as their values."""
    if isinstance(labels, LazyBlob) and isinstance(logits, LazyBlob) and \
            labels.dtype in (dtypes.int8, dtypes.int32, dtypes.int64) and \
            logits.dtype in (dtypes.float32, dtypes.float64, dtypes.float16):
        labels = array_ops.cast(labels, logits.dtype)
    _check_pair("sigmoid_cross_entropy_with_logits", logits, labels, "logits", "labels")
    return op_builder.add_single_output_op(
        "sigmoid_cross_entropy", name, "SigmoidCrossEntropy",
        {"prediction": logits, "label": labels}, output="out")


def smooth_l1_loss(prediction, label, beta=1.0, name=None):
    """flow.smooth_l1_loss, elementwise with d = prediction - label:
    0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta."""
    _check_pair("smooth_l1_loss", prediction, label, "prediction", "label")
    if not isinstance(beta, numbers.Real) or isinstance(beta, bool) or not beta >= 0:
        raise ValueError("smooth_l1_loss: beta must be a number >= 0, got %r" % (beta,))
    return op_builder.add_single_output_op(
        "smooth_l1_loss", name, "SmoothL1Loss", {"prediction": prediction, "label": label},
        {"beta": float(beta)}, output="loss")


def mse_loss(input, target, reduction="mean", name=None):  # noqa: A002 - OneFlow's names
    """flow.nn.MSELoss: (target - input)^2, then reduced."""
    _check_pair("MSELoss", input, target)
    _check_reduction("MSELoss", reduction)
    name = op_builder.op_name(name, "MSELoss")
    loss = math_ops.square(math_ops.subtract(target, input, name=name + "_sub"),
                           name=name + "_square")
    return _reduce(loss, reduction, name)


def l1_loss(input, target, reduction="mean", name=None):  # noqa: A002
    """flow.nn.L1Loss: |target - input|, then reduced."""
    _check_pair("L1Loss", input, target)
    _check_reduction("L1Loss", reduction)
    name = op_builder.op_name(name, "L1Loss")
    loss = math_ops.abs(math_ops.subtract(target, input, name=name + "_sub"),
                        name=name + "_abs")
    return _reduce(loss, reduction, name)


def bce_loss(input, target, weight=None, reduction="mean", name=None):  # noqa: A002
    """flow.nn.BCELoss as OneFlow 0.3 defines it: the input is passed through a sigmoid first,
    -weight * (target log(sigmoid(x)) + (1 - target) log(1 - sigmoid(x))), then reduced. (Unlike
    torch.nn.BCELoss, which takes probabilities; this is torch's BCEWithLogitsLoss.) Computed
    stably as max(x, 0) - x target + log(1 + exp(-|x|)), which is finite where 0.3's
    log(sigmoid(x)) overflows."""
    _check_pair("BCELoss", input, target)
    _check_reduction("BCELoss", reduction)
    name = op_builder.op_name(name, "BCELoss")
    loss = sigmoid_cross_entropy_with_logits(target, input, name=name + "_sigmoid_ce")
    return _reduce(_weighted("BCELoss", loss, weight, input), reduction, name)


def bce_with_logits_loss(input, target, weight=None, pos_weight=None, reduction="mean",  # noqa: A002
                         name=None):
    """flow.nn.BCEWithLogitsLoss: BCELoss(sigmoid(input)) computed stably:
    (1 - target) x + (1 + (pos_weight - 1) target) softplus(-x), times weight, then reduced.
    pos_weight has the size of the last axis."""
    op = "BCEWithLogitsLoss"
    _check_pair(op, input, target)
    _check_reduction(op, reduction)
    name = op_builder.op_name(name, op)
    if pos_weight is None:
        loss = sigmoid_cross_entropy_with_logits(target, input, name=name + "_sigmoid_ce")
    else:
        op_builder.check_blob(pos_weight, op, "pos_weight")
        if tuple(pos_weight.shape) != (input.shape[-1],):
            raise ValueError("%s: pos_weight shape %r must be (%d,), the size of input's last "
                             "axis" % (op, tuple(pos_weight.shape), input.shape[-1]))
        log_weight = math_ops.add(
            math_ops.multiply(math_ops.subtract(pos_weight, 1.0), target), 1.0)
        loss = math_ops.add(
            math_ops.multiply(math_ops.subtract(1.0, target), input),
            math_ops.multiply(log_weight, math_ops.softplus(math_ops.negative(input))))
    return _reduce(_weighted(op, loss, weight, input), reduction, name)


def kl_div_loss(input, target, log_target=False, reduction="mean", name=None):  # noqa: A002
    """flow.nn.KLDivLoss for log-probabilities `input`: target * (log(target) - input), 0 where
    target is 0 (log_target: exp(target) * (target - input)); reduction "none", "mean", "sum"
    or "batchmean" (the sum divided by the size of axis 0)."""
    op = "KLDivLoss"
    _check_pair(op, input, target)
    _check_reduction(op, reduction, _REDUCTIONS + ("batchmean",))
    name = op_builder.op_name(name, op)
    if log_target:
        loss = math_ops.multiply(math_ops.exp(target), math_ops.subtract(target, input))
    else:
        positive = math_ops.greater(target, 0.0)
        safe_target = math_ops.where(positive, target, 1.0)
        loss = math_ops.multiply(target, math_ops.subtract(math_ops.log(safe_target), input))
    if reduction == "batchmean":
        total = math_ops.reduce_sum(loss, name=name + "_reduce_sum")
        return math_ops.multiply(total, 1.0 / input.shape[0], name=name + "_batchmean")
    return _reduce(loss, reduction, name)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False, name=None):
    """flow.nn.CTCLoss and flow.ctc_loss: the CTC loss of time-major log-probabilities
    log_probs (T, N, C) (e.g. from flow.nn.logsoftmax) against targets (N, S), padded class
    indices of which the first target_lengths[b] count; input_lengths (N,) says how many time
    steps of element b are used. Targets and lengths are int32 or int64 and get no gradient.
    reduction: "none" gives the (N,) losses, "sum" their sum, "mean" the mean over the batch of
    each loss divided by its target length (at least 1). zero_infinity: an impossible alignment
    (input too short for its target) gives loss 0 and gradient 0 instead of inf and NaN."""
    op = "CTCLoss"
    for value, argument in ((log_probs, "log_probs"), (targets, "targets"),
                            (input_lengths, "input_lengths"), (target_lengths, "target_lengths")):
        op_builder.check_blob(value, op, argument)
    _check_reduction(op, reduction)
    if not shapes.is_int(blank):
        raise TypeError("%s: blank must be an int, got %r" % (op, blank))
    if not isinstance(zero_infinity, bool):
        raise TypeError("%s: zero_infinity must be a bool, got %r" % (op, zero_infinity))
    name = op_builder.op_name(name, op)
    loss = op_builder.add_op(
        "ctc_loss", name,
        {"log_probs": log_probs, "targets": targets, "input_lengths": input_lengths,
         "target_lengths": target_lengths},
        {"blank": int(blank), "zero_infinity": zero_infinity})["loss"][0]
    if reduction == "mean":
        lengths = index_ops.clip_by_value(
            array_ops.cast(target_lengths, loss.dtype, name=name + "_cast"), min_value=1.0,
            name=name + "_clip_by_value")
        loss = math_ops.divide(loss, lengths, name=name + "_div")
    return _reduce(loss, reduction, name)


def ctc_greedy_decoder(log_probs, input_lengths, merge_repeated=True, name=None):
    """Best-path decoding of time-major log-probabilities log_probs (T, N, C): the most likely
    class at each of the first input_lengths[b] steps, repeats merged (merge_repeated) and the
    blank, the last class C - 1, dropped (TensorFlow's convention, unlike CTCLoss's blank=0
    default). Returns (decoded (N, T) int64, zero-padded; neg_sum_logits (N, 1), minus the sum
    of the chosen log-probabilities)."""
    op = "ctc_greedy_decoder"
    op_builder.check_blob(log_probs, op, "log_probs")
    op_builder.check_blob(input_lengths, op, "input_lengths")
    if not isinstance(merge_repeated, bool):
        raise TypeError("%s: merge_repeated must be a bool, got %r" % (op, merge_repeated))
    outputs = op_builder.add_op(op, op_builder.op_name(name, "CTCGreedyDecode"),
                                {"log_probs": log_probs, "input_lengths": input_lengths},
                                {"merge_repeated": merge_repeated})
    return outputs["decoded"][0], outputs["neg_sum_logits"][0]
