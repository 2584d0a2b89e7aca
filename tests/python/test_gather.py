"""flow.gather (axis, batch_dims), flow.math.unsorted_segment_sum(_like),
unsorted_batch_segment_sum, flow.gather_nd, flow.scatter_nd, flow.tensor_scatter_nd_add,
flow.one_hot and flow.clip_by_value: forward against NumPy, gradients against finite
differences, the multi-device pass (incl. params split on the gather axis giving a partial
sum), an embedding trained through gather with a scatter-add gradient, integer dtypes, and
errors (bad axes at trace time, out-of-range indices at run time)."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import session as session_util
from op_checker import check_op

RNG = np.random.RandomState(0)


@pytest.mark.parametrize("params_shape, indices, axis", [
    ((5, 3), np.array([4, 0, 2, 0], np.int32), 0),  # duplicates: the gradient sums them
    ((3, 5, 2), np.array([[1, 4], [4, 4], [0, 3]], np.int64), 1),
    ((3, 4), np.array([3, 1], np.int32), -1),
])
def test_gather(params_shape, indices, axis):
    params = RNG.uniform(-1, 1, params_shape)
    check_op(lambda p, i: flow.gather(p, i, axis=axis), lambda p, i: np.take(p, i, axis=axis),
             inputs=[params, indices], weight_output=True)


def _batch_gather(params, indices, axis):
    return np.stack([np.take(params[b], indices[b], axis=axis - 1) for b in range(len(params))])


def test_gather_batch_dims():
    params = RNG.uniform(-1, 1, (2, 4, 3))
    indices = np.array([[3, 0, 0], [1, 2, 3]], np.int32)
    check_op(lambda p, i: flow.gather(p, i, batch_dims=1),
             lambda p, i: _batch_gather(p, i, 1), inputs=[params, indices], weight_output=True)
    check_op(lambda p, i: flow.gather(p, i, axis=2, batch_dims=1),
             lambda p, i: _batch_gather(p, i, 2),
             inputs=[params, np.array([[2, 0], [1, 1]], np.int64)], weight_output=True)


def test_gather_with_axis_equal_to_batch_dims_is_oneflows_batch_gather():
    """OneFlow's gather dispatches batch_dims == axis > 0 to batch_gather, which matches the
    leading indices.ndim - 1 axes whatever batch_dims says (BERT's _GatherIndexes passes
    axis=2, batch_dims=2 for (B, S, H) params and (B, P) positions)."""
    params = RNG.uniform(-1, 1, (2, 4, 3))
    indices = np.array([[3, 0], [1, 2]], np.int32)
    check_op(lambda p, i: flow.gather(params=p, indices=i, axis=2, batch_dims=2),
             lambda p, i: _batch_gather(p, i, 1), inputs=[params, indices], weight_output=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float32])
def test_gather_dtypes(dtype):
    params = (np.arange(6 * 40) % 100).reshape(6, 40).astype(dtype)
    indices = np.array([5, 0, 3, 3], np.int64)
    check_op(lambda p, i: flow.gather(p, i), lambda p, i: p[i], inputs=[params, indices])


def test_gather_many_rows_float32():
    params = RNG.uniform(-1, 1, (1000, 64)).astype(np.float32)
    indices = RNG.randint(0, 1000, size=(700,)).astype(np.int32)
    check_op(lambda p, i: flow.gather(p, i), lambda p, i: p[i], inputs=[params, indices],
             check_backward=False, multi_device=False)


def _segment_sum(data, ids, segments, axis):
    out_shape = data.shape[:axis] + (segments,) + data.shape[axis + ids.ndim:]
    out = np.zeros(out_shape, data.dtype)
    moved = np.moveaxis(out, axis, 0)
    rows = np.moveaxis(data.reshape(data.shape[:axis] + (-1,) + data.shape[axis + ids.ndim:]),
                       axis, 0)
    np.add.at(moved, ids.reshape(-1), rows)
    return out


def test_unsorted_segment_sum():
    ids = np.array([3, 0, 3, 1], np.int32)
    check_op(lambda d, i: flow.math.unsorted_segment_sum(d, i, 5),
             lambda d, i: _segment_sum(d, i, 5, 0), inputs=[RNG.uniform(-1, 1, (4, 3)), ids],
             weight_output=True)
    ids2 = np.array([[1, 1], [0, 2]], np.int64)
    check_op(lambda d, i: flow.math.unsorted_segment_sum(d, i, 3, axis=1),
             lambda d, i: _segment_sum(d, i, 3, 1), inputs=[RNG.uniform(-1, 1, (2, 2, 2, 3)), ids2],
             weight_output=True)
    check_op(lambda d, i, like: flow.math.unsorted_segment_sum_like(d, i, like),
             lambda d, i, like: _segment_sum(d, i, 4, 0),
             inputs=[RNG.uniform(-1, 1, (4, 3)), ids, np.zeros((4, 3))], differentiable=[0],
             weight_output=True)


def test_unsorted_segment_sum_int_and_wide_rows():
    data = np.arange(4 * 600, dtype=np.int32).reshape(4, 600)
    ids = np.array([1, 0, 1, 1], np.int32)
    check_op(lambda d, i: flow.math.unsorted_segment_sum(d, i, 2),
             lambda d, i: _segment_sum(d, i, 2, 0), inputs=[data, ids])


def test_unsorted_batch_segment_sum():
    data = RNG.uniform(-1, 1, (2, 4, 3))
    ids = np.array([[0, 2, 2, 1], [1, 1, 0, 0]], np.int32)
    check_op(lambda d, i: flow.math.unsorted_batch_segment_sum(d, i, 3),
             lambda d, i: np.stack([_segment_sum(d[b], i[b], 3, 0) for b in range(2)]),
             inputs=[data, ids], weight_output=True)


def test_gather_nd_and_scatter_nd():
    params = RNG.uniform(-1, 1, (3, 4, 2))
    indices = np.array([[2, 1], [0, 3], [2, 1]], np.int32)
    check_op(flow.gather_nd, lambda p, i: p[i[:, 0], i[:, 1]], inputs=[params, indices],
             weight_output=True)
    check_op(flow.gather_nd, lambda p, i: p[i[..., 0]],
             inputs=[params, np.array([[[1], [0]], [[2], [2]]], np.int64)], weight_output=True)

    def scatter(i, u):
        out = np.zeros((3, 4, 2))
        np.add.at(out, (i[:, 0], i[:, 1]), u)
        return out

    check_op(lambda i, u: flow.scatter_nd(i, u, (3, 4, 2)), scatter,
             inputs=[indices, RNG.uniform(-1, 1, (3, 2))], weight_output=True)
    check_op(lambda p, i, u: flow.tensor_scatter_nd_add(p, i, u),
             lambda p, i, u: p + scatter(i, u),
             inputs=[params, indices, RNG.uniform(-1, 1, (3, 2))], weight_output=True,
             multi_device=False)


def _one_hot(indices, depth, on, off, axis, dtype):
    out = np.where(np.arange(depth) == indices[..., None], on, off).astype(dtype)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis, dtype", [(-1, np.float32), (0, np.int32), (1, np.int64),
                                          (2, np.float64)])
def test_one_hot(axis, dtype):
    indices = np.array([[0, 3, 2], [1, 1, 0]], np.int32)
    check_op(lambda i: flow.one_hot(i, 4, on_value=5, off_value=-1, axis=axis,
                                    dtype={np.float32: flow.float32, np.int32: flow.int32,
                                           np.int64: flow.int64, np.float64: flow.float64}[dtype]),
             lambda i: _one_hot(i, 4, 5, -1, axis, dtype), inputs=[indices])


def test_one_hot_float_values_may_be_infinite():
    indices = np.array([0, 2], np.int32)
    check_op(lambda i: flow.one_hot(i, 3, on_value=np.inf, off_value=-np.inf),
             lambda i: np.where(np.eye(3, dtype=bool)[i], np.inf, -np.inf).astype(np.float32),
             inputs=[indices], multi_device=False)


@pytest.mark.parametrize("low, high", [(-0.5, 0.4), (None, 0.3), (-0.2, None)])
def test_clip_by_value(low, high):
    check_op(lambda x: flow.clip_by_value(x, low, high), lambda x: np.clip(x, low, high),
             [(4, 5)], flow.float64, weight_output=True)


def test_clip_by_value_int():
    x = np.arange(-5, 7, dtype=np.int32).reshape(3, 4)
    check_op(lambda x: flow.math.clip_by_value(x, -2, 3), lambda x: np.clip(x, -2, 3), inputs=[x])


def _embedding_job(table, distribute=None, traced=None):
    @flow.global_function(type="train")
    def train(ids: tp.Numpy.Placeholder((6,), dtype=flow.int32),
              weight: tp.Numpy.Placeholder((6, 3), dtype=flow.float64)) -> tp.Numpy:
        embedding = flow.get_variable("embedding", shape=table.shape, dtype=flow.float64,
                                      initializer=flow.zeros_initializer(), distribute=distribute)
        rows = flow.gather(embedding, ids, name="lookup")
        traced["lookup"] = session_util.default_session().cpp.sbp_signature("lookup")
        loss = rows * weight
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0]),
                           momentum=0).minimize(loss)
        return rows

    return train


@pytest.mark.parametrize("devices, distribute", [(1, None), (2, "split"), (3, "split")])
def test_embedding_trains_with_a_scatter_add_gradient(devices, distribute):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    table = RNG.uniform(-1, 1, (7, 3))
    ids = np.array([6, 0, 3, 0, 0, 5], np.int32)
    weight = RNG.uniform(0.5, 2, (6, 3))
    traced = {}
    train = _embedding_job(table, flow.distribute.split(0) if distribute else None, traced)
    flow.load_variables({"embedding": table})
    rows = train(ids, weight)
    np.testing.assert_allclose(rows, table[ids], rtol=1e-12)
    expected = table.copy()
    # SGD, learning rate 1: minus the scatter-added gradient (scaled by 1 / elem_cnt(loss)).
    np.add.at(expected, ids, -weight / weight.size)
    np.testing.assert_allclose(flow.get_all_variables()["embedding"].numpy(), expected,
                               rtol=1e-12)
    if distribute:
        # The table stays split: each device looks up its own rows, the output is a partial sum.
        assert traced["lookup"] == {"in_0": "S(0)", "indices_0": "B", "out_0": "P"}
    plan = session_util.default_session().cpp.plan_text()
    assert "unsorted_segment_sum_like" in plan and "one_hot" not in plan
    flow.clear_default_session()


def _trace(body, inputs):
    flow.clear_default_session()
    annotations = {"x%d" % i: tp.Numpy.Placeholder(a.shape, dtype={
        np.dtype(np.float32): flow.float32, np.dtype(np.int32): flow.int32,
        np.dtype(np.int64): flow.int64}[a.dtype]) for i, a in enumerate(inputs)}
    source = "def job(%s):\n    return body(%s)\n" % (", ".join(annotations), ", ".join(annotations))
    namespace = {"body": body}
    exec(source, namespace)
    function = namespace["job"]
    function.__annotations__ = dict(annotations, **{"return": tp.Numpy})
    return flow.global_function()(function), inputs


def _run(body, inputs):
    job, inputs = _trace(body, inputs)
    return job(*inputs)


P = np.zeros((4, 3), np.float32)


@pytest.mark.parametrize("body, inputs, error, pattern", [
    (lambda p, i: flow.gather(p, i), [P, np.array([1, 4], np.int32)], ValueError,
     r"gather \(op 'Gather_0'\): index 4 at position 1 is out of range \[0, 4\)"),
    (lambda p, i: flow.gather(p, i, axis=1), [P, np.array([-1], np.int64)], ValueError,
     r"gather .*index -1 at position 0 is out of range \[0, 3\)"),
    (lambda p, i: flow.math.unsorted_segment_sum(p, i, 2), [P, np.array([0, 1, 2, 0], np.int32)],
     ValueError, r"unsorted_segment_sum .*segment id 2 at position 2 is out of range \[0, 2\)"),
    (lambda p, i: flow.gather_nd(p, i), [P, np.array([[1, 1], [3, 3]], np.int32)], ValueError,
     r"gather_nd .*index tuple \(3, 3\) of row 1 is out of range: entry 1 must be in \[0, 3\)"),
    (lambda i: flow.one_hot(i, 3), [np.array([0, 3], np.int32)], ValueError,
     r"one_hot .*index 3 at position 1 is out of range \[0, 3\)"),
])
def test_out_of_range_indices_raise_at_run_time(body, inputs, error, pattern):
    job, inputs = _trace(body, inputs)
    with pytest.raises(error, match=pattern):
        job(*inputs)
    good = [np.zeros_like(a) for a in inputs]
    job(*good)  # the session keeps working
    flow.clear_default_session()


@pytest.mark.parametrize("body, inputs, error, pattern", [
    (lambda p, i: flow.gather(p, i, axis=2), [P, np.array([1], np.int32)], ValueError,
     r"gather: axis 2 is out of range for a tensor of rank 2"),
    (lambda p, i: flow.gather(p, p), [P, P], TypeError, r"gather: indices must be int32 or int64"),
    (lambda p, i: flow.gather(p, i, batch_dims=1), [P, np.zeros((3, 2), np.int32)], ValueError,
     r"gather: the first batch_dims=1 dims of params \(4, 3\) and indices \(3, 2\)"),
    (lambda p, i: flow.math.unsorted_segment_sum(p, i, 2), [P, np.zeros((3,), np.int32)],
     ValueError, r"unsorted_segment_sum: segment_ids \(3,\) must match data \(4, 3\) on axes \[0, 1\)"),
    (lambda p, i: flow.gather_nd(p, i), [P, np.zeros((2, 3), np.int32)], ValueError,
     r"gather_nd: index tuples of indices \(2, 3\) have 3 entries but params \(4, 3\)"),
    (lambda p, i: flow.scatter_nd(i, p, (5, 3)), [P, np.zeros((3, 1), np.int32)], ValueError,
     r"scatter_nd: updates \(4, 3\) must have shape indices\[:-1\] \+ shape\[K:\] = \(3, 3\)"),
    (lambda i: flow.one_hot(i, 3, axis=3), [np.zeros((2, 2), np.int32)], ValueError,
     r"one_hot: axis 3 is out of range"),
    (lambda i: flow.one_hot(i, 3, on_value=1000, dtype=flow.int8), [np.zeros((2,), np.int32)],
     ValueError, r"one_hot on_value: value 1000 is out of range \[-128, 127\] of int8"),
    (lambda i: flow.one_hot(i, 3, off_value=2 ** 40, dtype=flow.int32),
     [np.zeros((2,), np.int32)], ValueError, r"one_hot off_value: value 1099511627776 is out"),
    (lambda p, i: flow.tensor_scatter_nd_add(p, i, flow.cast(p, flow.int32)),
     [P, np.zeros((4, 1), np.int32)], TypeError,
     r"tensor_scatter_nd_add: updates has dtype int32, params float32"),
    (lambda p: flow.clip_by_value(p), [P], ValueError, r"clip_by_value: min_value and max_value"),
    (lambda p: flow.clip_by_value(p, 2, 1), [P], ValueError, r"min_value 2 is greater than"),
])
def test_trace_time_errors(body, inputs, error, pattern):
    with pytest.raises(error, match=pattern):
        _run(body, inputs)
    flow.clear_default_session()
