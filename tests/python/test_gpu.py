"""Jobs on GPUs against the same jobs on CPU devices: training trajectories, variables moving
between the session and GPU memory, ops without a GPU kernel, several GPUs. Every test here needs
GPUs in use (flow.sysconfig.gpus_in_use() > 0: a CUDA build, a GPU, ONEFLOW_GPU=1) and is
skipped, and counted as skipped, otherwise. The op checker's GPU pass (op_checker.py) covers
each op's kernels; the copies between host and GPU memory (the copy_hd op) are in every job."""
import json
import os
import re

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow import _oneflow_internal

pytestmark = pytest.mark.skipif(
    flow.sysconfig.gpus_in_use() == 0,
    reason="no GPU in use (flow.sysconfig.gpus_in_use() == 0; needs a CUDA build, a GPU and "
           "ONEFLOW_GPU=1)")

BATCH, FEATURES, HIDDEN, CLASSES = 64, 20, 32, 5


def dataset():
    rng = np.random.RandomState(3)
    centers = rng.uniform(-2, 2, size=(CLASSES, FEATURES))
    labels = np.arange(BATCH) % CLASSES
    points = centers[labels] + 0.5 * rng.standard_normal((BATCH, FEATURES))
    return points.astype(np.float32), labels.astype(np.int32)


def mlp_losses(device, steps=30, devices="0:0", momentum=0.9):
    """Trains a two-layer MLP on `device` ("cpu"/"gpu") and returns the losses."""
    flow.clear_default_session()

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((BATCH, FEATURES)),
              labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement(device, devices):
            hidden = flow.layers.dense(
                x, HIDDEN, activation=flow.nn.relu, name="hidden",
                kernel_initializer=flow.random_uniform_initializer(-0.3, 0.3, seed=1))
            logits = flow.layers.dense(
                hidden, CLASSES, name="output",
                kernel_initializer=flow.random_uniform_initializer(-0.3, 0.3, seed=2))
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                               momentum=momentum).minimize(loss)
        return loss

    points, labels = dataset()
    return [float(train(points, labels).mean()) for _ in range(steps)]


def test_the_actor_timeline_times_gpu_work_on_the_gpu(tmp_path, monkeypatch):
    events_file = tmp_path / "act_events.json"
    monkeypatch.setenv("ONEFLOW_ACT_EVENT_FILE", str(events_file))
    steps = 3
    mlp_losses("gpu", steps=steps)
    flow.clear_default_session()  # stopping the runtime writes the timeline
    events = json.loads(events_file.read_text())["traceEvents"]
    acts = {(e["args"]["actor"], e["args"]["piece"]): e for e in events if e.get("cat") == "act"}
    device = [e for e in events if e.get("cat") == "device"]
    # The GPU ops' acts, each with its twin on a device row; the host's acts (ticks, inputs,
    # the return) have none.
    timed = {e["name"].rsplit("@", 1)[0] for e in device}
    assert any(name.startswith("hidden") for name in timed), timed
    assert any(name.startswith("output") for name in timed), timed
    for event in device:
        act = acts[(event["args"]["actor"], event["args"]["piece"])]
        assert event["name"] == act["name"] and event["tid"] == 1000 + act["tid"]
        assert event["dur"] >= 0
    named_rows = {e["tid"] for e in events if e.get("ph") == "M"}
    assert {e["tid"] for e in device} <= named_rows
    # One stream runs one kernel at a time: a row's spans follow each other.
    for row in {e["tid"] for e in device}:
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in device if e["tid"] == row)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end - 1e-3, (end, start)
    assert len({e["args"]["piece"] for e in device}) == steps


def test_mlp_trains_on_a_gpu_as_on_the_cpu():
    cpu = mlp_losses("cpu")
    gpu = mlp_losses("gpu")
    assert gpu[-1] < 0.5 * gpu[0], gpu
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5)


def test_data_parallel_gpus_match_one_gpu():
    if flow.sysconfig.gpus_in_use() < 2:
        pytest.skip("needs 2 GPUs")
    one = mlp_losses("gpu", steps=10)
    two = mlp_losses("gpu", steps=10, devices="0:0-1")
    np.testing.assert_allclose(two, one, rtol=1e-4, atol=1e-5)


