"""Convolution and pooling: flow.nn.conv1d/2d/3d, compat_conv2d, conv2d_transpose,
max_pool1d/2d/3d, avg_pool1d/2d/3d, and flow.layers.conv1d/2d/3d (OneFlow 0.3's names,
signatures and defaults).

The wrappers turn Python arguments into the ops' attributes (oneflow/ops/conv.cpp, pool.cpp):
data_format -> "channels_first"/"channels_last", ints -> one value per spatial axis, and padding
-> a mode plus explicit per-side sizes. Shape rules (ranks, channels and groups, window larger
than the padded input, non-positive sizes) are checked once, by the ops' C++ inference.

Padding: "VALID"; "SAME" (TensorFlow's: output = ceil(input / stride), the odd padding element
at the end, also spelled "SAME_UPPER"); "SAME_LOWER" (the odd element at the start); or explicit
sizes, a list with one entry per input axis in data_format order (batch and channel entries 0)
or one per spatial axis, each entry an int (both sides) or a (before, after) pair.
"""
from oneflow.framework import op_builder, shapes

_SPATIAL_LETTERS = {1: "W", 2: "HW", 3: "DHW"}


def _data_format(op_type, data_format, spatial_axes, extra_first=()):
    """"channels_first" or "channels_last" for a data_format such as "NCHW" / "NHWC"."""
    letters = _SPATIAL_LETTERS[spatial_axes]
    first, last = "NC" + letters, "N" + letters + "C"
    if isinstance(data_format, str):
        upper = data_format.upper()
        if upper in (first,) + tuple(extra_first) or data_format == "channels_first":
            return "channels_first"
        if upper == last or data_format == "channels_last":
            return "channels_last"
    raise ValueError("%s: data_format must be %r or %r (or 'channels_first' / 'channels_last'), "
                     "got %r" % (op_type, first, last, data_format))


def _int_list(op_type, what, value, spatial_axes, channels_first=None):
    """One int per spatial axis from an int, a one-element sequence, a sequence of one per
    spatial axis, or (when channels_first is given) one per input axis with 1 for the batch and
    the channels. Values are not range-checked here (the op says which are invalid)."""
    if shapes.is_int(value):
        return [int(value)] * spatial_axes
    if isinstance(value, (list, tuple)) and all(shapes.is_int(v) for v in value):
        values = [int(v) for v in value]
        if len(values) == 1:
            return values * spatial_axes
        if len(values) == spatial_axes:
            return values
        if channels_first is not None and len(values) == spatial_axes + 2:
            outer = (values[0], values[1]) if channels_first else (values[0], values[-1])
            if outer != (1, 1):
                raise ValueError("%s: %s %r must be 1 on the batch and channel axes"
                                 % (op_type, what, value))
            return values[2:] if channels_first else values[1:-1]
        raise ValueError("%s: %s must be an int or a list of 1 or %d ints, got %r"
                         % (op_type, what, spatial_axes, value))
    raise TypeError("%s: %s must be an int or a list of ints, got %r" % (op_type, what, value))


