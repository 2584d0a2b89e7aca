"""flow.nn ops."""
from oneflow.framework import op_builder, shapes


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
    op_builder.check_blob(logits, "softmax", "logits")
    rank = len(logits.shape)
    if axis is not None:
        if not shapes.is_int(axis):
            raise TypeError("softmax: axis must be an int, got %r" % (axis,))
        if not -rank <= axis < rank:
            raise ValueError("softmax: axis %d is out of range for a blob of shape %r" % (axis, logits.shape))
    if axis is not None and axis % rank != rank - 1:
        from oneflow.ops import array_ops

        # Move `axis` last, take the softmax, move it back.
        axis = axis % rank
        perm = [a for a in range(rank) if a != axis] + [axis]
        inverse = [perm.index(a) for a in range(rank)]
        moved = array_ops.transpose(logits, perm)
        return array_ops.transpose(softmax(moved, None, name), inverse)
    return op_builder.add_single_output_op("softmax", name, "Softmax", {"in": logits})


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    op_builder.check_blob(labels, "sparse_softmax_cross_entropy_with_logits", "labels")
    op_builder.check_blob(logits, "sparse_softmax_cross_entropy_with_logits", "logits")
    outputs = op_builder.add_op(
        "sparse_softmax_cross_entropy",
        op_builder.op_name(name, "SparseSoftmaxCrossEntropy"),
        {"prediction": logits, "label": labels},
    )
    return outputs["out"][0]
