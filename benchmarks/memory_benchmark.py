"""Training memory and the first steps: ResNet-50 (examples/resnet50.py) against the same model in
PyTorch 1.13 CPU, at the same batch, image size and threads (SGD with momentum, random data).

Each side runs in its own process and reports its peak resident memory (ru_maxrss: the model,
its optimizer state, every activation and temporary, and the interpreter) and the wall time of
each training step; the first step includes building the Plan (ours) and creating the oneDNN
primitives (both sides). One JSON line per side, then one with both:
    {"case": "resnet50_b16_224", "side": ..., "peak_rss_mb": ..., "first_step_s": ...,
     "steady_step_s": ...}
`steady_step_s` is the median of the steps after the second.

Run: .venv/bin/python benchmarks/memory_benchmark.py [--batch 16] [--image-size 224] [--steps 5]
     [--threads 2]
Timing and memory only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def oneflow_step(batch, image_size, threads):
    import oneflow as flow
    import oneflow.typing as tp
    from resnet50 import resnet50

    flow.config.compute_thread_pool_size(threads)
    shape = (batch, 3, image_size, image_size)

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder(shape, dtype=flow.float32),
                  labels: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, resnet50(images, True))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                           momentum=0.9).minimize(loss)
        return loss

    rng = np.random.RandomState(0)
    images = rng.standard_normal(shape).astype(np.float32)
    labels = rng.randint(0, 1000, size=(batch,)).astype(np.int32)
    return lambda: float(train_job(images, labels).mean())


def torch_step(batch, image_size, threads):
    import torch
    from gpu_benchmark import torch_resnet50

    torch.set_num_threads(threads)
    model = torch_resnet50(1000)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.RandomState(0)
    images = torch.from_numpy(rng.standard_normal((batch, 3, image_size, image_size))
                              .astype(np.float32))
    labels = torch.from_numpy(rng.randint(0, 1000, size=(batch,)).astype(np.int64))

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def run_side(args):
    make = oneflow_step if args.side == "oneflow" else torch_step
    step = make(args.batch, args.image_size, args.threads)
    seconds = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    steady = sorted(seconds[2:]) or seconds
    print(json.dumps({
        "case": "resnet50_b%d_%d" % (args.batch, args.image_size), "side": args.side,
        "threads": args.threads,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "first_step_s": round(seconds[0], 2),
        "steady_step_s": round(steady[len(steady) // 2], 3),
    }), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--side", choices=["oneflow", "torch"])
    args = parser.parse_args()
    if args.side:
        run_side(args)
        return
    environment = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads),
                       OMP_NUM_THREADS=str(args.threads))
    records = {}
    for side in ["oneflow", "torch"]:
        command = [sys.executable, os.path.abspath(__file__), "--side", side,
                   "--batch", str(args.batch), "--image-size", str(args.image_size),
                   "--steps", str(args.steps), "--threads", str(args.threads)]
        output = subprocess.run(command, env=environment, stdout=subprocess.PIPE, check=True)
        records[side] = json.loads(output.stdout.decode().strip().splitlines()[-1])
        print(json.dumps(records[side]), flush=True)
    ours, theirs = records["oneflow"], records["torch"]
    print(json.dumps({
        "case": ours["case"], "threads": args.threads,
        "peak_rss_ratio": round(ours["peak_rss_mb"] / theirs["peak_rss_mb"], 2),
        "steady_speed_ratio": round(theirs["steady_step_s"] / ours["steady_step_s"], 2),
    }))


if __name__ == "__main__":
    main()
