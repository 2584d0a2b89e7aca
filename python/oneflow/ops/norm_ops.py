"""Normalization and dropout: flow.nn.batch_normalization, flow.layers.batch_normalization (and
its _relu / _add_relu variants), flow.nn.layer_norm / flow.layers.layer_norm,
flow.nn.InstanceNorm1d/2d/3d, flow.nn.dropout. Ops: oneflow/ops/normalization.cpp,
layer_norm.cpp, dropout.cpp."""
import numbers
import random

from oneflow.framework import dtypes, op_builder, shapes
from oneflow.ops import array_ops, initializers, math_ops, variables


def _is_train_job():
    return op_builder.current_job().tracing_job.is_train


def _channel_axis(x, axis, op):
    rank = len(x.shape)
    if not shapes.is_int(axis):
        raise TypeError("%s: axis must be an int, got %r" % (op, axis))
    if not -rank <= axis < rank:
        raise ValueError("%s: axis %d is out of range for x of shape %r (rank %d)"
                         % (op, axis, tuple(x.shape), rank))
    return axis % rank


def _epsilon(value, op, what="epsilon"):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or value < 0:
        raise ValueError("%s: %s must be a real number >= 0, got %r" % (op, what, value))
    return float(value)


def batch_normalization(x, mean, variance, offset=None, scale=None, variance_epsilon=1e-5,
                        axis=1, name=None):
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset along `axis`, with 1-D
    mean, variance, offset and scale of x.shape[axis] (OneFlow 0.3: axis defaults to 1, NCHW)."""
    op = "batch_normalization"
    op_builder.check_blob(x, op, "x")
    axis = _channel_axis(x, axis, op)
    inputs = {"x": x, "mean": op_builder.check_blob(mean, op, "mean"),
              "variance": op_builder.check_blob(variance, op, "variance")}
    if scale is not None:
        inputs["gamma"] = op_builder.check_blob(scale, op, "scale")
    if offset is not None:
        inputs["beta"] = op_builder.check_blob(offset, op, "offset")
    return op_builder.add_op(
        "normalization", op_builder.op_name(name, "BatchNorm"), inputs,
        {"axis": axis, "epsilon": _epsilon(variance_epsilon, op, "variance_epsilon")},
    )["y"][0]


def _batch_norm_variables(name, center, scale, channels, dtype, trainable, beta_initializer,
                          beta_regularizer, gamma_initializer, gamma_regularizer,
                          moving_mean_initializer, moving_variance_initializer):
    from oneflow import distribute

    session = op_builder.current_job()
    with session.scope.namespace(name):
        def variable(var_name, initializer, regularizer=None, var_trainable=False):
            return variables.get_variable(
                var_name, shape=(channels,), dtype=dtype, initializer=initializer,
                regularizer=regularizer, trainable=var_trainable,
                distribute=distribute.broadcast(),
            )

        beta = gamma = None
        if center:
            beta = variable("beta", beta_initializer or initializers.zeros_initializer(),
                            beta_regularizer, trainable)
        if scale:
            gamma = variable("gamma", gamma_initializer or initializers.ones_initializer(),
                             gamma_regularizer, trainable)
        moving_mean = variable("moving_mean",
                               moving_mean_initializer or initializers.zeros_initializer())
        moving_variance = variable(
            "moving_variance", moving_variance_initializer or initializers.ones_initializer())
    return beta, gamma, moving_mean, moving_variance


def _layer_batch_norm(op, inputs, axis, momentum, epsilon, center, scale, beta_initializer,
                      gamma_initializer, beta_regularizer, gamma_regularizer,
                      moving_mean_initializer, moving_variance_initializer, trainable, training,
                      name):
    op_builder.check_blob(inputs, op, "inputs")
    axis = _channel_axis(inputs, axis, op)
    if not isinstance(momentum, numbers.Real) or not 0.0 <= momentum <= 1.0:
        raise ValueError("%s: momentum must be in [0, 1], got %r" % (op, momentum))
    epsilon = _epsilon(epsilon, op)
    if not _is_train_job() or not trainable:
        training = False
    # float16 inputs (mixed precision) keep float32 parameters and statistics, as OneFlow's.
    param_dtype = dtypes.float32 if inputs.dtype == dtypes.float16 else inputs.dtype
    beta, gamma, moving_mean, moving_variance = _batch_norm_variables(
        name, center, scale, inputs.shape[axis], param_dtype, trainable, beta_initializer,
        beta_regularizer, gamma_initializer, gamma_regularizer, moving_mean_initializer,
        moving_variance_initializer)
    return batch_norm_ops(inputs, axis, epsilon, momentum, training, gamma, beta, moving_mean,
                          moving_variance, name)[0]


def batch_norm_ops(inputs, axis, epsilon, momentum, training, gamma, beta, moving_mean,
                   moving_variance, name):
    """The ops of a batch normalization over `axis` with the given variables (gamma / beta may
    be None): (y, the batch mean, the batch variance) in training, which also updates the
    moving statistics, else (y, None, None) from the moving statistics. `name` is the op's name
    in the current name spaces."""
    session = op_builder.current_job()
    params = {}
    if gamma is not None:
        params["gamma"] = gamma
    if beta is not None:
        params["beta"] = beta
    if not training:
        return op_builder.add_op(
            "normalization", session.scope.full_name(name),
            dict(x=inputs, mean=moving_mean, variance=moving_variance, **params),
            {"axis": axis, "epsilon": epsilon})["y"][0], None, None
    with session.scope.namespace(name):
        mean = op_builder.add_op("batch_norm_mean", session.scope.full_name("mean"),
                                 {"x": inputs}, {"axis": axis})["mean"][0]
        variance = op_builder.add_op(
            "batch_norm_variance", session.scope.full_name("variance"),
            {"x": inputs, "mean": mean}, {"axis": axis})["variance"][0]
    y = op_builder.add_op(
        "normalization_train", session.scope.full_name(name),
        dict(x=inputs, mean=mean, variance=variance, moving_mean=moving_mean,
             moving_variance=moving_variance, **params),
        {"axis": axis, "epsilon": epsilon, "momentum": float(momentum)})["y"][0]
    return y, mean, variance


def layer_batch_normalization(
    inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
    beta_initializer=None, gamma_initializer=None, beta_regularizer=None, gamma_regularizer=None,
    moving_mean_initializer=None, moving_variance_initializer=None, trainable=True,
    training=True, name="BatchNorm",
):
    """flow.layers.batch_normalization. In a train job (training=True, trainable=True) it
    normalises with the batch statistics over every axis but `axis` (global over the devices)
    and updates the variables <name>-moving_mean / -moving_variance in place:
    moving = momentum * moving + (1 - momentum) * batch statistic, the variance unbiased.
    Otherwise (predict jobs, training=False) it normalises with the moving statistics."""
    return _layer_batch_norm(
        "batch_normalization", inputs, axis, momentum, epsilon, center, scale, beta_initializer,
        gamma_initializer, beta_regularizer, gamma_regularizer, moving_mean_initializer,
        moving_variance_initializer, trainable, training, name)


def batch_normalization_add_relu(
    inputs, addend=None, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
    beta_initializer=None, gamma_initializer=None, beta_regularizer=None, gamma_regularizer=None,
    moving_mean_initializer=None, moving_variance_initializer=None, trainable=True,
    training=True, name="BatchNorm",
):
    """relu(batch_normalization(inputs) + addend) (addend optional), as OneFlow 0.3's CPU path."""
    out = _layer_batch_norm(
        "batch_normalization_add_relu", inputs, axis, momentum, epsilon, center, scale,
        beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
        moving_mean_initializer, moving_variance_initializer, trainable, training, name)
    session = op_builder.current_job()
    with session.scope.namespace(name):
        if addend is not None:
            op_builder.check_blob(addend, "batch_normalization_add_relu", "addend")
            if tuple(addend.shape) != tuple(inputs.shape):
                raise ValueError("batch_normalization_add_relu: addend shape %r must equal "
                                 "inputs shape %r" % (tuple(addend.shape), tuple(inputs.shape)))
            out = math_ops.add(out, addend, name="add")
        return math_ops.relu(out, name="relu")


