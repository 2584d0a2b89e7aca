"""oneflow.quantization: OneFlow 0.3's quantization-aware training ops. min_max_observer and
moving_average_min_maxObserver choose the scale and zero point of a blob; fake_quantization
rounds a blob to the values its quantized form can hold (gradient straight through). Formulas:
oneflow/ops/quantization.cpp."""
from oneflow.framework import dtypes, op_builder
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def _checked(op, quantization_bit, quantization_scheme, quantization_formula):
    if isinstance(quantization_bit, bool) or not isinstance(quantization_bit, int):
        raise TypeError("%s: quantization_bit must be an int, got %r" % (op, quantization_bit))
    for what, value in (("quantization_scheme", quantization_scheme),
                        ("quantization_formula", quantization_formula)):
        if not isinstance(value, str):
            raise TypeError("%s: %s must be a str, got %r" % (op, what, value))
    return {"quantization_bit": quantization_bit, "quantization_scheme": quantization_scheme,
            "quantization_formula": quantization_formula}


def min_max_observer(input, quantization_bit=8, quantization_scheme="symmetric",
                     quantization_formula="google", per_layer_quantization=True, name=None):
    """(scale, zero_point) of `input` from its minimum and maximum: shape (1,), or
    (input.shape[0],) with per_layer_quantization=False (per channel; the cambricon formula is
    per layer whatever it says, as in OneFlow)."""
    op = "min_max_observer"
    op_builder.check_blob(input, op, "input")
    attrs = _checked(op, quantization_bit, quantization_scheme, quantization_formula)
    attrs["per_layer_quantization"] = bool(per_layer_quantization)
    outputs = op_builder.add_op(op, op_builder.op_name(name, "MinMaxObserver"), {"in": input},
                                attrs)
    return outputs["scale"][0], outputs["zero_point"][0]


def moving_average_min_maxObserver(input, quantization_bit=8, quantization_scheme="symmetric",
                                   quantization_formula="google", momentum=0.95, name=None):
    """(scale, zero_point) of `input` from moving averages of its maximum (and minimum, for the
    affine scheme), kept in the variables <name>/moving_max and <name>/moving_min: a train job
    updates them (max = max * momentum + batch max * (1 - momentum); the first batch sets
    them), other jobs only read them."""
    from oneflow.ops import initializers, variables

    op = "moving_average_min_max_observer"
    op_builder.check_blob(input, op, "input")
    attrs = _checked(op, quantization_bit, quantization_scheme, quantization_formula)
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError("%s: momentum must be a number, got %r" % (op, momentum))
    session = op_builder.current_job()
    scope = session.scope
    name = op_builder.layer_name(name, "MovingAverageMinMaxObserver")
    with scope.namespace(name):
        state = {}
        for variable, dtype in (("moving_max", input.dtype), ("moving_min", input.dtype),
                                ("current_train_step", dtypes.int64)):
            state[variable] = variables.get_variable(
                variable, shape=(1,), dtype=dtype, initializer=initializers.zeros_initializer(),
                trainable=False)
    attrs.update(training=bool(session.tracing_job.is_train), stop_update_after_iters=1,
                 momentum=float(momentum))
    outputs = op_builder.add_op(op, scope.full_name(name), dict(state, **{"in": input}), attrs)
    return outputs["scale"][0], outputs["zero_point"][0]


moving_average_min_max_observer = moving_average_min_maxObserver


def fake_quantization(input, scale, zero_point, quantization_bit=8,
                      quantization_scheme="symmetric", quantization_formula="google", name=None):
    """`input` quantized with (scale, zero_point) and dequantized: (clamp(round(input / scale +
    zero_point), integer range) - zero_point) * scale, per channel (axis 0) when scale has one
    entry per channel; cambricon's scale is a power-of-two shift. quantization_bit may be up to
    32 (the observers' up to 8). Its gradient is the output's (straight-through estimator)."""
    op = "fake_quantization"
    for argument, blob in (("input", input), ("scale", scale), ("zero_point", zero_point)):
        op_builder.check_blob(blob, op, argument)
    attrs = _checked(op, quantization_bit, quantization_scheme, quantization_formula)
    return op_builder.add_single_output_op(
        op, name, "FakeQuantization", {"in": input, "scale": scale, "zero_point": zero_point},
        attrs)


__getattr__ = _missing_name_hook("oneflow.quantization")
