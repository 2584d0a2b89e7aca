"""flow.tensor_scatter_nd_update (an op), flow.masked_fill, flow.elem_cnt, flow.identity_n and
flow.dynamic_reshape (flow.repeat and flow.acc: test_time_shape.py): forward against NumPy or
PyTorch, float64 gradients against finite differences (op_checker, with the multi-device pass),
error messages."""
import numpy as np
import pytest
import torch

import oneflow as flow
from op_checker import check_op, run_op


def _build(fn, *arrays):
    """Runs fn over placeholders holding arrays in a predict job; returns its output."""
    return run_op(fn, list(arrays), train=False)[0]


def _scatter_update(params, indices, updates):
    out = params.copy()
    depth = indices.shape[-1]
    rows = indices.reshape(-1, depth)
    flat_updates = updates.reshape((rows.shape[0],) + params.shape[depth:])
    for row, index in enumerate(rows):
        out[tuple(index)] = flat_updates[row]
    return out


# (params shape, indices array, updates shape)
SCATTER_CASES = [
    ((5, 3), np.array([[0], [4], [2]]), (3, 3)),
    ((4, 3, 2), np.array([[1, 2], [3, 0]]), (2, 2)),
    ((3, 4), np.array([[[0, 1], [2, 3], [1, 1]], [[2, 0], [0, 3], [1, 2]]]), (2, 3)),
    ((6, 2, 3), np.array([[5], [0]]), (2, 2, 3)),
]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
def test_tensor_scatter_nd_update(case, index_dtype):
    params_shape, indices, updates_shape = SCATTER_CASES[case]
    rng = np.random.RandomState(case)
    params = rng.uniform(-1, 1, size=params_shape)
    updates = rng.uniform(-1, 1, size=updates_shape)
    indices = indices.astype(index_dtype)
    out, gradients = check_op(
        lambda p, i, u: flow.tensor_scatter_nd_update(p, i, u),
        _scatter_update, inputs=[params, indices, updates], weight_output=True)
    # The updated rows get no gradient through params; all of updates' rows do.
    mask = _scatter_update(np.ones(params_shape), indices, np.zeros(updates_shape))
    assert (gradients[0][mask == 0] == 0).all() and (gradients[0][mask == 1] != 0).all()


def test_tensor_scatter_nd_update_matches_the_oneflow_example_in_float32_and_integers():
    params = np.array([[1, 2, 3]] * 5, np.float32)
    indices = np.array([[0], [4], [2]], np.int32)
    updates = np.array([[1, 1, 1], [2, 2, 2], [3, 3, 3]], np.float32)
    expected = [[1, 1, 1], [1, 2, 3], [3, 3, 3], [1, 2, 3], [2, 2, 2]]
    out, _ = check_op(flow.tensor_scatter_nd_update, _scatter_update,
                      inputs=[params, indices, updates], multi_device=False)
    np.testing.assert_array_equal(out, expected)
    for dtype in (np.int8, np.int32, np.int64):
        out = _build(flow.tensor_scatter_nd_update, params.astype(dtype), indices,
                     updates.astype(dtype))
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, expected)


def test_tensor_scatter_nd_update_later_duplicate_wins():
    params = np.zeros((4, 2))
    indices = np.array([[1], [3], [1]], np.int64)
    updates = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    out = _build(flow.tensor_scatter_nd_update, params, indices, updates)
    np.testing.assert_array_equal(out, [[0, 0], [3, 3], [0, 0], [2, 2]])
    # torch's index_put_ (accumulate=False) agrees on the CPU for this case.
    reference = torch.zeros(4, 2, dtype=torch.float64)
    reference[torch.tensor([1, 3, 1])] = torch.tensor(updates)
    np.testing.assert_array_equal(out, reference.numpy())


def test_tensor_scatter_nd_update_errors():
    params = np.zeros((5, 3), np.float32)
    with pytest.raises(ValueError, match=r"tensor_scatter_nd_update: updates \(2, 2\) must have "
                                         r"shape indices\[:-1\] \+ params\[K:\] = \(2, 3\)"):
        _build(flow.tensor_scatter_nd_update, params, np.zeros((2, 1), np.int32),
               np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"tensor_scatter_nd_update: index tuples .* have 3 "
                                         r"entries but params \(5, 3\) has only 2 axes"):
        _build(flow.tensor_scatter_nd_update, params, np.zeros((2, 3), np.int32),
               np.zeros((2,), np.float32))
    with pytest.raises(TypeError, match="tensor_scatter_nd_update: params and updates must have "
                                        "the same dtype"):
        _build(flow.tensor_scatter_nd_update, params, np.zeros((2, 1), np.int32),
               np.zeros((2, 3), np.float64))
    with pytest.raises(TypeError, match="tensor_scatter_nd_update: indices must be int32 or "
                                        "int64, got float32"):
        _build(flow.tensor_scatter_nd_update, params, np.zeros((2, 1), np.float32),
               np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"tensor_scatter_nd_update .*index tuple \(7\) of row 1 "
                                         r"is out of range: entry 0 must be in \[0, 5\)"):
        _build(flow.tensor_scatter_nd_update, params, np.array([[0], [7]], np.int32),
               np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (3, 5))])
