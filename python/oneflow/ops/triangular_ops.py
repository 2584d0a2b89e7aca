"""flow.math.tril and flow.math.fused_scale_tril (OneFlow 0.3's names, signatures and
defaults), ops tril / fused_scale_tril (oneflow/ops/tril.cpp): the lower triangle of the
matrices in the last two axes, the rest set to fill_value."""
import numbers

from oneflow.framework import op_builder, shapes


def _int(value, op_type, what):
    if not shapes.is_int(value):
        raise TypeError("%s: %s must be an int, got %r" % (op_type, what, value))
    return int(value)


def _real(value, op_type, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s: %s must be a real number, got %r" % (op_type, what, value))
    return float(value)


def _tril(op_type, x, diagonal, fill_value, scale, name, prefix):
    op_builder.check_blob(x, op_type, "x")
    if len(x.shape) < 2:
        raise ValueError("%s: x must have rank >= 2 (matrices in its last two axes), got shape %r"
                         % (op_type, tuple(x.shape)))
    attrs = {"diagonal": _int(diagonal, op_type, "diagonal"),
             "fill_value": _real(fill_value, op_type, "fill_value")}
    if scale is not None:
        attrs["scale"] = _real(scale, op_type, "scale")
    return op_builder.add_single_output_op(op_type, name, prefix, {"in": x}, attrs)


def tril(x, diagonal=0, fill_value=0, name=None):
    """x with the elements above diagonal `diagonal` of each matrix (last two axes) set to
    fill_value: kept where column - row <= diagonal (> 0 keeps diagonals above the main one,
    < 0 drops the main one and those below it). For integer x, fill_value must be an integer."""
    return _tril("tril", x, diagonal, fill_value, None, name, "Tril")


def fused_scale_tril(x, diagonal=0, fill_value=0, scale=1, name=None):
    """tril(x * scale, diagonal, fill_value) in one pass (fill_value is not scaled)."""
    return _tril("fused_scale_tril", x, diagonal, fill_value, scale, name, "FusedScaleTril")
