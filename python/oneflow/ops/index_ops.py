"""Indexing ops: gather, gather_nd, scatter_nd, tensor_scatter_nd_add, one_hot, clip_by_value
and the unsorted segment sums (flow.math.unsorted_segment_sum, _like, unsorted_batch_segment_sum).

Index blobs are int32 or int64. Indices are checked while the job runs: one out of range raises
a ValueError naming the op, the index, its position and the valid range."""
import math
import numbers

import numpy as np

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.ops import array_ops

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _check_int(value, op, what):
    if not shapes.is_int(value):
        raise TypeError("%s: %s must be an int, got %r" % (op, what, value))
    return int(value)


def _check_indices(blob, op, what="indices"):
    op_builder.check_blob(blob, op, what)
    if blob.dtype not in _INDEX_DTYPES:
        raise TypeError("%s: %s must be int32 or int64, got %s" % (op, what, blob.dtype.name))
    return blob


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Rows of params along `axis` (default: batch_dims) picked by int indices:
    out = params[:axis] + indices[batch_dims:] + params[axis + 1:]. With batch_dims > 0 the
    first batch_dims axes of params and indices are matched (batch gather). With axis ==
    batch_dims > 0 it is OneFlow's batch_gather whatever batch_dims says: the leading
    indices.ndim - 1 axes are matched and the rows picked along the next one (out =
    indices.shape + params.shape[indices.ndim:]; OneFlow-Benchmark's BERT relies on it). The
    gradient of params is a scatter-add of out's gradient rows (unsorted_segment_sum_like)."""
    op_builder.check_blob(params, "gather", "params")
    _check_indices(indices, "gather")
    batch_dims = _check_int(batch_dims, "gather", "batch_dims")
    axis = batch_dims if axis is None else _check_int(axis, "gather", "axis")
    if batch_dims > 0 and axis == batch_dims and 0 < len(indices.shape) <= len(params.shape):
        batch_dims = axis = len(indices.shape) - 1
    return batch_gather(params, indices, axis, batch_dims, name)


def batch_gather(params, indices, axis, batch_dims, name=None):
    """The gather op itself: out = params[:axis] + indices[batch_dims:] + params[axis + 1:],
    the first batch_dims axes of params and indices matched (TensorFlow's batch_dims)."""
    return op_builder.add_single_output_op("gather", name, "Gather",
                                           {"in": params, "indices": indices},
                                           {"axis": axis, "batch_dims": batch_dims})


def gather_nd(params, indices, name=None):
    """out[i...] = params[indices[i..., 0], ..., indices[i..., K-1], ...]."""
    op_builder.check_blob(params, "gather_nd", "params")
    _check_indices(indices, "gather_nd")
    return op_builder.add_single_output_op("gather_nd", name, "GatherNd",
                                           {"params": params, "indices": indices})


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with updates added at the rows indices address (duplicates sum)."""
    _check_indices(indices, "scatter_nd")
    op_builder.check_blob(updates, "scatter_nd", "updates")
    shape = shapes.to_shape(shape, "scatter_nd")
    return op_builder.add_single_output_op("scatter_nd", name, "ScatterNd",
                                           {"indices": indices, "updates": updates},
                                           {"shape": shape})


def _scatter_nd_like(indices, updates, like, name=None):
    return op_builder.add_single_output_op("scatter_nd_like", name, "ScatterNdLike",
                                           {"indices": indices, "updates": updates,
                                            "like": like})


def tensor_scatter_nd_add(params, indices, updates, name=None):
    """params with updates added at the rows indices address (duplicates sum)."""
    op_builder.check_blob(params, "tensor_scatter_nd_add", "params")
    _check_indices(indices, "tensor_scatter_nd_add")
    op_builder.check_blob(updates, "tensor_scatter_nd_add", "updates")
    if updates.dtype != params.dtype:
        raise TypeError("tensor_scatter_nd_add: updates has dtype %s, params %s; they must be "
                        "the same" % (updates.dtype.name, params.dtype.name))
    return params + _scatter_nd_like(indices, updates, params, name=name)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1, dtype=None, name=None):
    """A new axis of size `depth` at `axis` (-1: last) holding on_value at each index and
    off_value elsewhere; dtype defaults to float32. An index outside [0, depth) is an error."""
    _check_indices(indices, "one_hot")
    depth = _check_int(depth, "one_hot", "depth")
    dtype = dtypes.check(dtype if dtype is not None else dtypes.float32, "one_hot dtype")
    rank = len(indices.shape) + 1
    axis = _check_int(axis, "one_hot", "axis")
    if not -1 <= axis < rank:
        raise ValueError("one_hot: axis %d is out of range for a result of rank %d (expected -1 "
                         "or in [0, %d))" % (axis, rank, rank))
    integer = {}
    for value, what in ((on_value, "on_value"), (off_value, "off_value")):
        if not isinstance(value, (numbers.Real, np.number)) or isinstance(value, bool):
            raise TypeError("one_hot: %s must be a real number, got %r" % (what, value))
        # An integer dtype must hold the value (truncated toward zero), as flow.constant's.
        fitted = array_ops.check_value_fits(value, dtype, "one_hot %s" % what)
        integer[what] = fitted if dtype.numpy_dtype.kind in "iu" else 0
    attrs = {
        "depth": depth,
        "dtype": dtype.value,
        "floating_on_value": float(on_value),
        "floating_off_value": float(off_value),
        "integer_on_value": integer["on_value"],
        "integer_off_value": integer["off_value"],
    }
    last = axis in (-1, rank - 1)
    out = op_builder.add_single_output_op("one_hot", name if last else None, "OneHot",
                                          {"indices": indices}, attrs)
    if last:
        return out
    perm = list(range(axis)) + [rank - 1] + list(range(axis, rank - 1))
    return array_ops.transpose(out, perm, name=name)


def _integral_bound(value, rounding, limits):
    """A clip bound for an integer dtype: rounded inward (rounding), clamped to its range."""
    if not isinstance(value, (numbers.Integral, np.integer)):
        if math.isinf(value):
            return limits.max if value > 0 else limits.min
        value = rounding(value)
    return min(max(int(value), limits.min), limits.max)


def clip_by_value(values, min_value=None, max_value=None, name=None):
    """min(max(values, min_value), max_value), either bound optional; the gradient is zero
    where a value was clipped."""
    op_builder.check_blob(values, "clip_by_value", "values")
    if min_value is None and max_value is None:
        raise ValueError("clip_by_value: min_value and max_value cannot both be None")
    for value, what in ((min_value, "min_value"), (max_value, "max_value")):
        if value is not None and (not isinstance(value, (numbers.Real, np.number))
                                  or isinstance(value, bool)):
            raise TypeError("clip_by_value: %s must be a real number, got %r" % (what, value))
    for value, what in ((min_value, "min_value"), (max_value, "max_value")):
        if value is not None and value != value:
            raise ValueError("clip_by_value: %s is NaN" % what)
    if min_value is not None and max_value is not None and min_value > max_value:
        raise ValueError("clip_by_value: min_value %r is greater than max_value %r"
                         % (min_value, max_value))
    floating = dtypes.is_floating(values.dtype)
    if not floating:
        # An integer blob's bounds are the integers inside [min_value, max_value], within the
        # dtype's range (a bound beyond it clips nothing).
        limits = np.iinfo(values.dtype.numpy_dtype)
        if min_value is not None:
            min_value = _integral_bound(min_value, math.ceil, limits)
        if max_value is not None:
            max_value = _integral_bound(max_value, math.floor, limits)
    attrs = {
        "has_min": min_value is not None,
        "has_max": max_value is not None,
        "floating_min": float(min_value) if floating and min_value is not None else 0.0,
        "floating_max": float(max_value) if floating and max_value is not None else 0.0,
        "integral_min": int(min_value) if not floating and min_value is not None else 0,
        "integral_max": int(max_value) if not floating and max_value is not None else 0,
    }
    return op_builder.add_single_output_op("clip_by_scalar", name, "ClipByValue", {"x": values},
                                           attrs, output="y")


def unsorted_segment_sum(data, segment_ids, num_segments, axis=0, name=None):
    """out[..., k, ...] (k on `axis`) = sum of data's rows whose segment id is k; segment_ids
    matches data on axes [axis, axis + rank(segment_ids)); ids must be in [0, num_segments)."""
    op_builder.check_blob(data, "unsorted_segment_sum", "data")
    _check_indices(segment_ids, "unsorted_segment_sum", "segment_ids")
    return op_builder.add_single_output_op(
        "unsorted_segment_sum", name, "UnsortedSegmentSum",
        {"data": data, "segment_ids": segment_ids},
        {"num_segments": _check_int(num_segments, "unsorted_segment_sum", "num_segments"),
         "axis": _check_int(axis, "unsorted_segment_sum", "axis")})


def unsorted_segment_sum_like(data, segment_ids, like, axis=0, name=None):
    """unsorted_segment_sum with like.shape[axis] segments; the result has like's shape."""
    op_builder.check_blob(data, "unsorted_segment_sum_like", "data")
    _check_indices(segment_ids, "unsorted_segment_sum_like", "segment_ids")
    op_builder.check_blob(like, "unsorted_segment_sum_like", "like")
    return op_builder.add_single_output_op(
        "unsorted_segment_sum_like", name, "UnsortedSegmentSumLike",
        {"data": data, "segment_ids": segment_ids, "like": like},
        {"axis": _check_int(axis, "unsorted_segment_sum_like", "axis")})


def unsorted_batch_segment_sum(data, segment_ids, num_segments, name=None):
    """Per batch row: segment_ids (B..., N) and data (B..., N, D...) give out
    (B..., num_segments, D...), each batch row summed into its own segments."""
    op_builder.check_blob(data, "unsorted_batch_segment_sum", "data")
    _check_indices(segment_ids, "unsorted_batch_segment_sum", "segment_ids")
    batch_dims = len(segment_ids.shape) - 1
    if batch_dims < 0:
        raise ValueError("unsorted_batch_segment_sum: segment_ids must have at least one axis")
    return op_builder.add_single_output_op(
        "unsorted_segment_sum", name, "UnsortedBatchSegmentSum",
        {"data": data, "segment_ids": segment_ids},
        {"num_segments": _check_int(num_segments, "unsorted_batch_segment_sum", "num_segments"),
         "axis": batch_dims, "batch_dims": batch_dims})


def argwhere(condition, dtype=None, name=None):
    """The coordinates of the non-zero elements of `condition`, one row each, in row-major
    order: shape (count, condition's rank), count known only when the job runs (numpy.argwhere).
    dtype: int32 (default) or int64. The result is a dynamic blob (`shape` is the upper bound
    (condition's size, rank)) that other ops read: gather_nd, gather, tensor_scatter_nd_update,
    elementwise math, reductions, ... (their results are dynamic in turn until an op's shape no
    longer depends on it, or flow.cast_to_static_shape). On several devices it is whole
    (broadcast) on each, or in the mirrored view each device's own."""
    from oneflow.framework import dtypes

    op_builder.check_blob(condition, "argwhere", "condition")
    index_type = dtypes.int32 if dtype is None else dtypes.check(dtype, "argwhere dtype")
    if index_type not in (dtypes.int32, dtypes.int64):
        raise TypeError("argwhere: dtype must be int32 or int64, got %s" % index_type.name)
    outputs = op_builder.add_op("argwhere", op_builder.op_name(name, "ArgWhere"),
                                {"input": condition}, {"dtype": index_type.value})
    out = outputs["out"][0]
    out.valid_rows = outputs["size"][0]
    return out


def nonzero(a, name=None):
    """The coordinates of the non-zero elements of `a` as a (rank, count) int32 blob: row i
    holds their indices along axis i (argwhere transposed, numpy.nonzero stacked); dynamic like
    argwhere's result."""
    coordinates = argwhere(a, name=None if name is None else name + "-argwhere")
    out = array_ops.transpose(coordinates.without_valid_rows(), (1, 0), name=name)
    out.valid_rows, out.valid_axis = coordinates.valid_rows, 1
    return out


def dim_gather(input, dim, index, name=None):  # noqa: A002 - OneFlow's name
    """torch.gather: out[i...] = input[i...] with axis `dim` indexed by index[i...]; index has
    input's rank and, on every other axis, a size no larger than input's. The gradient of
    input scatter-adds out's gradient back."""
    op_builder.check_blob(input, "dim_gather", "input")
    _check_indices(index, "dim_gather", "index")
    rank = len(input.shape)
    dim = _check_int(dim, "dim_gather", "dim")
    if not -rank <= dim < rank:
        raise ValueError("dim_gather: dim %d is out of range for input of shape %r"
                         % (dim, tuple(input.shape)))
    dim %= rank
    if len(index.shape) != rank or any(
            i > n for axis, (i, n) in enumerate(zip(index.shape, input.shape)) if axis != dim):
        raise ValueError("dim_gather: index %r must have input's rank and, on every axis but "
                         "dim=%d, a size no larger than input's %r"
                         % (tuple(index.shape), dim, tuple(input.shape)))
    from oneflow.ops import shape_ops

    # Named after dim_gather, so that an index error of the gather below says where it is.
    name = op_builder.op_name(name, "DimGather")

    def sub(suffix):
        return "%s-%s" % (name, suffix)

    if any(i != n for axis, (i, n) in enumerate(zip(index.shape, input.shape)) if axis != dim):
        input = shape_ops.slice_v2(input, [(None, None, None) if axis == dim else (0, i, 1)
                                           for axis, i in enumerate(index.shape)], sub("crop"))
    # The gathered axis last, every other axis a batch axis of a batch gather.
    perm = [axis for axis in range(rank) if axis != dim] + [dim]
    inverse = [perm.index(axis) for axis in range(rank)]
    moved = perm != list(range(rank))
    if moved:
        input = array_ops.transpose(input, perm, name=sub("transpose_input"))
        index = array_ops.transpose(index, perm, name=sub("transpose_index"))
    out = batch_gather(input, index, rank - 1, rank - 1, sub("gather") if moved else name)
    return array_ops.transpose(out, inverse, name=name) if moved else out

