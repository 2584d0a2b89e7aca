"""Top-level flow ops: masked_fill, elem_cnt, reduced_shape_elem_cnt, constant_scalar,
identity_n, amp_white_identity, cast_to_static_shape, repeat, dynamic_reshape and
tensor_scatter_nd_update (an op, oneflow/ops/gather_nd.cpp), with OneFlow 0.3's arguments."""
import numpy as np

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.framework.blob import is_scalar
from oneflow.ops import array_ops, index_ops, math_ops

_MASK_DTYPES = (dtypes.int8, dtypes.int32, dtypes.int64)


def masked_fill(x, mask, value, name=None):
    """x with `value` where mask is nonzero; x and the integer mask broadcast together. The
    gradient reaches x where the mask is 0."""
    op_builder.check_blob(x, "masked_fill", "x")
    op_builder.check_blob(mask, "masked_fill", "mask")
    if mask.dtype not in _MASK_DTYPES:
        raise TypeError("masked_fill: mask must be int8, int32 or int64 (1 where to fill), got %s"
                        % mask.dtype.name)
    if not is_scalar(value):
        raise TypeError("masked_fill: value must be a real number, got %r" % (value,))
    # An integer x takes the value truncated toward zero, as in OneFlow 0.3.
    value = array_ops.check_value_fits(value, x.dtype, "masked_fill")
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    except ValueError:
        raise ValueError("masked_fill: x %r and mask %r do not broadcast together (each dim, "
                         "aligned from the right, must be equal or 1)"
                         % (tuple(x.shape), tuple(mask.shape))) from None
    return math_ops.where(mask, value, x, name=name)


def elem_cnt(inputs, dtype=None, name=None):
    """The number of elements of `inputs` (its logical shape, known when the job is built) as a
    (1,) blob of `dtype` (default int32)."""
    op_builder.check_blob(inputs, "elem_cnt", "inputs")
    dtype = dtypes.check(dtypes.int32 if dtype is None else dtype, "elem_cnt dtype")
    count = int(np.prod(inputs.shape, dtype=np.int64))
    return array_ops.constant(count, dtype=dtype, shape=(1,), name=name)


def reduced_shape_elem_cnt(input_blob, axis=None, dtype=None, name=None):
    """The product of input_blob's dims along `axis` (an int or a list of ints; None: all of
    them) as a (1,) blob of `dtype` (default int32)."""
    op_builder.check_blob(input_blob, "reduced_shape_elem_cnt", "input_blob")
    rank = len(input_blob.shape)
    axes = list(range(rank)) if axis is None else [axis] if shapes.is_int(axis) else axis
    if not isinstance(axes, (list, tuple)) or not all(shapes.is_int(a) for a in axes):
        raise TypeError("reduced_shape_elem_cnt: axis must be an int or a list of ints, got %r"
                        % (axis,))
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("reduced_shape_elem_cnt: axis %d is out of range for input_blob of "
                             "shape %r" % (a, tuple(input_blob.shape)))
    dtype = dtypes.check(dtypes.int32 if dtype is None else dtype, "reduced_shape_elem_cnt dtype")
    count = int(np.prod([input_blob.shape[a % rank] for a in set(a % rank for a in axes)],
                        dtype=np.int64))
    return array_ops.constant(count, dtype=dtype, shape=(1,), name=name)


def constant_scalar(value, dtype=None, name=None):
    """flow.constant(value, dtype, shape=(1,))."""
    return array_ops.constant(value, dtype=dtype, shape=(1,), name=name)


def amp_white_identity(x, name=None):
    """x unchanged; OneFlow 0.3's auto mixed precision pass treats it as an op that runs in
    float16. Here it is the identity."""
    op_builder.check_blob(x, "amp_white_identity", "x")
    return array_ops.identity(x, name=name)


def cast_to_static_shape(x, name=None):
    """x as a static blob: a copy of a dynamic blob (see flow.argwhere), which must have its
    full (upper-bound) shape when the job runs, as in OneFlow 0.3; a copy of a static one."""
    op_builder.check_blob(x, "cast_to_static_shape", "x")
    return op_builder.add_single_output_op("cast_to_static_shape", name, "CastToStaticShape",
                                           {"in": x})


