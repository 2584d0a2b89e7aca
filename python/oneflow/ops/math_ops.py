"""flow.math ops and the blob operators (+ - * /) with numpy broadcasting and scalar operands."""
from oneflow.framework import dtypes
from oneflow.framework import op_builder
from oneflow.framework.blob import LazyBlob, is_scalar


def _unary(op_type, x, name, prefix, output="y", input_name="x"):
    op_builder.check_blob(x, op_type, input_name)
    return op_builder.add_single_output_op(op_type, name, prefix, {input_name: x}, output=output)


_FLOATING = (dtypes.float32, dtypes.float64)


def _scalar_op(op_type, x, operand, name=None):
    return op_builder.add_single_output_op(
        op_type, name, "ScalarOp", {"in": x}, {"operand": float(operand)}
    )


def scalar_constant_like(value, like):
    from oneflow.ops import array_ops

    return array_ops.constant(value, dtype=like.dtype, shape=(1,))


def _binary(op_type, prefix, x, y, name, scalar_fn):
    if isinstance(x, LazyBlob) and isinstance(y, LazyBlob):
        return op_builder.add_single_output_op(op_type, name, prefix, {"x": x, "y": y}, output="z")
    if isinstance(x, LazyBlob) and is_scalar(y):
        return scalar_fn(x, y, name, False)
    if is_scalar(x) and isinstance(y, LazyBlob):
        return scalar_fn(y, x, name, True)
    raise TypeError(
        "%s: operands must be blobs or numbers, got %s and %s"
        % (op_type, type(x).__name__, type(y).__name__)
    )


def add(x, y, name=None):
    return _binary(
        "broadcast_add", "BroadcastAdd", x, y, name,
        lambda blob, scalar, name, _: _scalar_op("scalar_add", blob, scalar, name),
    )


def subtract(x, y, name=None):
    def scalar_fn(blob, scalar, name, reversed_):
        if reversed_:  # scalar - blob
            return _scalar_op("scalar_add", _scalar_op("scalar_mul", blob, -1), scalar, name)
        return _scalar_op("scalar_add", blob, -scalar, name)

    return _binary("broadcast_sub", "BroadcastSub", x, y, name, scalar_fn)


def multiply(x, y, name=None):
    return _binary(
        "broadcast_mul", "BroadcastMul", x, y, name,
        lambda blob, scalar, name, _: _scalar_op("scalar_mul", blob, scalar, name),
    )


def divide(x, y, name=None):
    def scalar_fn(blob, scalar, name, reversed_):
        if reversed_:  # scalar / blob
            return op_builder.add_single_output_op(
                "broadcast_div", name, "BroadcastDiv",
                {"x": scalar_constant_like(scalar, blob), "y": blob}, output="z",
            )
        if blob.dtype not in _FLOATING:
            raise TypeError("divide: dividing a %s blob by a scalar is not supported; cast the "
                            "blob to a float type first (flow.cast)" % blob.dtype.name)
        if scalar == 0:
            raise ZeroDivisionError("flow.math.divide: division of a blob by the scalar 0")
        return _scalar_op("scalar_mul", blob, 1.0 / scalar, name)

    return _binary("broadcast_div", "BroadcastDiv", x, y, name, scalar_fn)


def negative(x, name=None):
    return _scalar_op("scalar_mul", x, -1, name)


def relu(x, name=None):
    return _unary("relu", x, name, "Relu")


def sigmoid(x, name=None):
    return _unary("sigmoid", x, name, "Sigmoid")


def tanh(x, name=None):
    return _unary("tanh", x, name, "TanH")


def square(x, name=None):
    return _unary("square", x, name, "Square")


def _reduce_axes(x, axis, op_name):
    rank = len(x.shape)
    if axis is None:
        return list(range(rank))
    axes = [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        if not isinstance(a, int) or not -max(rank, 1) <= a < max(rank, 1):
            raise ValueError(
                "%s: axis %r is out of range for a blob of shape %r" % (op_name, a, x.shape)
            )
    return sorted(set(a % max(rank, 1) for a in axes))


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    op_builder.check_blob(input_tensor, "reduce_sum", "input_tensor")
    axes = _reduce_axes(input_tensor, axis, "reduce_sum")
    return op_builder.add_single_output_op(
        "reduce_sum", name, "ReduceSum", {"input_tensor": input_tensor},
        {"axis": axes, "keepdims": bool(keepdims)}, output="output_tensor",
    )


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Composite: reduce_sum times 1 / (number of reduced elements)."""
    op_builder.check_blob(input_tensor, "reduce_mean", "input_tensor")
    axes = _reduce_axes(input_tensor, axis, "reduce_mean")
    count = 1
    for a in axes:
        count *= input_tensor.shape[a]
    summed = reduce_sum(input_tensor, axes, keepdims, name=None if name is None else name + "_sum")
    if not dtypes.check(summed.dtype) in (dtypes.float32, dtypes.float64):
        raise TypeError("reduce_mean needs a float32 or float64 blob, got %s" % summed.dtype.name)
    return _scalar_op("scalar_mul", summed, 1.0 / count, name)