def batch_normalization_relu(
    inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
    beta_initializer=None, gamma_initializer=None, beta_regularizer=None, gamma_regularizer=None,
    moving_mean_initializer=None, moving_variance_initializer=None, trainable=True,
    training=True, name="BatchNorm",
):
    """relu(batch_normalization(inputs))."""
    return batch_normalization_add_relu(
        inputs, None, axis, momentum, epsilon, center, scale, beta_initializer,
        gamma_initializer, beta_regularizer, gamma_regularizer, moving_mean_initializer,
        moving_variance_initializer, trainable, training, name)


def _layer_norm_op(inputs, gamma, beta, begin_norm_axis, begin_params_axis, epsilon, name, op):
    op_builder.check_blob(inputs, op, "inputs")
    rank = len(inputs.shape)
    for what, value in (("begin_norm_axis", begin_norm_axis),
                        ("begin_params_axis", begin_params_axis)):
        if not shapes.is_int(value) or not -rank <= value < rank:
            raise ValueError("%s: %s %r is out of range for inputs of shape %r (rank %d)"
                             % (op, what, value, tuple(inputs.shape), rank))
    blobs = {"x": inputs}
    if gamma is not None:
        blobs["gamma"] = op_builder.check_blob(gamma, op, "gamma")
    if beta is not None:
        blobs["beta"] = op_builder.check_blob(beta, op, "beta")
    return op_builder.add_op(
        "layer_norm", name, blobs,
        {"begin_norm_axis": begin_norm_axis % rank, "begin_params_axis": begin_params_axis % rank,
         "epsilon": _epsilon(epsilon, op)})["y"][0]


