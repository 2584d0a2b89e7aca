"""Shape ops at the top level of flow: flatten, expand_dims, squeeze, concat, stack, split,
slice, slice_v2, slice_update, pad, pad_grad, reflection_pad2d, replication_pad2d, zeros, ones,
zeros_like, ones_like, constant_like, broadcast_like, reshape_like.

flatten, expand_dims and squeeze are reshapes; stack is expand_dims + concat; split is one slice
per part. Arguments the C++ side cannot see (None in a slice, Python types) are checked here with
messages naming the op; shape rules are checked once, by the ops' infer functions."""
import builtins
import numbers

import numpy as np

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.ops import array_ops


def _check_int(value, op, what):
    if not shapes.is_int(value):
        raise TypeError("%s: %s must be an int, got %r" % (op, what, value))
    return int(value)


def _normalize_axis(axis, rank, op, what="axis"):
    axis = _check_int(axis, op, what)
    if not -rank <= axis < rank:
        raise ValueError("%s: %s %d is out of range for a blob of rank %d (expected in [%d, %d))"
                         % (op, what, axis, rank, -rank, rank))
    return axis + rank if axis < 0 else axis


def _blob_list(values, op):
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 0:
        raise ValueError("%s: needs at least one input blob" % op)
    for index, value in enumerate(values):
        op_builder.check_blob(value, op, "inputs[%d]" % index)
    return list(values)


def flatten(input, start_dim=0, end_dim=-1, name=None):  # noqa: A002
    """Merges axes start_dim..end_dim (inclusive) of `input` into one."""
    op_builder.check_blob(input, "flatten", "input")
    shape = input.shape
    if len(shape) == 0:
        return array_ops.reshape(input, (1,), name=name)
    start = _normalize_axis(start_dim, len(shape), "flatten", "start_dim")
    end = _normalize_axis(end_dim, len(shape), "flatten", "end_dim")
    if start > end:
        raise ValueError("flatten: start_dim %d comes after end_dim %d for shape %r"
                         % (start_dim, end_dim, shape))
    merged = int(np.prod(shape[start:end + 1], dtype=np.int64))
    return _reshape_rows(input, shape[:start] + (merged,) + shape[end + 1:], 0, name)


def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts an axis of size 1 at `axis` (in [-rank - 1, rank])."""
    op_builder.check_blob(input, "expand_dims", "input")
    shape = input.shape
    axis = _normalize_axis(axis, len(shape) + 1, "expand_dims")
    return _reshape_rows(input, shape[:axis] + (1,) + shape[axis:], 1 if axis == 0 else 0, name)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes the listed axes, which must have size 1 (axis None: every axis of size 1).
    Removing every axis gives shape (1,), as OneFlow 0.3's squeeze op does."""
    op_builder.check_blob(input, "squeeze", "input")
    shape = input.shape
    if axis is None:
        axes = [i for i, dim in enumerate(shape) if dim == 1]
    else:
        axes = [axis] if shapes.is_int(axis) else list(axis)
        axes = sorted({_normalize_axis(a, len(shape), "squeeze") for a in axes})
        for a in axes:
            if shape[a] != 1:
                raise ValueError("squeeze: axis %d of shape %r has size %d; only axes of size 1 "
                                 "can be squeezed" % (a, shape, shape[a]))
    squeezed = tuple(d for i, d in enumerate(shape) if i not in axes)
    if not squeezed and shape:
        squeezed = (1,)
    return _reshape_rows(input, squeezed, None if 0 in axes else 0, name)


def _reshape_rows(input, shape, rows_at, name):  # noqa: A002
    """reshape(input, shape). For a dynamic input (see flow.argwhere) the entry `rows_at`, where
    the input's first axis goes, becomes -1, so that it follows the rows of each run (argwhere
    and the ops after it vary their first axis)."""
    if input.is_dynamic and rows_at is not None and len(input.shape) > 0:
        shape = tuple(shape[:rows_at]) + (-1,) + tuple(shape[rows_at + 1:])
    return array_ops.reshape(input, shape, name=name)