def _padding(op_type, padding, spatial_axes, channels_first):
    """(mode, padding_before, padding_after) of the op for a Python padding argument."""
    if isinstance(padding, str):
        mode = {"VALID": "valid", "SAME": "same_upper", "SAME_UPPER": "same_upper",
                "SAME_LOWER": "same_lower"}.get(padding.upper())
        if mode is None:
            raise ValueError("%s: padding must be 'VALID', 'SAME', 'SAME_UPPER', 'SAME_LOWER' or "
                             "a list of explicit paddings, got %r" % (op_type, padding))
        return mode, [0] * spatial_axes, [0] * spatial_axes
    if not isinstance(padding, (list, tuple)):
        raise ValueError("%s: padding must be a string or a list of explicit paddings, got %r"
                         % (op_type, padding))
    pairs = []
    for entry in padding:
        if shapes.is_int(entry):
            pairs.append((int(entry), int(entry)))
        elif (isinstance(entry, (list, tuple)) and len(entry) == 2
              and all(shapes.is_int(v) for v in entry)):
            pairs.append((int(entry[0]), int(entry[1])))
        else:
            raise ValueError("%s: each explicit padding must be an int or a (before, after) pair "
                             "of ints, got %r in %r" % (op_type, entry, padding))
    if len(pairs) == spatial_axes + 2:
        outer = [pairs[0], pairs[1] if channels_first else pairs[-1]]
        if any(pair != (0, 0) for pair in outer):
            raise ValueError("%s: explicit padding %r must be 0 on the batch and channel axes"
                             % (op_type, padding))
        pairs = pairs[2:] if channels_first else pairs[1:-1]
    elif len(pairs) != spatial_axes:
        raise ValueError("%s: explicit padding must have %d entries (one per input axis) or %d "
                         "(one per spatial axis), got %r"
                         % (op_type, spatial_axes + 2, spatial_axes, padding))
    return "customized", [p[0] for p in pairs], [p[1] for p in pairs]


def _check_rank(op_type, argument, blob, rank):
    if len(blob.shape) != rank:
        raise ValueError("%s: %s must have rank %d, got shape %r"
                         % (op_type, argument, rank, tuple(blob.shape)))


def _check_positive_int(op_type, what, value):
    if not shapes.is_int(value):
        raise TypeError("%s: %s must be an int, got %r" % (op_type, what, value))
    if value <= 0:
        raise ValueError("%s: %s must be positive, got %r" % (op_type, what, value))
    return int(value)


def _conv(spatial_axes, input, filters, strides, padding, data_format, dilations, groups, name):
    op_type = "conv%dd" % spatial_axes
    op_builder.check_blob(input, op_type, "input")
    op_builder.check_blob(filters, op_type, "filters")
    position = _data_format(op_type, data_format, spatial_axes)
    channels_first = position == "channels_first"
    _check_rank(op_type, "input", input, spatial_axes + 2)
    _check_rank(op_type, "filters", filters, spatial_axes + 2)
    groups = _check_positive_int(op_type, "groups", groups)
    weight_shape = tuple(filters.shape)
    kernel_size = list(weight_shape[2:] if channels_first else weight_shape[1:-1])
    mode, before, after = _padding(op_type, padding, spatial_axes, channels_first)
    attrs = {
        "filters": int(weight_shape[0]),
        "data_format": position,
        "kernel_size": kernel_size,
        "strides": _int_list(op_type, "strides", strides, spatial_axes),
        "dilation_rate": _int_list(op_type, "dilations", 1 if dilations is None else dilations,
                                   spatial_axes),
        "padding": mode,
        "padding_before": before,
        "padding_after": after,
        "groups": groups,
    }
    return op_builder.add_single_output_op(op_type, name, "Conv%dd_" % spatial_axes,
                                           {"in": input, "weight": filters}, attrs)


def conv1d(input, filters, strides, padding, data_format="NCW", dilations=None, groups=1,
           name=None):
    """1-D convolution. input (N, C, W) for "NCW" or (N, W, C) for "NWC"; filters
    (out_channels, C / groups, kernel_w) or (out_channels, kernel_w, C / groups)."""
    return _conv(1, input, filters, strides, padding, data_format, dilations, groups, name)


def conv2d(input, filters, strides, padding, data_format="NCHW", dilations=None, groups=1,
           name=None):
    """2-D convolution. input (N, C, H, W) for "NCHW" or (N, H, W, C) for "NHWC"; filters
    (out_channels, C / groups, kh, kw) or (out_channels, kh, kw, C / groups)."""
    return _conv(2, input, filters, strides, padding, data_format, dilations, groups, name)


def conv3d(input, filters, strides, padding, data_format="NCDHW", dilations=None, groups=1,
           name=None):
    """3-D convolution. input (N, C, D, H, W) for "NCDHW" or (N, D, H, W, C) for "NDHWC"; filters
    (out_channels, C / groups, kd, kh, kw) or (out_channels, kd, kh, kw, C / groups)."""
    return _conv(3, input, filters, strides, padding, data_format, dilations, groups, name)


