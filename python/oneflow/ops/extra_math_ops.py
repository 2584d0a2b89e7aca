"""flow.math: atan2, xdivy, xlogy (broadcast binary ops, oneflow/ops/broadcast_binary.cpp),
sigmoid_grad, flow.count_not_finite (ops) and the compositions squared_difference, l2_normalize,
polyval, broadcast_to_compatible_with, multi_count_not_finite and flow.diag, with OneFlow 0.3's
arguments and defaults. The compositions need no kernel of their own; their
gradients come from the ops they are built of."""
import numbers

import numpy as np

from oneflow.framework import dtypes, op_builder, shapes as shape_util
from oneflow.framework.blob import LazyBlob, is_scalar
from oneflow.ops import array_ops, index_ops, math_ops, range_ops, reduce_ops, shape_ops


def _sub_name(name, suffix):
    return None if name is None else "%s_%s" % (name, suffix)


def atan2(x, y, name=None):
    """The angle of the point (y, x) in (-pi, pi]: atan(x / y) moved to y's half-plane (C's
    atan2(x, y)), with numpy broadcasting. Floating dtypes only."""
    return math_ops._broadcast_binary("broadcast_atan2", "Atan2", x, y, name)


def xdivy(x, y, name=None):
    """x / y, and 0 where x == 0 (even where y == 0), with broadcasting."""
    return math_ops._broadcast_binary("broadcast_xdivy", "Xdivy", x, y, name)


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x == 0 (even where y == 0), with broadcasting."""
    return math_ops._broadcast_binary("broadcast_xlogy", "Xlogy", x, y, name)


def squared_difference(x, y, name=None):
    """(x - y)^2 elementwise with broadcasting; x or y may be a python number."""
    difference = math_ops.subtract(x, y, _sub_name(name, "subtract"))
    return math_ops.square(difference, _sub_name(name, "square"))


def l2_normalize(input, axis=None, epsilon=1e-12, name=None):  # noqa: A002 - OneFlow's name
    """x / sqrt(max(sum(x^2, axis), epsilon)), as OneFlow 0.3's l2_normalize kernel (and
    TensorFlow): where the sum of squares is below epsilon, x is divided by sqrt(epsilon) and the
    gradient is dy / sqrt(epsilon). `axis` is an int or a list of ints; None normalises over
    every axis (TensorFlow's meaning; OneFlow 0.3 required an axis)."""
    op_builder.check_blob(input, "l2_normalize", "input")
    axes = reduce_ops._reduce_axes(input, axis, "l2_normalize")
    reduce_ops._require_floating(input, "l2_normalize")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (numbers.Real, np.floating)):
        raise TypeError("l2_normalize: epsilon must be a real number, got %r" % (epsilon,))
    if not epsilon >= 0:
        raise ValueError("l2_normalize: epsilon must be >= 0, got %r" % (epsilon,))
    square_sum = reduce_ops.reduce_sum(math_ops.square(input, _sub_name(name, "square")), axes,
                                       keepdims=True, name=_sub_name(name, "square_sum"))
    clamped = math_ops.maximum(square_sum, float(epsilon), name=_sub_name(name, "clamp"))
    inverse_norm = math_ops.rsqrt(clamped, name=_sub_name(name, "rsqrt"))
    return math_ops.multiply(input, inverse_norm, name=name)


