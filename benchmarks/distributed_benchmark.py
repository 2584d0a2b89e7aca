"""Several processes on loopback: all-reduce bandwidth and data-parallel MLP training.

1. All-reduce of 1-64 MB float32 between 2 processes, side by side:
   - "gloo": gloo::allreduce called directly on the same buffers, one process per rank
     (what Gloo reaches on its own);
   - "oneflow": a job whose only communication is the P -> B boxing of one blob of that size
     over the devices ["0:0", "1:0"] (a variable read as a partial sum: one device holds it, the
     other zeros, then the all-reduce), timed per call from machine 0; the job also zero-fills and
     sums the blob locally, so this is a lower bound on the boxing's own bandwidth.
   Bandwidth is bytes / seconds per all-reduce (algorithm bandwidth), the best of --iterations.
2. Data-parallel MLP 784-512-512-10 (SGD momentum 0.9) at global batch 128: 2 processes x 1
   device (each process gets half the cores) against 1 process x 1 device with 1 and with 2
   compute threads. samples/s over --iterations calls after --warmup.

Prints one JSON line per case:
    {"case": "allreduce", "megabytes": m, "gloo_gb_per_s": ..., "oneflow_gb_per_s": ...,
     "ratio": oneflow / gloo}
    {"case": "dp_mlp_b128", "processes": 2, "samples_per_s": ..., "one_process_1_thread": ...,
     "one_process_2_threads": ..., "speedup_vs_1_thread": ..., "speedup_vs_2_threads": ...}
Run: .venv/bin/python benchmarks/distributed_benchmark.py [--megabytes 1 4 16 64]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, IN_FEATURES, HIDDEN, CLASSES = 128, 784, 512, 10


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(nproc, arguments, extra_env=None):
    """Runs this script's worker mode in `nproc` processes; returns rank 0's last JSON line."""
    env = dict(os.environ, **(extra_env or {}))
    command = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
               "--master_port", str(free_port()), os.path.abspath(__file__)] + arguments
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = [line.split("] ", 1)[1] for line in output.stdout.splitlines()
             if line.startswith("[rank 0] {")]
    if output.returncode != 0 or not lines:
        raise RuntimeError("benchmark worker failed:\n%s\n%s" % (output.stdout[-2000:],
                                                                  output.stderr[-2000:]))
    return json.loads(lines[-1])


def run_gloo_allreduce(elements, iterations):
    """Each rank: gloo::allreduce on `elements` floats, best seconds of `iterations`."""
    from oneflow import _oneflow_internal
    from oneflow.distributed import process_identity

    me = process_identity.discover()
    cluster = _oneflow_internal.Cluster(rank=me.rank, world_size=me.world_size,
                                        master_addr=me.master_addr, master_port=me.master_port,
                                        data_address="127.0.0.1")
    seconds = _oneflow_internal.gloo_allreduce_seconds(cluster, elements, iterations)
    cluster.halt()
    return seconds


def run_oneflow_allreduce(elements, iterations):
    import oneflow as flow
    import oneflow.typing as tp
    from oneflow.framework import op_builder

    flow.config.cpu_device_num(1)

    @flow.global_function(type="predict")
    def allreduce(tick: tp.Numpy.Placeholder((1,), batch_axis=None)) -> tp.Numpy:
        with flow.scope.placement("cpu", ["0:0", "1:0"]):
            value = flow.get_variable("buffer", shape=(elements,),
                                      initializer=flow.constant_initializer(1.0))
            with op_builder.required_sbp({"partial": {"in_0": "P", "out_0": "P"},
                                          "whole": {"in_0": "B", "out_0": "B"}}):
                partial = flow.identity(value, name="partial")
                whole = flow.identity(partial, name="whole")
            total = flow.math.reduce_sum(whole) + 0 * flow.math.reduce_sum(tick)
        return total

    tick = np.zeros((1,), np.float32)
    assert np.asarray(allreduce(tick)).item() == elements  # the sum of ones, once
    best = float("inf")
    for _ in range(iterations):
        start = time.perf_counter()
        allreduce(tick)
        best = min(best, time.perf_counter() - start)
    return best


def run_dp_mlp(warmup, iterations, threads):
    import oneflow as flow
    import oneflow.typing as tp

    flow.config.cpu_device_num(1)
    if threads:
        flow.config.compute_thread_pool_size(threads)

    @flow.global_function(type="train")
    def step(images: tp.Numpy.Placeholder((BATCH, IN_FEATURES)),
             labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        h = flow.layers.dense(images, HIDDEN, activation=flow.nn.relu, name="fc1")
        h = flow.layers.dense(h, HIDDEN, activation=flow.nn.relu, name="fc2")
        logits = flow.layers.dense(h, CLASSES, name="fc3")
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                           momentum=0.9).minimize(loss)
        return loss

    rng = np.random.RandomState(0)
    images = rng.standard_normal((BATCH, IN_FEATURES)).astype(np.float32)
    labels = rng.randint(0, CLASSES, size=(BATCH,)).astype(np.int32)
    for _ in range(warmup):
        step(images, labels)
    start = time.perf_counter()
    for _ in range(iterations):
        step(images, labels)
    return BATCH * iterations / (time.perf_counter() - start)


def worker(args):
    if args.worker == "gloo_allreduce":
        result = {"seconds": run_gloo_allreduce(args.elements, args.iterations)}
    elif args.worker == "oneflow_allreduce":
        result = {"seconds": run_oneflow_allreduce(args.elements, args.iterations)}
    else:
        result = {"samples_per_s": run_dp_mlp(args.warmup, args.iterations, args.threads)}
    if int(os.environ.get("RANK", "0")) == 0:
        print(json.dumps(result), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--mlp_warmup", type=int, default=10)
    parser.add_argument("--mlp_iterations", type=int, default=100)
    parser.add_argument("--skip", choices=["allreduce", "mlp"], nargs="*", default=[])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--elements", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--warmup", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if "allreduce" not in args.skip:
        for megabytes in args.megabytes:
            elements = megabytes * (1 << 20) // 4
            common = ["--elements", str(elements), "--iterations", str(args.iterations)]
            gloo = launch(2, ["--worker", "gloo_allreduce"] + common)["seconds"]
            ours = launch(2, ["--worker", "oneflow_allreduce"] + common)["seconds"]
            bytes_ = elements * 4
            print(json.dumps({"case": "allreduce", "megabytes": megabytes,
                              "gloo_gb_per_s": round(bytes_ / gloo / 1e9, 3),
                              "oneflow_gb_per_s": round(bytes_ / ours / 1e9, 3),
                              "ratio": round(gloo / ours, 3)}), flush=True)
    if "mlp" not in args.skip:
        common = ["--worker", "dp_mlp", "--warmup", str(args.mlp_warmup), "--iterations",
                  str(args.mlp_iterations)]
        two = launch(2, common)["samples_per_s"]
        one_1 = launch(1, common + ["--threads", "1"])["samples_per_s"]
        one_2 = launch(1, common + ["--threads", "2"])["samples_per_s"]
        print(json.dumps({"case": "dp_mlp_b128", "processes": 2, "samples_per_s": round(two),
                          "one_process_1_thread": round(one_1),
                          "one_process_2_threads": round(one_2),
                          "speedup_vs_1_thread": round(two / one_1, 2),
                          "speedup_vs_2_threads": round(two / one_2, 2)}), flush=True)


if __name__ == "__main__":
    main()
