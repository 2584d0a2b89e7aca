"""flow.layers.prelu (OneFlow 0.3's name, signature and defaults): a learnable alpha variable and
op prelu (oneflow/ops/prelu.cpp), y = x > 0 ? x : alpha * x."""
from oneflow.framework import op_builder, shapes


def prelu_op(x, alpha, name=None):
    """The prelu op on given blobs: alpha broadcasts to x (numpy rules, x's shape unchanged)."""
    op_builder.check_blob(x, "prelu", "x")
    op_builder.check_blob(alpha, "prelu", "alpha")
    return op_builder.add_single_output_op("prelu", name, "PRelu", {"x": x, "alpha": alpha},
                                           output="y")


def prelu(inputs, alpha_initializer=None, alpha_regularizer=None, shared_axes=None,
          trainable=True, name="PRelu", model_distribute=None):
    """PReLU with a learnable alpha of inputs' shape without the batch axis, 1 on `shared_axes`
    (axes of inputs, >= 1; e.g. [2, 3] for one alpha per channel of NCHW). The variable is
    "<name>-alpha" (dtype of inputs, initialised to 0 unless alpha_initializer is given,
    created anew: reuse=False as in OneFlow 0.3); the op is `name`. model_distribute: how alpha
    is laid out over the devices (flow.distribute.broadcast() by default, or split(axis))."""
    from oneflow import distribute
    from oneflow.ops import initializers, variables

    layer = "layers.prelu"
    op_builder.check_blob(inputs, layer, "inputs")
    rank = len(inputs.shape)
    if rank < 2:
        raise ValueError("%s: inputs must have at least 2 dims (a batch axis and more), got "
                         "shape %r" % (layer, tuple(inputs.shape)))
    alpha_shape = list(inputs.shape[1:])
    if shared_axes is not None:
        if shapes.is_int(shared_axes) or not isinstance(shared_axes, (list, tuple)):
            raise TypeError("%s: shared_axes must be a list of ints, got %r" % (layer, shared_axes))
        for axis in shared_axes:
            if not shapes.is_int(axis) or not 1 <= axis < rank:
                raise ValueError("%s: each shared axis must be an int in [1, %d) (not the batch "
                                 "axis 0), got %r in %r" % (layer, rank, axis, shared_axes))
            alpha_shape[axis - 1] = 1
    if model_distribute is None:
        model_distribute = distribute.broadcast()
    distribute.assert_is_valid_distribute(model_distribute, layer + ": model_distribute")
    if model_distribute.kind == "split" and not 0 <= model_distribute.axis < len(alpha_shape):
        raise ValueError("%s: model_distribute splits axis %d, but alpha %r has %d axes"
                         % (layer, model_distribute.axis, tuple(alpha_shape), len(alpha_shape)))
    session = op_builder.current_job()
    with session.scope.namespace(name):
        alpha = variables.get_variable(
            "alpha", shape=tuple(alpha_shape), dtype=inputs.dtype,
            initializer=alpha_initializer or initializers.constant_initializer(0),
            regularizer=alpha_regularizer, trainable=trainable, distribute=model_distribute,
            reuse=False,
        ).with_distribute(model_distribute)
    return prelu_op(inputs, alpha, name=name)
