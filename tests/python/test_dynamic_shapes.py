"""Blobs of data-dependent shape (OneFlow 0.3's dynamic blobs): flow.argwhere's result and the
ops downstream of it, on one device. Each run's shapes come from the data; results are checked
against NumPy and PyTorch on several inputs, including no rows and all rows."""
from typing import Tuple

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(180)


def test_gather_nd_of_argwhere_sums_the_selected_values():
    flow.clear_default_session()
    seen, watched = {}, []

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((6,), dtype=flow.int32)):
        small = flow.argwhere(flow.math.less(x, flow.constant(5, dtype=flow.int32)))
        picked = flow.gather_nd(params=x, indices=small)
        flow.watch(picked, lambda value: watched.append(value.numpy()))
        seen["small"], seen["picked"] = small, picked
        return picked, flow.math.reduce_sum(picked)

    rng = np.random.RandomState(0)
    inputs = [np.array([1, 7, 3, 9, 4, 5], np.int32), np.full((6,), 9, np.int32),
              np.arange(6, dtype=np.int32)] + [rng.randint(0, 10, 6).astype(np.int32)
                                               for _ in range(4)]
    for x in inputs:
        picked, total = job(x).get()
        np.testing.assert_array_equal(picked.numpy(), x[x < 5])
        np.testing.assert_array_equal(watched[-1], x[x < 5])
        assert total.numpy().shape == (1,) or total.numpy().shape == ()
        assert int(total.numpy().reshape(-1)[0]) == int(x[x < 5].sum())
    assert seen["small"].is_dynamic and seen["picked"].is_dynamic
    assert seen["small"].shape == (6, 1) and seen["picked"].shape == (6,)  # the upper bounds


def test_math_on_dynamic_rows_matches_numpy():
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((8, 3)), bias: tp.Numpy.Placeholder((3,))):
        rows = flow.argwhere(flow.math.reduce_sum(x, axis=1) > 0)
        picked = flow.gather_nd(params=x, indices=rows)  # (rows, 3)
        shifted = flow.math.exp(picked) * 2.0 - bias
        return (shifted, flow.math.reduce_mean(picked), flow.math.reduce_mean(picked, axis=0),
                flow.math.reduce_max(picked, axis=1))

    rng = np.random.RandomState(1)
    for keep in ([0, 3, 5], list(range(8)), [7], []):
        x = -np.abs(rng.randn(8, 3)).astype(np.float32) - 0.1
        x[keep] = np.abs(x[keep]) + 0.2
        bias = np.array([1, 2, 3], np.float32)
        shifted, mean, column_mean, row_max = [r.numpy() for r in job(x, bias).get()]
        picked = x[np.sum(x, axis=1) > 0]
        np.testing.assert_allclose(shifted, np.exp(picked) * 2 - [1, 2, 3], rtol=1e-5)
        np.testing.assert_array_equal(row_max, picked.max(axis=1) if len(picked) else
                                      np.zeros((0,), np.float32))
        if keep:
            np.testing.assert_allclose(mean.reshape(-1)[0], picked.mean(), rtol=1e-5)
            np.testing.assert_allclose(column_mean, picked.mean(axis=0), rtol=1e-5)
        else:  # the mean of no rows is NaN, as NumPy's
            assert np.isnan(mean).all() and np.isnan(column_mean).all()


def test_nonzero_and_a_reshape_with_unknown_dim_follow_the_rows():
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((3, 4))):
        coordinates = flow.argwhere(x)
        return flow.reshape(coordinates, (-1,)), flow.nonzero(x)

    x = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]], np.float32)
    flat, nonzero = [r.numpy() for r in job(x).get()]
    np.testing.assert_array_equal(flat, np.argwhere(x).reshape(-1))
    np.testing.assert_array_equal(nonzero, np.stack(np.nonzero(x)))


