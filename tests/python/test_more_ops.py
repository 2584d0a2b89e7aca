"""The rest of OneFlow 0.3's op names: flow.experimental.logical_slice / logical_slice_assign,
flow.reverse, flow.nonzero, flow.dim_gather, flow.diag, flow.constant_pad2d, flow.zero_pad2d,
flow.same_padding, flow.count_not_finite, flow.math.reduced_shape_elem_cnt, flow.math.sigmoid_grad,
flow.nn.GroupNorm, flow.nn.PixelShuffle, flow.nn.torch_conv2d_transpose,
flow.combined_margin_loss and the aliases. Forward against NumPy or PyTorch, float64 gradients
against finite differences (op_checker, with the multi-device pass), error messages."""
import typing

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, run_op


def _build(fn, *arrays):
    return run_op(fn, list(arrays), train=False)[0]


@pytest.mark.parametrize("split_axis", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [flow.float32, flow.int8])
def test_logical_slice_of_a_split_variable(split_axis, dtype):
    # OneFlow 0.3's test_logical_slice: a variable split over devices, sliced as one blob.
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    shape = (12, 14, 10, 8)
    tuples = [(2, 11, 3), (1, -3, 4), (-9, None, 2), (5, 7, 1)]
    seen = {}

    @flow.global_function()
    def slice_fn() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-1"):
            var = flow.get_variable("var", shape=shape, dtype=dtype,
                                    initializer=flow.random_uniform_initializer(-10, 10,
                                                                                dtype=dtype),
                                    distribute=flow.distribute.split(split_axis))
            flow.watch(var, lambda value: seen.setdefault("var", value.numpy()))
            return flow.experimental.logical_slice(var, tuples)

    out = slice_fn()
    expected = seen["var"][tuple(slice(*t) for t in tuples)]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    assert flow.logical_slice is flow.experimental.logical_slice


@pytest.mark.parametrize("split_axis", [0, 1])
def test_logical_slice_assign_writes_into_the_variable(split_axis):
    # OneFlow 0.3's test_logical_slice_assign: assign in one job, read it back in another.
    flow.clear_default_session()
    flow.config.cpu_device_num(3)
    shape = (12, 9)
    tuples = [(-10, 12, 3), (1, 8, 2)]
    value = np.random.RandomState(0).uniform(-10, 10, size=(4, 4)).astype(np.float32)

    def get_var():
        return flow.get_variable("var", shape=shape, dtype=flow.float32,
                                 initializer=flow.constant_initializer(0),
                                 distribute=flow.distribute.split(split_axis))

    @flow.global_function()
    def assign_fn(v: tp.Numpy.Placeholder((4, 4))):
        with flow.scope.placement("cpu", "0:0-2"):
            flow.experimental.logical_slice_assign(get_var(), v, tuples)

    @flow.global_function()
    def read_fn() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-2"):
            return flow.identity(get_var())

    assign_fn(value)
    expected = np.zeros(shape, np.float32)
    expected[tuple(slice(*t) for t in tuples)] = value
    np.testing.assert_array_equal(read_fn(), expected)


def test_logical_slice_errors():
    def job(tuples, value_shape=(2, 2)):
        flow.clear_default_session()

        @flow.global_function()
        def fn(v: tp.Numpy.Placeholder(value_shape)):
            var = flow.get_variable("v", shape=(4, 4), initializer=flow.zeros_initializer())
            flow.experimental.logical_slice_assign(var, v, tuples)

        fn(np.zeros(value_shape, np.float32))

    with pytest.raises(ValueError, match="logical_slice_assign: slice step of axis 1 is -1"):
        job([(0, 2, 1), (None, None, -1)])
    with pytest.raises(ValueError, match=r"value has shape \(2, 3\) but the slice"):
        job([(0, 2, 1)], value_shape=(2, 3))


@pytest.mark.parametrize("axis", [0, -1, [0, 2], (1,)])
def test_reverse(axis):
    x = np.random.RandomState(1).uniform(-1, 1, size=(3, 4, 5))
    axes = [axis] if isinstance(axis, int) else list(axis)
    check_op(lambda t: flow.reverse(t, axis), lambda t: np.flip(t, axes), inputs=[x],
             weight_output=True)


