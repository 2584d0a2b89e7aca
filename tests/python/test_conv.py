"""flow.nn.conv1d/2d/3d, flow.nn.compat_conv2d and flow.layers.conv1d/2d/3d against PyTorch 1.13:
both data formats, strides, dilations, groups, VALID / SAME / SAME_LOWER / explicit padding;
float64 gradients against finite differences (check_op), float32 gradients against PyTorch's;
every declared SBP signature on 2-4 devices (check_op's multi-device pass); the errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, random_inputs, run_op

TORCH_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def same_padding(size, kernel, stride, dilation, lower=False):
    """TensorFlow's SAME: (before, after) reaching ceil(size / stride) outputs."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    needed = max(0, (out - 1) * stride + effective - size)
    before = needed - needed // 2 if lower else needed // 2
    return before, needed - before


def spatial_pads(padding, x_shape, kernel, strides, dilations, channels_first):
    """(before, after) per spatial axis for a flow padding argument."""
    n = len(kernel)
    sizes = x_shape[2:] if channels_first else x_shape[1:-1]
    if isinstance(padding, str):
        if padding == "VALID":
            return [(0, 0)] * n
        lower = padding == "SAME_LOWER"
        return [same_padding(sizes[i], kernel[i], strides[i], dilations[i], lower)
                for i in range(n)]
    pairs = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
    if len(pairs) == n + 2:
        pairs = pairs[2:] if channels_first else pairs[1:-1]
    return pairs


def torch_conv(x, w, strides, pads, dilations, groups, channels_first):
    """The convolution in PyTorch (float64 numpy in and out when x is float64)."""
    tx, tw = torch.as_tensor(x), torch.as_tensor(w)
    if not channels_first:
        tx, tw = tx.movedim(-1, 1), tw.movedim(-1, 1)
    flat = [side for pair in reversed(pads) for side in pair]
    y = TORCH_CONV[len(pads)](F.pad(tx, flat), tw, stride=strides, dilation=dilations,
                              groups=groups)
    if not channels_first:
        y = y.movedim(1, -1)
    return y


def _as_list(value, n):
    return [value] * n if isinstance(value, int) else list(value)


def conv_case(rank, data_format, x_shape, w_shape, strides=1, padding="VALID", dilations=1,
              groups=1):
    """(flow_fn, numpy_fn) of one convolution."""
    n = rank
    channels_first = data_format.startswith("NC")
    kernel = list(w_shape[2:] if channels_first else w_shape[1:-1])
    strides_list, dilations_list = _as_list(strides, n), _as_list(dilations, n)
    pads = spatial_pads(padding, x_shape, kernel, strides_list, dilations_list, channels_first)
    flow_conv = {1: flow.nn.conv1d, 2: flow.nn.conv2d, 3: flow.nn.conv3d}[n]

    def flow_fn(x, w):
        return flow_conv(x, w, strides, padding, data_format=data_format, dilations=dilations,
                         groups=groups)

    def numpy_fn(x, w):
        return torch_conv(x, w, strides_list, pads, dilations_list, groups,
                          channels_first).numpy()

    return flow_fn, numpy_fn


# (rank, data_format, x shape, weight shape, keyword arguments)
CASES = [
    (2, "NCHW", (2, 3, 5, 5), (4, 3, 3, 3), {}),
    (2, "NHWC", (2, 6, 7, 3), (4, 3, 3, 3), dict(strides=2, padding="SAME")),
    (2, "NCHW", (2, 2, 6, 7), (3, 2, 2, 3), dict(strides=[2, 1], padding="SAME_LOWER")),
    (2, "NCHW", (1, 2, 7, 6), (3, 2, 3, 2),
     dict(dilations=2, padding=[0, 0, (1, 2), (2, 0)])),
    (2, "NCHW", (2, 4, 5, 5), (6, 2, 3, 3), dict(groups=2, padding="SAME")),
    (2, "NHWC", (2, 5, 5, 4), (4, 3, 3, 2), dict(groups=2, strides=2, padding=[(1, 1), (0, 1)])),
    (1, "NCW", (2, 3, 9), (4, 3, 3), dict(strides=2, padding="SAME")),
    (1, "NWC", (2, 8, 3), (2, 2, 3), dict(dilations=2, padding="SAME")),
    (3, "NCDHW", (1, 2, 4, 4, 3), (3, 2, 2, 3, 2), dict(padding="SAME")),
    (3, "NDHWC", (2, 3, 4, 5, 2), (2, 2, 2, 3, 2), dict(strides=[1, 2, 2])),
]


