"""oneflow.experimental"""
from oneflow.ops.shape_ops import logical_slice  # noqa: F401
from oneflow.ops.variables import logical_slice_assign  # noqa: F401
from oneflow.scope import deprecated_name_scope as name_scope  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def enable_typing_check(value=True):
    """Accepted for OneFlow 0.3's flow.unittest; results are always checked against the
    function's annotations here."""


def square_sum(x, name=None):
    """The sum of x's squares as a (1,) blob of x's dtype (OneFlow 0.3's experimental op),
    differentiable: 2 x times the incoming gradient."""
    from oneflow.framework import op_builder
    from oneflow.ops import array_ops, math_ops, reduce_ops

    op_builder.check_blob(x, "experimental.square_sum", "x")
    square = math_ops.square(x, name=None if name is None else name + "-square")
    total = reduce_ops.reduce_sum(square, name=None if name is None else name + "-sum")
    return array_ops.reshape(total, (1,), name=name)


def unique_with_counts(x, out_idx=None, name=None):
    """(y, idx, count, num_unique) of a 1-D blob x, as tf.unique_with_counts: its distinct
    values in order of first appearance (y, padded with zeros to x's length), the position of
    each element of x in y, how often each value occurs (padded) and how many there are, as
    out_idx (int32 by default, or int64)."""
    from oneflow.framework import dtypes, op_builder

    op = "unique_with_counts"
    op_builder.check_blob(x, op, "x")
    out_idx = dtypes.check(dtypes.int32 if out_idx is None else out_idx, op + " out_idx")
    outputs = op_builder.add_op(op, op_builder.op_name(name, "UniqueWithCounts"), {"x": x},
                                {"out_idx": out_idx.value})
    return tuple(outputs[key][0] for key in ("y", "idx", "count", "num_unique"))


def indexed_slices_reduce_sum(indices, values, name=None):
    """Sums the rows of `values` that share an index: (y_indices, y_values, num_unique) with
    the distinct indices in order of first appearance, each one's summed row and how many there
    are ((1,) int64); y_indices and y_values keep indices' length, padded with zeros. `values`
    has indices' shape followed by the row's."""
    from oneflow.framework import dtypes, op_builder
    from oneflow.ops import array_ops, index_ops

    op = "indexed_slices_reduce_sum"
    op_builder.check_blob(values, op, "values")
    index_ops._check_indices(indices, op, "indices")
    index_shape, value_shape = tuple(indices.shape), tuple(values.shape)
    if value_shape[:len(index_shape)] != index_shape:
        raise ValueError("%s: values %s must start with the shape of indices %s"
                         % (op, value_shape, index_shape))
    count = 1
    for dim in index_shape:
        count *= dim
    prefix = None if name is None else name + "-"
    flat = array_ops.reshape(indices, (count,), name=prefix and prefix + "indices")
    y, idx, _, num_unique = unique_with_counts(flat, out_idx=dtypes.int64,
                                               name=prefix and prefix + "unique")
    rows = array_ops.reshape(values, (count,) + value_shape[len(index_shape):],
                             name=prefix and prefix + "values")
    y_values = index_ops.unsorted_segment_sum(rows, idx, count, name=prefix and prefix + "sum")
    return y, y_values, num_unique


def get_interface_blob_value(op_name):
    """The value of the variable `op_name` (OneFlow 0.3 reads interface blobs, variables among
    them, by op name) as a numpy array."""
    from oneflow import checkpoint

    variables = checkpoint.get_all_variables()
    if op_name not in variables:
        raise ValueError("experimental.get_interface_blob_value: %r is no variable of the "
                         "session (its variables: %s)" % (op_name, sorted(variables)))
    return variables[op_name].numpy()


def set_interface_blob_value(op_name, ndarray):
    """Sets the variable `op_name` to `ndarray` (its shape and dtype)."""
    from oneflow import checkpoint

    if op_name not in checkpoint.get_all_variables():
        raise ValueError("experimental.set_interface_blob_value: %r is no variable of the "
                         "session" % (op_name,))
    checkpoint.load_variables({op_name: ndarray}, ignore_mismatch=False)


__getattr__ = _missing_name_hook("oneflow.experimental")