def test_nonzero_is_numpy_nonzero_stacked():
    a = np.array([[0, 1.5, 0], [2, 0, -1], [0, 0, 0]], np.float32)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(a.shape)) -> tp.Numpy:
        return flow.nonzero(x)

    out = job(a)
    np.testing.assert_array_equal(out, np.stack(np.nonzero(a)))
    assert out.dtype == np.int32


def _torch_gather(x, dim, index):
    return torch.gather(torch.from_numpy(x), dim, torch.from_numpy(index).long()).numpy()


@pytest.mark.parametrize("shape,dim,index_shape", [
    ((4, 5), 1, (4, 3)),
    ((4, 5), 0, (6, 5)),
    ((3, 4, 5), -1, (2, 3, 7)),  # smaller on the other axes, as torch allows
    ((3, 4, 5), 1, (3, 2, 5)),
])
def test_dim_gather_matches_torch_gather(shape, dim, index_shape):
    rng = np.random.RandomState(2)
    x = rng.uniform(-1, 1, size=shape)
    index = rng.randint(0, shape[dim], size=index_shape).astype(np.int64)
    check_op(lambda t, i: flow.dim_gather(t, dim, i),
             lambda t, i: _torch_gather(t, dim % len(shape), i), inputs=[x, index],
             weight_output=True)


def test_dim_gather_errors():
    with pytest.raises(ValueError, match=r"dim_gather: index \(4, 9\) must have input's rank"):
        _build(lambda t, i: flow.dim_gather(t, 0, i), np.zeros((4, 5)),
               np.zeros((4, 9), np.int64))
    with pytest.raises(TypeError, match="dim_gather: index must be int32 or int64"):
        _build(lambda t, i: flow.dim_gather(t, 0, i), np.zeros((4, 5)), np.zeros((4, 5)))


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_of_a_vector_and_of_a_matrix_matches_torch(k):
    rng = np.random.RandomState(3)
    vector = rng.uniform(-1, 1, size=(4,))
    matrix = rng.uniform(-1, 1, size=(4, 6))
    check_op(lambda t: flow.diag(t, k), lambda t: torch.diag(torch.from_numpy(t), k).numpy(),
             inputs=[vector], weight_output=True)
    check_op(lambda t: flow.diag(t, k), lambda t: torch.diag(torch.from_numpy(t), k).numpy(),
             inputs=[matrix], weight_output=True)


@pytest.mark.parametrize("np_dtype", [np.int8, np.uint8, np.float16], ids=str)
def test_diag_of_small_dtypes_matches_numpy(np_dtype):
    vector = np.array([1, 2, 5], np_dtype)
    for k in (0, 2, -1):
        out = _build(lambda t: flow.diag(t, k), vector)
        assert out.dtype == np_dtype
        np.testing.assert_array_equal(out, np.diag(vector, k))


def test_diag_of_an_empty_vector_is_a_zero_matrix():
    out = _build(lambda t: flow.diag(flow.slice_v2(t, [(0, 0, 1)]), 2), np.ones(3, np.float32))
    np.testing.assert_array_equal(out, np.zeros((2, 2), np.float32))


def test_diag_errors():
    with pytest.raises(ValueError, match="diag: input must be a vector or a matrix"):
        _build(flow.diag, np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="diag: diagonal 5 is outside the matrix"):
        _build(lambda t: flow.diag(t, 5), np.zeros((3, 4)))


def test_constant_pad2d_matches_torch():
    x = np.random.RandomState(4).uniform(-1, 1, size=(2, 3, 4, 5))
    padding = [1, 2, 0, 3]
    check_op(lambda t: flow.constant_pad2d(t, padding, 1.5),
             lambda t: torch.nn.functional.pad(torch.from_numpy(t), padding, value=1.5).numpy(),
             inputs=[x], weight_output=True)


@pytest.mark.parametrize("padding", [2, [0, 1, 3, 2]])
def test_zero_pad2d_matches_torch(padding):
    x = np.random.RandomState(6).uniform(-1, 1, size=(2, 3, 4, 5))
    torch_padding = [padding] * 4 if isinstance(padding, int) else padding
    check_op(lambda t: flow.zero_pad2d(t, padding),
             lambda t: torch.nn.functional.pad(torch.from_numpy(t), torch_padding).numpy(),
             inputs=[x], weight_output=True)
    with pytest.raises(ValueError, match=r"zero_pad2d: padding must be >= 0"):
        _build(lambda t: flow.zero_pad2d(t, [1, -1, 0, 0]), np.zeros((1, 1, 2, 2)))