def test_cast_to_static_shape_needs_the_full_shape_when_it_runs():
    flow.clear_default_session()

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        picked = flow.gather_nd(params=x, indices=flow.argwhere(x))
        static = flow.cast_to_static_shape(picked, name="to_static")
        assert picked.is_dynamic and not static.is_dynamic
        return static * 3.0

    np.testing.assert_allclose(job(np.array([1, 2, 3, 4], np.float32)), [3, 6, 9, 12])
    with pytest.raises(ValueError, match=r"to_static.*\(2,\).*static \(4,\)"):
        job(np.array([1, 0, 3, 0], np.float32))
    np.testing.assert_allclose(job(np.array([5, 6, 7, 8], np.float32)), [15, 18, 21, 24])


def test_gradients_flow_through_dynamic_rows():
    """loss = sum over the rows of w picked by argwhere(mask) of (w[row] * scale)^2; SGD steps
    (with momentum) against PyTorch, one of them with no rows picked."""
    flow.clear_default_session()
    w0 = np.random.RandomState(2).randn(6, 3).astype(np.float32)

    @flow.global_function(type="train")
    def job(mask: tp.Numpy.Placeholder((6,)), scale: tp.Numpy.Placeholder((1, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(6, 3), initializer=flow.zeros_initializer())
        rows = flow.gather_nd(params=w, indices=flow.argwhere(mask))
        loss = flow.math.reduce_sum(flow.math.square(rows * scale))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return loss

    flow.load_variables({"w": w0})
    w_torch = torch.tensor(w0, requires_grad=True)
    optimizer = torch.optim.SGD([w_torch], lr=0.1, momentum=0.9)  # flow's SGD default
    rng = np.random.RandomState(3)
    for mask in ([1, 0, 1, 0, 0, 1], [0] * 6, [1] * 6, [0, 0, 0, 0, 0, 1]):
        mask = np.array(mask, np.float32)
        scale = rng.rand(1, 3).astype(np.float32) + 0.5
        loss = job(mask, scale)
        optimizer.zero_grad()
        expected = ((w_torch[torch.tensor(mask > 0)] * torch.tensor(scale)) ** 2).sum()
        expected.backward()
        optimizer.step()
        np.testing.assert_allclose(loss.reshape(-1)[0], expected.item(), rtol=1e-5)
        np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(),
                                   w_torch.detach().numpy(), rtol=1e-5, atol=1e-6)


def _hybrid_embedding(ids, vocab_size, split, width):
    """OneFlow-Benchmark's wdl hybrid embedding: rows of ids below `split` come from one table,
    the others from a second one on the CPU, put back in place with tensor_scatter_nd_update."""
    ids = flow.flatten(ids)
    split_constant = flow.constant(split, dtype=flow.int32)
    high_rows = flow.argwhere(flow.math.less(ids, split_constant))
    low_rows = flow.argwhere(flow.math.greater_equal(ids, split_constant))
    high_ids = flow.gather_nd(params=ids, indices=high_rows)
    low_ids = flow.gather_nd(params=ids, indices=low_rows) - split_constant
    high_table = flow.get_variable("high", shape=(split, width),
                                   initializer=flow.zeros_initializer())
    high = flow.gather(params=high_table, indices=high_ids)
    with flow.scope.placement("cpu", "0:0"):
        low_table = flow.get_variable("low", shape=(vocab_size - split, width),
                                      initializer=flow.zeros_initializer())
        low = flow.gather(params=low_table, indices=low_ids)
    embedding = flow.reshape(flow.zeros_like(ids, dtype=flow.float), (-1, 1)) * flow.constant(
        0.0, dtype=flow.float, shape=(1, width))
    embedding = flow.tensor_scatter_nd_update(params=embedding, updates=high, indices=high_rows)
    embedding = flow.tensor_scatter_nd_update(params=embedding, updates=low, indices=low_rows)
    return flow.cast_to_static_shape(embedding)


def test_hybrid_embedding_trains_like_one_table():
    flow.clear_default_session()
    batch, fields, vocab_size, split, width = 4, 3, 20, 8, 2

    @flow.global_function(type="train")
    def job(ids: tp.Numpy.Placeholder((batch, fields), dtype=flow.int32),
            labels: tp.Numpy.Placeholder((batch, 1))) -> tp.Numpy:
        embedding = _hybrid_embedding(ids, vocab_size, split, width)
        features = flow.reshape(embedding, (batch, fields * width))
        weight = flow.get_variable("fc", shape=(1, fields * width),
                                   initializer=flow.zeros_initializer())
        logits = flow.matmul(features, weight, transpose_b=True)
        loss = flow.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5])).minimize(loss)
        return flow.math.reduce_mean(loss)

    rng = np.random.RandomState(4)
    table0 = rng.uniform(-0.5, 0.5, (vocab_size, width)).astype(np.float32)
    fc0 = rng.uniform(-0.5, 0.5, (1, fields * width)).astype(np.float32)
    flow.load_variables({"high": table0[:split], "low": table0[split:], "fc": fc0})
    table = torch.tensor(table0, requires_grad=True)
    fc = torch.tensor(fc0, requires_grad=True)
    optimizer = torch.optim.SGD([table, fc], lr=0.5, momentum=0.9)  # flow's SGD default
    for step in range(4):
        ids = rng.randint(0, vocab_size, (batch, fields)).astype(np.int32)
        if step == 1:
            ids[:] = rng.randint(split, vocab_size, (batch, fields))  # no high rows at all
        labels = rng.randint(0, 2, (batch, 1)).astype(np.float32)
        got = job(ids, labels)
        optimizer.zero_grad()
        logits = table[torch.tensor(ids, dtype=torch.long)].reshape(batch, -1) @ fc.t()
        per_example = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, torch.tensor(labels), reduction="none")
        per_example.mean().backward()
        # OneFlow 0.3's optimizers average a per-example loss over its elements.
        optimizer.step()
        np.testing.assert_allclose(got.reshape(-1)[0], per_example.mean().item(), rtol=1e-5)
    variables = flow.get_all_variables()
    np.testing.assert_allclose(np.concatenate([variables["high"].numpy(),
                                               variables["low"].numpy()]),
                               table.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variables["fc"].numpy(), fc.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_a_dynamic_blob_is_read_on_another_cpu_device_of_its_machine():
    """Boxing carries no run shapes, but a CPU device of the same machine reads the register of
    a dynamic blob as it is (across machines: test_multi_machine.py)."""
    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((6,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            rows = flow.argwhere(x)
        with flow.scope.placement("cpu", "0:1"):
            return flow.gather_nd(params=x, indices=rows) * 2.0

    for x in [np.array([0, 1, 0, 2, 3, 0], np.float32), np.array([4, 0, 0, 0, 0, 5], np.float32)]:
        np.testing.assert_array_equal(job(x), x[x != 0] * 2)


def test_argwhere_on_several_mirrored_devices_gives_each_device_its_rows():
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=config)
    def job(x: tp.ListNumpy.Placeholder((5,))) -> tp.ListNumpy:
        return flow.math.reduce_sum(flow.argwhere(x), axis=[0])

    values = [np.array([0, 1, 1, 0, 1], np.float32), np.array([1, 0, 0, 0, 0], np.float32)]
    for value, result in zip(values, job(values)):
        np.testing.assert_array_equal(result, np.argwhere(value).sum(axis=0))


def test_dynamic_blobs_on_several_devices_are_whole_on_each():
    """A blob of data-dependent shape over 2 devices is broadcast: each device computes the same
    rows (OneFlow-Benchmark's hybrid embedding on 2 GPUs); a hint that splits one is refused."""
    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((8,))) -> Tuple[tp.Numpy, tp.Numpy]:
        with flow.scope.placement("cpu", "0:0-1"):
            rows = flow.argwhere(flow.math.greater(x, flow.constant(0.0, dtype=flow.float)))
            picked = flow.gather_nd(params=x, indices=rows)
            assert rows.is_dynamic and picked.is_dynamic
            return picked * 3.0, flow.math.reduce_sum(picked)

    x = np.array([1, -2, 3, 0, 5, -1, 2, 0], np.float32)
    picked, total = job(x)
    np.testing.assert_array_equal(picked, x[x > 0] * 3)
    np.testing.assert_allclose(total, [x[x > 0].sum()])

    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    @flow.global_function(type="predict")
    def split(x: tp.Numpy.Placeholder((8,))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-1"):
            rows = flow.argwhere(x)
            return flow.parallel_cast(rows, distribute=flow.distribute.split(0)) + 1

    with pytest.raises(ValueError, match="depends on the data"):
        split(x)


def test_calls_in_flight_keep_their_own_shapes():
    """Several calls run at once (registers of two iterations in flight on a chain of ops); each
    result has its own call's rows."""
    flow.clear_default_session()
    flow.config.cpu_device_num(2)

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((16,))) -> tp.Callback[tp.Numpy]:
        with flow.scope.placement("cpu", "0:0"):
            picked = flow.gather_nd(params=x, indices=flow.argwhere(x > 0.0))
            scaled = flow.math.sqrt(picked * 4.0) + 1.0
            return flow.math.square(scaled - 1.0)

    rng = np.random.RandomState(5)
    inputs = [rng.randn(16).astype(np.float32) for _ in range(24)]
    inputs[3][:] = -1.0
    results = {}
    for index, x in enumerate(inputs):
        job(x)(lambda value, index=index: results.__setitem__(index, value))
    flow.sync_default_session()
    for index, x in enumerate(inputs):
        np.testing.assert_allclose(results[index], 4.0 * x[x > 0], rtol=1e-5)


def test_which_results_stay_dynamic():
    flow.clear_default_session()
    flags = {}

    @flow.global_function(type="predict")
    def job(x: tp.Numpy.Placeholder((5, 2))):
        rows = flow.argwhere(flow.math.reduce_sum(x, axis=1))
        picked = flow.gather_nd(params=x, indices=rows)  # (rows, 2)
        flags["picked"] = picked.is_dynamic
        flags["relu"] = flow.math.relu(picked).is_dynamic
        flags["sum over columns"] = flow.math.reduce_sum(picked, axis=1).is_dynamic
        flags["sum of all"] = flow.math.reduce_sum(picked).is_dynamic
        flags["scattered into x"] = flow.tensor_scatter_nd_update(x, rows, picked).is_dynamic
        segment = flow.cast(flow.gather_nd(params=flow.constant(1, shape=(5,), dtype=flow.int32),
                                           indices=rows), flow.int32)
        flags["segment sum"] = flow.math.unsorted_segment_sum(picked, segment, axis=0,
                                                              num_segments=5).is_dynamic
        flags["static cast"] = flow.cast_to_static_shape(picked).is_dynamic
        flags["x"] = x.is_dynamic
        return picked

    job(np.ones((5, 2), np.float32))
    assert flags == {"picked": True, "relu": True, "sum over columns": True,
                     "sum of all": False, "scattered into x": False,
                     "segment sum": False, "static cast": False, "x": False}


def test_dropout_of_dynamic_rows_draws_a_new_mask_each_run():
    """The op gets a kernel for each run's shape; its random numbers still follow the run
    (piece), not the kernel: two runs never share a mask."""
    flow.clear_default_session()

    @flow.global_function(type="train")  # dropout is the identity in predict jobs
    def job(x: tp.Numpy.Placeholder((64, 32))) -> tp.Numpy:
        rows = flow.argwhere(flow.math.reduce_sum(x, axis=1) > 0)
        bias = flow.get_variable("bias", shape=(1, 32), initializer=flow.zeros_initializer())
        dropped = flow.nn.dropout(flow.gather_nd(params=x, indices=rows) + bias, rate=0.5, seed=7)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0])).minimize(
            flow.math.reduce_sum(dropped))
        return dropped

    masks = []
    for count in (64, 40, 64, 50, 40):
        x = np.ones((64, 32), np.float32)
        x[count:] = -1.0
        kept = job(x) != 0
        assert kept.shape == (count, 32)
        assert abs(kept.mean() - 0.5) < 0.1
        masks.append(kept[:40])
    for i in range(len(masks)):
        for j in range(i):
            assert (masks[i] != masks[j]).any(), (i, j)