def nn_layer_norm(inputs, gamma=None, beta=None, begin_norm_axis=1, begin_params_axis=-1,
                  epsilon=1e-5, name=None):
    """flow.nn.layer_norm: normalises over the axes from begin_norm_axis on, then gamma and
    beta (shape inputs.shape[begin_params_axis:]) when given."""
    return _layer_norm_op(inputs, gamma, beta, begin_norm_axis, begin_params_axis, epsilon,
                          op_builder.op_name(name, "LayerNorm"), "layer_norm")


def layer_norm(inputs, center=True, scale=True, trainable=True, begin_norm_axis=1,
               begin_params_axis=-1, epsilon=1e-5, name="LayerNorm"):
    """flow.layers.layer_norm: variables <name>-beta (zeros) and <name>-gamma (ones) of shape
    inputs.shape[begin_params_axis:]."""
    from oneflow import distribute

    op_builder.check_blob(inputs, "layer_norm", "inputs")
    rank = len(inputs.shape)
    if not shapes.is_int(begin_params_axis) or not -rank <= begin_params_axis < rank:
        raise ValueError("layer_norm: begin_params_axis %r is out of range for inputs of shape "
                         "%r (rank %d)" % (begin_params_axis, tuple(inputs.shape), rank))
    if not center and not scale:
        trainable = False
    param_shape = tuple(inputs.shape[begin_params_axis % rank:])
    session = op_builder.current_job()
    beta = gamma = None
    with session.scope.namespace(name):
        if center:
            beta = variables.get_variable(
                "beta", shape=param_shape, dtype=inputs.dtype,
                initializer=initializers.constant_initializer(0.0), trainable=trainable,
                distribute=distribute.broadcast())
        if scale:
            gamma = variables.get_variable(
                "gamma", shape=param_shape, dtype=inputs.dtype,
                initializer=initializers.constant_initializer(1.0), trainable=trainable,
                distribute=distribute.broadcast())
    return _layer_norm_op(inputs, gamma, beta, begin_norm_axis, begin_params_axis, epsilon,
                          session.scope.full_name(name), "layer_norm")


