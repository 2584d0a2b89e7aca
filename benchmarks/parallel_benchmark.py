"""Several CPU devices in one process: data-parallel training and a two-stage pipeline.

Model: MLP 784-512-512-10, ReLU, sparse softmax cross entropy, SGD momentum 0.9, global batch
128, random data. Every device has ONE compute thread (flow.config.compute_thread_pool_size(1),
OPENBLAS_NUM_THREADS=1), so 2 devices use the machine's 2 cores.

Cases (one JSON line each):
  data_parallel   training throughput on 2 devices (batch split 64 + 64, gradients all-reduced)
                  against 1 device: calls that wait for their loss, the same with the sharded
                  optimizer (optimizer_placement_optimization_mode("distributed_split")), and
                  calls kept in flight (tp.Callback); PyTorch 1.13 at 1 and 2 threads on the
                  same batch alongside.
  pipeline        inference throughput with the model cut in two stages (dense1 on device 0,
                  dense2 + dense3 on device 1), calls kept in flight (tp.Callback), against the
                  same model on one device.

Each case side runs in its own child process (side_by_side.run_side).
Run: .venv/bin/python benchmarks/parallel_benchmark.py [--warmup 20] [--iterations 200]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import json
import sys
import time

import numpy as np

import side_by_side

BATCH = 128
IN_FEATURES = 784
HIDDEN = 512
CLASSES = 10
SIDES = ["dp1", "dp2", "zero2", "async1", "async2", "torch1", "torch2", "pipe1", "pipe2"]


def _batch():
    rng = np.random.RandomState(0)
    images = rng.standard_normal((BATCH, IN_FEATURES)).astype(np.float32)
    labels = rng.randint(0, CLASSES, size=(BATCH,)).astype(np.int32)
    return images, labels


def _layers(images, stage_placements):
    import oneflow as flow

    initializer = flow.truncated_normal_initializer(stddev=0.05)
    with flow.scope.placement("cpu", stage_placements[0]):
        hidden = flow.layers.dense(images, HIDDEN, activation=flow.nn.relu,
                                   kernel_initializer=initializer, name="dense1")
    with flow.scope.placement("cpu", stage_placements[1]):
        hidden = flow.layers.dense(hidden, HIDDEN, activation=flow.nn.relu,
                                   kernel_initializer=initializer, name="dense2")
        return flow.layers.dense(hidden, CLASSES, kernel_initializer=initializer, name="dense3")


def oneflow_training(devices, warmup, iterations, sharded=False, in_flight=False):
    """Seconds per training step, data-parallel over `devices` devices; `sharded`: with
    optimizer_placement_optimization_mode("distributed_split") (each device updates a slice);
    `in_flight`: calls return at once (tp.Callback), so Python never waits between steps."""
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    flow.config.compute_thread_pool_size(1)
    placement = "0:0-%d" % (devices - 1)
    config = flow.FunctionConfig()
    if sharded:
        config.optimizer_placement_optimization_mode("distributed_split")

    def body(images, labels):
        logits = _layers(images, [placement, placement])
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                           momentum=0.9).minimize(loss)
        return loss

    images, labels = _batch()
    if not in_flight:
        @flow.global_function(type="train", function_config=config)
        def train(images: tp.Numpy.Placeholder((BATCH, IN_FEATURES)),
                  labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
            return body(images, labels)

        return side_by_side.seconds_per_call(lambda: train(images, labels), warmup, iterations)

    @flow.global_function(type="train", function_config=config)
    def train_async(images: tp.Numpy.Placeholder((BATCH, IN_FEATURES)),
                    labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)
                    ) -> tp.Callback[tp.Numpy]:
        return body(images, labels)

    losses = []
    for _ in range(warmup):
        train_async(images, labels)(losses.append)
    flow.sync_default_session()
    start = time.perf_counter()
    for _ in range(iterations):
        train_async(images, labels)(losses.append)
    flow.sync_default_session()
    return (time.perf_counter() - start) / iterations


def torch_training(threads, warmup, iterations):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    images, labels = _batch()
    images, labels = torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))
    model = torch.nn.Sequential(
        torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    loss_function = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_function(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return side_by_side.seconds_per_call(step, warmup, iterations)


def oneflow_inference(stages, warmup, iterations):
    """Seconds per inference call with `stages` stages (1: the whole model on device 0), calls
    kept in flight so consecutive iterations can overlap."""
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.cpu_device_num(stages)
    flow.config.compute_thread_pool_size(1)
    placements = ["0:0", "0:1"] if stages == 2 else ["0:0", "0:0"]
    config = flow.FunctionConfig()
    config.default_placement_scope(flow.scope.placement("cpu", "0:0"))

    @flow.global_function(function_config=config)
    def infer(images: tp.Numpy.Placeholder((BATCH, IN_FEATURES))) -> tp.Callback[tp.Numpy]:
        return _layers(images, placements)

    images, _ = _batch()
    done = []
    for _ in range(warmup):
        infer(images)(done.append)
    flow.sync_default_session()
    start = time.perf_counter()
    for _ in range(iterations):
        infer(images)(done.append)
    flow.sync_default_session()
    return (time.perf_counter() - start) / iterations


def run_side(side, warmup, iterations):
    kind, count = side[:-1], int(side[-1])
    if kind in ("dp", "zero", "async"):
        return oneflow_training(count, warmup, iterations, sharded=kind == "zero",
                                in_flight=kind == "async")
    if kind == "torch":
        return torch_training(count, warmup, iterations)
    return oneflow_inference(count, warmup, iterations)


def main():
    parser = side_by_side.make_parser(__doc__.split("\n")[0], SIDES)
    args = parser.parse_args()
    if args.side is not None:
        print(json.dumps({"seconds": run_side(args.side, args.warmup, args.iterations)}))
        return

    def samples_per_second(side, threads):
        result = side_by_side.run_side(__file__, side, threads, args)
        return round(BATCH / result["seconds"], 1)

    dp1, dp2 = samples_per_second("dp1", 1), samples_per_second("dp2", 1)
    zero2 = samples_per_second("zero2", 1)
    async1, async2 = samples_per_second("async1", 1), samples_per_second("async2", 1)
    torch1, torch2 = samples_per_second("torch1", 1), samples_per_second("torch2", 2)
    print(json.dumps({
        "case": "data_parallel_mlp_784_512_512_10_b128",
        "oneflow_1_device_samples_per_s": dp1, "oneflow_2_devices_samples_per_s": dp2,
        "speedup": round(dp2 / dp1, 3),
        "oneflow_2_devices_sharded_optimizer_samples_per_s": zero2,
        "calls_in_flight_1_device_samples_per_s": async1,
        "calls_in_flight_2_devices_samples_per_s": async2,
        "calls_in_flight_speedup": round(async2 / async1, 3),
        "torch_1_thread_samples_per_s": torch1, "torch_2_threads_samples_per_s": torch2,
        "oneflow_2_devices_vs_torch_2_threads": round(dp2 / torch2, 3),
    }), flush=True)
    pipe1, pipe2 = samples_per_second("pipe1", 1), samples_per_second("pipe2", 1)
    print(json.dumps({
        "case": "pipeline_inference_mlp_784_512_512_10_b128",
        "one_device_samples_per_s": pipe1, "two_stages_samples_per_s": pipe2,
        "speedup": round(pipe2 / pipe1, 3),
    }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