@pytest.mark.parametrize("rank, data_format, x_shape, w_shape, kwargs", CASES,
                         ids=["%dd-%s-%s" % (c[0], c[1], "-".join(map(str, c[4].items())))
                              for c in CASES])
def test_conv_float64(rank, data_format, x_shape, w_shape, kwargs):
    flow_fn, numpy_fn = conv_case(rank, data_format, x_shape, w_shape, **kwargs)
    check_op(flow_fn, numpy_fn, [x_shape, w_shape], flow.float64, weight_output=True)


def test_conv_float32_matches_torch_gradients():
    """A LeNet-sized layer in float32: forward and both gradients against PyTorch's autograd."""
    x_shape, w_shape = (8, 6, 14, 14), (16, 6, 5, 5)
    flow_fn, numpy_fn = conv_case(2, "NCHW", x_shape, w_shape, padding="SAME")
    x, w = random_inputs([x_shape, w_shape], flow.float32, seed=3)
    out, gradients = run_op(flow_fn, [x, w], differentiable=[0, 1])
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = torch_conv(tx, tw, [1, 1], [(2, 2), (2, 2)], [1, 1], 1, True)
    ty.sum().backward()
    np.testing.assert_allclose(out, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gradients[1], tw.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_conv_float32_resnet_sized_layer_matches_float64():
    """A 3x3 ResNet layer big enough for Winograd (conv.cpp's kWinogradMinFlops): forward and both
    gradients within float32 accuracy of PyTorch in float64 (errors relative to the largest
    magnitude, as Winograd's rounding is; direct convolution is about 3x tighter)."""
    x_shape, w_shape = (16, 64, 16, 16), (64, 64, 3, 3)
    flow_fn, _ = conv_case(2, "NCHW", x_shape, w_shape, padding="SAME")
    x, w = random_inputs([x_shape, w_shape], flow.float32, seed=5)
    out, gradients = run_op(flow_fn, [x, w], differentiable=[0, 1])
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    ty = torch_conv(tx, tw, [1, 1], [(1, 1), (1, 1)], [1, 1], 1, True)
    ty.sum().backward()
    for actual, expected in [(out, ty.detach().numpy()), (gradients[0], tx.grad.numpy()),
                             (gradients[1], tw.grad.numpy())]:
        magnitude = np.abs(expected).max()
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * magnitude)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv_float32_check_op(data_format):
    x_shape = (3, 4, 6, 6) if data_format == "NCHW" else (3, 6, 6, 4)
    w_shape = (4, 2, 3, 3) if data_format == "NCHW" else (4, 3, 3, 2)
    flow_fn, numpy_fn = conv_case(2, data_format, x_shape, w_shape, padding="SAME", groups=2)
    check_op(flow_fn, lambda x, w: numpy_fn(x, w).astype(np.float32), [x_shape, w_shape],
             flow.float32, forward_tolerance=dict(rtol=1e-5, atol=1e-5))


def test_compat_conv2d_same_is_same_upper():
    x_shape, w_shape = (1, 1, 6, 6), (1, 1, 2, 2)
    _, numpy_fn = conv_case(2, "NCHW", x_shape, w_shape, padding="SAME_UPPER")
    check_op(lambda x, w: flow.nn.compat_conv2d(x, w, 1, "SAME"), numpy_fn, [x_shape, w_shape],
             flow.float64, multi_device=False)


