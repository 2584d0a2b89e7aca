"""Array ops at the top level of flow: matmul, reshape, identity, cast, constant."""
import numbers

import numpy as np

from oneflow.framework import dtypes, shapes
from oneflow.framework import op_builder


def matmul(a, b, transpose_a=False, transpose_b=False, alpha=1.0, name=None):
    """alpha * op(a) @ op(b), op transposing the last two axes when asked. Both 2-D; both of
    the same rank > 2 with equal leading dims (batch matmul); or a of rank > 2 and b 2-D, a's
    leading dims flattened into rows (broadcast matmul, transpose_a must be False). The C++
    infer function checks ranks and shapes and raises ValueError for anything else."""
    op_builder.check_blob(a, "matmul", "a")
    op_builder.check_blob(b, "matmul", "b")
    return op_builder.add_single_output_op(
        "matmul", name, "Matmul", {"a": a, "b": b},
        {"transpose_a": transpose_a, "transpose_b": transpose_b, "alpha": alpha},
    )


def reshape(x, shape, name=None):
    op_builder.check_blob(x, "reshape", "x")
    shape = shapes.to_shape(shape, "reshape", allow_unknown=True)
    return op_builder.add_single_output_op("reshape", name, "Reshape", {"in": x}, {"shape": shape})


def identity(x, name=None):
    op_builder.check_blob(x, "identity", "x")
    return op_builder.add_single_output_op("identity", name, "Identity", {"in": x})


def copy(x, name=None):
    """A copy of x made where the current flow.scope.placement says (OneFlow 0.3's flow.copy:
    moving a blob to other devices is the boxing between x's placement and the copy's)."""
    op_builder.check_blob(x, "copy", "x")
    return op_builder.add_single_output_op("identity", name, "Copy", {"in": x})


def cast(x, dtype, name=None):
    op_builder.check_blob(x, "cast", "x")
    dtype = dtypes.check(dtype, "cast dtype")
    if dtype == x.dtype:
        return x
    return op_builder.add_single_output_op("cast", name, "Cast", {"in": x}, {"dtype": dtype.value})


def check_value_fits(value, dtype, op):
    """ValueError unless the number `value`, truncated toward zero as OneFlow 0.3 converts it
    (2.5 -> 2, -5.5 -> -5), is representable in the integer dtype (any value fits a floating
    one); returns that integer (the value itself for floating dtypes)."""
    if dtype.numpy_dtype.kind not in "iu":
        return value
    if not shapes.is_int(value) and not np.isfinite(value):
        raise ValueError("%s: value %r is not a finite number, dtype is %s"
                         % (op, value, dtype.name))
    limits = np.iinfo(dtype.numpy_dtype)
    if not limits.min <= int(value) <= limits.max:
        raise ValueError("%s: value %r is out of range [%d, %d] of %s"
                         % (op, value, limits.min, limits.max, dtype.name))
    return int(value)


def constant(value, dtype=None, shape=None, name=None):
    dtype = dtypes.check(dtype if dtype is not None else dtypes.float32, "constant dtype")
    shape = (1,) if shape is None else shapes.to_shape(shape, "flow.constant")
    if not isinstance(value, (numbers.Number, np.number)) or isinstance(value, (bool, complex)):
        raise TypeError("flow.constant: value must be a real scalar number, got %r" % (value,))
    is_floating = dtypes.is_floating(dtype)
    check_value_fits(value, dtype, "flow.constant")
    attrs = {
        "dtype": dtype.value,
        "shape": shape,
        "is_floating_value": is_floating,
        "floating_value": float(value) if is_floating else 0.0,
        "integer_value": 0 if is_floating else int(value),
    }
    return op_builder.add_single_output_op("constant", name, "Constant", {}, attrs)


def transpose(a, perm=None, conjugate=False, batch_axis_non_change=False, name=None):
    """Permutes a's axes: out's axis i is a's axis perm[i] (negative: from the end); perm None
    reverses them. The result's batch_axis follows the permutation, or stays a's with
    batch_axis_non_change."""
    op_builder.check_blob(a, "transpose", "a")
    if conjugate:
        raise NotImplementedError("transpose: conjugate=True needs complex dtypes, which are not "
                                  "supported")
    if perm is None:
        perm = list(reversed(range(len(a.shape))))
    if not isinstance(perm, (list, tuple, np.ndarray)) or not all(shapes.is_int(axis)
                                                                  for axis in perm):
        raise TypeError("transpose: perm must be a sequence of ints, got %r" % (perm,))
    # Negative axes count from the end, as numpy's and PyTorch's; the op checks the rest.
    rank = len(a.shape)
    perm = [int(axis) + rank if -rank <= axis < 0 else int(axis) for axis in perm]
    out = op_builder.add_single_output_op("transpose", name, "Transpose", {"in": a},
                                          {"perm": perm})
    batch_axis = a.batch_axis
    if batch_axis is not None and not batch_axis_non_change and batch_axis in perm:
        batch_axis = perm.index(batch_axis)
    out._batch_axis = batch_axis
    return out


def parallel_cast(input, name=None, distribute=None, gradient_distribute=None):  # noqa: A002
    """The same values, laid out over the devices as `distribute` says (flow.distribute.split /
    broadcast; None keeps the producer's layout); boxing converts the blob if needed. In a train
    job its gradient is laid out as `gradient_distribute` (None: as it comes)."""
    from oneflow import distribute as distribute_util

    op_builder.check_blob(input, "parallel_cast", "input")
    attrs = {}
    for attr, value in (("sbp", distribute), ("grad_sbp", gradient_distribute)):
        if value is None:
            attrs[attr] = ""
            continue
        distribute_util.assert_is_valid_distribute(
            value, "parallel_cast: " + ("distribute" if attr == "sbp" else "gradient_distribute"))
        attrs[attr] = value.sbp or ""
    return op_builder.add_single_output_op("parallel_cast", name, "ParallelCast", {"in": input},
                                           attrs)
