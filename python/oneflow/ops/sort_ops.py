"""Index-valued ops along one axis (OneFlow 0.3 names and signatures): flow.math.argmax,
flow.math.argmin, flow.math.top_k, flow.sort, flow.argsort, and flow.math.in_top_k. Indices are
int32, as in OneFlow; ties go to the lowest index; NaN is larger than any number. None is
differentiable. Ops: oneflow/ops/arg_sort.cpp, in_top_k.cpp."""
import numbers

from oneflow.framework import op_builder

_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _axis(x, axis, op_name):
    op_builder.check_blob(x, op_name, "input")
    rank = len(x.shape)
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError("%s: axis must be an int, got %r" % (op_name, axis))
    if not -rank <= axis < rank:
        raise ValueError("%s: axis %d is out of range for a blob of shape %r: it must be in "
                         "[%d, %d)" % (op_name, axis, tuple(x.shape), -rank, rank))
    return int(axis) % rank


def argmax(input, axis=-1, name=None):  # noqa: A002 - OneFlow's argument name
    """Index (int32) of the largest value along `axis` (the first one among ties); the output
    drops `axis`."""
    axis = _axis(input, axis, "argmax")
    return op_builder.add_single_output_op("argmax", name, "ArgMax", {"in": input},
                                           {"axis": axis})


def argmin(input, axis=-1, name=None):  # noqa: A002
    """Index (int32) of the smallest value along `axis` (not in OneFlow 0.3; mirrors argmax)."""
    axis = _axis(input, axis, "argmin")
    return op_builder.add_single_output_op("argmin", name, "ArgMin", {"in": input},
                                           {"axis": axis})


def top_k(input, k=1, sorted=True, name=None, axis=-1):  # noqa: A002
    """Indices (int32) of the k largest values along `axis` (default the last), largest first;
    OneFlow returns indices only; k beyond the axis size takes the whole axis, as OneFlow's.
    Ties are taken in index order. `sorted=False` is accepted and gives the same (sorted) order.

    OneFlow 0.3 shipped two signatures: top_k(input, k=1, sorted=True, name=None) and, later,
    top_k(input, axis=-1, k=1, sorted=True, name=None). Both are accepted: a call whose third
    positional argument is an int rather than a bool, top_k(x, axis, k[, sorted[, name]]), is
    read as the later one (a bool there is `sorted` of the first)."""
    if isinstance(sorted, numbers.Integral) and not isinstance(sorted, bool):
        # top_k(input, axis, k, sorted, name) landed in the slots (k, sorted, name, axis).
        if not (axis is None or isinstance(axis, str) or axis == -1):
            raise TypeError("top_k: got top_k(input, axis=%r, k=%r, ...) positionally and "
                            "axis=%r again" % (k, sorted, axis))
        later_name = axis if isinstance(axis, str) else None
        axis, k = k, sorted
        sorted = True if name is None else name  # noqa: A001 - OneFlow's argument name
        name = later_name
    axis = _axis(input, axis, "top_k")
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError("top_k: k must be an int, got %r" % (k,))
    if k < 1:
        raise ValueError("top_k: k = %d must be at least 1" % k)
    if input.shape[axis] == 0:
        raise ValueError("top_k: axis %d of %s is empty, so it has no top %d"
                         % (axis, tuple(input.shape), k))
    k = min(k, input.shape[axis])  # as OneFlow: a k beyond the axis takes all of it
    return op_builder.add_single_output_op("top_k", name, "TopK", {"in": input},
                                           {"axis": axis, "k": int(k), "sorted": bool(sorted)})


def _direction(direction, op_name):
    if direction not in _DIRECTIONS:
        raise ValueError('%s: direction must be "ASCENDING" or "DESCENDING", got %r'
                         % (op_name, direction))
    return direction


def sort(input, axis=-1, direction="ASCENDING", name=None):  # noqa: A002
    """The values sorted along `axis` (stable; NaN last when ascending, first when
    descending)."""
    axis = _axis(input, axis, "sort")
    return op_builder.add_single_output_op(
        "sort", name, "Sort", {"in": input},
        {"axis": axis, "direction": _direction(direction, "sort")})


def argsort(input, axis=-1, direction="ASCENDING", name=None):  # noqa: A002
    """The int32 indices that sort `input` along `axis` (stable: equal values keep index
    order)."""
    axis = _axis(input, axis, "argsort")
    return op_builder.add_single_output_op(
        "argsort", name, "ArgSort", {"in": input},
        {"axis": axis, "direction": _direction(direction, "argsort")})


def in_top_k(targets, predictions, k, name=None):
    """int8 (N,): 1 where class targets[i] is among the k highest of predictions[i, :]. Ties
    count in the target's favour (fewer than k classes score strictly higher); a target outside
    [0, classes) or a row with a non-finite prediction gives 0. targets (N,) int32 / int64,
    predictions (N, classes) float32 / float64 (op in_top_k, oneflow/ops/in_top_k.cpp)."""
    op_builder.check_blob(targets, "in_top_k", "targets")
    op_builder.check_blob(predictions, "in_top_k", "predictions")
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError("in_top_k: k must be an int, got %r" % (k,))
    return op_builder.add_single_output_op(
        "in_top_k", name, "InTopK", {"targets": targets, "predictions": predictions},
        {"k": int(k)})