def _run_job(body, *shapes, dtype=flow.float32):
    flow.clear_default_session()
    arrays = random_inputs(shapes, dtype)
    placeholders = [tp.Numpy.Placeholder(s, dtype=dtype) for s in shapes]
    if len(shapes) == 1:
        @flow.global_function()
        def job(x: placeholders[0]) -> tp.Numpy:
            return body(x)
    else:
        @flow.global_function()
        def job(x: placeholders[0], w: placeholders[1]) -> tp.Numpy:
            return body(x, w)
    return job(*arrays), arrays


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_layers_conv2d(data_format):
    x_shape = (2, 3, 8, 8) if data_format == "NCHW" else (2, 8, 8, 3)

    def body(x):
        return flow.layers.conv2d(
            x, 4, kernel_size=3, strides=2, padding="SAME", data_format=data_format,
            activation=flow.nn.relu, kernel_initializer=flow.constant_initializer(0.1),
            bias_initializer=flow.constant_initializer(-0.2), name="conv1")

    out, (x,) = _run_job(body, x_shape)
    channels_first = data_format == "NCHW"
    w = np.full((4, 3, 3, 3), 0.1, np.float32)
    expected = torch_conv(x if channels_first else np.moveaxis(x, -1, 1), w, [2, 2],
                          spatial_pads("SAME", (2, 3, 8, 8), [3, 3], [2, 2], [1, 1], True),
                          [1, 1], 1, True).numpy() - 0.2
    expected = np.maximum(expected, 0)
    if not channels_first:
        expected = np.moveaxis(expected, 1, -1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    names = set(flow.get_all_variables())
    assert {"conv1-weight", "conv1-bias"} <= names, names


def test_layers_conv1d_and_conv3d_shapes_and_names():
    def body(x):
        y = flow.layers.conv1d(x, 5, kernel_size=3, padding="SAME", use_bias=False,
                               name="c1", weight_name="my_weight")
        return y

    out, _ = _run_job(body, (2, 3, 10))
    assert out.shape == (2, 5, 10)
    assert "my_weight" in set(flow.get_all_variables())

    out, _ = _run_job(lambda x: flow.layers.conv3d(x, 2, kernel_size=[1, 2, 2], strides=2,
                                                    groups=2, name="c3"), (1, 4, 2, 4, 4))
    assert out.shape == (1, 2, 1, 2, 2)


def test_layers_conv2d_trains():
    """The gradient reaches the layer's variables: one SGD step lowers a squared loss."""
    flow.clear_default_session()
    x = random_inputs([(4, 1, 8, 8)], flow.float32, seed=1)[0]

    @flow.global_function(type="train")
    def job(images: tp.Numpy.Placeholder((4, 1, 8, 8))) -> tp.Numpy:
        y = flow.layers.conv2d(images, 3, kernel_size=3, padding="SAME", name="conv",
                               kernel_initializer=flow.random_uniform_initializer(-0.5, 0.5))
        y = flow.nn.max_pool2d(y, 2, 2, "VALID")
        loss = flow.math.reduce_mean(flow.math.square(y - 1.0))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(loss)
        return loss

    losses = [job(x).item() for _ in range(5)]
    assert losses[-1] < losses[0], losses


def _conv_error(x_shape, w_shape, rank=2, **kwargs):
    conv = {1: flow.nn.conv1d, 2: flow.nn.conv2d, 3: flow.nn.conv3d}[rank]
    kwargs.setdefault("strides", 1)
    kwargs.setdefault("padding", "VALID")
    _run_job(lambda x, w: conv(x, w, **kwargs), x_shape, w_shape)


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", [
    ((1, 1, 2, 2), (1, 1, 3, 3), {}, r"conv2d: the window is larger than the padded input"),
    ((1, 1, 3, 3), (1, 1, 3, 3), dict(dilations=2, padding="SAME"), None),  # SAME always fits
    ((1, 3, 5, 5), (2, 2, 3, 3), {}, r"conv2d: the input has 3 channels .* expects 2"),
    ((1, 3, 5, 5), (2, 1, 3, 3), dict(groups=2),
     r"conv2d: groups=2 must divide both the input channels \(3"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(strides=0), r"conv2d: strides must be positive"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(dilations=[1, -1]), r"conv2d: dilations must be positive"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(strides=2 ** 31),
     r"conv2d: strides must be positive and below 2\^31, got \[2147483648, 2147483648\]"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(padding=[(0, 2 ** 31), (0, 0)]),
     r"conv2d: explicit padding must be non-negative and below 2\^31"),
    ((1, 3, 5), (2, 3, 3, 3), {}, r"conv2d: input must have rank 4, got shape \(1, 3, 5\)"),
    ((1, 3, 5, 5), (2, 3, 3), {}, r"conv2d: filters must have rank 4"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(padding="FULL"), r"conv2d: padding must be 'VALID'"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(padding=[1, 1, 1]), r"conv2d: explicit padding must have"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(padding=[0, 1, 1, 1]),
     r"must be 0 on the batch and channel axes"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(padding=[(-1, 0), (0, 0)]),
     r"conv2d: explicit padding must be non-negative"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(data_format="NHCW"),
     r"conv2d: data_format must be 'NCHW' or 'NHWC'"),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(groups=0), r"conv2d: groups must be positive"),
])
def test_conv_errors(x_shape, w_shape, kwargs, message):
    if message is None:
        _conv_error(x_shape, w_shape, **kwargs)
        return
    with pytest.raises(ValueError, match=message):
        _conv_error(x_shape, w_shape, **kwargs)


def test_conv_error_names_the_op_and_shapes():
    with pytest.raises(ValueError) as info:
        _conv_error((2, 4, 3, 3), (5, 4, 2, 5), padding=[(0, 0), (1, 0)])
    text = str(info.value)
    assert "conv2d" in text and "(2, 4, 3, 3)" in text and "padded to 4" in text, text


