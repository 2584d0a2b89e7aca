"""flow.math ops: the unary math family, binary ops with numpy broadcasting and python scalars
on either side, comparisons, logical ops, where, and the blob operators built on them."""
import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import op_builder
from oneflow.framework.blob import LazyBlob, is_scalar


def _unary(op_type, x, name, prefix, output="y", input_name="x"):
    op_builder.check_blob(x, op_type, input_name)
    return op_builder.add_single_output_op(op_type, name, prefix, {input_name: x}, output=output)


def _scalar_op(op_type, x, operand, name=None):
    if x.dtype.numpy_dtype.kind in "iu":
        limits = np.iinfo(x.dtype.numpy_dtype)
        if not limits.min <= operand <= limits.max:
            raise ValueError("%s: the scalar %r does not fit %s's range [%d, %d] of %s"
                             % (op_type, operand, x.dtype.name, limits.min, limits.max, x.lbn))
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
        if not dtypes.is_floating(blob.dtype):
            raise TypeError("divide: dividing a %s blob by a scalar is not supported; cast the "
                            "blob to a float type first (flow.cast)" % blob.dtype.name)
        if scalar == 0:
            raise ZeroDivisionError("flow.math.divide: division of a blob by the scalar 0")
        return _scalar_op("scalar_mul", blob, 1.0 / scalar, name)

    return _binary("broadcast_div", "BroadcastDiv", x, y, name, scalar_fn)


def _blob_or_constant(value, like, op_type):
    """`value` as a blob: a blob itself, or a python scalar as a (1,) constant of like's dtype."""
    if isinstance(value, LazyBlob):
        return value
    if is_scalar(value):
        return scalar_constant_like(value, like)
    raise TypeError("%s: operands must be blobs or numbers, got %s" % (op_type, type(value).__name__))


def _broadcast_binary(op_type, prefix, x, y, name):
    """A broadcast binary op of two blobs, or of a blob and a python scalar on either side."""
    if not isinstance(x, LazyBlob) and not isinstance(y, LazyBlob):
        raise TypeError("%s: at least one operand must be a blob, got %s and %s"
                        % (op_type, type(x).__name__, type(y).__name__))
    like = x if isinstance(x, LazyBlob) else y
    x = _blob_or_constant(x, like, op_type)
    y = _blob_or_constant(y, like, op_type)
    return op_builder.add_single_output_op(op_type, name, prefix, {"x": x, "y": y}, output="z")


def pow(x, y, name=None):  # noqa: A001 - OneFlow's public name
    """x ** y elementwise with broadcasting; a scalar exponent uses scalar_pow."""
    if isinstance(x, LazyBlob) and is_scalar(y):
        return op_builder.add_single_output_op(
            "scalar_pow", name, "ScalarPow", {"in": x}, {"exponent": float(y)})
    return _broadcast_binary("broadcast_pow", "BroadcastPow", x, y, name)


def maximum(x, y, name=None):
    return _broadcast_binary("broadcast_maximum", "BroadcastMaximum", x, y, name)


def minimum(x, y, name=None):
    return _broadcast_binary("broadcast_minimum", "BroadcastMinimum", x, y, name)


def _check_int_divisor(op_type, x, y):
    """An int blob divided by the scalar 0 raises, as python does. A blob of divisors is
    computed as numpy does it: an int divided by 0 gives 0 (see broadcast_binary_formulas.h)."""
    if isinstance(x, LazyBlob) and is_scalar(y) and y == 0 \
            and x.dtype.numpy_dtype.kind in "iu":
        raise ZeroDivisionError("%s: integer division of %s (%s) by the scalar 0"
                                % (op_type, x.lbn, x.dtype.name))


def mod(x, y, name=None):
    """Floor modulo (python's %): the result takes y's sign."""
    _check_int_divisor("flow.math.mod", x, y)
    return _broadcast_binary("broadcast_floor_mod", "BroadcastFloorMod", x, y, name)


def floordiv(x, y, name=None):
    """Floor division (python's //)."""
    _check_int_divisor("flow.math.floordiv", x, y)
    return _broadcast_binary("broadcast_floordiv", "BroadcastFloorDiv", x, y, name)


def equal(x, y, name=None):
    return _broadcast_binary("broadcast_equal", "BroadcastEqual", x, y, name)


def not_equal(x, y, name=None):
    return _broadcast_binary("broadcast_not_equal", "BroadcastNotEqual", x, y, name)


def greater(x, y, name=None):
    return _broadcast_binary("broadcast_greater", "BroadcastGreater", x, y, name)


def greater_equal(x, y, name=None):
    return _broadcast_binary("broadcast_greater_equal", "BroadcastGreaterEqual", x, y, name)


def less(x, y, name=None):
    return _broadcast_binary("broadcast_less", "BroadcastLess", x, y, name)


