"""MLP training throughput: this framework against PyTorch 1.13 CPU, same model, batch, threads.

Model: 784-512-512-10, ReLU, sparse softmax cross entropy (mean over the batch), SGD with
momentum 0.9 and learning rate 0.01, batch 64, random inputs and labels.

Prints one JSON line per thread count, then one line with the session start cost:
    {"case": "mlp_784_512_512_10_b64", "threads": n, "oneflow_samples_per_s": ...,
     "torch_samples_per_s": ..., "ratio": oneflow / torch}
    {"case": "session_start_mlp", "seconds": ...}

Each (framework, thread count) runs in its own child process; see run_side for why.
Run: .venv/bin/python benchmarks/mlp_benchmark.py [--threads 1 2] [--warmup 20] [--iterations 200]
     [--openblas openmp]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import json
import time

import numpy as np

import side_by_side

BATCH = 64
IN_FEATURES = 784
HIDDEN = 512
CLASSES = 10
LEARNING_RATE = 0.01
MOMENTUM = 0.9


def random_batch(seed):
    rng = np.random.RandomState(seed)
    images = rng.standard_normal((BATCH, IN_FEATURES)).astype(np.float32)
    labels = rng.randint(0, CLASSES, size=(BATCH,)).astype(np.int32)
    return images, labels


def make_oneflow_train_job(threads):
    """Starts a fresh default session with `threads` compute threads; returns the train job."""
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.compute_thread_pool_size(threads)

    @flow.global_function(type="train")
    def mlp_train_job(
        images: tp.Numpy.Placeholder((BATCH, IN_FEATURES), dtype=flow.float32),
        labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32),
    ) -> tp.Numpy:
        initializer = flow.truncated_normal_initializer(stddev=0.05)
        hidden = flow.layers.dense(
            images, HIDDEN, activation=flow.nn.relu, kernel_initializer=initializer, name="dense1"
        )
        hidden = flow.layers.dense(
            hidden, HIDDEN, activation=flow.nn.relu, kernel_initializer=initializer, name="dense2"
        )
        logits = flow.layers.dense(hidden, CLASSES, kernel_initializer=initializer, name="dense3")
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="loss")
        scheduler = flow.optimizer.PiecewiseConstantScheduler([], [LEARNING_RATE])
        flow.optimizer.SGD(scheduler, momentum=MOMENTUM).minimize(loss)
        return loss

    return mlp_train_job


def oneflow_seconds_per_iteration(threads, warmup, iterations):
    """Returns (seconds per steady-state iteration, seconds of the first call)."""
    images, labels = random_batch(0)
    job = make_oneflow_train_job(threads)
    start = time.perf_counter()
    job(images, labels)  # traces, compiles the Plan, starts the runtime, runs one iteration
    first_call = time.perf_counter() - start
    per_iteration = side_by_side.seconds_per_call(lambda: job(images, labels), warmup, iterations)
    return per_iteration, first_call


def torch_seconds_per_iteration(threads, warmup, iterations):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    images, labels = random_batch(0)
    images = torch.from_numpy(images)
    labels = torch.from_numpy(labels.astype(np.int64))
    model = torch.nn.Sequential(
        torch.nn.Linear(IN_FEATURES, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, CLASSES),
    )
    loss_function = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_function(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()  # like ours, bring the loss back to the host every iteration

    return side_by_side.seconds_per_call(step, warmup, iterations)


def main():
    parser = side_by_side.make_parser(__doc__.split("\n")[0], ["oneflow", "torch"])
    args = parser.parse_args()

    if args.side == "oneflow":
        per_iteration, first_call = oneflow_seconds_per_iteration(
            args.threads[0], args.warmup, args.iterations
        )
        print(json.dumps({"seconds_per_iteration": per_iteration, "first_call": first_call}))
        return
    if args.side == "torch":
        per_iteration = torch_seconds_per_iteration(args.threads[0], args.warmup, args.iterations)
        print(json.dumps({"seconds_per_iteration": per_iteration}))
        return

    session_start = None
    for threads in args.threads:
        ours = side_by_side.run_side(__file__, "oneflow", threads, args)
        theirs = side_by_side.run_side(__file__, "torch", threads, args)
        if session_start is None:
            session_start = ours["first_call"] - ours["seconds_per_iteration"]
        ours, theirs = ours["seconds_per_iteration"], theirs["seconds_per_iteration"]
        line = {
            "case": "mlp_784_512_512_10_b64",
            "threads": threads,
            "oneflow_samples_per_s": round(BATCH / ours, 1),
            "torch_samples_per_s": round(BATCH / theirs, 1),
            "ratio": round(theirs / ours, 3),
        }
        if args.openblas != "default":
            line["openblas"] = args.openblas
        print(json.dumps(line), flush=True)
    print(json.dumps({"case": "session_start_mlp", "seconds": round(session_start, 4)}), flush=True)


if __name__ == "__main__":
    main()