def test_conv_rejects_mixed_dtypes():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 1, 4, 4)),
            w: tp.Numpy.Placeholder((1, 1, 3, 3), dtype=flow.float64)) -> tp.Numpy:
        return flow.nn.conv2d(x, w, 1, "VALID")

    with pytest.raises(TypeError, match="conv2d"):
        job(np.zeros((1, 1, 4, 4), np.float32), np.zeros((1, 1, 3, 3)))


# The gradient ops alone, so that the multi-device pass runs each of their declared signatures
# too (inside a train job autograd adds them and the compiler picks their signatures).
GRAD_CASES = [
    (2, "NCHW", (3, 4, 5, 5), (4, 4, 3, 3), dict(strides=2, padding="SAME"), 1),
    (2, "NHWC", (2, 5, 4, 4), (6, 2, 3, 2), dict(padding=[(1, 0), (0, 1)], dilations=2), 2),
    (1, "NWC", (3, 7, 3), (4, 3, 3), dict(padding="SAME_LOWER"), 1),
    (3, "NCDHW", (2, 2, 3, 4, 3), (3, 2, 2, 2, 2), dict(strides=[1, 2, 1]), 1),
]


def _grad_op_attrs(rank, data_format, x_shape, w_shape, kwargs, groups):
    from oneflow.ops.conv_ops import _padding

    channels_first = data_format.startswith("NC")
    mode, before, after = _padding("test", kwargs.get("padding", "VALID"), rank, channels_first)
    return {
        "num_spatial_dims": rank,
        "data_format": "channels_first" if channels_first else "channels_last",
        "kernel_size": list(w_shape[2:] if channels_first else w_shape[1:-1]),
        "strides": _as_list(kwargs.get("strides", 1), rank),
        "dilation_rate": _as_list(kwargs.get("dilations", 1), rank),
        "padding": mode, "padding_before": before, "padding_after": after, "groups": groups,
    }


def _torch_conv_grads(rank, data_format, x, w, dy, kwargs, groups):
    channels_first = data_format.startswith("NC")
    kernel = list(w.shape[2:] if channels_first else w.shape[1:-1])
    strides = _as_list(kwargs.get("strides", 1), rank)
    dilations = _as_list(kwargs.get("dilations", 1), rank)
    pads = spatial_pads(kwargs.get("padding", "VALID"), x.shape, kernel, strides, dilations,
                        channels_first)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch_conv(tx, tw, strides, pads, dilations, groups, channels_first).backward(
        torch.as_tensor(dy))
    return tx.grad.numpy(), tw.grad.numpy()


def _grad_case_inputs(rank, data_format, x_shape, w_shape, kwargs, groups):
    _, numpy_fn = conv_case(rank, data_format, x_shape, w_shape, groups=groups, **kwargs)
    x, w = random_inputs([x_shape, w_shape], flow.float64)
    dy = random_inputs([numpy_fn(x, w).shape], flow.float64, seed=7)[0]
    return x, w, dy


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: "%dd-%s-groups%d" % (c[0], c[1], c[5]))
def test_conv_data_grad_op(case):
    from oneflow.framework import op_builder

    x, w, dy = _grad_case_inputs(*case)
    attrs = _grad_op_attrs(*case)

    def flow_fn(dy_blob, w_blob, x_blob):
        name = op_builder.op_name(None, "ConvDataGrad_")
        return op_builder.add_op("conv_data_grad", name, {"dy": dy_blob, "weight": w_blob,
                                                          "x_like": x_blob}, attrs)["dx"][0]

    check_op(flow_fn, lambda dy, w, x: _torch_conv_grads(case[0], case[1], x, w, dy, case[4],
                                                         case[5])[0],
             inputs=[dy, w, x], differentiable=[])


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: "%dd-%s-groups%d" % (c[0], c[1], c[5]))
def test_conv_filter_grad_op(case):
    from oneflow.framework import op_builder

    x, w, dy = _grad_case_inputs(*case)
    attrs = _grad_op_attrs(*case)

    def flow_fn(dy_blob, x_blob):
        name = op_builder.op_name(None, "ConvFilterGrad_")
        return op_builder.add_op("conv_filter_grad", name, {"dy": dy_blob, "x": x_blob},
                                 attrs)["filter_diff"][0]

    check_op(flow_fn, lambda dy, x: _torch_conv_grads(case[0], case[1], x, w, dy, case[4],
                                                      case[5])[1],
             inputs=[dy, x], differentiable=[])