def layer_norm_grad(dy, x, mean, inv_variance, begin_norm_axis=1, name=None):
    """flow.layers.layer_norm_grad: the gradient of layer norm's input x (without gamma) from
    the gradient dy of its output and the row statistics mean and inv_variance (shape
    x.shape[:begin_norm_axis])."""
    op = "layer_norm_grad"
    blobs = {"x": op_builder.check_blob(x, op, "x"), "dy": op_builder.check_blob(dy, op, "dy"),
             "mean": op_builder.check_blob(mean, op, "mean"),
             "inv_variance": op_builder.check_blob(inv_variance, op, "inv_variance")}
    rank = len(x.shape)
    if not shapes.is_int(begin_norm_axis) or not -rank <= begin_norm_axis < rank:
        raise ValueError("%s: begin_norm_axis %r is out of range for x of shape %r"
                         % (op, begin_norm_axis, tuple(x.shape)))
    return op_builder.add_single_output_op(op, name, "LayerNormGrad", blobs,
                                           {"begin_norm_axis": begin_norm_axis % rank},
                                           output="dx")


def layer_norm_param_grad(dy, norm, gamma, begin_params_axis=-1, name=None):
    """flow.layers.layer_norm_param_grad: from the gradient dy of layer norm's output
    norm * gamma + beta, returns (normalized_diff = dy * gamma, beta_diff = dy summed over the
    axes before begin_params_axis, gamma_diff = dy * norm summed alike)."""
    op = "layer_norm_param_grad"
    for blob, what in ((dy, "dy"), (norm, "norm"), (gamma, "gamma")):
        op_builder.check_blob(blob, op, what)
    rank = len(dy.shape)
    if not shapes.is_int(begin_params_axis) or not -rank <= begin_params_axis < rank:
        raise ValueError("%s: begin_params_axis %r is out of range for dy of shape %r"
                         % (op, begin_params_axis, tuple(dy.shape)))
    begin = begin_params_axis % rank
    if tuple(norm.shape) != tuple(dy.shape) or tuple(gamma.shape) != tuple(dy.shape[begin:]):
        raise ValueError("%s: norm must have dy's shape %r and gamma its shape from axis %d %r; "
                         "got %r and %r" % (op, tuple(dy.shape), begin, tuple(dy.shape[begin:]),
                                            tuple(norm.shape), tuple(gamma.shape)))
    sub = (lambda suffix: None) if name is None else (lambda suffix: "%s-%s" % (name, suffix))
    axes = list(range(begin))
    normalized_diff = math_ops.multiply(dy, gamma, name=sub("normalized_diff"))
    beta_diff = math_ops.reduce_sum(dy, axes, name=sub("beta_diff"))
    gamma_diff = math_ops.reduce_sum(math_ops.multiply(dy, norm, name=sub("dy_norm")), axes,
                                     name=sub("gamma_diff"))
    return normalized_diff, beta_diff, gamma_diff


def _channel_affine(normalized, channel, dtype, name):
    """gamma * normalized + beta for (N, C, L) blobs, with variables <name>_gamma (ones) and
    <name>_beta (zeros) of shape (1, C, 1)."""
    gamma = variables.get_variable(name + "_gamma", shape=(1, channel, 1), dtype=dtype,
                                   initializer=initializers.ones_initializer(), trainable=True)
    beta = variables.get_variable(name + "_beta", shape=(1, channel, 1), dtype=dtype,
                                  initializer=initializers.zeros_initializer(), trainable=True)
    return math_ops.add(math_ops.multiply(gamma, normalized), beta)


def _instance_norm(x, rank, eps, affine, name, op):
    op_builder.check_blob(x, op, "x")
    if len(x.shape) != rank:
        raise ValueError("%s: x must have %d axes (N, C, ...), got shape %r"
                         % (op, rank, tuple(x.shape)))
    session = op_builder.current_job()
    name = session.scope.full_name(name) if name else session.scope.unique_name(op + "_")
    flat = x if rank == 3 else array_ops.reshape(x, (x.shape[0], x.shape[1], -1),
                                                 name=name + "-reshape")
    normalized = _layer_norm_op(flat, None, None, 2, 2, eps, name + "-layer_norm", op)
    if affine:
        normalized = _channel_affine(normalized, x.shape[1], x.dtype, name)
    if rank != 3:
        normalized = array_ops.reshape(normalized, tuple(x.shape), name=name + "-reshape_back")
    return normalized