def test_variables_move_between_the_session_and_gpu_memory(tmp_path):
    flow.clear_default_session()

    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        with flow.scope.placement("gpu", "0:0"):
            w = flow.get_variable("w", shape=(4,), initializer=flow.constant_initializer(1.0))
            loss = flow.math.reduce_sum(w * x)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                               momentum=0).minimize(loss)
        return loss

    x = np.arange(4, dtype=np.float32)
    step(x)
    # One SGD step on the GPU: w = 1 - 0.5 * x, read back into the session.
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), 1 - 0.5 * x, rtol=1e-6)
    # A value loaded while the runtime runs reaches the GPU copy.
    flow.load_variables({"w": np.full(4, 2.0, np.float32)})
    np.testing.assert_allclose(step(x), np.sum(2.0 * x), rtol=1e-6)
    path = os.path.join(str(tmp_path), "ckpt")
    flow.checkpoint.save(path)
    flow.load_variables({"w": np.zeros(4, np.float32)})
    flow.load_variables(flow.checkpoint.get(path))
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), 2.0 - 0.5 * x, rtol=1e-6)


def test_ops_without_a_gpu_kernel_run_on_the_host():
    # generate_random_batch_permutation_indices has a host kernel only: on a GPU placement it runs
    # on the host between copies from and back to the GPU.
    report = _oneflow_internal.op_registry_report()
    assert not report["generate_random_batch_permutation_indices"]["gpu_dtypes"], \
        "pick another op without a GPU kernel for this test"
    flow.clear_default_session()

    @flow.global_function()
    def shuffle(x: tp.Numpy.Placeholder((6, 5))) -> tp.Numpy:
        with flow.scope.placement("gpu", "0:0"):
            return flow.random.shuffle(flow.math.relu(x), seed=3)

    x = np.random.RandomState(0).standard_normal((6, 5)).astype(np.float32)
    rows = shuffle(x)
    # The same rows, each once, in some order.
    np.testing.assert_array_equal(np.sort(rows, axis=0), np.sort(np.maximum(x, 0), axis=0))
    order = [int(np.flatnonzero((np.maximum(x, 0) == row).all(axis=1))[0]) for row in rows]
    assert sorted(order) == list(range(6))


def dynamic_rows_losses(device, steps=4):
    """OneFlow-Benchmark's hybrid-embedding pattern on `device`: the rows of the ids that are
    kept (argwhere, a blob whose shape depends on the data) pick embedding rows of a variable
    (gather_nd, gather), trained by SGD. argwhere has no GPU kernel: on "gpu" its readers run on
    the host until their blobs are static again (the loss, the embedding's gradient)."""
    flow.clear_default_session()

    @flow.global_function(type="train")
    def train(ids: tp.Numpy.Placeholder((12,), dtype=flow.int32),
              keep: tp.Numpy.Placeholder((12,))) -> tp.Numpy:
        with flow.scope.placement(device, "0:0"):
            table = flow.get_variable(
                "table", shape=(10, 4),
                initializer=flow.random_uniform_initializer(-1, 1, seed=5))
            rows = flow.argwhere(keep)
            picked = flow.gather_nd(params=ids, indices=rows)
            assert rows.is_dynamic and picked.is_dynamic
            vectors = flow.gather(table, picked)
            loss = flow.math.reduce_sum(flow.math.square(vectors - 0.5))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05])).minimize(loss)
        return loss

    rng = np.random.RandomState(7)
    ids = rng.randint(0, 10, size=12).astype(np.int32)
    keep = (rng.uniform(size=12) > 0.4).astype(np.float32)
    return [train(ids, keep).item() for _ in range(steps)]


def test_blobs_whose_shape_depends_on_the_data_train_on_a_gpu_placement():
    cpu = dynamic_rows_losses("cpu")
    gpu = dynamic_rows_losses("gpu")
    assert gpu[-1] < gpu[0], gpu
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5)


