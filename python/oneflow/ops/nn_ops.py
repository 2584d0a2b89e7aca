"""flow.nn ops."""
import numbers

from oneflow.framework import dtypes, op_builder, shapes


def _real(value, op_type, attr):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s: %s must be a real number, got %r" % (op_type, attr, value))
    return float(value)


def _activation(op_type, x, name, prefix, attrs=None):
    op_builder.check_blob(x, op_type, "x")
    return op_builder.add_single_output_op(op_type, name, prefix, {"x": x}, attrs or {},
                                           output="y")


def leaky_relu(x, alpha=0.2, name=None):
    return _activation("leaky_relu", x, name, "LeakyRelu",
                       {"alpha": _real(alpha, "leaky_relu", "alpha")})


def elu(x, alpha=1.0, name=None):
    return _activation("elu", x, name, "Elu", {"alpha": _real(alpha, "elu", "alpha")})


def hardsigmoid(x, name=None):
    return _activation("hardsigmoid", x, name, "HardSigmoid")


def hardswish(x, name=None):
    return _activation("hardswish", x, name, "HardSwish")


def hardtanh(x, min_val=-1.0, max_val=1.0, name=None):
    return _activation("hardtanh", x, name, "Hardtanh",
                       {"min_val": _real(min_val, "hardtanh", "min_val"),
                        "max_val": _real(max_val, "hardtanh", "max_val")})


def relu6(x, name=None):
    """min(max(x, 0), 6): hardtanh with bounds 0 and 6."""
    return _activation("hardtanh", x, name, "Relu6", {"min_val": 0.0, "max_val": 6.0})


def mish(x, name=None):
    """x * tanh(softplus(x)), composed from existing ops (gradient included)."""
    from oneflow.ops import math_ops

    prefix = None if name is None else name + "_"
    softplus = math_ops.softplus(x, name=None if prefix is None else prefix + "softplus")
    return math_ops.multiply(x, math_ops.tanh(softplus, name=None if prefix is None else prefix + "tanh"),
                             name=name)


def swish(x, beta=1.0, name=None):
    """x * sigmoid(beta * x), composed from existing ops (gradient included)."""
    from oneflow.ops import math_ops

    beta = _real(beta, "swish", "beta")
    scaled = x if beta == 1.0 else math_ops.multiply(x, beta)
    return math_ops.multiply(x, math_ops.sigmoid(scaled), name=name)


def relu(x, name=None):
    from oneflow.ops import math_ops

    return math_ops.relu(x, name)


def bias_add(value, bias, data_format=None, name=None):
    op_builder.check_blob(value, "bias_add", "value")
    op_builder.check_blob(bias, "bias_add", "bias")
    if data_format is None or data_format in ("NCHW", "NCW", "NCDHW", "channels_first"):
        axis = 1
    elif data_format in ("NHWC", "NWC", "NDHWC", "channels_last"):
        axis = len(value.shape) - 1
    else:
        raise ValueError("bias_add: data_format must be NCHW or NHWC style, got %r" % (data_format,))
    return op_builder.add_single_output_op(
        "bias_add", name, "BiasAdd", {"a": value, "b": bias}, {"axis": axis}
    )


def softmax(logits, axis=None, name=None):
    """exp(x) / sum(exp(x)) along `axis` (default the last), stable for large logits."""
    op_builder.check_blob(logits, "softmax", "logits")
    rank = len(logits.shape)
    if axis is None:
        axis = -1
    if not shapes.is_int(axis):
        raise TypeError("softmax: axis must be an int, got %r" % (axis,))
    if not -rank <= axis < rank:
        raise ValueError("softmax: axis %d is out of range for a blob of shape %r" % (axis, logits.shape))
    return op_builder.add_single_output_op("softmax", name, "Softmax", {"in": logits},
                                           {"axis": axis % rank})


def _class_split_softmax_cross_entropy(labels, logits, name):
    """sparse_softmax_cross_entropy with the logits split along their class axis over the
    devices (OneFlow 0.3's sparse_softmax_cross_entropy_ms, for models too wide for one
    device): logsumexp(logits) - logits[label], from ops that take the class-split layout (the
    maximum and the sum over the classes become partial results, summed across devices)."""
    from oneflow import distribute
    from oneflow.ops import array_ops, index_ops, math_ops, reduce_ops

    def sub(suffix):
        return None if name is None else "%s-%s" % (name, suffix)

    rank = len(logits.shape)
    if labels.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("sparse_softmax_cross_entropy_with_logits: labels must be int32 or int64, "
                        "got %s" % labels.dtype.name)
    if tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError("sparse_softmax_cross_entropy_with_logits: labels %r must have the shape "
                         "of logits %r without its class axis"
                         % (tuple(labels.shape), tuple(logits.shape)))
    split = array_ops.parallel_cast(logits.with_distribute(distribute.auto()),
                                    distribute=distribute.split(rank - 1), name=sub("split"))
    total = reduce_ops.reduce_logsumexp(split, axis=rank - 1, name=sub("logsumexp"))
    picked = index_ops.batch_gather(split, labels.with_distribute(distribute.auto()), rank - 1,
                                    rank - 1, name=sub("pick"))
    return math_ops.subtract(total, picked, name=name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log(softmax(logits)[..., label]) for int labels shaped like logits without the class
    axis; labels with a trailing axis of size 1 are squeezed first, as OneFlow 0.3 does."""
    op_builder.check_blob(labels, "sparse_softmax_cross_entropy_with_logits", "labels")
    op_builder.check_blob(logits, "sparse_softmax_cross_entropy_with_logits", "logits")
    if len(labels.shape) == len(logits.shape) >= 2 and labels.shape[-1] == 1:
        from oneflow.ops import array_ops

        labels = array_ops.reshape(labels, tuple(labels.shape[:-1]))
    hint = logits.distribute_hint
    if hint is not None and hint.kind == "split" and hint.axis == len(logits.shape) - 1 >= 1:
        return _class_split_softmax_cross_entropy(labels, logits, name)
    outputs = op_builder.add_op(
        "sparse_softmax_cross_entropy",
        op_builder.op_name(name, "SparseSoftmaxCrossEntropy"),
        {"prediction": logits, "label": labels},
    )
    return outputs["out"][0]