@pytest.mark.parametrize("mask_dtype", [np.int8, np.int32, np.int64])
def test_masked_fill(shapes, mask_dtype):
    x_shape, mask_shape = shapes
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=x_shape)
    mask = (rng.uniform(size=mask_shape) < 0.5).astype(mask_dtype)
    out, gradients = check_op(lambda a, m: flow.masked_fill(a, m, value=5.0),
                              lambda a, m: np.where(m != 0, 5.0, a), inputs=[x, mask],
                              differentiable=[0])
    reference = torch.tensor(x).masked_fill(torch.tensor(mask != 0), 5.0).numpy()
    np.testing.assert_array_equal(out, reference)


def test_masked_fill_integers_and_the_oneflow_example():
    x = np.array([1, 2, 3, 4], np.float32)
    mask = np.array([1, 0, 0, 1], np.int8)
    np.testing.assert_array_equal(_build(lambda a, m: flow.masked_fill(a, m, value=5), x, mask),
                                  [5, 2, 3, 5])
    out = _build(lambda a, m: flow.masked_fill(a, m, value=-7), x.astype(np.int32), mask)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [-7, 2, 3, -7])


def test_masked_fill_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="masked_fill: mask must be int8, int32 or int64"):
        _build(lambda a: flow.masked_fill(a, a, 1.0), x)
    with pytest.raises(ValueError, match=r"masked_fill: value 300 is out of range \[-128, 127\] of "
                                         r"int8"):
        _build(lambda a, m: flow.masked_fill(a, m, 300), x.astype(np.int8), x.astype(np.int8))
    with pytest.raises(ValueError,
                       match=r"masked_fill: x \(2, 3\) and mask \(4,\) do not broadcast"):
        _build(lambda a, m: flow.masked_fill(a, m, 0.5), x, np.ones(4, np.int8))


def test_elem_cnt():
    x = np.zeros((3, 4, 5), np.float32)
    out = _build(flow.elem_cnt, x)
    assert out.dtype == np.int32 and out.shape == (1,)
    np.testing.assert_array_equal(out, [60])
    out = _build(lambda a: flow.elem_cnt(a, dtype=flow.int64), x)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [60])
    out = _build(lambda a: flow.elem_cnt(a, dtype=flow.float32), np.zeros((5,), np.float32))
    np.testing.assert_array_equal(out, [5.0])


def test_identity_n():
    rng = np.random.RandomState(1)
    x, y = rng.uniform(-1, 1, size=(2, 3)), rng.uniform(-1, 1, size=(4,))

    def flow_fn(a, b):
        first, second = flow.identity_n([a, b])
        return flow.math.reduce_sum(first * first) + flow.math.reduce_sum(second)

    check_op(flow_fn, lambda a, b: np.sum(a * a) + np.sum(b), inputs=[x, y])
    outputs = []

    def collect(a, b):
        out = flow.identity_n((a, b), name="ident")
        assert isinstance(out, list) and len(out) == 2
        assert [tuple(o.shape) for o in out] == [(2, 3), (4,)]
        outputs.extend(out)
        return out[0]

    np.testing.assert_array_equal(_build(collect, x, y), x)
    with pytest.raises(TypeError, match="identity_n: inputs must be a non-empty list"):
        _build(lambda a: flow.identity_n(a), x)


def test_dynamic_reshape():
    x = np.random.RandomState(3).uniform(-1, 1, size=(1, 3, 4, 4))
    out, _ = check_op(lambda a: flow.dynamic_reshape(a, (-1, 8)), lambda a: a.reshape(-1, 8),
                      inputs=[x], weight_output=True)
    assert out.shape == (6, 8)
    check_op(lambda a: flow.dynamic_reshape(a, [12, 4]), lambda a: a.reshape(12, 4), inputs=[x],
             multi_device=False)
    with pytest.raises(ValueError, match="reshape"):
        _build(lambda a: flow.dynamic_reshape(a, (5, -1)), x.astype(np.float32))
    with pytest.raises(TypeError, match="dynamic_reshape: shape must be a list or a tuple"):
        _build(lambda a: flow.dynamic_reshape(a, 48), x.astype(np.float32))


@pytest.mark.parametrize("dtype, np_dtype", [(flow.int8, np.int8), (flow.int32, np.int32)])
def test_integer_broadcast_gradient_is_summed_in_its_dtype(dtype, np_dtype):
    """The gradient of an integer broadcast operand is reduce_sum_like in that dtype (OneFlow
    0.3's int8 cases of test_masked_fill / test_tril train through it)."""
    import oneflow.typing as tp

    flow.clear_default_session()
    seen = {}

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2, 4), dtype=dtype)) -> tp.Numpy:
        v = flow.get_variable("v", shape=(1,), initializer=flow.zeros_initializer())
        b = flow.cast(v, dtype)
        flow.watch_diff(b, lambda d: seen.setdefault("db", d))
        y = x + b
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-4]),
                           momentum=0).minimize(y)
        return y

    x = np.arange(8, dtype=np_dtype).reshape(2, 4)
    np.testing.assert_array_equal(job(x), x)
    assert seen["db"].dtype == np_dtype
    np.testing.assert_array_equal(seen["db"], [8])