@pytest.mark.parametrize("padding", ["SAME_UPPER", "same_lower"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_same_padding_gives_the_convolution_ceil_size(padding, data_format):
    x = np.random.RandomState(5).uniform(-1, 1, size=(2, 7, 6, 3))
    kernel, strides, dilation = [3, 2], [2, 1], [1, 2]
    spatial = (1, 2) if data_format == "NHWC" else (2, 3)
    pads = [(0, 0)] * 4
    for axis, k, s, d in zip(spatial, kernel, strides, dilation):
        size = x.shape[axis]
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        pads[axis] = (small, large) if padding.upper() == "SAME_UPPER" else (large, small)
    out, _ = check_op(lambda t: flow.same_padding(t, padding, data_format, kernel, strides,
                                                  dilation),
                      lambda t: np.pad(t, pads), inputs=[x], weight_output=True)
    # A VALID convolution of the padded blob has ceil(size / stride) outputs per axis.
    for axis, k, s, d in zip(spatial, kernel, strides, dilation):
        window = (k - 1) * d + 1
        assert (out.shape[axis] - window) // s + 1 == -(-x.shape[axis] // s)


def test_count_not_finite_and_multi_count():
    a = np.array([1.0, np.inf, np.nan, -np.inf, 0.0], np.float32)
    b = np.array([[np.nan, 2.0], [3.0, 4.0]], np.float64)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(a.shape), y: tp.Numpy.Placeholder(b.shape,
                                                                      dtype=flow.float64)
            ) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        return flow.count_not_finite(x), flow.multi_count_not_finite([x, y])

    single, multi = job(a, b)
    np.testing.assert_array_equal(single, [3])
    np.testing.assert_array_equal(multi, [4])
    assert single.dtype == np.int64


def test_reduced_shape_elem_cnt_constant_scalar_and_identities():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    @flow.global_function()
    def job(t: tp.Numpy.Placeholder(x.shape)) -> typing.Tuple[tp.Numpy, tp.Numpy, tp.Numpy,
                                                          tp.Numpy, tp.Numpy]:
        return (flow.math.reduced_shape_elem_cnt(t),
                flow.math.reduced_shape_elem_cnt(t, axis=[0, -1], dtype=flow.int64),
                flow.constant_scalar(2.5, dtype=flow.float),
                flow.amp_white_identity(t), flow.cast_to_static_shape(t))

    every, some, scalar, white, static = job(x)
    np.testing.assert_array_equal(every, [24])
    np.testing.assert_array_equal(some, [8])
    assert some.dtype == np.int64
    np.testing.assert_array_equal(scalar, [2.5])
    np.testing.assert_array_equal(white, x)
    np.testing.assert_array_equal(static, x)


def test_aliases_are_the_same_functions():
    assert flow.clip is flow.clamp is flow.clip_by_scalar is flow.clip_by_value
    assert flow.unsorted_segment_sum is flow.math.unsorted_segment_sum
    assert flow.in_top_k is flow.math.in_top_k
    assert flow.nn.tril is flow.math.tril
    assert flow.linalg.matmul is flow.matmul
    with pytest.raises(NotImplementedError, match="oneflow.summary is part of OneFlow 0.3"):
        flow.summary


def test_sigmoid_grad_and_gelu_grad_match_torch_autograd():
    x = torch.linspace(-3, 3, 13, dtype=torch.float64, requires_grad=True)
    dy = torch.linspace(0.5, 1.5, 13, dtype=torch.float64)
    y = torch.sigmoid(x)
    (expected_sigmoid,) = torch.autograd.grad(y, x, dy)
    gelu = torch.nn.functional.gelu(x)
    (expected_gelu,) = torch.autograd.grad(gelu, x, dy)
    out = _build(flow.math.sigmoid_grad, y.detach().numpy(), dy.numpy())
    np.testing.assert_allclose(out, expected_sigmoid.numpy(), rtol=1e-12)
    out = _build(flow.math.gelu_grad, x.detach().numpy(), dy.numpy())
    np.testing.assert_allclose(out, expected_gelu.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((2, 4, 3, 3), 2), ((3, 4, 2, 2), 4)])
