"""flow.layers: layers built from ops; each opens a name space, so its variables are
"<name>-weight" and "<name>-bias"."""
from oneflow.framework import op_builder, shapes
from oneflow.ops import array_ops, initializers, nn_ops, variables


def dense(
    inputs, units, activation=None, use_bias=True, kernel_initializer=None,
    bias_initializer=None, kernel_regularizer=None, bias_regularizer=None, trainable=True,
    name="Dense", model_distribute=None,
):
    """out = activation(inputs @ weight.T + bias), weight of shape (units, in). With
    model_distribute=flow.distribute.split(0) the weight and bias are split along `units` over
    the devices (model parallelism: the output is split along its last axis)."""
    from oneflow import distribute

    op_builder.check_blob(inputs, "dense", "inputs")
    if not shapes.is_int(units) or units <= 0:
        raise ValueError("dense: units must be a positive int, got %r" % (units,))
    units = int(units)
    if activation is not None and not callable(activation):
        raise TypeError("dense: activation must be a callable such as flow.nn.relu, or None, "
                        "got %r" % (activation,))
    in_shape = inputs.shape
    if len(in_shape) < 2:
        raise ValueError("dense: inputs must have at least 2 dims, got shape %r" % (in_shape,))
    if model_distribute is None:
        model_distribute = distribute.broadcast()
    if model_distribute not in (distribute.auto(), distribute.broadcast(), distribute.split(0)):
        raise ValueError("dense: model_distribute must be flow.distribute.auto(), broadcast() or "
                         "split(0) (the units axis), got %r" % (model_distribute,))
    if model_distribute is distribute.split(0) and len(in_shape) != 2:
        raise ValueError("dense: model_distribute=split(0) needs 2-D inputs, got shape %r"
                         % (in_shape,))
    session = op_builder.current_job()
    with session.scope.namespace(name):
        flat = inputs
        if len(in_shape) > 2:
            flat = array_ops.reshape(inputs, (-1, in_shape[-1]))
        weight = variables.get_variable(
            "weight", shape=(units, in_shape[-1]), dtype=inputs.dtype,
            initializer=kernel_initializer or initializers.constant_initializer(0),
            regularizer=kernel_regularizer, trainable=trainable, distribute=model_distribute,
        ).with_distribute(model_distribute)
        out = array_ops.matmul(flat, weight, transpose_b=True, name="matmul")
        if use_bias:
            bias = variables.get_variable(
                "bias", shape=(units,), dtype=inputs.dtype,
                initializer=bias_initializer or initializers.constant_initializer(0),
                regularizer=bias_regularizer, trainable=trainable, distribute=model_distribute,
            ).with_distribute(model_distribute)
            out = nn_ops.bias_add(out, bias, name="bias_add")
        if activation is not None:
            out = activation(out, name="activation")
        if len(in_shape) > 2:
            out = array_ops.reshape(out, tuple(in_shape[:-1]) + (units,))
    return out


def affine_channel(inputs, axis, use_bias=True, scale_initializer=None, bias_initializer=None,
                   activation=None, trainable=True, name=None, model_distribute=None):
    """out = activation(inputs * scale + bias) with one scale and one bias per channel along
    `axis`: variables "<name>-scale" (inputs' rank, 1 except along axis) and "<name>-bias"
    (channels,), both 0 unless initializers are given, as OneFlow 0.3's."""
    from oneflow import distribute
    from oneflow.framework import shapes
    from oneflow.ops import math_ops

    layer = "layers.affine_channel"
    op_builder.check_blob(inputs, layer, "inputs")
    rank = len(inputs.shape)
    if not shapes.is_int(axis) or not -rank <= axis < rank:
        raise ValueError("%s: axis must be an int in [%d, %d) for inputs of shape %r, got %r"
                         % (layer, -rank, rank, tuple(inputs.shape), axis))
    axis = axis % rank
    if activation is not None and not callable(activation):
        raise TypeError("%s: activation must be a callable such as flow.nn.relu, or None, got %r"
                        % (layer, activation))
    model_distribute = model_distribute or distribute.broadcast()
    prefix = op_builder.layer_name(name, "AffineChannel")
    channel_shape = tuple(inputs.shape[axis] if a == axis else 1 for a in range(rank))
    scale = variables.get_variable(
        prefix + "-scale", shape=channel_shape, dtype=inputs.dtype,
        initializer=scale_initializer or initializers.constant_initializer(0),
        trainable=trainable, distribute=model_distribute).with_distribute(model_distribute)
    out = math_ops.multiply(inputs, scale, name=prefix + "_mul")
    if use_bias:
        bias = variables.get_variable(
            prefix + "-bias", shape=(inputs.shape[axis],), dtype=inputs.dtype,
            initializer=bias_initializer or initializers.constant_initializer(0),
            trainable=trainable, distribute=model_distribute).with_distribute(model_distribute)
        out = math_ops.add(out, array_ops.reshape(bias, channel_shape, name=prefix + "_bias"),
                           name=prefix + "_bias_add")
    return activation(out) if activation is not None else out


def categorical_ordinal_encode(table, size, input_tensor, hash_precomputed=True, name=None):
    """Ordinals 1, 2, 3, ... for the int32/int64 category hashes of input_tensor, in the order
    first seen (0 stays 0), remembered in the variables `table` (2 * capacity entries) and
    `size` of input_tensor's dtype (oneflow/ops/categorical_ordinal_encode.cpp)."""
    op = "categorical_ordinal_encode"
    for argument, blob in (("input_tensor", input_tensor), ("table", table), ("size", size)):
        op_builder.check_blob(blob, op, argument)
    if hash_precomputed is not True:
        raise NotImplementedError("%s: only hash_precomputed=True is supported (the input holds "
                                  "hashes)" % op)
    return op_builder.add_single_output_op(
        op, name, "CategoricalOrdinalEncode",
        {"in": input_tensor, "table": table, "size": size}, {"hash_precomputed": True})


def categorical_ordinal_encoder(input_tensor, capacity, hash_precomputed=True,
                                name="CategoricalOrdinalEncoder"):
    """categorical_ordinal_encode with its own table for up to `capacity` categories: the
    variables "<name>-Table" and "<name>-Size"; the op is "<name>-Encode"."""
    from oneflow.framework import shapes

    layer = "layers.categorical_ordinal_encoder"
    op_builder.check_blob(input_tensor, layer, "input_tensor")
    if not shapes.is_int(capacity) or capacity < 1:
        raise ValueError("%s: capacity must be a positive int, got %r" % (layer, capacity))
    session = op_builder.current_job()
    with session.scope.namespace(name):
        state = [variables.get_variable(
            variable, shape=shape, dtype=input_tensor.dtype,
            initializer=initializers.constant_initializer(0), trainable=False, reuse=False)
            for variable, shape in (("Table", (2 * int(capacity),)), ("Size", (1,)))]
        return categorical_ordinal_encode(state[0], state[1], input_tensor, hash_precomputed,
                                          name="Encode")
