"""flow.nn.max_pool1d/2d/3d and flow.nn.avg_pool1d/2d/3d against PyTorch 1.13: both data
formats, VALID / SAME / SAME_LOWER / explicit padding, ceil_mode; the mean excludes padding from
each window's count (TensorFlow's and OneFlow's avg pool). float64 gradients against finite
differences and every declared SBP signature on 2-4 devices (check_op); float32 gradients
against PyTorch's; the errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, random_inputs, run_op

FLOW_POOL = {
    ("max", 1): flow.nn.max_pool1d, ("max", 2): flow.nn.max_pool2d,
    ("max", 3): flow.nn.max_pool3d, ("avg", 1): flow.nn.avg_pool1d,
    ("avg", 2): flow.nn.avg_pool2d, ("avg", 3): flow.nn.avg_pool3d,
}
TORCH_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
TORCH_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def pool_pads(padding, sizes, ksize, strides, ceil_mode=False):
    """(before, after) per spatial axis as the kernels use them (ceil_mode widens `after`)."""
    pads = []
    for axis, size in enumerate(sizes):
        k, s = ksize[axis], strides[axis]
        if isinstance(padding, str):
            if padding == "VALID":
                before = after = 0
            else:
                out = -(-size // s)
                needed = max(0, (out - 1) * s + k - size)
                before = needed - needed // 2 if padding == "SAME_LOWER" else needed // 2
                after = needed - before
        else:
            before, after = padding[axis]
        if ceil_mode:
            out = -(-(size + before + after - k) // s) + 1
            if (out - 1) * s >= size + before:
                out -= 1
            after = max(after, (out - 1) * s + k - size - before)
        pads.append((before, after))
    return pads


def torch_pool(kind, x, ksize, strides, pads, channels_first):
    tx = torch.as_tensor(x)
    if not channels_first:
        tx = tx.movedim(-1, 1)
    n = len(ksize)
    flat = [side for pair in reversed(pads) for side in pair]
    if kind == "max":
        y = TORCH_MAX[n](F.pad(tx, flat, value=-float("inf")), ksize, strides)
    else:
        window = float(np.prod(ksize))
        total = TORCH_AVG[n](F.pad(tx, flat), ksize, strides) * window
        count = TORCH_AVG[n](F.pad(torch.ones_like(tx), flat), ksize, strides) * window
        y = total / count
    if not channels_first:
        y = y.movedim(1, -1)
    return y


def pool_case(kind, rank, data_format, x_shape, ksize, strides, padding, ceil_mode=False):
    channels_first = data_format.startswith("NC")
    sizes = x_shape[2:] if channels_first else x_shape[1:-1]
    ksize_list = [ksize] * rank if isinstance(ksize, int) else list(ksize)
    strides_list = [strides] * rank if isinstance(strides, int) else list(strides)
    spatial_padding = padding
    if not isinstance(padding, str):
        pairs = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
        if len(pairs) == rank + 2:
            pairs = pairs[2:] if channels_first else pairs[1:-1]
        spatial_padding = pairs
    pads = pool_pads(spatial_padding, sizes, ksize_list, strides_list, ceil_mode)
    extra = {"ceil_mode": True} if ceil_mode else {}

    def flow_fn(x):
        return FLOW_POOL[kind, rank](x, ksize, strides, padding, data_format=data_format, **extra)

    def numpy_fn(x):
        return torch_pool(kind, x, ksize_list, strides_list, pads, channels_first).numpy()

    return flow_fn, numpy_fn


# (rank, data_format, x shape, ksize, strides, padding, ceil_mode)
CASES = [
    (2, "NCHW", (2, 3, 6, 6), 2, 2, "VALID", False),
    (2, "NHWC", (2, 5, 7, 3), 3, 2, "SAME", False),
    (2, "NCHW", (1, 2, 6, 5), [2, 3], [2, 1], "SAME_LOWER", False),
    (2, "NCHW", (2, 2, 5, 5), 3, 2, [(1, 1), (0, 1)], False),
    (2, "NHWC", (1, 5, 6, 2), 2, 2, [0, (1, 0), (0, 1), 0], False),
    (2, "NCHW", (1, 2, 7, 6), 3, 2, "VALID", True),
    (1, "NWC", (2, 7, 3), 3, 2, "SAME", False),
    (1, "NCW", (2, 3, 8), 2, 1, "VALID", False),
    (3, "NCDHW", (1, 2, 4, 5, 3), 2, [2, 2, 1], "SAME", False),
    (3, "NDHWC", (2, 3, 4, 4, 2), [1, 2, 2], 2, "VALID", False),
]


def _case_id(case):
    return "%dd-%s-k%s-s%s-%s%s" % (case[0], case[1], case[3], case[4], case[5],
                                    "-ceil" if case[6] else "")


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("rank, data_format, x_shape, ksize, strides, padding, ceil_mode", CASES,
                         ids=[_case_id(c) for c in CASES])
def test_pool_float64(kind, rank, data_format, x_shape, ksize, strides, padding, ceil_mode):
    flow_fn, numpy_fn = pool_case(kind, rank, data_format, x_shape, ksize, strides, padding,
                                  ceil_mode)
    check_op(flow_fn, numpy_fn, [x_shape], flow.float64, weight_output=True)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_pool_float32_check_op(kind, data_format):
    x_shape = (3, 4, 7, 6) if data_format == "NCHW" else (3, 7, 6, 4)
    flow_fn, numpy_fn = pool_case(kind, 2, data_format, x_shape, 3, 2, "SAME")
    check_op(flow_fn, lambda x: numpy_fn(x).astype(np.float32), [x_shape], flow.float32)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_float32_matches_torch_gradients(kind):
    """LeNet's pool (2x2, stride 2) on a larger float32 input, and a padded 3x3 SAME pool:
    forward and gradient against PyTorch's autograd with a random output gradient."""
    for x_shape, ksize, strides, padding in [((8, 16, 28, 28), 2, 2, "VALID"),
                                             ((4, 8, 9, 9), 3, 2, "SAME")]:
        flow_fn, _ = pool_case(kind, 2, "NCHW", x_shape, ksize, strides, padding)
        x = random_inputs([x_shape], flow.float32, seed=5)[0]
        sizes = x_shape[2:]
        pads = pool_pads(padding, sizes, [ksize] * 2, [strides] * 2)
        tx = torch.tensor(x, requires_grad=True)
        ty = torch_pool(kind, tx, [ksize] * 2, [strides] * 2, pads, True)
        weight = np.random.RandomState(6).uniform(0.5, 2.0, ty.shape).astype(np.float32)
        (ty * torch.as_tensor(weight)).sum().backward()
        out, gradients = run_op(flow_fn, [x], differentiable=[0], weight=weight)
        np.testing.assert_allclose(out, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("x_shape, ksize, strides, padding", [
    ((2, 3, 7, 9), 2, 2, "VALID"),   # disjoint 2x2 windows; the last row and column uncovered
    ((2, 3, 8, 8), 2, 2, "VALID"),   # disjoint 2x2 windows covering everything
    ((2, 3, 7, 7), 3, 2, "SAME"),    # overlapping, padded windows
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_ties_and_nan_follow_torch(data_format, x_shape, ksize, strides, padding, dtype):
    """Max pooling where windows hold equal maxima (the first in scan order gets the gradient)
    and NaNs (a NaN is the maximum, as in PyTorch: the output and the gradient), against
    PyTorch."""
    rng = np.random.RandomState(7)
    x = rng.randint(0, 3, size=x_shape).astype(dtype)  # many ties
    x[0, 0, 1, 1] = np.nan
    x[1, 2, 4, 5] = np.nan
    pads = pool_pads(padding, x_shape[2:], [ksize] * 2, [strides] * 2)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch_pool("max", tx, [ksize] * 2, [strides] * 2, pads, True)
    weight = rng.uniform(0.5, 2.0, ty.shape).astype(dtype)
    (ty * torch.as_tensor(weight)).sum().backward()
    expected, expected_y = tx.grad.numpy(), ty.detach().numpy()
    channels_last = (0, 2, 3, 1)
    if data_format == "NHWC":
        x, weight = x.transpose(channels_last), weight.transpose(channels_last)
    flow_fn, _ = pool_case("max", 2, data_format, x.shape, ksize, strides, padding)
    y, gradients = run_op(flow_fn, [x], differentiable=[0], weight=weight)
    if data_format == "NHWC":
        y, gradients[0] = y.transpose(0, 3, 1, 2), gradients[0].transpose(0, 3, 1, 2)
    assert np.isnan(expected_y).any()
    np.testing.assert_array_equal(y, expected_y)
    np.testing.assert_array_equal(gradients[0], expected)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_of_a_window_of_minus_infinity_is_minus_infinity(padding, dtype):
    # oneDNN's max starts from the lowest finite float: such a window gave -3.4e38.
    x = np.array([[[[-np.inf, -np.inf], [-np.inf, -np.inf]]],
                  [[[1.0, -np.inf], [-np.inf, 2.0]]]], dtype)
    flow_fn, _ = pool_case("max", 2, "NCHW", x.shape, 2, 2, padding)
    y, _ = run_op(flow_fn, [x], differentiable=[0])
    pads = pool_pads(padding, x.shape[2:], [2, 2], [2, 2])
    expected = torch_pool("max", torch.tensor(x), [2, 2], [2, 2], pads, True).numpy()
    np.testing.assert_array_equal(y, expected)
    assert y.ravel()[0] == -np.inf


def test_avg_pool_excludes_padding_from_the_count():
    """A 3x3 SAME mean at a corner averages the 4 input elements, not 9 with 5 zeros."""
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((1, 1, 3, 3))) -> tp.Numpy:
        return flow.nn.avg_pool2d(x, 3, 1, "SAME")

    out = job(np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3))
    assert out[0, 0, 0, 0] == pytest.approx((0 + 1 + 3 + 4) / 4.0)
    assert out[0, 0, 1, 1] == pytest.approx(4.0)


@pytest.mark.parametrize("ksize", [9, 2 ** 20])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_windows_longer_than_the_input_cover_it_whole(kind, ksize):
    """SAME windows longer than the (4, 5) planes: each covers its whole plane, so every output
    is the plane's max or mean; a window of 2^20 must cost no more than one of 9 (oneDNN walked
    the padding: minutes)."""
    x = np.random.RandomState(7).permutation(40).astype(np.float32).reshape(1, 2, 4, 5)
    fn = FLOW_POOL[(kind, 2)]
    out, gradients = run_op(lambda t: fn(t, ksize, 1, "SAME"), [x], differentiable=[0])
    plane = np.max if kind == "max" else np.mean
    expected = np.broadcast_to(plane(x, axis=(2, 3), keepdims=True), x.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # d sum(out) / dx: 20 outputs per plane, each the plane's mean (1/20 each) or its maximum.
    if kind == "avg":
        expected_gradient = np.ones_like(x)
    else:
        expected_gradient = np.where(x == expected, 20.0, 0.0).astype(np.float32)
    np.testing.assert_allclose(gradients[0], expected_gradient, rtol=1e-6)


def test_pool_defaults_follow_oneflow():
    """max_pool1d defaults to "NWC" and avg_pool1d to "NCW", as in OneFlow 0.3."""
    x = np.random.RandomState(0).rand(2, 6, 3).astype(np.float32)
    for fn, expected in [(flow.nn.max_pool1d, (2, 3, 3)), (flow.nn.avg_pool1d, (2, 6, 1))]:
        flow.clear_default_session()

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((2, 6, 3))) -> tp.Numpy:
            return fn(x, 2, 2, "VALID")

        assert job(x).shape == expected  # NWC: W 6 -> 3; NCW: W 3 -> 1


def _pool_error(x_shape, fn):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(x_shape)) -> tp.Numpy:
        return fn(x)

    job(np.zeros(x_shape, np.float32))