def test_group_norm_matches_torch(shape, groups):
    x = np.random.RandomState(6).uniform(-1, 1, size=shape)

    def reference(t):
        return torch.nn.functional.group_norm(torch.from_numpy(t), groups, eps=1e-5).numpy()

    check_op(lambda t: flow.nn.GroupNorm(t, num_groups=groups, name="gn"), reference,
             inputs=[x], weight_output=True, forward_tolerance=dict(rtol=1e-9, atol=1e-10))


def test_group_norm_errors():
    with pytest.raises(ValueError, match="GroupNorm: num_groups must be a positive divisor "
                                         "of the 6 channels"):
        _build(lambda t: flow.nn.GroupNorm(t, num_groups=4), np.zeros((2, 6, 3)))


@pytest.mark.parametrize("factors", [(2, 2), (3, 1), (1, 2)])
def test_pixel_shuffle_matches_torch(factors):
    h, w = factors
    x = np.random.RandomState(7).uniform(-1, 1, size=(2, 2 * h * w, 3, 4))
    if h == w:
        def reference(t):
            return torch.nn.functional.pixel_shuffle(torch.from_numpy(t), h).numpy()
        check_op(lambda t: flow.nn.PixelShuffle(t, h), reference, inputs=[x],
                 weight_output=True)
    else:
        def reference(t):
            b, c, height, width = t.shape
            blocks = t.reshape(b, c // (h * w), h, w, height, width)
            return blocks.transpose(0, 1, 4, 2, 5, 3).reshape(b, c // (h * w), height * h,
                                                               width * w)
        check_op(lambda t: flow.nn.PixelShufflev2(t, h, w), reference, inputs=[x],
                 weight_output=True)


@pytest.mark.parametrize("stride,padding_needed,output_padding,dilation", [
    (2, [2, 2], [1, 0], 1),
    (1, [0, 2], [0, 0], 2),
    (3, [4, 0], [2, 1], 1),
])
def test_torch_conv2d_transpose_matches_torch(stride, padding_needed, output_padding, dilation):
    rng = np.random.RandomState(8)
    x = rng.uniform(-1, 1, size=(2, 3, 4, 5))
    weight = rng.uniform(-1, 1, size=(3, 2, 3, 2))

    def reference(t, w):
        return torch.nn.functional.conv_transpose2d(
            torch.from_numpy(t), torch.from_numpy(w), stride=stride,
            padding=[p // 2 for p in padding_needed], output_padding=output_padding,
            dilation=dilation).numpy()

    check_op(lambda t, w: flow.nn.torch_conv2d_transpose(
        t, w, output_padding=output_padding, strides=stride, padding_needed=padding_needed,
        dilations=dilation), reference, inputs=[x, weight], weight_output=True)


def test_torch_conv2d_transpose_errors():
    with pytest.raises(ValueError, match="output_padding \\[2, 0\\] must be >= 0 and below"):
        _build(lambda t, w: flow.nn.torch_conv2d_transpose(t, w, output_padding=[2, 0],
                                                           strides=2),
               np.zeros((1, 3, 4, 4)), np.zeros((3, 2, 3, 3)))


@pytest.mark.parametrize("m1,m2,m3", [(1.0, 0.5, 0.0), (1.0, 0.0, 0.35), (2.0, 0.1, 0.2)])
def test_combined_margin_loss(m1, m2, m3):
    rng = np.random.RandomState(9)
    x = rng.uniform(-0.9, 0.9, size=(4, 6))
    label = rng.randint(0, 6, size=(4,)).astype(np.int32)

    def reference(t, labels):
        out = t.copy()
        rows = np.arange(t.shape[0])
        out[rows, labels] = np.cos(m1 * np.arccos(t[rows, labels]) + m2) - m3
        return out

    check_op(lambda t, labels: flow.combined_margin_loss(t, labels, m1=m1, m2=m2, m3=m3),
             reference, inputs=[x, label], weight_output=True)


def test_layer_norm_grad_and_param_grad_match_torch_autograd():
    rng = np.random.RandomState(10)
    x = rng.uniform(-1, 1, size=(3, 4, 5))
    dy = rng.uniform(-1, 1, size=x.shape)
    gamma = rng.uniform(0.5, 1.5, size=(5,))
    mean = x.reshape(3, -1).mean(axis=1)
    inv_variance = 1.0 / np.sqrt(x.reshape(3, -1).var(axis=1) + 1e-5)
    tx = torch.tensor(x, requires_grad=True)
    (expected_dx,) = torch.autograd.grad(
        torch.nn.functional.layer_norm(tx, (4, 5), eps=1e-5), tx, torch.from_numpy(dy))
    dx = _build(lambda d, t, m, v: flow.layers.layer_norm_grad(d, t, m, v, begin_norm_axis=1),
                dy, x, mean, inv_variance)
    np.testing.assert_allclose(dx, expected_dx.numpy(), rtol=1e-9, atol=1e-12)

    norm = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)

    @flow.global_function()
    def param_grad(d: tp.Numpy.Placeholder(dy.shape, dtype=flow.float64),
                   n: tp.Numpy.Placeholder(norm.shape, dtype=flow.float64),
                   g: tp.Numpy.Placeholder(gamma.shape, dtype=flow.float64)
                   ) -> typing.Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        return flow.layers.layer_norm_param_grad(d, n, g, begin_params_axis=-1)

    normalized_diff, beta_diff, gamma_diff = param_grad(dy, norm, gamma)
    np.testing.assert_allclose(normalized_diff, dy * gamma, rtol=1e-12)
    np.testing.assert_allclose(beta_diff, dy.sum(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(gamma_diff, (dy * norm).sum(axis=(0, 1)), rtol=1e-12)


def _ordinal_reference(batches):
    """OneFlow's encoding: each new nonzero key gets the next ordinal, in row-major order."""
    seen, out = {}, []
    for batch in batches:
        flat = [0 if k == 0 else seen.setdefault(int(k), len(seen) + 1) for k in batch.ravel()]
        out.append(np.array(flat, batch.dtype).reshape(batch.shape))
    return out


def test_categorical_ordinal_encoder_oneflow_example():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3, 3), dtype=flow.int32)) -> tp.Numpy:
        return flow.layers.categorical_ordinal_encoder(x, capacity=320)

    x = np.array([[7, 0, 2], [1, 7, 2], [0, 1, 7]], np.int32)
    np.testing.assert_array_equal(job(x), [[1, 0, 2], [3, 1, 2], [0, 3, 1]])
    assert set(flow.get_all_variables()) == {"CategoricalOrdinalEncoder-Table",
                                             "CategoricalOrdinalEncoder-Size"}