def matmul_relative_error(tensor_float_32):
    """The largest error of a (256, 512) x (512, 256) float32 product on the GPU, relative to
    the largest entry of the float64 product."""
    flow.clear_default_session()
    flow.config.enable_tensor_float_32_compute(tensor_float_32)

    @flow.global_function()
    def product(a: tp.Numpy.Placeholder((256, 512)),
                b: tp.Numpy.Placeholder((512, 256))) -> tp.Numpy:
        with flow.scope.placement("gpu", "0:0"):
            return flow.matmul(a, b)

    rng = np.random.RandomState(11)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 256)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return float(np.abs(product(a, b) - exact).max() / np.abs(exact).max())


def test_tensor_float_32_compute_is_chosen_per_session():
    """Strict float32 by default; flow.config.enable_tensor_float_32_compute(True) lets the
    matmul round its inputs to TF32's 10-bit mantissa (errors about 2^-11 per product)."""
    strict = matmul_relative_error(False)
    tf32 = matmul_relative_error(True)
    assert strict < 1e-5, strict
    assert 3e-5 < tf32 < 1e-2, tf32


def conv_losses(device, heuristic, steps=4):
    flow.clear_default_session()
    flow.config.enable_cudnn_conv_heuristic_search_algo(heuristic)

    @flow.global_function(type="train")
    def train(images: tp.Numpy.Placeholder((8, 3, 12, 12)),
              labels: tp.Numpy.Placeholder((8,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement(device, "0:0"):
            init = flow.random_uniform_initializer(-0.2, 0.2, seed=4)
            hidden = flow.layers.conv2d(images, 6, 3, strides=2, padding="SAME",
                                        activation=flow.nn.relu, kernel_initializer=init,
                                        name="conv")
            logits = flow.layers.dense(flow.reshape(hidden, (8, -1)), 4, name="dense",
                                       kernel_initializer=init)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return loss

    rng = np.random.RandomState(2)
    images = rng.standard_normal((8, 3, 12, 12)).astype(np.float32)
    labels = (np.arange(8) % 4).astype(np.int32)
    return [train(images, labels).mean() for _ in range(steps)]


def test_convolutions_train_alike_with_either_cudnn_algorithm_search():
    """enable_cudnn_conv_heuristic_search_algo(False): cuDNN's measured search picks each
    convolution's algorithm (forward, data and filter gradients); strict float32 either way."""
    cpu = conv_losses("cpu", True)
    for heuristic in (True, False):
        np.testing.assert_allclose(conv_losses("gpu", heuristic), cpu, rtol=1e-4)


UNITS = 5  # over 2 devices: 3 + 2 columns, an uneven split


def model_parallel_losses(device, tmp_path, monkeypatch, steps=5):
    """Trains a model-parallel classifier on devices 0:0-1 of `device`: the whole batch on both
    (broadcast), the hidden layer's weight split along its units (S(1)), the logits' weight
    split along the classes (S(1): 3 + 2 columns). The compiler boxes with all-gathers (S(1) ->
    B of the logits' weight, uneven), all-to-alls (S(1) -> S(0) and back) and reduce-scatters
    (P -> S(0), P -> S(1)) of activations and gradients. Returns the losses and the names of the
    TaskGraph's boxing nodes."""
    flow.clear_default_session()
    tmp_path.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("ONEFLOW_DEBUG_DIR", str(tmp_path))
    split = flow.distribute.split

    @flow.global_function(type="train")
    def model_parallel(x: tp.Numpy.Placeholder((BATCH, FEATURES), batch_axis=None),
                       labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32, batch_axis=None)
                       ) -> tp.Numpy:
        with flow.scope.placement(device, "0:0-1"):
            w1 = flow.get_variable("w1", shape=(FEATURES, HIDDEN), distribute=split(1),
                                   initializer=flow.random_uniform_initializer(-0.3, 0.3, seed=1))
            hidden = flow.math.relu(flow.matmul(x, w1, name="hidden"))
            w2 = flow.get_variable("w2", shape=(HIDDEN, UNITS), distribute=split(1),
                                   initializer=flow.random_uniform_initializer(-0.3, 0.3, seed=2))
            logits = flow.matmul(hidden, w2, name="logits")
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                               momentum=0.9).minimize(loss)
        return loss

    points, labels = dataset()
    losses = [float(model_parallel(points, labels % UNITS).mean()) for _ in range(steps)]
    task_graph = (tmp_path / "task_graph_model_parallel.prototxt").read_text()
    flow.clear_default_session()
    # Part 0 of each boxing node ("@0"; copies are named by device, "@0:0").
    return losses, sorted(set(re.findall(r'name: "(\w+\([^"]*\))@0[":]', task_graph)))


def test_model_parallel_gpus_box_with_nccl_as_cpus_do(tmp_path, monkeypatch):
    if flow.sysconfig.gpus_in_use() < 2:
        pytest.skip("model parallelism over GPUs 0:0-1 needs 2 GPUs in use, found %d"
                    % flow.sysconfig.gpus_in_use())
    cpu, cpu_boxing = model_parallel_losses("cpu", tmp_path / "cpu", monkeypatch)
    gpu, gpu_boxing = model_parallel_losses("gpu", tmp_path / "gpu", monkeypatch)
    # The conversions that the CPU devices do with collectives are NCCL collectives on the GPUs
    # (no GPU blob goes through host memory for them).
    collectives = [name for name in cpu_boxing if re.match(r"(all_|reduce_)", name)]
    assert any(name.startswith("all_gather(") for name in collectives), cpu_boxing
    for name in collectives:
        assert "nccl_" + name in gpu_boxing, (name, gpu_boxing)
    assert not [name for name in gpu_boxing if re.match(r"(all_|reduce_)", name)], gpu_boxing
    assert cpu[-1] < cpu[0], cpu
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5, atol=1e-6)


