"""flow.nn.conv2d_transpose (op deconv2d) against PyTorch 1.13's conv_transpose2d: NCHW and NHWC,
VALID and SAME (odd and even cropping), strides, dilations, output_shape beyond the smallest
size (output padding), output_shape left out; float64 gradients of both inputs against finite
differences and every declared SBP signature on 2-4 devices (check_op); float32 against
PyTorch's autograd (oneDNN paths); the errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, random_inputs, run_op


def torch_conv_transpose(x, w, strides, dilations, crop_before, out_sizes, channels_first):
    """The transposed convolution in PyTorch: the full output ((in - 1) * stride + window per
    axis), zero-extended at the end where out_sizes asks for more, cropped to
    [crop_before, crop_before + out)."""
    tx, tw = torch.as_tensor(x), torch.as_tensor(w)
    if not channels_first:
        tx, tw = tx.movedim(-1, 1), tw.movedim(-1, 1)
    full = F.conv_transpose2d(tx, tw, stride=strides, dilation=dilations)
    extra = [max(0, b + o - f) for b, o, f in zip(crop_before, out_sizes, full.shape[2:])]
    full = F.pad(full, [0, extra[1], 0, extra[0]])
    y = full[:, :, crop_before[0]:crop_before[0] + out_sizes[0],
             crop_before[1]:crop_before[1] + out_sizes[1]]
    return y if channels_first else y.movedim(1, -1)


def deconv_case(data_format, x_shape, w_shape, strides, padding="VALID", dilations=1,
                output_shape=None):
    """(flow_fn, numpy_fn, output shape) of one transposed convolution."""
    channels_first = data_format == "NCHW"
    strides2 = [strides] * 2 if isinstance(strides, int) else list(strides)
    dilations2 = [dilations] * 2 if isinstance(dilations, int) else list(dilations)
    in_sizes = x_shape[2:] if channels_first else x_shape[1:3]
    kernel = w_shape[2:] if channels_first else w_shape[1:3]
    out_channels = w_shape[1] if channels_first else w_shape[3]
    windows = [(k - 1) * d + 1 for k, d in zip(kernel, dilations2)]
    if output_shape is None:
        sizes = [i * s if padding == "SAME" else (i - 1) * s + w
                 for i, s, w in zip(in_sizes, strides2, windows)]
        shape = ((x_shape[0], out_channels) + tuple(sizes) if channels_first
                 else (x_shape[0],) + tuple(sizes) + (out_channels,))
    else:
        shape = tuple(output_shape)
    out_sizes = shape[2:] if channels_first else shape[1:3]
    crop = [0, 0]
    if padding == "SAME":  # TensorFlow's rule: the convolution's padding, smaller half first
        crop = [max(0, (i - 1) * s + w - o) // 2
                for i, s, w, o in zip(in_sizes, strides2, windows, out_sizes)]

    def flow_fn(x, w):
        return flow.nn.conv2d_transpose(x, w, output_shape=output_shape, strides=strides,
                                        padding=padding, data_format=data_format,
                                        dilations=dilations)

    def numpy_fn(x, w):
        return torch_conv_transpose(x, w, strides2, dilations2, crop, out_sizes,
                                    channels_first).numpy()

    return flow_fn, numpy_fn, shape


# (data_format, x shape, weight shape, keyword arguments, expected output shape)
CASES = [
    ("NCHW", (2, 3, 4, 4), (3, 2, 3, 3), dict(strides=2), (2, 2, 9, 9)),
    ("NCHW", (2, 3, 4, 4), (3, 2, 3, 3), dict(strides=2, output_shape=(2, 2, 10, 9)),
     (2, 2, 10, 9)),
    ("NCHW", (1, 2, 4, 3), (2, 3, 3, 3), dict(strides=2, padding="SAME"), (1, 3, 8, 6)),
    ("NCHW", (2, 2, 3, 3), (2, 2, 4, 4), dict(strides=2, padding="SAME",
                                                output_shape=(2, 2, 5, 6)), (2, 2, 5, 6)),
    ("NHWC", (2, 4, 3, 3), (3, 3, 3, 2), dict(strides=1, padding="SAME", dilations=2),
     (2, 4, 3, 2)),
    ("NCHW", (2, 3, 3, 4), (3, 4, 2, 3), dict(strides=[1, 2], dilations=[2, 1]), (2, 4, 5, 9)),
    ("NHWC", (1, 3, 4, 2), (2, 2, 3, 3), dict(strides=[2, 3], padding="SAME",
                                                output_shape=(1, 5, 12, 3)), (1, 5, 12, 3)),
]


@pytest.mark.parametrize("data_format, x_shape, w_shape, kwargs, expected", CASES,
                         ids=["%s-%s" % (c[0], "-".join("%s%s" % kv for kv in c[3].items()))
                              for c in CASES])
def test_conv2d_transpose_float64(data_format, x_shape, w_shape, kwargs, expected):
    flow_fn, numpy_fn, shape = deconv_case(data_format, x_shape, w_shape, **kwargs)
    assert shape == expected
    out, gradients = check_op(flow_fn, numpy_fn, [x_shape, w_shape], flow.float64,
                              weight_output=True)
    assert out.shape == expected
    assert sorted(gradients) == [0, 1]


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv2d_transpose_float32_matches_torch(data_format):
    """float32 (oneDNN backward-data for the op; oneDNN forward and backward-weights for its
    gradients), with odd SAME cropping, against PyTorch's autograd."""
    channels_first = data_format == "NCHW"
    x_shape = (4, 8, 7, 7) if channels_first else (4, 7, 7, 8)
    w_shape = (8, 6, 3, 3) if channels_first else (8, 3, 3, 6)
    output_shape = (4, 6, 14, 14) if channels_first else (4, 14, 14, 6)
    flow_fn, numpy_fn, _ = deconv_case(data_format, x_shape, w_shape, strides=2, padding="SAME",
                                       output_shape=output_shape)
    x, w = random_inputs([x_shape, w_shape], flow.float32, seed=5)
    out, gradients = run_op(flow_fn, [x, w], differentiable=[0, 1])
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    crop = [(6 * 2 + 3 - 14) // 2] * 2
    ty = torch_conv_transpose(tx, tw, [2, 2], [1, 1], crop, [14, 14], channels_first)
    ty.sum().backward()
    assert out.shape == output_shape
    np.testing.assert_allclose(out, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gradients[1], tw.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_accepts_input_and_filters_aliases():
    x_shape, w_shape = (1, 2, 3, 3), (2, 1, 2, 2)
    _, numpy_fn, _ = deconv_case("NCHW", x_shape, w_shape, strides=1)
    check_op(lambda x, w: flow.nn.conv2d_transpose(input=x, filters=w, output_shape=(1, 1, 4, 4),
                                                   strides=1),
             numpy_fn, [x_shape, w_shape], flow.float64, multi_device=False)


def _deconv_error(x_shape, w_shape, **kwargs):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(x_shape), w: tp.Numpy.Placeholder(w_shape)) -> tp.Numpy:
        return flow.nn.conv2d_transpose(x, w, **kwargs)

    job(np.zeros(x_shape, np.float32), np.zeros(w_shape, np.float32))


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", [
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=2, output_shape=(1, 2, 11, 9)),
     r"conv2d_transpose: with VALID padding, output size 11 on spatial axis 0 .* \[9, 10\]"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=2, padding="SAME", output_shape=(1, 2, 8, 9)),
     r"conv2d_transpose: with SAME padding and stride 2, output size 9 on spatial axis 1"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=2, output_shape=(1, 2, 9)),
     r"conv2d_transpose: output_shape must have 4 dims"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(), r"conv2d_transpose: strides must be an int"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=0), r"conv2d_transpose: strides must be positive"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=1, padding="FULL"),
     r"conv2d_transpose: padding must be 'VALID' or 'SAME'"),
    ((1, 3, 4, 4), (3, 2, 3, 3), dict(strides=1, data_format="NCWH"),
     r"conv2d_transpose: data_format must be 'NCHW' or 'NHWC'"),
    ((1, 3, 4, 4), (3, 2, 3), dict(strides=1), r"conv2d_transpose: filter must have rank 4"),
    ((1, 3, 4, 4), (2, 2, 3, 3), dict(strides=1),
     r"deconv2d: the weight \(2, 2, 3, 3\) must have the input's 3 channels"),
])
def test_conv2d_transpose_errors(x_shape, w_shape, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _deconv_error(x_shape, w_shape, **kwargs)


def test_conv2d_transpose_needs_one_input_and_one_filter():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 1, 2, 2)),
            w: tp.Numpy.Placeholder((1, 1, 2, 2))) -> tp.Numpy:
        return flow.nn.conv2d_transpose(x, w, input=x, strides=1)

    with pytest.raises(ValueError, match="exactly one of `value` and `input`"):
        job(np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 2, 2), np.float32))