def concat(inputs=None, axis=0, max_dim_size=None, name=None, values=None):
    """Joins `inputs` along `axis`; the other dims must agree. max_dim_size (OneFlow 0.3's) bounds
    the result's size on `axis`: the static inputs must fit in it and, when an input is dynamic,
    it is the result's (upper-bound) size. `values` is OneFlow's deprecated name for `inputs`."""
    if values is not None:
        if inputs is not None:
            raise TypeError("concat: pass the blobs as inputs or as values (deprecated), not both")
        inputs = values
    if inputs is None:
        raise TypeError("concat() missing the blobs to join (inputs)")
    inputs = _blob_list(inputs, "concat")
    axis = _check_int(axis, "concat", "axis")
    attrs = {"axis": axis}
    if max_dim_size is not None:
        max_dim_size = _check_int(max_dim_size, "concat", "max_dim_size")
        if max_dim_size < 1:
            raise ValueError("concat: max_dim_size must be positive, got %d" % max_dim_size)
        attrs["max_dim_size"] = max_dim_size
    return op_builder.add_single_output_op("concat", name, "Concat", {"in": inputs}, attrs)


def stack(inputs, axis=0, name=None):
    """Joins blobs of one shape along a new axis `axis` (in [-rank - 1, rank])."""
    inputs = _blob_list(inputs, "stack")
    shape = inputs[0].shape
    for index, blob in enumerate(inputs[1:], 1):
        if blob.shape != shape:
            raise ValueError("stack: input %d has shape %r but input 0 has %r; all inputs must "
                             "have the same shape" % (index, blob.shape, shape))
        if blob.dtype != inputs[0].dtype:
            raise TypeError("stack: input %d is %s but input 0 is %s; all inputs must have the "
                            "same dtype" % (index, blob.dtype.name, inputs[0].dtype.name))
    axis = _normalize_axis(axis, len(shape) + 1, "stack")
    expanded = [expand_dims(blob, axis) for blob in inputs]
    return concat(expanded, axis=axis, name=name)