def test_slices_of_dynamic_rows_clamp_to_each_run():
    """A slice of a dynamic blob is resolved against its upper bound; in a run with fewer rows
    its bounds clamp to them, as NumPy's do. Gradients flow back through the slice."""
    flow.clear_default_session()
    w0 = np.random.RandomState(6).randn(6, 3).astype(np.float32)

    @flow.global_function(type="train")
    def job(mask: tp.Numpy.Placeholder((6,))):
        w = flow.get_variable("w", shape=(6, 3), initializer=flow.zeros_initializer())
        rows = flow.gather_nd(params=w, indices=flow.argwhere(mask))
        columns = flow.slice_v2(rows, [(None, None, None), (1, 3, 1)])
        first = flow.slice_v2(rows, [(0, 2, 1)])
        loss = flow.math.reduce_sum(flow.math.square(columns))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(loss)
        return columns, first

    flow.load_variables({"w": w0})
    w = w0.copy()
    for mask in ([1, 0, 1, 0, 0, 1], [0, 0, 0, 1, 0, 0], [1] * 6, [0] * 6):
        selected = np.array(mask) > 0
        columns, first = [r.numpy() for r in job(np.array(mask, np.float32)).get()]
        np.testing.assert_array_equal(columns, w[selected][:, 1:3])
        np.testing.assert_array_equal(first, w[selected][0:2])
        gradient = np.zeros_like(w)
        gradient[selected, 1:3] = 2 * w[selected, 1:3]
        w = w - 0.1 * gradient
        np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), w, rtol=1e-6)


