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
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

BATCH = 64
IN_FEATURES = 784
HIDDEN = 512
CLASSES = 10
LEARNING_RATE = 0.01
MOMENTUM = 0.9
OPENBLAS_OPENMP_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


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


def time_calls(step, warmup, iterations):
    """Seconds per call of step() after `warmup` untimed calls."""
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    return (time.perf_counter() - start) / iterations


def oneflow_seconds_per_iteration(threads, warmup, iterations):
    """Returns (seconds per steady-state iteration, seconds of the first call)."""
    images, labels = random_batch(0)
    job = make_oneflow_train_job(threads)
    start = time.perf_counter()
    job(images, labels)  # traces, compiles the Plan, starts the runtime, runs one iteration
    first_call = time.perf_counter() - start
    per_iteration = time_calls(lambda: job(images, labels), warmup, iterations)
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

    return time_calls(step, warmup, iterations)


def run_side(side, threads, args):
    """Runs one framework at one thread count in a child process; returns its JSON result.

    A fresh process per case keeps BLAS thread settings from leaking from one case into the
    next. Both sides get OPENBLAS_NUM_THREADS/OMP_NUM_THREADS = threads: torch.set_num_threads
    does not bound the pthreads OpenBLAS that Debian's PyTorch calls (at "1 thread" it used
    1.7 cores here), so without it the comparison would not be on the same cores.
    """
    command = [
        sys.executable, os.path.abspath(__file__), "--side", side, "--threads", str(threads),
        "--warmup", str(args.warmup), "--iterations", str(args.iterations),
    ]
    environment = dict(os.environ)
    environment["OPENBLAS_NUM_THREADS"] = str(threads)
    environment["OMP_NUM_THREADS"] = str(threads)
    if args.openblas == "openmp":
        environment["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP_DIR + (
            ":" + environment["LD_LIBRARY_PATH"] if environment.get("LD_LIBRARY_PATH") else ""
        )
    completed = subprocess.run(command, env=environment, stdout=subprocess.PIPE, check=True)
    return json.loads(completed.stdout.decode().strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument(
        "--openblas", choices=["default", "openmp"], default="default",
        help="openmp: load Debian's OpenMP build of OpenBLAS (" + OPENBLAS_OPENMP_DIR + ")",
    )
    parser.add_argument("--side", choices=["oneflow", "torch"], help=argparse.SUPPRESS)
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
        ours = run_side("oneflow", threads, args)
        theirs = run_side("torch", threads, args)
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