def split(x, num_or_size_splits, axis=0, name=None):
    """Splits x along `axis` into num_or_size_splits equal parts (an int dividing the dim) or
    parts of the listed sizes (one may be -1: the rest). Returns a list of blobs. OneFlow 0.3
    had no flow.split; this follows tf.split."""
    op_builder.check_blob(x, "split", "x")
    axis = _normalize_axis(axis, len(x.shape), "split")
    dim = x.shape[axis]
    if shapes.is_int(num_or_size_splits):
        parts = int(num_or_size_splits)
        if parts <= 0 or dim % parts != 0:
            raise ValueError("split: cannot split axis %d of size %d into %d equal parts"
                             % (axis, dim, parts))
        sizes = [dim // parts] * parts
    else:
        if not isinstance(num_or_size_splits, (list, tuple)):
            raise TypeError("split: num_or_size_splits must be an int or a list of ints, got %r"
                            % (num_or_size_splits,))
        sizes = [_check_int(s, "split", "a size") for s in num_or_size_splits]
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise ValueError("split: sizes %r may hold at most one -1 and no other negative value"
                             % (sizes,))
        if -1 in sizes:
            rest = dim - sum(s for s in sizes if s != -1)
            if rest < 0:
                raise ValueError("split: sizes %r exceed axis %d of size %d" % (sizes, axis, dim))
            sizes[sizes.index(-1)] = rest
        if sum(sizes) != dim:
            raise ValueError("split: sizes %r sum to %d, not to the size %d of axis %d"
                             % (sizes, sum(sizes), dim, axis))
    outputs = []
    offset = 0
    for index, size in enumerate(sizes):
        tuples = [(None, None, None)] * axis + [(offset, offset + size, 1)]
        outputs.append(slice_v2(x, tuples, name=None if name is None else "%s_%d" % (name, index)))
        offset += size
    return outputs


def _slice_attrs(shape, slice_tup_list, op):
    """start/stop/step attributes for `slice_tup_list` (one (start, stop, step) per leading
    axis; None entries and missing axes mean the whole axis), normalised like Python slices."""
    if not isinstance(slice_tup_list, (list, tuple)):
        raise TypeError("%s: slice_tup_list must be a list of (start, stop, step) tuples, got %r"
                        % (op, slice_tup_list))
    if len(slice_tup_list) > len(shape):
        raise ValueError("%s: %d slice tuples for a blob of rank %d"
                         % (op, len(slice_tup_list), len(shape)))
    start, stop, step = [], [], []
    for axis, dim in enumerate(shape):
        entry = slice_tup_list[axis] if axis < len(slice_tup_list) else (None, None, None)
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError("%s: slice tuple %d must be (start, stop, step), got %r"
                             % (op, axis, entry))
        for value in entry:
            if value is not None:
                _check_int(value, op, "a slice entry")
        if entry[2] is not None and int(entry[2]) == 0:
            raise ValueError("%s: slice step of axis %d is 0; a step must be non-zero" % (op, axis))
        begin, end, stride = builtins.slice(*[None if v is None else int(v) for v in entry]).indices(dim)
        start.append(begin)
        stop.append(end)
        # A step as long as the axis takes at most one element; a longer one means the same.
        step.append(max(-max(dim, 1), min(stride, max(dim, 1))))
    return {"start": start, "stop": stop, "step": step}


def _slice(x, slice_tup_list, name, op, prefix):
    op_builder.check_blob(x, op, "x")
    if len(x.shape) == 0:
        raise ValueError("%s: cannot slice a 0-d blob" % op)
    return op_builder.add_single_output_op("slice", name, prefix, {"x": x},
                                           _slice_attrs(x.shape, slice_tup_list, op), output="y")


def slice_v2(x, slice_tup_list, name=None):
    """x[start:stop:step, ...] with one (start, stop, step) tuple per leading axis; entries may
    be None or negative and are resolved like Python slices (out-of-range bounds clamp)."""
    return _slice(x, slice_tup_list, name, "slice_v2", "Slice")


def slice(x, begin, size, name=None):  # noqa: A001 - OneFlow's public name
    """x[begin[i] : begin[i] + size[i]] on every axis i; begin[i] may be negative or None (0),
    size[i] -1 or None (to the end of the axis)."""
    op_builder.check_blob(x, "slice", "x")
    rank = len(x.shape)
    if not isinstance(begin, (list, tuple)) or len(begin) != rank:
        raise ValueError("slice: begin must be a list of %d entries (one per axis of %r), got %r"
                         % (rank, x.shape, begin))
    if not isinstance(size, (list, tuple)) or len(size) != rank:
        raise ValueError("slice: size must be a list of %d entries (one per axis of %r), got %r"
                         % (rank, x.shape, size))
    tuples = []
    for axis, (b, s, dim) in enumerate(zip(begin, size, x.shape)):
        start = 0 if b is None else _check_int(b, "slice", "begin[%d]" % axis)
        if not -dim <= start < max(dim, 1):
            raise ValueError("slice: begin[%d] = %d is out of range for axis %d of size %d "
                             "(expected in [%d, %d))" % (axis, start, axis, dim, -dim, dim))
        start = start + dim if start < 0 else start
        if s is None or s == -1:
            stop = dim
        else:
            s = _check_int(s, "slice", "size[%d]" % axis)
            if s < 0 or start + s > dim:
                raise ValueError("slice: size[%d] = %d from begin %d does not fit axis %d of size "
                                 "%d (sizes must be -1 or in [0, %d])"
                                 % (axis, s, start, axis, dim, dim - start))
            stop = start + s
        tuples.append((start, stop, 1))
    return slice_v2(x, tuples, name=name)


def slice_update(x, update, slice_tup_list, name=None):
    """x with the slice slice_tup_list (as in slice_v2) replaced by `update`."""
    op_builder.check_blob(x, "slice_update", "x")
    op_builder.check_blob(update, "slice_update", "update")
    if len(x.shape) == 0:
        raise ValueError("slice_update: cannot slice a 0-d blob")
    return op_builder.add_single_output_op(
        "slice_update", name, "SliceUpdate", {"x": x, "update": update},
        _slice_attrs(x.shape, slice_tup_list, "slice_update"), output="y")


def _positive_steps(slice_tup_list, op):
    for axis, entry in enumerate(slice_tup_list if isinstance(slice_tup_list, (list, tuple))
                                 else ()):
        if isinstance(entry, (list, tuple)) and len(entry) == 3 and entry[2] is not None \
                and shapes.is_int(entry[2]) and entry[2] <= 0:
            raise ValueError("%s: slice step of axis %d is %d; %s takes positive steps only"
                             % (op, axis, entry[2], op))


def logical_slice(x, slice_tup_list, name=None):
    """x[start:stop:step, ...] of the logical blob, however it is split over devices (OneFlow
    0.3's flow.experimental.logical_slice): one (start, stop, step) tuple per leading axis,
    None or negative bounds resolved like Python slices, steps positive."""
    _positive_steps(slice_tup_list, "logical_slice")
    return _slice(x, slice_tup_list, name, "logical_slice", "LogicalSlice")


def reverse(input, axis, name=None):  # noqa: A002 - OneFlow's name
    """`input` with the order of its elements reversed along `axis` (an int or a list of
    ints; negative counts from the end)."""
    op_builder.check_blob(input, "reverse", "input")
    rank = len(input.shape)
    axes = [axis] if shapes.is_int(axis) else axis
    if not isinstance(axes, (list, tuple)) or not all(shapes.is_int(a) for a in axes):
        raise TypeError("reverse: axis must be an int or a list of ints, got %r" % (axis,))
    tuples = [(None, None, None)] * rank
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("reverse: axis %d is out of range for input of shape %r"
                             % (a, tuple(input.shape)))
        if tuples[a % rank][2] == -1:
            raise ValueError("reverse: axis %r names axis %d twice" % (axis, a % rank))
        tuples[a % rank] = (None, None, -1)
    return slice_v2(input, tuples, name=name)


def _paddings(x, paddings, op):
    if not isinstance(paddings, (list, tuple)):
        raise ValueError("%s: paddings must be a list of (before, after) pairs, got %r"
                         % (op, paddings))
    if len(paddings) != len(x.shape):
        raise ValueError("%s: paddings has %d pairs but x %r has %d axes"
                         % (op, len(paddings), x.shape, len(x.shape)))
    before, after = [], []
    for axis, pair in enumerate(paddings):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError("%s: paddings[%d] must be a (before, after) pair, got %r"
                             % (op, axis, pair))
        before.append(_check_int(pair[0], op, "paddings[%d][0]" % axis))
        after.append(_check_int(pair[1], op, "paddings[%d][1]" % axis))
    return before, after


def pad(x, paddings, constant_value=0, name=None):
    """Pads axis i of x with paddings[i] = (before, after) elements of constant_value."""
    op_builder.check_blob(x, "pad", "x")
    before, after = _paddings(x, paddings, "pad")
    if not isinstance(constant_value, (numbers.Real, np.number)) or isinstance(constant_value, bool):
        raise TypeError("pad: constant_value must be a real number, got %r" % (constant_value,))
    floating = dtypes.is_floating(x.dtype)
    array_ops.check_value_fits(constant_value, x.dtype, "pad")
    attrs = {
        "padding_before": before,
        "padding_after": after,
        "floating_constant_value": float(constant_value) if floating else 0.0,
        "integral_constant_value": 0 if floating else int(constant_value),
    }
    return op_builder.add_single_output_op("pad", name, "Pad", {"x": x}, attrs, output="y")


def pad_grad(x, paddings, constant_value=0, name=None):
    """The gradient of pad: the part of x (a padded blob's gradient) that the input filled."""
    op_builder.check_blob(x, "pad_grad", "x")
    before, after = _paddings(x, paddings, "pad_grad")
    tuples = []
    for axis, (b, a, dim) in enumerate(zip(before, after, x.shape)):
        if b < 0 or a < 0 or b + a > dim:
            raise ValueError("pad_grad: paddings (%d, %d) of axis %d do not fit size %d"
                             % (b, a, axis, dim))
        tuples.append((b, dim - a, 1))
    return slice_v2(x, tuples, name=name)


def _padding_2d(x, padding, op):
    if len(x.shape) != 4:
        raise ValueError("%s: x must be a 4-d NCHW blob, got shape %r" % (op, x.shape))
    if shapes.is_int(padding):
        return [int(padding)] * 4
    if not isinstance(padding, (list, tuple)) or len(padding) != 4:
        raise ValueError("%s: padding must be an int or [left, right, top, bottom], got %r"
                         % (op, padding))
    return [_check_int(p, op, "padding") for p in padding]


def reflection_pad2d(x, padding, name=None):
    """Pads H and W of an NCHW blob by reflecting at the border (the border is not repeated);
    padding: an int or [left, right, top, bottom], each smaller than its dim."""
    op_builder.check_blob(x, "reflection_pad2d", "x")
    return op_builder.add_single_output_op(
        "reflection_pad2d", name, "ReflectionPad2d", {"x": x},
        {"padding": _padding_2d(x, padding, "reflection_pad2d")}, output="y")


def replication_pad2d(x, padding, name=None):
    """Pads H and W of an NCHW blob by repeating the border element; padding as in
    reflection_pad2d."""
    op_builder.check_blob(x, "replication_pad2d", "x")
    return op_builder.add_single_output_op(
        "replication_pad2d", name, "ReplicationPad2d", {"x": x},
        {"padding": _padding_2d(x, padding, "replication_pad2d")}, output="y")


def constant_pad2d(x, padding, constant_value=0, name=None):
    """Pads H and W of an NCHW blob with constant_value; padding as in reflection_pad2d (an
    int or [left, right, top, bottom], each >= 0)."""
    op_builder.check_blob(x, "constant_pad2d", "x")
    left, right, top, bottom = _padding_2d(x, padding, "constant_pad2d")
    if min(left, right, top, bottom) < 0:
        raise ValueError("constant_pad2d: padding must be >= 0, got %r" % (padding,))
    return pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)], constant_value, name=name)