def polyval(coeffs, x, name=None):
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1] by Horner's rule, elementwise. coeffs is a list or
    tuple of python numbers or blobs (broadcasting with x); an empty list gives zeros like x."""
    op_builder.check_blob(x, "polyval", "x")
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("polyval: argument coeffs must be a list or a tuple, found %s"
                         % type(coeffs).__name__)
    for index, coefficient in enumerate(coeffs):
        if not isinstance(coefficient, LazyBlob) and not is_scalar(coefficient):
            raise TypeError("polyval: coeffs[%d] must be a number or a blob, got %r"
                            % (index, coefficient))
    if not coeffs:
        return shape_ops.zeros_like(x, name=name)
    if len(coeffs) == 1:
        zeros = shape_ops.zeros_like(x, name=_sub_name(name, "zeros"))
        return math_ops.add(zeros, coeffs[0], name=name)
    result = coeffs[0]
    for step, coefficient in enumerate(coeffs[1:], start=1):
        last = step == len(coeffs) - 1
        product = math_ops.multiply(result, x, name=_sub_name(name, "mul%d" % step))
        result = math_ops.add(product, coefficient,
                              name=name if last else _sub_name(name, "add%d" % step))
    return result


def broadcast_to_compatible_with(x, compatible, name=None):
    """x broadcast (numpy rules) to the shape that x and every blob of `compatible` broadcast
    to; the gradient sums back over the broadcast axes."""
    op_builder.check_blob(x, "broadcast_to_compatible_with", "x")
    if not isinstance(compatible, (list, tuple)):
        raise TypeError("broadcast_to_compatible_with: compatible must be a list or a tuple of "
                        "blobs, got %s" % type(compatible).__name__)
    for index, blob in enumerate(compatible):
        op_builder.check_blob(blob, "broadcast_to_compatible_with", "compatible[%d]" % index)
    shapes = [tuple(x.shape)] + [tuple(blob.shape) for blob in compatible]
    try:
        target = tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("broadcast_to_compatible_with: shapes %s do not broadcast together "
                         "(each dim, aligned from the right, must be equal or 1)"
                         % ", ".join(str(s) for s in shapes)) from None
    if any(blob.is_dynamic for blob in [x] + list(compatible)):
        # The shapes of this run decide the target: zeros of each blob's run shape added up.
        like = shape_ops.zeros_like(x, name=_sub_name(name, "like"))
        for index, blob in enumerate(compatible):
            like = like + shape_ops.zeros_like(blob, dtype=x.dtype,
                                               name=_sub_name(name, "like%d" % index))
        return shape_ops.broadcast_like(x, like, name=name)
    if target == tuple(x.shape):
        return array_ops.identity(x, name=name)
    like = array_ops.constant(0, dtype=x.dtype, shape=target, name=_sub_name(name, "like"))
    return shape_ops.broadcast_like(x, like, name=name)


def sigmoid_grad(y, dy, name=None):
    """dy * y * (1 - y): the gradient of sigmoid's input given its output y and the gradient
    dy of that output."""
    op_builder.check_blob(y, "sigmoid_grad", "y")
    op_builder.check_blob(dy, "sigmoid_grad", "dy")
    return op_builder.add_single_output_op("sigmoid_grad", name, "SigmoidGrad",
                                           {"y": y, "dy": dy}, output="dx")


def count_not_finite(x, name=None):
    """The number of NaN and infinite elements of the floating blob x, a (1,) int64 blob."""
    op_builder.check_blob(x, "count_not_finite", "x")
    return op_builder.add_single_output_op("count_not_finite", name, "CountNotFinite", {"x": x})


def multi_count_not_finite(x=None, name=None):
    """The number of NaN and infinite elements over the floating blobs of the list x, a (1,)
    int64 blob."""
    if not isinstance(x, (list, tuple)) or not x:
        raise TypeError("multi_count_not_finite: x must be a non-empty list of blobs, got %r"
                        % (x,))
    counts = [count_not_finite(blob, name=_sub_name(name, str(index)))
              for index, blob in enumerate(x)]
    return counts[0] if len(counts) == 1 else math_ops.add_n(counts, name=name)


def diag(input, diagonal=0, name=None):  # noqa: A002 - OneFlow's name
    """torch.diag: a vector (n,) becomes the (n + |k|, n + |k|) matrix with it on diagonal k
    (0: the main one, > 0 above it, < 0 below) and zeros elsewhere; a matrix (m, n) gives its
    diagonal k as a vector. Differentiable in input."""
    op_builder.check_blob(input, "diag", "input")
    if not shape_util.is_int(diagonal):
        raise TypeError("diag: diagonal must be an int, got %r" % (diagonal,))
    k = int(diagonal)
    index_type = dtypes.int64
    if len(input.shape) == 1:
        n = input.shape[0]
        size = n + abs(k)
        if n == 0:
            return array_ops.constant(0, dtype=input.dtype, shape=(size, size), name=name)
        if input.dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
            # scatter_nd's dtypes: int8 / uint8 through int32, float16 through float32.
            wide = dtypes.float32 if dtypes.is_floating(input.dtype) else dtypes.int32
            matrix = diag(array_ops.cast(input, wide, name=_sub_name(name, "widen")), k,
                          name=_sub_name(name, "wide"))
            return array_ops.cast(matrix, input.dtype, name=name)
        # Element i lands at row i (k >= 0) or i - k, column i + k or i: flat i * (size + 1)
        # plus the offset of the diagonal's first element.
        first = k if k >= 0 else -k * size
        positions = range_ops.range(first, first + n * (size + 1), size + 1, dtype=index_type,
                                    name=_sub_name(name, "positions"))
        positions = array_ops.reshape(positions, (n, 1), name=_sub_name(name, "indices"))
        flat = index_ops.scatter_nd(positions, input, (size * size,),
                                    name=_sub_name(name, "scatter"))
        return array_ops.reshape(flat, (size, size), name=name)
    if len(input.shape) == 2:
        m, n = input.shape
        first = k if k >= 0 else -k * n
        count = min(m, n - k) if k >= 0 else min(m + k, n)
        if count <= 0:
            raise ValueError("diag: diagonal %d is outside the matrix of shape %r"
                             % (k, tuple(input.shape)))
        positions = range_ops.range(first, first + count * (n + 1), n + 1, dtype=index_type,
                                    name=_sub_name(name, "positions"))
        flat = array_ops.reshape(input, (m * n,), name=_sub_name(name, "flat"))
        return index_ops.gather(flat, positions, axis=0, name=name)
    raise ValueError("diag: input must be a vector or a matrix, got shape %r"
                     % (tuple(input.shape),))



def _monotonic(x, strict, op, name):
    """(1,) int8: 1 when consecutive elements of x (row-major) all increase (strict) or never
    decrease, as TensorFlow's tf.math.is_non_decreasing / is_strictly_increasing."""
    op_builder.check_blob(x, op, "x")
    count = int(np.prod(x.shape))
    if count < 2:
        return array_ops.constant(1, dtype=dtypes.int8, shape=(1,), name=name)
    flat = array_ops.reshape(x, (count,), name=_sub_name(name, "flat"))
    earlier = shape_ops.slice_v2(flat, [(0, count - 1, 1)], name=_sub_name(name, "earlier"))
    later = shape_ops.slice_v2(flat, [(1, count, 1)], name=_sub_name(name, "later"))
    compare = math_ops.greater if strict else math_ops.greater_equal
    return reduce_ops.reduce_all(compare(later, earlier, name=_sub_name(name, "compare")),
                                 name=name)


def is_non_decreasing(x, name=None):
    return _monotonic(x, False, "math.is_non_decreasing", name)


def is_strictly_increasing(x, name=None):
    return _monotonic(x, True, "math.is_strictly_increasing", name)


def invert_permutation(x, name=None):
    """y with y[x[i]] = i for a permutation x of 0 .. n - 1 (1-D int32/int64), as
    tf.math.invert_permutation."""
    op = "math.invert_permutation"
    op_builder.check_blob(x, op, "x")
    if len(x.shape) != 1 or x.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError("%s: x must be a 1-D int32 or int64 permutation, got %s of shape %r"
                         % (op, x.dtype.name, tuple(x.shape)))
    count = x.shape[0]
    positions = range_ops.range(count, dtype=x.dtype, name=_sub_name(name, "positions"))
    return index_ops.scatter_nd(array_ops.reshape(x, (count, 1), name=_sub_name(name, "index")),
                                positions, (count,), name=name)
