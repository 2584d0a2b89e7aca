"""Array ops at the top level of flow: matmul, reshape, identity, cast, constant."""
import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import op_builder


def matmul(a, b, transpose_a=False, transpose_b=False, alpha=1.0, name=None):
    op_builder.check_blob(a, "matmul", "a")
    op_builder.check_blob(b, "matmul", "b")
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise NotImplementedError(
            "matmul: only 2-D operands are supported yet, got a %r and b %r" % (a.shape, b.shape)
        )
    return op_builder.add_single_output_op(
        "matmul", name, "Matmul", {"a": a, "b": b},
        {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b), "alpha": float(alpha)},
    )


def reshape(x, shape, name=None):
    op_builder.check_blob(x, "reshape", "x")
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError("reshape: shape must be a sequence of ints, got %r" % (shape,))
    return op_builder.add_single_output_op("reshape", name, "Reshape", {"in": x}, {"shape": shape})


def identity(x, name=None):
    op_builder.check_blob(x, "identity", "x")
    return op_builder.add_single_output_op("identity", name, "Identity", {"in": x})


def cast(x, dtype, name=None):
    op_builder.check_blob(x, "cast", "x")
    dtype = dtypes.check(dtype, "cast dtype")
    if dtype == x.dtype:
        return x
    return op_builder.add_single_output_op("cast", name, "Cast", {"in": x}, {"dtype": dtype.value})


def constant(value, dtype=None, shape=None, name=None):
    dtype = dtypes.check(dtype if dtype is not None else dtypes.float32, "constant dtype")
    if shape is None:
        shape = (1,)
    shape = tuple(int(d) for d in shape)
    if not np.isscalar(value):
        raise TypeError("flow.constant: value must be a scalar, got %r" % (value,))
    is_floating = dtype in (dtypes.float32, dtypes.float64)
    attrs = {
        "dtype": dtype.value,
        "shape": shape,
        "is_floating_value": is_floating,
        "floating_value": float(value) if is_floating else 0.0,
        "integer_value": 0 if is_floating else int(value),
    }
    return op_builder.add_single_output_op("constant", name, "Constant", {}, attrs)


def transpose(a, perm=None, name=None):
    raise NotImplementedError("flow.transpose arrives in a later version")