@pytest.mark.parametrize("dtype, size_dtype", [(flow.float32, flow.int32),
                                               (flow.int64, flow.int64),
                                               (flow.double, flow.int64)])
def test_sync_dynamic_resize_keeps_the_first_rows(dtype, size_dtype):
    flow.clear_default_session()
    seen = {}

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((10, 3), dtype=dtype),
            size: tp.Numpy.Placeholder((1,), dtype=size_dtype)):
        rows = flow.sync_dynamic_resize(x, size)
        seen["rows"] = rows
        return rows, flow.math.reduce_sum(rows, axis=0)

    rng = np.random.RandomState(6)
    x = (rng.rand(10, 3) * 10).astype(dtype.numpy_dtype)
    for size in (4, 0, 10, 1):
        rows, column_sums = job(x, np.array([size], size_dtype.numpy_dtype)).get()
        np.testing.assert_array_equal(rows.numpy_list()[0], x[:size])
        np.testing.assert_allclose(column_sums.numpy(), x[:size].sum(axis=0), rtol=1e-6)
    assert seen["rows"].is_dynamic and seen["rows"].shape == (10, 3)
    with pytest.raises(ValueError, match=r"sync_dynamic_resize: size 11 is outside \[0, 10\]"):
        job(x, np.array([11], size_dtype.numpy_dtype)).get()
    rows, _ = job(x, np.array([2], size_dtype.numpy_dtype)).get()  # the job still runs
    np.testing.assert_array_equal(rows.numpy(), x[:2])


def test_sync_dynamic_resize_on_two_devices_matches_one():
    def run(devices):
        flow.clear_default_session()
        flow.config.cpu_device_num(devices)

        @flow.global_function()
        def job(x: tp.Numpy.Placeholder((10, 3)),
                size: tp.Numpy.Placeholder((1,), dtype=flow.int32, batch_axis=None)
                ) -> tp.Numpy:
            with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
                rows = flow.sync_dynamic_resize(x, size)
                return flow.math.reduce_sum(rows * rows, axis=[1])

        x = np.arange(30, dtype=np.float32).reshape(10, 3)
        return [job(x, np.array([n], np.int32)) for n in (2, 7, 10)]

    for one, two, n in zip(run(1), run(2), (2, 7, 10)):
        x = np.arange(30, dtype=np.float32).reshape(10, 3)[:n]
        np.testing.assert_allclose(two, (x * x).sum(1))
        np.testing.assert_allclose(one, two)
