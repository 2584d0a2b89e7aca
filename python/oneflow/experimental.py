"""oneflow.experimental"""
from oneflow.ops.shape_ops import logical_slice  # noqa: F401
from oneflow.ops.variables import logical_slice_assign  # noqa: F401
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


__getattr__ = _missing_name_hook("oneflow.experimental")