def compat_conv2d(input, filters, strides, padding, data_format="NCHW", dilations=None, groups=1,
                  name=None):
    """conv2d with TensorFlow's padding names ("SAME" is "SAME_UPPER" there, as here)."""
    if isinstance(padding, str) and padding.upper() == "SAME":
        padding = "SAME_UPPER"
    return conv2d(input, filters, strides, padding, data_format, dilations, groups, name)


def _deconv_arguments(op_type, value, filter, input, filters, strides, data_format,  # noqa: A002
                      dilations):
    """The checked arguments of a 2-D transposed convolution: (x, weight, position,
    channels_first, strides, dilations, input sizes, kernel, output channels, windows)."""
    if (value is None) == (input is None):
        raise ValueError("%s: give exactly one of `value` and `input`" % op_type)
    if (filter is None) == (filters is None):
        raise ValueError("%s: give exactly one of `filter` and `filters`" % op_type)
    x = value if value is not None else input
    weight = filter if filter is not None else filters
    op_builder.check_blob(x, op_type, "value")
    op_builder.check_blob(weight, op_type, "filter")
    position = _data_format(op_type, data_format, 2)
    channels_first = position == "channels_first"
    _check_rank(op_type, "value", x, 4)
    _check_rank(op_type, "filter", weight, 4)
    if strides is None:
        raise ValueError("%s: strides must be an int or a list of 2 ints, got None" % op_type)
    strides = _int_list(op_type, "strides", strides, 2)
    dilations = _int_list(op_type, "dilations", 1 if dilations is None else dilations, 2)
    for what, values in (("strides", strides), ("dilations", dilations)):
        if any(v <= 0 for v in values):
            raise ValueError("%s: %s must be positive, got %r" % (op_type, what, values))
    x_shape, w_shape = tuple(x.shape), tuple(weight.shape)
    in_sizes = x_shape[2:] if channels_first else x_shape[1:3]
    kernel = list(w_shape[2:] if channels_first else w_shape[1:3])
    out_channels = w_shape[1] if channels_first else w_shape[3]
    windows = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    return (x, weight, position, channels_first, strides, dilations, in_sizes, kernel,
            out_channels, windows)