def less_equal(x, y, name=None):
    return _broadcast_binary("broadcast_less_equal", "BroadcastLessEqual", x, y, name)


def logical_and(x, y, name=None):
    return _broadcast_binary("broadcast_logical_and", "BroadcastLogicalAnd", x, y, name)


def logical_or(x, y, name=None):
    return _broadcast_binary("broadcast_logical_or", "BroadcastLogicalOr", x, y, name)


def logical_not(x, name=None):
    return _unary("logical_not", x, name, "LogicalNot")


def where(condition, x=None, y=None, name=None):
    """condition ? x : y elementwise; the three broadcast together. condition is an integer blob
    (nonzero is true); x and y are blobs or python scalars of one dtype. Without x and y:
    flow.argwhere(condition)."""
    op_builder.check_blob(condition, "where", "condition")
    if x is None and y is None:  # OneFlow 0.3: the coordinates of the true elements
        from oneflow.ops import index_ops

        return index_ops.argwhere(condition, name=name)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither (for the coordinates of the "
                         "true elements of condition)")
    like = x if isinstance(x, LazyBlob) else y
    if not isinstance(like, LazyBlob):
        raise TypeError("where: x or y must be a blob, got %s and %s"
                        % (type(x).__name__, type(y).__name__))
    return op_builder.add_single_output_op(
        "where", name, "Where",
        {"condition": condition, "x": _blob_or_constant(x, like, "where"),
         "y": _blob_or_constant(y, like, "where")})


def add_n(inputs, name=None):
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n: needs at least one input")
    for index, blob in enumerate(inputs):
        op_builder.check_blob(blob, "add_n", "inputs[%d]" % index)
    return op_builder.add_single_output_op("add_n", name, "AddN", {"in": inputs})


def gelu(x, name=None):
    return _unary("gelu", x, name, "Gelu")


# The unary math family: public name -> (op type, name prefix). Each is `f(x, name=None)`.
UNARY_MATH_OPS = {
    "abs": ("abs", "Abs"), "acos": ("acos", "Acos"), "acosh": ("acosh", "Acosh"),
    "asin": ("asin", "Asin"), "asinh": ("asinh", "Asinh"), "atan": ("atan", "Atan"),
    "atanh": ("atanh", "Atanh"), "ceil": ("ceil", "Ceil"), "cos": ("cos", "Cos"),
    "cosh": ("cosh", "Cosh"), "erf": ("erf", "Erf"), "erfc": ("erfc", "Erfc"),
    "exp": ("exp", "Exp"), "expm1": ("expm1", "Expm1"), "floor": ("floor", "Floor"),
    "lgamma": ("lgamma", "Lgamma"), "log": ("log", "Log"), "log1p": ("log1p", "Log1p"),
    "log_sigmoid": ("log_sigmoid", "LogSigmoid"), "negative": ("negative", "Negative"),
    "reciprocal": ("reciprocal", "Reciprocal"),
    "reciprocal_no_nan": ("reciprocal_no_nan", "ReciprocalNoNan"), "rint": ("rint", "Rint"),
    "round": ("round", "Round"), "rsqrt": ("rsqrt", "Rsqrt"),
    "sigmoid_v2": ("sigmoid_v2", "SigmoidV2"), "sign": ("sign", "Sign"), "sin": ("sin", "Sin"),
    "sinh": ("sinh", "Sinh"), "softplus": ("softplus", "Softplus"), "sqrt": ("sqrt", "Sqrt"),
    "tan": ("tan", "Tan"),
}


def _make_unary(public_name, op_type, prefix):
    def op(x, name=None):
        return _unary(op_type, x, name, prefix)

    op.__name__ = op.__qualname__ = public_name
    op.__doc__ = "flow.math.%s(x, name=None): the elementwise %s of x (op '%s')." % (
        public_name, public_name, op_type)
    return op


for _public_name, (_op_type, _prefix) in UNARY_MATH_OPS.items():
    globals()[_public_name] = _make_unary(_public_name, _op_type, _prefix)
del _public_name, _op_type, _prefix


def relu(x, name=None):
    return _unary("relu", x, name, "Relu")


def sigmoid(x, name=None):
    return _unary("sigmoid", x, name, "Sigmoid")


def tanh(x, name=None):
    return _unary("tanh", x, name, "TanH")


def square(x, name=None):
    return _unary("square", x, name, "Square")


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """See oneflow/ops/reduce_ops.py (axis None: all axes; axis []: no reduction)."""
    from oneflow.ops import reduce_ops

    return reduce_ops.reduce_sum(input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """See oneflow/ops/reduce_ops.py: reduce_sum times 1 / (number of reduced elements)."""
    from oneflow.ops import reduce_ops

    return reduce_ops.reduce_mean(input_tensor, axis, keepdims, name)
