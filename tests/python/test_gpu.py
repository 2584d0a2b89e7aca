"""Jobs on GPUs against the same jobs on CPU devices: training trajectories, variables moving
between the session and GPU memory, ops without a GPU kernel, several GPUs. Every test here needs
GPUs in use (flow.sysconfig.gpus_in_use() > 0: a CUDA build, a GPU, ONEFLOW_GPU=1) and is
skipped, and counted as skipped, otherwise. The op checker's GPU pass (op_checker.py) covers
each op's kernels; the copies between host and GPU memory (the copy_hd op) are in every job."""
import os

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