# The ValueError of a bad index, by op: gather_nd and scatter_nd name the tuple on the CPU, the
# bad entry on the GPU.
BAD_INDEX_MESSAGE = (r"%s( \(op '\w+'\))?: .*(7 at (position|index) 1 is|tuple \(7\) of row 1 is) "
                     r"out of range.*\[0, 4\)")


# Each case: a job of one indexing op on `device`, fed (values, indices); the indices have 7 at
# position 1, outside [0, 4). On the GPU the check runs on the device and the ValueError comes
# from the device's error report once the work has completed, never silent zeros.
def bad_index_job(op, device):
    flow.clear_default_session()
    values = tp.Numpy.Placeholder((4, 4))
    index_shape = (3, 1) if op in ("gather_nd", "scatter_nd") else (3,)
    indices = tp.Numpy.Placeholder(index_shape, dtype=flow.int32)

    @flow.global_function()
    def job(x: values, i: indices) -> tp.Numpy:
        with flow.scope.placement(device, "0:0"):
            x = flow.math.relu(x)  # computed on `device`
            if op == "gather":
                return flow.gather(x, i)
            if op == "gather_nd":
                return flow.gather_nd(x, i)
            if op == "scatter_nd":
                return flow.scatter_nd(i, flow.slice(x, [0, 0], [3, 3]), (4, 3))
            if op == "unsorted_segment_sum":
                return flow.math.unsorted_segment_sum(flow.slice(x, [0, 0], [3, 3]), i, 4)
            if op == "one_hot":
                return flow.one_hot(i, depth=4) + flow.math.reduce_sum(x)
            assert op == "sparse_softmax_cross_entropy"
            return flow.nn.sparse_softmax_cross_entropy_with_logits(i, flow.slice(x, [0, 0],
                                                                                  [3, 4]))

    return job


@pytest.mark.parametrize("op", ["gather", "gather_nd", "scatter_nd", "unsorted_segment_sum",
                                "one_hot", "sparse_softmax_cross_entropy"])
def test_an_index_out_of_range_raises_on_the_gpu_as_on_the_cpu(op):
    rng = np.random.RandomState(0)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    good = np.array([2, 0, 3], np.int32)
    bad = np.array([2, 7, 3], np.int32)
    if op in ("gather_nd", "scatter_nd"):
        good, bad = good.reshape(3, 1), bad.reshape(3, 1)
    results = {}
    for device in ("cpu", "gpu"):
        job = bad_index_job(op, device)
        results[device] = job(x, good)
        with pytest.raises(ValueError, match=BAD_INDEX_MESSAGE % op):
            job(x, bad)
    np.testing.assert_allclose(results["gpu"], results["cpu"], rtol=1e-5, atol=1e-6)
    flow.clear_default_session()