def instance_normalization1d(x, eps=1e-05, affine=True, name=None):
    """flow.nn.InstanceNorm1d: (N, C, L) normalised over L per (n, c); affine adds variables
    <name>_gamma (ones) and <name>_beta (zeros) of shape (1, C, 1)."""
    return _instance_norm(x, 3, eps, affine, name, "InstanceNorm1d")


def instance_normalization2d(x, eps=1e-05, affine=True, name=None):
    """flow.nn.InstanceNorm2d: (N, C, H, W) normalised over H, W per (n, c)."""
    return _instance_norm(x, 4, eps, affine, name, "InstanceNorm2d")


def instance_normalization3d(x, eps=1e-05, affine=True, name=None):
    """flow.nn.InstanceNorm3d: (N, C, D, H, W) normalised over D, H, W per (n, c)."""
    return _instance_norm(x, 5, eps, affine, name, "InstanceNorm3d")


def group_normalization(x, num_groups=32, eps=1e-05, affine=True, name=None):
    """flow.nn.GroupNorm (torch.nn.GroupNorm): x (N, C, ...) normalised per sample over each
    group of C / num_groups consecutive channels and their spatial extent; affine adds
    variables <name>_gamma (ones) and <name>_beta (zeros) of shape (1, C, 1), per channel."""
    op = "GroupNorm"
    op_builder.check_blob(x, op, "x")
    if len(x.shape) < 3:
        raise ValueError("%s: x must have at least 3 axes (N, C, ...), got shape %r"
                         % (op, tuple(x.shape)))
    channel = x.shape[1]
    if not shapes.is_int(num_groups) or num_groups <= 0 or channel % num_groups != 0:
        raise ValueError("%s: num_groups must be a positive divisor of the %d channels of x %r, "
                         "got %r" % (op, channel, tuple(x.shape), num_groups))
    session = op_builder.current_job()
    name = session.scope.full_name(name) if name else session.scope.unique_name(op + "_")
    grouped = array_ops.reshape(x, (x.shape[0], num_groups, -1), name=name + "-reshape")
    normalized = _layer_norm_op(grouped, None, None, 2, 2, eps, name + "-layer_norm", op)
    normalized = array_ops.reshape(normalized, (x.shape[0], channel, -1),
                                   name=name + "-reshape_channels")
    if affine:
        normalized = _channel_affine(normalized, channel, x.dtype, name)
    return array_ops.reshape(normalized, tuple(x.shape), name=name + "-reshape_back")


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """x * mask / (1 - rate), mask[i] = 0 with probability `rate`, a new mask each iteration
    (the backward pass uses the same mask). Identity in predict jobs and for rate 0. `seed`
    (an int) makes the sequence of masks reproducible; without it a random seed is drawn."""
    op_builder.check_blob(x, "dropout", "x")
    if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0.0 <= rate < 1.0:
        raise ValueError("dropout: rate must be a number in [0, 1), got %r" % (rate,))
    if noise_shape is not None:
        raise NotImplementedError("dropout: noise_shape is not supported (OneFlow 0.3 did not "
                                  "support it either); got %r" % (noise_shape,))
    if seed is not None and (not shapes.is_int(seed) or isinstance(seed, bool)):
        raise TypeError("dropout: seed must be an int or None, got %r" % (seed,))
    if not _is_train_job() or rate == 0.0:
        return x
    if seed is None:
        seed = random.getrandbits(63)
    return op_builder.add_op("dropout", op_builder.op_name(name, "Dropout"), {"x": x},
                             {"rate": float(rate), "seed": int(seed)})["y"][0]
