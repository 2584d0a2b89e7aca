"""The flow.math reductions (OneFlow 0.3 / TensorFlow semantics).

Every reduction takes `axis`: None reduces all axes; an int or a list/tuple of ints (negative
ones count from the end) reduces those; an empty list reduces nothing (the input comes back,
as in OneFlow 0.3; reduce_any/reduce_all give `x != 0`, reduce_std/reduce_variance zeros).
`keepdims` keeps reduced axes as size 1.

Kernels: reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_any, reduce_all
(oneflow/ops/reduce_sum.cpp, oneflow/ops/reduce.cpp). The others are composites:
  reduce_mean           reduce_sum / count
  reduce_variance       mean((x - mean(x))^2)  (two passes: no cancellation of E[x^2] - E[x]^2)
  reduce_std            sqrt(reduce_variance)
  reduce_logsumexp      m + log(sum(exp(x - m))), m = max(x): no overflow for large x
  reduce_euclidean_norm sqrt(sum(x^2))
  two_stage_reduce_max/min  reduce_max/min (see their docstrings)
"""
import numbers

from oneflow.framework import dtypes
from oneflow.framework import op_builder
from oneflow.ops import array_ops
from oneflow.ops import math_ops
from oneflow.ops import shape_ops


def _reduce_axes(x, axis, op_name):
    """axis -> sorted unique non-negative axes ([] means: reduce nothing). Raises ValueError /
    TypeError naming the op, the axis and the blob's shape."""
    op_builder.check_blob(x, op_name, "input_tensor")
    rank = len(x.shape)
    if axis is None:
        return list(range(rank))
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        axes = [axis]
    elif isinstance(axis, (list, tuple)):
        axes = list(axis)
    else:
        raise TypeError("%s: axis must be None, an int or a list of ints, got %r"
                        % (op_name, axis))
    normalized = []
    for a in axes:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError("%s: axis must be None, an int or a list of ints, got %r"
                            % (op_name, axis))
        if not -max(rank, 1) <= a < max(rank, 1):
            raise ValueError(
                "%s: axis %r is out of range for a blob of shape %r: axes must be in [%d, %d)"
                % (op_name, a, tuple(x.shape), -max(rank, 1), max(rank, 1)))
        normalized.append(int(a) % max(rank, 1))
    if len(set(normalized)) != len(normalized):
        raise ValueError("%s: axis %r names an axis twice (shape %r)"
                         % (op_name, axis, tuple(x.shape)))
    return sorted(normalized)


def _reduce(op_type, prefix, x, axes, keepdims, name):
    out = op_builder.add_single_output_op(
        op_type, name, prefix, {"input_tensor": x},
        {"axis": axes, "keepdims": bool(keepdims)}, output="output_tensor",
    )
    # OneFlow 0.3: reducing the batch axis removes it; otherwise it moves with the kept axes.
    batch_axis = x.batch_axis
    if batch_axis is not None and batch_axis in axes:
        batch_axis = None
    elif batch_axis is not None and not keepdims:
        batch_axis -= sum(1 for a in axes if a < batch_axis)
    out._batch_axis = batch_axis
    return out


def _require_floating(x, op_name):
    if not dtypes.is_floating(x.dtype):
        raise TypeError("%s: needs a floating blob (float16, float32 or float64), got %s"
                        % (op_name, x.dtype.name))