def zero_pad2d(x, padding, name=None):
    """constant_pad2d with zeros (flow.zero_pad2d)."""
    op_builder.check_blob(x, "zero_pad2d", "x")
    left, right, top, bottom = _padding_2d(x, padding, "zero_pad2d")
    if min(left, right, top, bottom) < 0:
        raise ValueError("zero_pad2d: padding must be >= 0, got %r" % (padding,))
    return pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)], 0, name=name)


def same_padding(x, padding, data_format, kernel_size, strides, dilation_rate, name=None):
    """Pads the spatial axes of x so that a convolution or pooling with this window, stride
    and dilation gives ceil(size / stride) outputs (zeros). padding "SAME_UPPER" puts an odd
    extra element at the end, "SAME_LOWER" at the beginning; data_format "NCHW"-like
    (channels first) or "NHWC"-like (channels last)."""
    op = "same_padding"
    op_builder.check_blob(x, op, "x")
    spatial = len(x.shape) - 2
    if not isinstance(padding, str) or padding.upper() not in ("SAME_UPPER", "SAME_LOWER"):
        raise ValueError("%s: padding must be 'SAME_UPPER' or 'SAME_LOWER', got %r"
                         % (op, padding))
    if not isinstance(data_format, str) or len(data_format) != len(x.shape) or \
            not data_format.upper().startswith("N"):
        raise ValueError("%s: data_format %r does not describe x of shape %r (e.g. 'NCHW' or "
                         "'NHWC')" % (op, data_format, tuple(x.shape)))
    channels_first = data_format.upper()[1] == "C"
    arguments = []
    for what, values in (("kernel_size", kernel_size), ("strides", strides),
                         ("dilation_rate", dilation_rate)):
        values = [values] * spatial if shapes.is_int(values) else values
        if not isinstance(values, (list, tuple)) or len(values) != spatial or \
                not all(shapes.is_int(v) and v > 0 for v in values):
            raise ValueError("%s: %s must be a positive int or %d positive ints, got %r"
                             % (op, what, spatial, values))
        arguments.append([int(v) for v in values])
    first = 2 if channels_first else 1
    spatial_paddings = []
    for axis, (k, s, d) in enumerate(zip(*arguments)):
        size = x.shape[first + axis]
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        spatial_paddings.append((small, large) if padding.upper() == "SAME_UPPER"
                                else (large, small))
    paddings = ([(0, 0)] * 2 + spatial_paddings if channels_first
                else [(0, 0)] + spatial_paddings + [(0, 0)])
    return pad(x, paddings, 0, name=name)


