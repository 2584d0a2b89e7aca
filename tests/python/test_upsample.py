"""flow.layers.upsample_2d (op upsample) against PyTorch 1.13's F.interpolate: nearest and bilinear
(align_corners=False, OneFlow 0.3's default), NCHW and NHWC, equal and unequal scales; float64
gradients against finite differences and every declared SBP signature on 2-4 devices
(check_op); upsample_grad alone under its signatures; the errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, random_inputs


def torch_upsample(x, size, data_format, interpolation):
    scale = (size, size) if isinstance(size, int) else tuple(size)
    tx = torch.as_tensor(x)
    if data_format == "NHWC":
        tx = tx.movedim(-1, 1)
    kwargs = {} if interpolation == "nearest" else dict(align_corners=False)
    y = F.interpolate(tx, scale_factor=scale, mode=interpolation, **kwargs)
    if data_format == "NHWC":
        y = y.movedim(1, -1)
    return y.numpy()


CASES = [
    ("nearest", "NCHW", (2, 3, 3, 4), (2, 2)),
    ("nearest", "NHWC", (2, 3, 4, 3), (3, 2)),
    ("nearest", "NCHW", (1, 2, 2, 3), 3),
    ("bilinear", "NCHW", (2, 3, 3, 4), (2, 2)),
    ("bilinear", "NHWC", (2, 4, 3, 3), (2, 3)),
    ("bilinear", "NCHW", (1, 2, 1, 3), (4, 1)),
]


@pytest.mark.parametrize("interpolation, data_format, shape, size", CASES,
                         ids=["%s-%s-%s" % (c[0], c[1], c[3]) for c in CASES])
def test_upsample_2d_float64(interpolation, data_format, shape, size):
    def flow_fn(x):
        return flow.layers.upsample_2d(x, size=size, data_format=data_format,
                                       interpolation=interpolation)

    out, gradients = check_op(
        flow_fn, lambda x: torch_upsample(x, size, data_format, interpolation), [shape],
        flow.float64, weight_output=True)
    scale = (size, size) if isinstance(size, int) else size
    h_axis = 2 if data_format == "NCHW" else 1
    assert out.shape[h_axis] == shape[h_axis] * scale[0]
    assert out.shape[h_axis + 1] == shape[h_axis + 1] * scale[1]
    assert gradients[0].shape == shape


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_upsample_2d_float32_matches_torch(interpolation, data_format):
    shape = (2, 16, 9, 7) if data_format == "NCHW" else (2, 9, 7, 16)
    check_op(lambda x: flow.layers.upsample_2d(x, (2, 3), data_format, interpolation),
             lambda x: torch_upsample(x, (2, 3), data_format, interpolation), [shape],
             flow.float32, multi_device=False)


def test_upsample_nearest_repeats_pixels():
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    out, _ = check_op(lambda b: flow.layers.upsample_2d(b), lambda a: a.repeat(2, 2).repeat(2, 3),
                      inputs=[x], multi_device=False)
    np.testing.assert_array_equal(out[0, 0, :2, :2], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(out[0, 0, 3], [3, 3, 4, 4, 5, 5])


def test_upsample_bilinear_known_values():
    """Half-pixel centres, clamped at the borders: [0, 1] upsampled by 2 is [0, .25, .75, 1]."""
    x = np.array([[[[0.0, 1.0]]]])
    out, _ = check_op(lambda b: flow.layers.upsample_2d(b, (1, 2), interpolation="bilinear"),
                      lambda a: np.array([[[[0.0, 0.25, 0.75, 1.0]]]]), inputs=[x],
                      check_backward=False, multi_device=False)
    assert out.shape == (1, 1, 1, 4)


def test_upsample_2d_used_twice_with_the_default_name():
    check_op(lambda x: flow.layers.upsample_2d(flow.layers.upsample_2d(x)),
             lambda a: a.repeat(4, 2).repeat(4, 3), [(1, 2, 2, 2)], multi_device=False)


@pytest.mark.parametrize("interpolation, data_format", [("nearest", "NCHW"),
                                                         ("bilinear", "NHWC")])
def test_upsample_grad_op(interpolation, data_format):
    """upsample_grad alone, so that the multi-device pass runs each of its signatures."""
    from oneflow.framework import op_builder

    x_shape = (2, 3, 3, 2) if data_format == "NCHW" else (2, 3, 2, 3)
    x = random_inputs([x_shape], flow.float64)[0]
    y_shape = torch_upsample(x, (2, 3), data_format, interpolation).shape
    dy = random_inputs([y_shape], flow.float64, seed=4)[0]
    attrs = {"height_scale": 2.0, "width_scale": 3.0, "interpolation": interpolation,
             "data_format": "channels_first" if data_format == "NCHW" else "channels_last"}

    def flow_fn(dy_blob, x_blob):
        return op_builder.add_op("upsample_grad", op_builder.op_name(None, "UpsampleGrad"),
                                 {"dy": dy_blob, "x": x_blob}, attrs)["dx"][0]

    def numpy_fn(dy_value, x_value):
        tx = torch.tensor(x_value, requires_grad=True)
        moved = tx.movedim(-1, 1) if data_format == "NHWC" else tx
        kwargs = {} if interpolation == "nearest" else dict(align_corners=False)
        y = F.interpolate(moved, scale_factor=(2, 3), mode=interpolation, **kwargs)
        y = y.movedim(1, -1) if data_format == "NHWC" else y
        y.backward(torch.as_tensor(dy_value))
        return tx.grad.numpy()

    dx, _ = check_op(flow_fn, numpy_fn, inputs=[dy, x], differentiable=[])
    np.testing.assert_allclose(dx.sum(), dy.sum(), rtol=1e-12)  # each dy element is spread whole


@pytest.mark.parametrize("interpolation, data_format", [("nearest", "NCHW"), ("nearest", "NHWC"),
                                                         ("bilinear", "NCHW")])
def test_upsample_grad_with_scales_that_leave_inputs_unread(interpolation, data_format):
    """Non-integer scales: floor(o / 1.15) over 11 outputs and floor(o / 1.25) over 12 never reach
    input index 9, so no output reads that row and column and their gradient is 0. (Where the
    output size equals the input size, OneFlow still maps with 1 / scale but PyTorch maps each
    index to itself, so those scales have no torch reference.)"""
    from oneflow.framework import op_builder

    x_shape = (1, 2, 10, 10) if data_format == "NCHW" else (1, 10, 10, 2)
    scales = (1.15, 1.25)
    x = random_inputs([x_shape], flow.float64)[0]
    y_shape = torch_upsample(x, scales, data_format, interpolation).shape
    dy = random_inputs([y_shape], flow.float64, seed=5)[0]
    attrs = {"height_scale": scales[0], "width_scale": scales[1], "interpolation": interpolation,
             "data_format": "channels_first" if data_format == "NCHW" else "channels_last"}

    def flow_fn(dy_blob, x_blob):
        return op_builder.add_op("upsample_grad", op_builder.op_name(None, "UpsampleGrad"),
                                 {"dy": dy_blob, "x": x_blob}, attrs)["dx"][0]

    def numpy_fn(dy_value, x_value):
        tx = torch.tensor(x_value, requires_grad=True)
        moved = tx.movedim(-1, 1) if data_format == "NHWC" else tx
        kwargs = {} if interpolation == "nearest" else dict(align_corners=False)
        y = F.interpolate(moved, scale_factor=scales, mode=interpolation, **kwargs)
        y = y.movedim(1, -1) if data_format == "NHWC" else y
        y.backward(torch.as_tensor(dy_value))
        return tx.grad.numpy()

    dx, _ = check_op(flow_fn, numpy_fn, inputs=[dy, x], differentiable=[])
    np.testing.assert_allclose(dx.sum(), dy.sum(), rtol=1e-12)


def _upsample_error(shape, **kwargs):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return flow.layers.upsample_2d(x, **kwargs)

    job(np.zeros(shape, np.float32))


@pytest.mark.parametrize("shape, kwargs, message", [
    ((1, 1, 2, 2), dict(size=0), r"upsample_2d: size must be at least 1"),
    ((1, 1, 2, 2), dict(size=(2, 2, 2)), r"upsample_2d: size must be an int or a pair"),
    ((1, 1, 2, 2), dict(size=1.5), r"upsample_2d: size must be an int or a pair"),
    ((1, 1, 2, 2), dict(interpolation="bicubic"),
     r"upsample_2d: interpolation must be 'nearest' or 'bilinear'"),
    ((1, 1, 2, 2), dict(data_format="NCWH"), r"upsample_2d: data_format must be 'NCHW'"),
    ((1, 2, 2), dict(), r"upsample_2d: x must have rank 4, got shape \(1, 2, 2\)"),
])
def test_upsample_2d_errors(shape, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _upsample_error(shape, **kwargs)


@pytest.mark.parametrize("attrs, message", [
    (dict(height_scale=0.5), r"upsample: height_scale and width_scale must be finite and at "
                             r"least 1, got 0.5 and 2"),
    (dict(interpolation="area"), r"upsample: interpolation must be 'nearest' or 'bilinear'"),
    (dict(data_format="NCHW"), r"upsample: data_format must be channels_first or channels_last"),
])
def test_upsample_op_attribute_errors(attrs, message):
    from oneflow.framework import op_builder

    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 1, 2, 2))) -> tp.Numpy:
        return op_builder.add_single_output_op("upsample", "up", "Up", {"x": x}, attrs,
                                               output="y")

    with pytest.raises(ValueError, match=message):
        job(np.zeros((1, 1, 2, 2), np.float32))


def test_upsample_rejects_integer_input():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 1, 2, 2), dtype=flow.int32)) -> tp.Numpy:
        return flow.layers.upsample_2d(x)

    with pytest.raises(TypeError, match="upsample"):
        job(np.zeros((1, 1, 2, 2), np.int32))