def _deconv2d(x, weight, position, kernel, out_channels, strides, dilations, before, after,
              output_padding, name):
    attrs = {
        "filters": int(out_channels),
        "data_format": position,
        "kernel_size": kernel,
        "strides": strides,
        "dilation_rate": dilations,
        "padding": "customized",
        "padding_before": before,
        "padding_after": after,
        "output_padding": output_padding,
    }
    return op_builder.add_single_output_op("deconv2d", name, "Deconv2d",
                                           {"in": x, "weight": weight}, attrs)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="VALID",
                     data_format="NCHW", name=None, input=None, filters=None, dilations=None):
    """2-D transposed convolution (the data gradient of conv2d), op deconv2d.

    value (or input): (N, C_in, H, W) for "NCHW", (N, H, W, C_in) for "NHWC"; filter (or
    filters): (C_in, C_out, kh, kw) for "NCHW", (C_in, kh, kw, C_out) for "NHWC", as in OneFlow
    0.3 and TensorFlow. output_shape: the 4-D output shape in data_format order, of which only
    the spatial sizes are read (as in OneFlow 0.3); each must be one that a convolution with
    these strides and padding maps back to the input's size: with "VALID", (in - 1) * stride +
    window <= out < that + stride; with "SAME", ceil(out / stride) == in (window = (kernel - 1)
    * dilation + 1). OneFlow 0.3 requires output_shape; here None gives the smallest such size,
    (in - 1) * stride + window for "VALID" and in * stride for "SAME". "SAME" crops the padding
    the convolution would add, the odd element at the end (TensorFlow's rule). strides is
    required (an int or 2 ints).
    """
    op_type = "conv2d_transpose"
    (x, weight, position, channels_first, strides, dilations, in_sizes, kernel, out_channels,
     windows) = _deconv_arguments(op_type, value, filter, input, filters, strides, data_format,
                                  dilations)
    x_shape = tuple(x.shape)
    if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME"):
        raise ValueError("%s: padding must be 'VALID' or 'SAME', got %r" % (op_type, padding))
    same = padding.upper() == "SAME"
    if output_shape is None:
        sizes = [i * s if same else (i - 1) * s + w
                 for i, s, w in zip(in_sizes, strides, windows)]
        output_shape = ((x_shape[0], out_channels) + tuple(sizes) if channels_first
                        else (x_shape[0],) + tuple(sizes) + (out_channels,))
    output_shape = shapes.to_shape(output_shape, op_type + " output_shape")
    if len(output_shape) != 4:
        raise ValueError("%s: output_shape must have 4 dims, got %r" % (op_type, output_shape))
    # Only the spatial sizes are read: the batch size is the input's and the channel count the
    # filter's whatever output_shape says there, as in OneFlow 0.3 (OneFlow-Benchmark's dcgan
    # passes the input's channel count).
    out_sizes = output_shape[2:] if channels_first else output_shape[1:3]
    before, after, output_padding = [], [], []
    for axis in range(2):
        size, out, s, w = in_sizes[axis], out_sizes[axis], strides[axis], windows[axis]
        if same:
            if (out + s - 1) // s != size:
                raise ValueError(
                    "%s: with SAME padding and stride %d, output size %d on spatial axis %d "
                    "does not map back to the input's size %d (ceil(out / stride) must equal it)"
                    % (op_type, s, out, axis, size))
            needed = max(0, (size - 1) * s + w - out)
        else:
            if not (size - 1) * s + w <= out < (size - 1) * s + w + s:
                raise ValueError(
                    "%s: with VALID padding, output size %d on spatial axis %d does not map back "
                    "to the input's size %d: it must lie in [%d, %d] (stride %d, window %d)"
                    % (op_type, out, axis, size, (size - 1) * s + w, (size - 1) * s + w + s - 1,
                       s, w))
            needed = 0
        before.append(needed // 2)
        after.append(needed - needed // 2)
        output_padding.append(out - ((size - 1) * s + w - needed))
    return _deconv2d(x, weight, position, kernel, out_channels, strides, dilations, before, after,
                     output_padding, name)


def torch_conv2d_transpose(value=None, filter=None, output_padding=None, strides=None,  # noqa: A002
                           padding_needed=None, data_format="NCHW", name=None, input=None,
                           filters=None, dilations=None):
    """torch.nn.functional.conv_transpose2d's sizes (OneFlow 0.3's nn.torch_conv2d_transpose):
    padding_needed (2 ints, default 0) is torch's padding times two, taken half from each end
    (an odd amount: the extra element from the end); output_padding (2 ints, default 0, each
    below the stride or the dilation) adds rows at the end. Output size per spatial axis:
    (in - 1) * stride - padding_needed + (kernel - 1) * dilation + 1 + output_padding. Filter
    layout as conv2d_transpose."""
    op_type = "torch_conv2d_transpose"
    (x, weight, position, channels_first, strides, dilations, in_sizes, kernel, out_channels,
     windows) = _deconv_arguments(op_type, value, filter, input, filters, strides, data_format,
                                  dilations)
    needed = _int_list(op_type, "padding_needed", 0 if padding_needed is None else padding_needed,
                       2)
    output_padding = _int_list(op_type, "output_padding",
                               0 if output_padding is None else output_padding, 2)
    for axis in range(2):
        if needed[axis] < 0:
            raise ValueError("%s: padding_needed must be >= 0, got %r" % (op_type, needed))
        if not 0 <= output_padding[axis] < max(strides[axis], dilations[axis]):
            raise ValueError("%s: output_padding %r must be >= 0 and below the stride or the "
                             "dilation (strides %r, dilations %r)"
                             % (op_type, output_padding, strides, dilations))
        out = ((in_sizes[axis] - 1) * strides[axis] - needed[axis] + windows[axis]
               + output_padding[axis])
        if out <= 0:
            raise ValueError("%s: spatial axis %d of the output would have size %d (input %d, "
                             "stride %d, padding_needed %d, window %d)"
                             % (op_type, axis, out, in_sizes[axis], strides[axis], needed[axis],
                                windows[axis]))
    before = [n // 2 for n in needed]
    after = [n - n // 2 for n in needed]
    return _deconv2d(x, weight, position, kernel, out_channels, strides, dilations, before, after,
                     output_padding, name)


def _pool(kind, spatial_axes, input, ksize, strides, padding, data_format, ceil_mode, name):
    op_type = "%s_pool_%dd" % (kind, spatial_axes)
    op_builder.check_blob(input, op_type, "input")
    extra = ("NCHW_VECT_C",) if spatial_axes == 2 else ()
    position = _data_format(op_type, data_format, spatial_axes, extra_first=extra)
    channels_first = position == "channels_first"
    _check_rank(op_type, "input", input, spatial_axes + 2)
    if not isinstance(ceil_mode, bool):
        raise TypeError("%s: ceil_mode must be a bool, got %r" % (op_type, ceil_mode))
    mode, before, after = _padding(op_type, padding, spatial_axes, channels_first)
    attrs = {
        "data_format": position,
        "pool_size": _int_list(op_type, "ksize", ksize, spatial_axes, channels_first),
        "strides": _int_list(op_type, "strides", strides, spatial_axes, channels_first),
        "padding": mode,
        "padding_before": before,
        "padding_after": after,
        "ceil_mode": ceil_mode,
    }
    prefix = "%sPool%dD_" % (kind.capitalize(), spatial_axes)
    return op_builder.add_single_output_op(op_type, name, prefix, {"x": input}, attrs,
                                           output="y")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """1-D max pooling; OneFlow 0.3's default data_format here is "NWC"."""
    return _pool("max", 1, input, ksize, strides, padding, data_format, False, name)


def avg_pool1d(input, ksize, strides, padding, data_format="NCW", name=None):
    """1-D average pooling (padding excluded from each window's count)."""
    return _pool("avg", 1, input, ksize, strides, padding, data_format, False, name)


def max_pool2d(input, ksize, strides, padding, data_format="NCHW", ceil_mode=False, name=None):
    return _pool("max", 2, input, ksize, strides, padding, data_format, ceil_mode, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NCHW", ceil_mode=False, name=None):
    """2-D average pooling (padding excluded from each window's count)."""
    return _pool("avg", 2, input, ksize, strides, padding, data_format, ceil_mode, name)


def max_pool3d(input, ksize, strides, padding, data_format="NCDHW", ceil_mode=False, name=None):
    return _pool("max", 3, input, ksize, strides, padding, data_format, ceil_mode, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NCDHW", ceil_mode=False, name=None):
    """3-D average pooling (padding excluded from each window's count)."""
    return _pool("avg", 3, input, ksize, strides, padding, data_format, ceil_mode, name)


def _conv_layer(spatial_axes, inputs, filters, kernel_size, strides, padding, data_format,
                dilation_rate, groups, activation, use_bias, kernel_initializer,
                bias_initializer, kernel_regularizer, bias_regularizer, trainable, name,
                weight_name, bias_name):
    """flow.layers.conv{n}d: a weight (and bias) variable, the convolution, bias_add and the
    activation. Variables are "<name>-weight" / "<name>-bias" unless weight_name / bias_name
    are given; the convolution op is named `name`."""
    from oneflow.ops import initializers, nn_ops, variables

    layer = "layers.conv%dd" % spatial_axes
    op_builder.check_blob(inputs, layer, "inputs")
    position = _data_format(layer, data_format, spatial_axes)
    channels_first = position == "channels_first"
    _check_rank(layer, "inputs", inputs, spatial_axes + 2)
    if activation is not None and not callable(activation):
        raise TypeError("%s: activation must be a callable such as flow.nn.relu, or None, got %r"
                        % (layer, activation))
    filters = _check_positive_int(layer, "filters", filters)
    groups = _check_positive_int(layer, "groups", groups)
    kernel = _int_list(layer, "kernel_size", kernel_size, spatial_axes)
    if min(kernel) < 1:
        raise ValueError("%s: kernel_size must be >= 1 on every spatial axis, got %r"
                         % (layer, kernel_size))
    channels = inputs.shape[1] if channels_first else inputs.shape[-1]
    if filters % groups or channels % groups:
        raise ValueError("%s: groups=%d must divide both filters (%d) and the input channels (%d, "
                         "inputs %r)" % (layer, groups, filters, channels, tuple(inputs.shape)))
    if channels_first:
        weight_shape = (filters, channels // groups) + tuple(kernel)
    else:
        weight_shape = (filters,) + tuple(kernel) + (channels // groups,)
    if kernel_initializer is None:
        kernel_initializer = initializers.xavier_uniform_initializer(data_format=data_format)
    session = op_builder.current_job()

    def variable(variable_name, shape, initializer, regularizer, model_name):
        return variables.get_variable(
            variable_name, shape=shape, dtype=inputs.dtype, initializer=initializer,
            regularizer=regularizer, trainable=trainable, model_name=model_name, reuse=False)

    if weight_name is None:
        with session.scope.namespace(name):
            weight = variable("weight", weight_shape, kernel_initializer, kernel_regularizer,
                              "weight")
    else:
        weight = variable(weight_name, weight_shape, kernel_initializer, kernel_regularizer,
                          "weight")
    output = _conv(spatial_axes, inputs, weight, strides, padding, position, dilation_rate,
                   groups, name)
    if use_bias:
        if bias_initializer is None:
            bias_initializer = initializers.constant_initializer(0)
        if bias_name is None:
            with session.scope.namespace(name):
                bias = variable("bias", (filters,), bias_initializer, bias_regularizer, "bias")
        else:
            bias = variable(bias_name, (filters,), bias_initializer, bias_regularizer, "bias")
        with session.scope.namespace(name):
            output = nn_ops.bias_add(output, bias, position, name="bias_add")
    if activation is not None:
        with session.scope.namespace(name):
            output = activation(output, name="activation")
    return output


def layers_conv1d(inputs, filters, kernel_size=1, strides=1, padding="VALID", data_format="NCW",
                  dilation_rate=None, groups=1, activation=None, use_bias=True,
                  kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                  bias_regularizer=None, trainable=True, name="Conv1d", weight_name=None,
                  bias_name=None):
    return _conv_layer(1, inputs, filters, kernel_size, strides, padding, data_format,
                       dilation_rate, groups, activation, use_bias, kernel_initializer,
                       bias_initializer, kernel_regularizer, bias_regularizer, trainable, name,
                       weight_name, bias_name)


def layers_conv2d(inputs, filters, kernel_size=1, strides=1, padding="VALID", data_format="NCHW",
                  dilation_rate=None, groups=1, activation=None, use_bias=True,
                  kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                  bias_regularizer=None, trainable=True, name="Conv2d", weight_name=None,
                  bias_name=None):
    return _conv_layer(2, inputs, filters, kernel_size, strides, padding, data_format,
                       dilation_rate, groups, activation, use_bias, kernel_initializer,
                       bias_initializer, kernel_regularizer, bias_regularizer, trainable, name,
                       weight_name, bias_name)


def layers_conv3d(inputs, filters, kernel_size=1, strides=1, padding="VALID",
                  data_format="NCDHW", dilation_rate=None, groups=1, activation=None,
                  use_bias=True, kernel_initializer=None, bias_initializer=None,
                  kernel_regularizer=None, bias_regularizer=None, trainable=True, name="Conv3d",
                  weight_name=None, bias_name=None):
    return _conv_layer(3, inputs, filters, kernel_size, strides, padding, data_format,
                       dilation_rate, groups, activation, use_bias, kernel_initializer,
                       bias_initializer, kernel_regularizer, bias_regularizer, trainable, name,
                       weight_name, bias_name)


def unfold2d(input, kernel_size, strides, dilation_rate, padding, data_format="NCHW",  # noqa: A002
             ceil_mode=False, name=None):
    """im2col (torch.nn.functional.unfold): every kernel_size window of the NCHW input (strided,
    dilated, padded with zeros as a convolution's) as a column: (N, C * kh * kw, oh * ow), rows
    ordered by channel, then window row, then window column. Made of pad, strided slices and a
    concat, so its gradient sums each window's share back. NHWC and ceil_mode are not
    supported (OneFlow 0.3 has no unfold1d / unfold3d either)."""
    from oneflow.ops import array_ops, shape_ops

    op = "unfold2d"
    op_builder.check_blob(input, op, "input")
    if data_format != "NCHW":
        raise NotImplementedError("%s: only data_format 'NCHW' is supported, got %r"
                                  % (op, data_format))
    if ceil_mode:
        raise NotImplementedError("%s: ceil_mode=True is not supported" % op)
    _check_rank(op, "input", input, 4)
    kernel = _int_list(op, "kernel_size", kernel_size, 2, True)
    stride = _int_list(op, "strides", strides, 2, True)
    dilation = _int_list(op, "dilation_rate", dilation_rate, 2, True)
    for what, values in (("kernel_size", kernel), ("strides", stride),
                         ("dilation_rate", dilation)):
        if min(values) < 1:
            raise ValueError("%s: %s must be positive, got %r" % (op, what, values))
    if shapes.is_int(padding):
        padding = [int(padding)] * 2
    mode, before, after = _padding(op, padding, 2, True)
    sizes = input.shape[2:]
    for axis in range(2):
        reach = (kernel[axis] - 1) * dilation[axis] + 1
        if mode in ("same_upper", "same_lower"):
            total = max((-(-sizes[axis] // stride[axis]) - 1) * stride[axis] + reach - sizes[axis],
                        0)
            small, large = total // 2, total - total // 2
            before[axis], after[axis] = (small, large) if mode == "same_upper" else (large, small)
        if min(before[axis], after[axis]) < 0:
            raise ValueError("%s: padding must be >= 0, got %r" % (op, padding))
    outputs = [(sizes[a] + before[a] + after[a] - ((kernel[a] - 1) * dilation[a] + 1))
               // stride[a] + 1 for a in range(2)]
    if min(outputs) < 1:
        raise ValueError("%s: a %r window (dilation %r) does not fit input %r padded by %r / %r"
                         % (op, kernel, dilation, tuple(input.shape), before, after))
    name = op_builder.layer_name(name, "Unfold2D")
    padded = input
    if max(before + after) > 0:
        padded = shape_ops.pad(input, [(0, 0), (0, 0)] + list(zip(before, after)),
                               name=name + "-pad")
    batch, channels = input.shape[:2]
    columns = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            window = [(None, None, None), (None, None, None)]
            for axis, offset in enumerate((i, j)):
                start = offset * dilation[axis]
                window.append((start, start + (outputs[axis] - 1) * stride[axis] + 1,
                               stride[axis]))
            part = shape_ops.slice_v2(padded, window, name="%s-window%d_%d" % (name, i, j))
            columns.append(array_ops.reshape(part, (batch, channels, 1) + tuple(outputs),
                                             name="%s-column%d_%d" % (name, i, j)))
    stacked = columns[0] if len(columns) == 1 else shape_ops.concat(columns, axis=2,
                                                                     name=name + "-concat")
    return array_ops.reshape(stacked, (batch, channels * kernel[0] * kernel[1],
                                       outputs[0] * outputs[1]), name=name)