@pytest.mark.parametrize("devices", [1, 2])
def test_categorical_ordinal_encode_remembers_across_calls(devices):
    """int64 hashes over the whole range (colliding slots included), 20 calls: the ordinals
    follow first appearance, and the same table on every device."""
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    capacity = 700

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((50,), dtype=flow.int64)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            table = flow.get_variable("table", (2 * capacity,), dtype=flow.int64,
                                      initializer=flow.zeros_initializer(), trainable=False)
            size = flow.get_variable("size", (1,), dtype=flow.int64,
                                     initializer=flow.zeros_initializer(), trainable=False)
            return flow.categorical_ordinal_encode(table, size, x)

    rng = np.random.RandomState(0)
    keys = rng.randint(-2 ** 63, 2 ** 63 - 1, size=500, dtype=np.int64)
    keys[:3] = [capacity, 2 * capacity, 0]  # two keys of one slot, and 0
    batches = [keys[rng.randint(0, 500, 50)] for _ in range(20)]
    for got, expected in zip([job(b) for b in batches], _ordinal_reference(batches)):
        np.testing.assert_array_equal(got, expected)
    used = len({int(k) for b in batches for k in b if k != 0})
    assert flow.get_all_variables()["size"].numpy()[0] == used


def test_categorical_ordinal_encode_errors():
    flow.clear_default_session()

    @flow.global_function()
    def full(x: tp.Numpy.Placeholder((5,), dtype=flow.int32)) -> tp.Numpy:
        return flow.layers.categorical_ordinal_encoder(x, capacity=3, name="small")

    with pytest.raises(ValueError, match=r"categorical_ordinal_encode \(op 'small-Encode'\): the "
                                         r"table is full: all 3 slots hold categories"):
        full(np.array([1, 2, 3, 4, 5], np.int32))

    def build(body, dtype=flow.int32):
        flow.clear_default_session()

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((4,), dtype=dtype)) -> tp.Numpy:
            return body(x)

        job(np.zeros(4, flow.convert_oneflow_dtype_to_numpy_dtype(dtype)))

    with pytest.raises(TypeError, match="categorical_ordinal_encode: in has dtype float32"):
        build(lambda x: flow.layers.categorical_ordinal_encoder(x, 8), flow.float32)
    with pytest.raises(NotImplementedError, match="only hash_precomputed=True"):
        build(lambda x: flow.layers.categorical_ordinal_encoder(x, 8, hash_precomputed=False))
    with pytest.raises(ValueError, match="capacity must be a positive int, got 0"):
        build(lambda x: flow.layers.categorical_ordinal_encoder(x, 0))


