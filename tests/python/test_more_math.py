"""flow.math.atan2 / xdivy / xlogy (broadcast binary ops) and the compositions
squared_difference, l2_normalize, polyval, broadcast_to_compatible_with: forward against NumPy
or PyTorch, float64 gradients against finite differences (op_checker), the special values
(x == 0 for xdivy / xlogy, every quadrant and the axes for atan2) and error messages."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op, run_op

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1))]
SHAPE_IDS = ["%s_%s" % shapes for shapes in SHAPES]


def _inputs(shapes, domains, dtype, seed=0):
    rng = np.random.RandomState(seed)
    arrays = []
    for shape, (low, high) in zip(shapes, domains):
        values = rng.uniform(low, high, size=shape)
        if low < 0 < high:  # keep finite differences away from the axes
            values = np.where(np.abs(values) < 0.1, np.copysign(0.1, values) + values, values)
        arrays.append(values.astype(dtype))
    return arrays


def _xdivy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, np.zeros_like(x), x / y)


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, np.zeros_like(x), x * np.log(y))


# name -> (flow function, numpy reference, x domain, y domain)
BINARY = {
    "atan2": (flow.math.atan2, np.arctan2, (-2, 2), (-2, 2)),
    "xdivy": (flow.math.xdivy, _xdivy, (-2, 2), (0.5, 2)),
    "xdivy_negative_y": (flow.math.xdivy, _xdivy, (-2, 2), (-2, -0.5)),
    "xlogy": (flow.math.xlogy, _xlogy, (-2, 2), (0.2, 3)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forward_and_gradients(name, shapes, dtype):
    flow_fn, numpy_fn, x_domain, y_domain = BINARY[name]
    inputs = _inputs(shapes, [x_domain, y_domain], dtype)
    out, _ = check_op(flow_fn, numpy_fn, inputs=inputs, multi_device=dtype == np.float64)
    assert out.shape == np.broadcast_shapes(*shapes)


def test_atan2_every_quadrant_and_the_axes_match_torch():
    values = np.array([-2.0, -0.5, -0.0, 0.0, 0.5, 2.0])
    x, y = [a.ravel() for a in np.meshgrid(values, values)]
    out = _build(flow.math.atan2, x, y)  # a predict job: signed zeros reach the op unchanged
    np.testing.assert_allclose(out, np.arctan2(x, y), rtol=1e-15)
    np.testing.assert_array_equal(out, torch.atan2(torch.tensor(x), torch.tensor(y)).numpy())
    np.testing.assert_array_equal(np.signbit(out), np.signbit(np.arctan2(x, y)))
    # One point per quadrant, in (-pi, pi].
    assert np.isclose(out[(x == 0.5) & (y == 0.5)][0], np.pi / 4)
    assert np.isclose(out[(x == 0.5) & (y == -0.5)][0], 3 * np.pi / 4)
    assert np.isclose(out[(x == -0.5) & (y == -0.5)][0], -3 * np.pi / 4)
    assert np.isclose(out[(x == -0.5) & (y == 0.5)][0], -np.pi / 4)


def test_atan2_gradients_in_every_quadrant_match_torch():
    x = np.array([0.5, 0.5, -0.5, -0.5, 3.0, -1e-3])
    y = np.array([0.5, -0.5, -0.5, 0.5, -1e-3, 2.0])
    _, gradients = check_op(flow.math.atan2, np.arctan2, inputs=[x, y], multi_device=False)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    torch.atan2(tx, ty).sum().backward()
    np.testing.assert_allclose(gradients[0], tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gradients[1], ty.grad.numpy(), rtol=1e-12)


def test_xdivy_and_xlogy_are_zero_with_zero_gradients_where_x_is_zero():
    x = np.array([0.0, 0.0, 0.0, 2.0, -1.5])
    y = np.array([0.0, 3.0, -1.0, 4.0, 0.5])
    out, gradients = run_op(flow.math.xdivy, [x, y], differentiable=[0, 1])
    np.testing.assert_array_equal(out[:3], 0)
    np.testing.assert_allclose(out[3:], x[3:] / y[3:], rtol=1e-15)
    np.testing.assert_array_equal(gradients[0][:3], 0)
    np.testing.assert_array_equal(gradients[1][:3], 0)
    np.testing.assert_allclose(gradients[0][3:], 1 / y[3:], rtol=1e-15)
    np.testing.assert_allclose(gradients[1][3:], -x[3:] / y[3:] ** 2, rtol=1e-15)

    y = np.array([0.0, 3.0, 1.0, 4.0, 0.5])
    out, gradients = run_op(flow.math.xlogy, [x, y], differentiable=[0, 1])
    np.testing.assert_array_equal(out[:3], 0)  # 0 * log(0) is 0, not nan
    np.testing.assert_allclose(out[3:], x[3:] * np.log(y[3:]), rtol=1e-15)
    np.testing.assert_array_equal(gradients[0][:3], 0)
    np.testing.assert_array_equal(gradients[1][:3], 0)
    np.testing.assert_allclose(gradients[0][3:], np.log(y[3:]), rtol=1e-15)
    np.testing.assert_allclose(gradients[1][3:], x[3:] / y[3:], rtol=1e-15)
    # Where x != 0, xlogy is torch.xlogy.
    np.testing.assert_allclose(out[3:], torch.xlogy(torch.tensor(x[3:]),
                                                    torch.tensor(y[3:])).numpy(), rtol=1e-15)


def test_binary_ops_take_python_scalars():
    x = _inputs([(2, 3)], [(0.5, 2)], np.float64)[0]
    check_op(lambda a: flow.math.atan2(a, -1.0), lambda a: np.arctan2(a, -1.0), inputs=[x])
    check_op(lambda a: flow.math.xlogy(2, a), lambda a: 2 * np.log(a), inputs=[x],
             multi_device=False)
    check_op(lambda a: flow.math.xdivy(a, 4), lambda a: a / 4, inputs=[x], multi_device=False)


def _build(fn, *arrays):
    """Runs fn over placeholders holding arrays in a predict job; returns its output."""
    return run_op(fn, list(arrays), train=False)[0]


@pytest.mark.parametrize("op", [flow.math.atan2, flow.math.xdivy, flow.math.xlogy])
def test_binary_errors_name_the_op(op):
    op_type = "broadcast_" + op.__name__
    with pytest.raises(ValueError, match=r"%s.*\(2, 3\).*\(4,\)" % op_type):
        _build(op, np.ones((2, 3), np.float32), np.ones((4,), np.float32))
    with pytest.raises(TypeError, match=r"%s.*int32" % op_type):
        _build(op, np.ones((2, 3), np.int32), np.ones((2, 3), np.int32))
    with pytest.raises(TypeError, match="%s.*same dtype" % op_type):
        _build(op, np.ones((2, 3), np.float32), np.ones((2, 3), np.float64))
    with pytest.raises(TypeError, match=op_type):
        _build(lambda a: op(a, "2"), np.ones((2, 3), np.float32))


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((2, 1, 3), (4, 1))])
def test_squared_difference(shapes):
    check_op(flow.math.squared_difference, lambda x, y: (x - y) ** 2, shapes)


def test_squared_difference_with_scalars_matches_torch():
    x = np.random.RandomState(1).uniform(-2, 2, size=(3, 5))
    out, _ = check_op(lambda a: flow.math.squared_difference(a, 0.5),
                      lambda a: (a - 0.5) ** 2, inputs=[x], multi_device=False)
    reference = torch.square(torch.tensor(x) - 0.5).numpy()
    np.testing.assert_allclose(out, reference, rtol=1e-15)
    check_op(lambda a: flow.math.squared_difference(3, a), lambda a: (3 - a) ** 2, inputs=[x],
             multi_device=False)


def _l2_normalize(x, axis, epsilon=1e-12):
    axis = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    square_sum = np.sum(x * x, axis=axis, keepdims=True)
    return x / np.sqrt(np.maximum(square_sum, epsilon))


@pytest.mark.parametrize("axis", [0, 1, -1, [0, 2], None])
def test_l2_normalize(axis):
    check_op(lambda x: flow.math.l2_normalize(x, axis=axis),
             lambda x: _l2_normalize(x, axis), [(3, 4, 2)], weight_output=True)


def test_l2_normalize_matches_the_oneflow_example_and_torch():
    x = np.array([1, 2, 3, 4], np.float32)
    out, _ = check_op(lambda a: flow.math.l2_normalize(a, axis=0),
                      lambda a: _l2_normalize(a, 0), inputs=[x], multi_device=False)
    np.testing.assert_allclose(out, [0.18257418, 0.36514837, 0.5477226, 0.73029673], rtol=1e-6)
    x = np.random.RandomState(2).normal(size=(4, 5))
    out, _ = check_op(lambda a: flow.math.l2_normalize(a, axis=1),
                      lambda a: _l2_normalize(a, 1), inputs=[x], multi_device=False)
    torch_out = torch.nn.functional.normalize(torch.tensor(x), dim=1, eps=1e-12).numpy()
    np.testing.assert_allclose(out, torch_out, rtol=1e-14)


def test_l2_normalize_below_epsilon_divides_by_sqrt_epsilon():
    """A row whose sum of squares is below epsilon is x / sqrt(epsilon), gradient included."""
    x = np.array([[3.0, 4.0], [1e-3, -2e-3], [0.0, 0.0]])
    out, gradients = check_op(lambda a: flow.math.l2_normalize(a, axis=1, epsilon=1e-4),
                              lambda a: _l2_normalize(a, 1, 1e-4), inputs=[x],
                              weight_output=True, multi_device=False)
    np.testing.assert_allclose(out[1], x[1] / 1e-2, rtol=1e-12)
    np.testing.assert_array_equal(out[2], 0)  # no nan for a zero row
    out, gradients = run_op(lambda a: flow.math.l2_normalize(a, axis=1, epsilon=1e-4), [x],
                            differentiable=[0])
    np.testing.assert_allclose(gradients[0][1:], 1 / 1e-2, rtol=1e-12)  # the ones seed / 1e-2


def test_l2_normalize_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"l2_normalize: axis 2 is out of range.*\(2, 3\)"):
        _build(lambda a: flow.math.l2_normalize(a, axis=2), x)
    with pytest.raises(ValueError, match="l2_normalize: epsilon must be >= 0"):
        _build(lambda a: flow.math.l2_normalize(a, axis=0, epsilon=-1.0), x)
    with pytest.raises(TypeError, match="l2_normalize: needs a floating blob"):
        _build(lambda a: flow.math.l2_normalize(a, axis=0), np.ones((2, 3), np.int32))


@pytest.mark.parametrize("coeffs", [[1.0, 3.0, -2.0], [2.5], [0.5, -1.0, 0.0, 4.0, 1.5], (2, 1)])
def test_polyval(coeffs):
    # A constant polynomial does not depend on x: a forward check only.
    out, _ = check_op(lambda x: flow.math.polyval(coeffs, x),
                      lambda x: np.polyval(list(coeffs), x), [(3, 4)], low=-2.0, high=2.0,
                      differentiable=[] if len(coeffs) == 1 else None)
    assert out.shape == (3, 4)


def test_polyval_matches_the_oneflow_example_and_takes_blob_coefficients():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out, _ = check_op(lambda a: flow.math.polyval([1.0, 3.0, -2.0], a),
                      lambda a: np.polyval(np.array([1.0, 3.0, -2.0], a.dtype), a), inputs=[x],
                      multi_device=False)
    np.testing.assert_allclose(out, [2.0, 8.0, 16.0])
    rng = np.random.RandomState(3)
    x, c0, c1 = rng.uniform(-1, 1, size=(2, 3)), rng.uniform(-1, 1, size=(3,)), rng.uniform(
        -1, 1, size=(2, 1))
    check_op(lambda a, b, c: flow.math.polyval([b, 2.0, c], a),
             lambda a, b, c: b * a * a + 2.0 * a + c, inputs=[x, c0, c1])


def test_polyval_empty_coefficients_give_zeros_and_bad_coeffs_raise():
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(_build(lambda a: flow.math.polyval([], a), x), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="polyval: argument coeffs must be a list"):
        _build(lambda a: flow.math.polyval(2.0, a), x)
    with pytest.raises(TypeError, match=r"polyval: coeffs\[1\] must be a number or a blob"):
        _build(lambda a: flow.math.polyval([1.0, "x"], a), x)


def test_broadcast_to_compatible_with():
    x = np.random.RandomState(4).uniform(-1, 1, size=(4, 1, 1))

    def flow_fn(a):
        blob_a = flow.constant(1, dtype=flow.float64, shape=(1, 2, 1))
        blob_b = flow.constant(1, dtype=flow.float64, shape=(1, 1, 3))
        return flow.math.broadcast_to_compatible_with(a, [blob_a, blob_b])

    out, gradients = check_op(flow_fn, lambda a: np.broadcast_to(a, (4, 2, 3)), inputs=[x])
    assert out.shape == (4, 2, 3)
    np.testing.assert_allclose(gradients[0], np.full((4, 1, 1), 6.0))


def test_broadcast_to_compatible_with_adds_leading_axes_and_keeps_equal_shapes():
    x = np.random.RandomState(5).uniform(-1, 1, size=(3,))
    out, _ = check_op(
        lambda a: flow.math.broadcast_to_compatible_with(
            a, [flow.constant(0, dtype=flow.float64, shape=(2, 1))]),
        lambda a: np.broadcast_to(a, (2, 3)), inputs=[x])
    out, _ = check_op(lambda a: flow.math.broadcast_to_compatible_with(a, [a]), lambda a: a,
                      inputs=[x], multi_device=False)


def test_broadcast_to_compatible_with_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"broadcast_to_compatible_with: shapes \(2, 3\), "
                                         r"\(4,\) do not broadcast"):
        _build(lambda a: flow.math.broadcast_to_compatible_with(
            a, [flow.constant(0, shape=(4,))]), x)
    with pytest.raises(TypeError, match="broadcast_to_compatible_with: compatible must be a list"):
        _build(lambda a: flow.math.broadcast_to_compatible_with(a, a), x)


def test_experimental_square_sum_and_its_gradient():
    x = np.random.RandomState(4).uniform(-2, 2, (3, 5)).astype(np.float32)
    grads = {}

    @flow.global_function(type="train")
    def job(x_in: tp.Numpy.Placeholder((3, 5))) -> tp.Numpy:
        offset = flow.get_variable("offset", shape=(3, 5), initializer=flow.zeros_initializer())
        total = flow.experimental.square_sum(x_in + offset)
        flow.watch_diff(offset, lambda blob: grads.setdefault("offset", blob.numpy()))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(total)
        return total

    total = job(x)
    assert total.shape == (1,)
    np.testing.assert_allclose(total, [np.square(x.astype(np.float64)).sum()], rtol=1e-6)
    np.testing.assert_allclose(grads["offset"], 2 * x, rtol=1e-6)


@pytest.mark.parametrize("x", [
    np.array([[1, 2, 2], [3, 4, 5]], np.float32), np.array([[1, 2, 3], [4, 5, 6]], np.float32),
    np.array([3, 1, 2], np.int32), np.array([7], np.int64), np.array([1.0, np.nan], np.float64),
])
def test_monotonic_checks_match_numpy(x):
    import typing

    flow.clear_default_session()
    dtype = {np.float32: flow.float32, np.float64: flow.float64, np.int32: flow.int32,
             np.int64: flow.int64}[x.dtype.type]

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder(x.shape, dtype=dtype)) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        return flow.math.is_non_decreasing(a), flow.math.is_strictly_increasing(a)

    flat = x.ravel()
    non_decreasing, increasing = job(x)
    np.testing.assert_array_equal(non_decreasing, [np.all(flat[1:] >= flat[:-1])])
    np.testing.assert_array_equal(increasing, [np.all(flat[1:] > flat[:-1])])
    assert non_decreasing.dtype == np.int8


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_invert_permutation(dtype):
    flow.clear_default_session()
    permutation = np.random.RandomState(2).permutation(9).astype(dtype)

    @flow.global_function()
    def job(p: tp.Numpy.Placeholder((9,), dtype=flow.int32 if dtype == np.int32
                                    else flow.int64)) -> tp.Numpy:
        return flow.math.invert_permutation(p)

    np.testing.assert_array_equal(job(permutation), np.argsort(permutation))