def identity_n(inputs, name=None):
    """[identity(x) for x in inputs]: a list of blobs equal to the inputs."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("identity_n: inputs must be a non-empty list or tuple of blobs, got %r"
                        % (inputs,))
    outputs = []
    for index, blob in enumerate(inputs):
        op_builder.check_blob(blob, "identity_n", "inputs[%d]" % index)
        outputs.append(array_ops.identity(blob, name=None if name is None
                                          else "%s_%d" % (name, index)))
    return outputs


def _time_shape_op(op, prefix, blob, count_name, count, name):
    """One of the ops that change the number of pieces per iteration (see repeat)."""
    op_builder.check_blob(blob, op, "input")
    if not shapes.is_int(count) or count < 1:
        raise ValueError("%s: %s must be a positive int, got %r" % (op, count_name, count))
    return op_builder.add_single_output_op(op, name, prefix, {"in": blob},
                                           {count_name: int(count)})


def repeat(input, repeat_num, name=None):  # noqa: A002 - OneFlow's name
    """Hands `input` to its consumers `repeat_num` times per iteration: the ops after it run
    repeat_num times per iteration (OneFlow's time shape) until a flow.acc sums their pieces
    back into one. Its gradient is that sum (flow.acc)."""
    return _time_shape_op("repeat", "Repeat", input, "repeat_num", repeat_num, name)


def acc(one, max_acc_num, name=None):
    """The sum of `max_acc_num` successive pieces of `one` (made after a flow.repeat or
    flow.unpack), passed on once. Its gradient is handed to each piece (flow.repeat)."""
    return _time_shape_op("acc", "Acc", one, "max_acc_num", max_acc_num, name)


def unpack(input, unpack_num, name=None):  # noqa: A002 - OneFlow's name
    """Cuts `input` along axis 0 into `unpack_num` blocks of rows and hands them to its
    consumers one after another: the ops after it run unpack_num times per iteration, each on
    one block (micro-batches), until flow.pack concatenates their pieces again. The input's dim
    0 must be divisible by unpack_num."""
    return _time_shape_op("unpack", "Unpack", input, "unpack_num", unpack_num, name)


def pack(input, pack_num, name=None):  # noqa: A002 - OneFlow's name
    """Concatenates `pack_num` successive pieces of `input` (made after a flow.unpack) along
    axis 0 into one blob, passed on once: the inverse of flow.unpack."""
    return _time_shape_op("pack", "Pack", input, "pack_num", pack_num, name)


def dynamic_reshape(x, shape, name=None):
    """flow.reshape (one -1 may stand for the dim that keeps the element count): shapes are
    static here, so a dynamic reshape is a reshape."""
    op_builder.check_blob(x, "dynamic_reshape", "x")
    if not isinstance(shape, (list, tuple)):
        raise TypeError("dynamic_reshape: shape must be a list or a tuple, got %r" % (shape,))
    return array_ops.reshape(x, shape, name=name)


def sync_dynamic_resize(inputs, size, name=None):
    """The first size[0] rows of `inputs` as a dynamic blob (see flow.argwhere): `size` is a
    (1,) int32 or int64 blob read when the job runs, at most inputs.shape[0]; `shape` is
    inputs'. On several devices, each holds the whole result (broadcast)."""
    op = "sync_dynamic_resize"
    op_builder.check_blob(inputs, op, "inputs")
    index_ops._check_indices(size, op, "size")
    return op_builder.add_single_output_op(op, name, "SyncDynamicResize",
                                           {"in": inputs, "size": size}, {"axis": 0})


def tensor_scatter_nd_update(params, indices, updates, name=None):
    """params with the rows that `indices` (..., K) address replaced by the rows of updates
    (shape indices[:-1] + params[K:]); a row addressed twice takes the later update."""
    op_builder.check_blob(params, "tensor_scatter_nd_update", "params")
    index_ops._check_indices(indices, "tensor_scatter_nd_update")
    op_builder.check_blob(updates, "tensor_scatter_nd_update", "updates")
    return op_builder.add_single_output_op(
        "tensor_scatter_nd_update", name, "TensorScatterNdUpdate",
        {"params": params, "indices": indices, "updates": updates})