@pytest.mark.parametrize("x_shape, fn, message", [
    ((1, 1, 2, 2), lambda x: flow.nn.max_pool2d(x, 3, 1, "VALID"),
     r"max_pool_2d: the window is larger than the padded input"),
    ((1, 1, 4, 4), lambda x: flow.nn.avg_pool2d(x, 0, 1, "VALID"),
     r"avg_pool_2d: kernel size must be positive"),
    ((1, 1, 4, 4), lambda x: flow.nn.max_pool2d(x, 2, [1, 0], "VALID"),
     r"max_pool_2d: strides must be positive"),
    ((1, 1, 4, 4), lambda x: flow.nn.avg_pool2d(x, 2, 2 ** 31, "VALID"),
     r"avg_pool_2d: strides must be positive and below 2\^31"),
    ((1, 1, 4), lambda x: flow.nn.max_pool2d(x, 2, 2, "VALID"),
     r"max_pool_2d: input must have rank 4, got shape \(1, 1, 4\)"),
    ((1, 1, 4, 4), lambda x: flow.nn.max_pool2d(x, 2, 2, "same_ish"),
     r"max_pool_2d: padding must be 'VALID'"),
    ((1, 1, 4, 4), lambda x: flow.nn.avg_pool2d(x, 2, 2, "VALID", data_format="NCW"),
     r"avg_pool_2d: data_format must be 'NCHW' or 'NHWC'"),
    ((1, 1, 4, 4), lambda x: flow.nn.max_pool2d(x, 2, 2, [(2, 0), (0, 0)]),
     r"max_pool_2d: padding must be smaller than the window"),
    ((1, 1, 4, 4), lambda x: flow.nn.max_pool2d(x, [2, 2, 2], 2, "VALID"),
     r"max_pool_2d: ksize must be an int or a list of 1 or 2 ints"),
])
def test_pool_errors(x_shape, fn, message):
    with pytest.raises(ValueError, match=message):
        _pool_error(x_shape, fn)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("rank, data_format, x_shape, ksize, strides, padding", [
    (2, "NCHW", (3, 4, 5, 5), 3, 2, "SAME"),
    (1, "NWC", (2, 7, 3), 2, 2, "VALID"),
    (3, "NDHWC", (2, 3, 4, 4, 2), 2, [1, 2, 2], "SAME"),
])
def test_pool_grad_op(kind, rank, data_format, x_shape, ksize, strides, padding):
    """The gradient op alone, so that the multi-device pass runs each of its declared
    signatures too (in a train job the compiler picks them)."""
    from oneflow.framework import op_builder
    from oneflow.ops.conv_ops import _int_list, _padding

    _, numpy_fn = pool_case(kind, rank, data_format, x_shape, ksize, strides, padding)
    x = random_inputs([x_shape], flow.float64)[0]
    dy = random_inputs([numpy_fn(x).shape], flow.float64, seed=4)[0]
    channels_first = data_format.startswith("NC")
    mode, before, after = _padding("test", padding, rank, channels_first)
    attrs = {"data_format": "channels_first" if channels_first else "channels_last",
             "pool_size": _int_list("test", "ksize", ksize, rank),
             "strides": _int_list("test", "strides", strides, rank), "padding": mode,
             "padding_before": before, "padding_after": after, "ceil_mode": False}
    op_type = "%s_pool_%dd_grad" % (kind, rank)

    def flow_fn(x_blob, dy_blob):
        name = op_builder.op_name(None, "PoolGrad_")
        return op_builder.add_op(op_type, name, {"x": x_blob, "dy": dy_blob}, attrs)["dx"][0]

    def reference(x, dy):
        tx = torch.tensor(x, requires_grad=True)
        sizes = x.shape[2:] if channels_first else x.shape[1:-1]
        pads = pool_pads(padding, sizes, attrs["pool_size"], attrs["strides"])
        torch_pool(kind, tx, attrs["pool_size"], attrs["strides"], pads,
                   channels_first).backward(torch.as_tensor(dy))
        return tx.grad.numpy()

    check_op(flow_fn, reference, inputs=[x, dy], differentiable=[])