@pytest.mark.parametrize("attrs, message", [
    (dict(output_padding=[2, 0], strides=[2, 2]),
     r"deconv2d: output_padding \[2, 0\] must lie in \[0, stride\)"),
    (dict(padding="same_upper"), r"deconv2d: padding must be 'valid' or 'customized'"),
    (dict(padding="customized", padding_before=[3, 3], padding_after=[3, 3]),
     r"deconv2d: the output would have size -2 on spatial axis 0"),
    (dict(kernel_size=[2, 2]), r"deconv2d: kernel_size \[2, 2\] differs"),
    (dict(filters=5), r"deconv2d: filters=5 differs from the output channels 2"),
])
def test_deconv2d_op_attribute_errors(attrs, message):
    """The op's own checks, for attributes the Python wrapper always gets right."""
    from oneflow.framework import op_builder

    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 3, 2, 2)),
            w: tp.Numpy.Placeholder((3, 2, 3, 3))) -> tp.Numpy:
        return op_builder.add_single_output_op("deconv2d", "deconv", "Deconv_",
                                               {"in": x, "weight": w}, attrs)

    with pytest.raises(ValueError, match=message):
        job(np.zeros((1, 3, 2, 2), np.float32), np.zeros((3, 2, 3, 3), np.float32))


@pytest.mark.parametrize("function, x_shape, w_shape, given, expected", [
    # OneFlow 0.3's TensorFlow-style deconvolution, odd padding cropped at the end
    (lambda: flow.nn.conv2d_transpose_V2, (2, 2, 3, 3), (2, 2, 4, 4), (2, 2, 5, 6),
     (2, 2, 5, 6)),
    # as OneFlow 0.3, the batch and channel entries of output_shape are not read
    # (OneFlow-Benchmark's dcgan passes the input's channel count there)
    (lambda: flow.nn.conv2d_transpose, (2, 3, 4, 4), (3, 2, 3, 3), (7, 3, 8, 8), (2, 2, 8, 8)),
], ids=["conv2d_transpose_V2", "output_shape_spatial_only"])
def test_conv2d_transpose_oneflow_03_spellings(function, x_shape, w_shape, given, expected):
    _, numpy_fn, shape = deconv_case("NCHW", x_shape, w_shape, strides=2, padding="SAME",
                                     output_shape=expected)

    def flow_fn(x, w):
        return function()(x, w, output_shape=given, strides=2, padding="SAME")

    out, _ = check_op(flow_fn, numpy_fn, [x_shape, w_shape], flow.float64, multi_device=False)
    assert out.shape == shape == expected