@pytest.mark.parametrize("values, out_idx", [
    (np.array([5, 3, 5, 7, 3, 5], np.int32), flow.int32),
    (np.array([2.5, -1.0, 2.5, 0.0, -0.0], np.float32), flow.int64),
    (np.array([9], np.int64), None),
])
def test_unique_with_counts_matches_first_appearance_order(values, out_idx):
    """flow.experimental.unique_with_counts against a Python reference (tf.unique_with_counts'
    order: values as they first appear), y and count padded with zeros to x's length."""
    flow.clear_default_session()
    dtype = {np.int32: flow.int32, np.int64: flow.int64, np.float32: flow.float32}[
        values.dtype.type]

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(values.shape, dtype=dtype)) -> typing.Tuple[
            tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy]:
        return flow.experimental.unique_with_counts(x, out_idx=out_idx)

    y, idx, count, num_unique = job(values)
    order = list(dict.fromkeys(values.tolist()))
    n = len(values)
    index_dtype = np.int64 if out_idx == flow.int64 else np.int32
    assert idx.dtype == count.dtype == num_unique.dtype == index_dtype and y.dtype == values.dtype
    np.testing.assert_array_equal(num_unique, [len(order)])
    np.testing.assert_array_equal(y, order + [0] * (n - len(order)))
    np.testing.assert_array_equal(idx, [order.index(v) for v in values.tolist()])
    np.testing.assert_array_equal(count, [values.tolist().count(v) for v in order]
                                  + [0] * (n - len(order)))


@pytest.mark.parametrize("index_shape, row_shape", [((1024,), (8,)), ((6, 4), (3, 2))])
def test_indexed_slices_reduce_sum_adds_rows_with_the_same_index(index_shape, row_shape):
    """flow.experimental.indexed_slices_reduce_sum against torch.index_add_ over the distinct
    indices (in order of first appearance), padded with zeros to the number of indices."""
    flow.clear_default_session()
    rng = np.random.RandomState(5)
    indices = rng.randint(0, 32, index_shape).astype(np.int32)
    values = rng.rand(*(index_shape + row_shape)).astype(np.float32)

    @flow.global_function()
    def job(i: tp.Numpy.Placeholder(index_shape, dtype=flow.int32),
            v: tp.Numpy.Placeholder(values.shape)) -> typing.Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        return flow.experimental.indexed_slices_reduce_sum(i, v)

    y_indices, y_values, num_unique = job(indices, values)
    flat = indices.reshape(-1)
    order = list(dict.fromkeys(flat.tolist()))
    n = flat.size
    assert num_unique.dtype == np.int64 and num_unique.tolist() == [len(order)]
    np.testing.assert_array_equal(y_indices, order + [0] * (n - len(order)))
    position = torch.tensor([order.index(i) for i in flat.tolist()])
    expected = torch.zeros((n,) + row_shape).index_add_(
        0, position, torch.from_numpy(values.reshape((n,) + row_shape)))
    np.testing.assert_allclose(y_values, expected.numpy(), rtol=1e-5, atol=1e-6)

    flow.clear_default_session()
    with pytest.raises(ValueError, match=r"indexed_slices_reduce_sum: values \(5, 3\) must start"):
        @flow.global_function()
        def bad(i: tp.Numpy.Placeholder((4,), dtype=flow.int32),
                v: tp.Numpy.Placeholder((5, 3))) -> tp.Numpy:
            return flow.experimental.indexed_slices_reduce_sum(i, v)[1]

        bad(np.zeros((4,), np.int32), np.zeros((5, 3), np.float32))