def zeros(shape, dtype=None, name=None):
    return array_ops.constant(0, dtype=dtype, shape=shape, name=name)


def ones(shape, dtype=None, name=None):
    return array_ops.constant(1, dtype=dtype, shape=shape, name=name)


def constant_like(like, value, dtype=None, name=None):
    """A blob shaped like `like`, filled with `value`, of `dtype` (default: like's)."""
    op_builder.check_blob(like, "constant_like", "like")
    if not isinstance(value, (numbers.Real, np.number)) or isinstance(value, bool):
        raise TypeError("constant_like: value must be a real number, got %r" % (value,))
    array_ops.check_value_fits(value, like.dtype if dtype is None else dtypes.check(dtype),
                               "constant_like")
    out = op_builder.add_single_output_op("constant_like", name, "ConstantLike", {"like": like},
                                          {"value": float(value)})
    if dtype is not None:
        out = array_ops.cast(out, dtype)
    return out


def zeros_like(like, dtype=None, name=None):
    return constant_like(like, 0, dtype=dtype, name=name)


def ones_like(like, dtype=None, name=None):
    return constant_like(like, 1, dtype=dtype, name=name)


def broadcast_like(x, like, broadcast_axes=None, name=None):
    """x repeated along broadcast_axes (None: numpy broadcasting) to like's shape."""
    op_builder.check_blob(x, "broadcast_like", "x")
    op_builder.check_blob(like, "broadcast_like", "like")
    axes = [] if broadcast_axes is None else [
        _check_int(a, "broadcast_like", "a broadcast axis") for a in broadcast_axes]
    return op_builder.add_single_output_op("broadcast_like", name, "BroadcastLike",
                                           {"x": x, "like": like}, {"broadcast_axes": axes},
                                           output="y")


def reshape_like(x, like, name=None):
    op_builder.check_blob(x, "reshape_like", "x")
    op_builder.check_blob(like, "reshape_like", "like")
    return op_builder.add_single_output_op("reshape_like", name, "ReshapeLike",
                                           {"in": x, "like": like})