def _sub_name(name, suffix):
    return None if name is None else name + "_" + suffix


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over `axis`. Float32 accumulates in float64 inside the kernel."""
    axes = _reduce_axes(input_tensor, axis, "reduce_sum")
    if not axes:
        return input_tensor
    return _reduce("reduce_sum", "ReduceSum", input_tensor, axes, keepdims, name)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    axes = _reduce_axes(input_tensor, axis, "reduce_mean")
    _require_floating(input_tensor, "reduce_mean")
    if not axes:
        return input_tensor
    summed = _reduce("reduce_sum", "ReduceSum", input_tensor, axes, keepdims,
                     _sub_name(name, "sum"))
    if input_tensor.is_dynamic:  # the count is known when the job runs
        ones = shape_ops.ones_like(input_tensor, name=_sub_name(name, "ones"))
        count = _reduce("reduce_sum", "ReduceSum", ones, axes, keepdims, _sub_name(name, "count"))
        return math_ops.divide(summed, count, name=name)
    count = 1
    for a in axes:
        count *= input_tensor.shape[a]
    # The mean of no elements is NaN (0 / 0), as in numpy and PyTorch.
    return math_ops._scalar_op("scalar_mul", summed, 1.0 / count if count else float("nan"),
                               name)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum over `axis` (NaN propagates). Gradient: dy shared equally among the elements
    equal to the maximum (OneFlow's rule)."""
    axes = _reduce_axes(input_tensor, axis, "reduce_max")
    if not axes:
        return input_tensor
    return _reduce("reduce_max", "ReduceMax", input_tensor, axes, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum over `axis`; gradient as reduce_max."""
    axes = _reduce_axes(input_tensor, axis, "reduce_min")
    if not axes:
        return input_tensor
    return _reduce("reduce_min", "ReduceMin", input_tensor, axes, keepdims, name)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over `axis`; the gradient is exact where elements are zero."""
    axes = _reduce_axes(input_tensor, axis, "reduce_prod")
    if not axes:
        return input_tensor
    return _reduce("reduce_prod", "ReduceProd", input_tensor, axes, keepdims, name)


def _not_equal_zero(x, name):
    return math_ops.not_equal(x, 0, name=name)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """int8 1 where any element over `axis` is nonzero (not differentiable)."""
    axes = _reduce_axes(input_tensor, axis, "reduce_any")
    if not axes:
        return _not_equal_zero(input_tensor, name)
    return _reduce("reduce_any", "ReduceAny", input_tensor, axes, keepdims, name)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """int8 1 where every element over `axis` is nonzero (not differentiable)."""
    axes = _reduce_axes(input_tensor, axis, "reduce_all")
    if not axes:
        return _not_equal_zero(input_tensor, name)
    return _reduce("reduce_all", "ReduceAll", input_tensor, axes, keepdims, name)


def _zeros_like(x, name):
    return op_builder.add_single_output_op("constant_like", name, "ZerosLike", {"like": x},
                                           {"value": 0.0})


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance (divides by the count) over `axis`."""
    axes = _reduce_axes(input_tensor, axis, "reduce_variance")
    _require_floating(input_tensor, "reduce_variance")
    if not axes:
        return _zeros_like(input_tensor, name)
    mean = reduce_mean(input_tensor, axes, keepdims=True, name=_sub_name(name, "mean"))
    centered = math_ops.subtract(input_tensor, mean, name=_sub_name(name, "centered"))
    squared = math_ops.square(centered, name=_sub_name(name, "square"))
    return reduce_mean(squared, axes, keepdims, name=name)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Population standard deviation over `axis`."""
    axes = _reduce_axes(input_tensor, axis, "reduce_std")
    _require_floating(input_tensor, "reduce_std")
    if not axes:
        return _zeros_like(input_tensor, name)
    variance = reduce_variance(input_tensor, axes, keepdims, name=_sub_name(name, "variance"))
    return math_ops.sqrt(variance, name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over `axis`, computed as m + log(sum(exp(x - m))) with m the maximum,
    or 0 where the maximum is not finite (as TensorFlow: a row holding +inf gives inf, a row of
    -inf gives -inf, not inf - inf). The gradient is softmax(x) along the axes (the terms
    through m cancel)."""
    axes = _reduce_axes(input_tensor, axis, "reduce_logsumexp")
    _require_floating(input_tensor, "reduce_logsumexp")
    if not axes:
        return input_tensor

    def finite_peak(keep, suffix):
        peak = reduce_max(input_tensor, axes, keepdims=keep, name=_sub_name(name, suffix))
        finite = math_ops.less(math_ops.abs(peak), float("inf"))
        return math_ops.where(finite, peak, 0.0)

    peak = finite_peak(True, "max")
    shifted = math_ops.exp(math_ops.subtract(input_tensor, peak, name=_sub_name(name, "shift")),
                           name=_sub_name(name, "exp"))
    total = reduce_sum(shifted, axes, keepdims, name=_sub_name(name, "sum"))
    if not keepdims:  # the maximum again, in the output's shape
        peak = finite_peak(False, "max_out")
    return math_ops.add(math_ops.log(total, name=_sub_name(name, "log")), peak, name=name)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x^2)) over `axis`."""
    axes = _reduce_axes(input_tensor, axis, "reduce_euclidean_norm")
    _require_floating(input_tensor, "reduce_euclidean_norm")
    if not axes:
        return math_ops.abs(input_tensor, name=name)
    squared = math_ops.square(input_tensor, name=_sub_name(name, "square"))
    return math_ops.sqrt(reduce_sum(squared, axes, keepdims, name=_sub_name(name, "sum")),
                         name=name)


def _two_stage_input(x, name):
    """OneFlow 0.3 computes two_stage_reduce_* in two stages (each device reduces its slice,
    then the per-device results are reduced) so that the input may be split on a reduced axis,
    as `x.with_distribute(flow.distribute.split(reduced_axis))` asks. reduce_max cannot read
    such a layout, so a hinted input is read by an identity (which can), whose output reduce_max
    then reads in a layout it declares: the compiler gathers the reduced axis. Same values, and
    the same gradient (shared equally among all ties, over every device)."""
    if x.distribute_hint is None:
        return x
    return array_ops.identity(x, name=_sub_name(name, "device_stage"))


def two_stage_reduce_max(x, axis=None, keepdims=False, name=None):
    """reduce_max whose input may be split on a reduced axis (see _two_stage_input)."""
    return reduce_max(_two_stage_input(x, name), axis, keepdims, name)


def two_stage_reduce_min(x, axis=None, keepdims=False, name=None):
    """reduce_min whose input may be split on a reduced axis (see _two_stage_input)."""
    return reduce_min(_two_stage_input(x, name), axis, keepdims, name)
