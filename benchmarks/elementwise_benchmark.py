"""Elementwise kernel throughput on one thread: flow.math.exp (float32, float64), log (float64),
gelu and sigmoid (float32) and a broadcast add against PyTorch 1.13 (torch.set_num_threads(1),
results written with out= into preallocated tensors, as our kernels write into their registers; torch cycles through `copies`
output tensors, as our job's `copies` ops write `copies` different registers, so that both sides
stream the same memory).

Our side is measured inside real jobs, with the per-call runtime cost (feeding the placeholder,
returning a result) removed: a job applies the op `--copies` times to the same input, a second
job once, and the kernel time is the difference divided by copies - 1.

Prints one JSON line per case:
    {"case": "exp_float32_1048576", "oneflow_ns_per_element": ..., "torch_ns_per_element": ...,
     "ratio": torch time / our time (above 1: we are faster)}

Run: .venv/bin/python benchmarks/elementwise_benchmark.py [--iterations 30] [--copies 9]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp

import side_by_side

ELEMENTS = 1 << 20
CASES = [
    # name, flow function of (x, y), torch function writing into out, x shape, y shape, dtype
    ("exp_float32", lambda x, y: flow.math.exp(x), lambda x, y, out: torch.exp(x, out=out),
     (ELEMENTS,), None, np.float32),
    ("exp_float64", lambda x, y: flow.math.exp(x), lambda x, y, out: torch.exp(x, out=out),
     (ELEMENTS,), None, np.float64),
    ("log_float64", lambda x, y: flow.math.log(x), lambda x, y, out: torch.log(x, out=out),
     (ELEMENTS,), None, np.float64),
    ("gelu_float32", lambda x, y: flow.math.gelu(x),
     lambda x, y, out: out.copy_(torch.nn.functional.gelu(x)), (ELEMENTS,), None, np.float32),
    ("sigmoid_v2_float32", lambda x, y: flow.math.sigmoid_v2(x),
     lambda x, y, out: torch.sigmoid(x, out=out), (ELEMENTS,), None, np.float32),
    ("broadcast_add_float32", lambda x, y: x + y, lambda x, y, out: torch.add(x, y, out=out),
     (1024, 1024), (1024,), np.float32),
    ("maximum_float32", lambda x, y: flow.math.maximum(x, y),
     lambda x, y, out: torch.maximum(x, y, out=out), (1024, 1024), (1024,), np.float32),
]


def oneflow_job(flow_fn, x, y, copies):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)
    dtype = flow.float32 if x.dtype == np.float32 else flow.float64
    y_shape = y.shape if y is not None else (1,)

    @flow.global_function()
    def job(x_blob: tp.Numpy.Placeholder(x.shape, dtype=dtype),
            y_blob: tp.Numpy.Placeholder(y_shape, dtype=dtype)) -> tp.Numpy:
        out = None
        for _ in range(copies):
            out = flow_fn(x_blob, y_blob)
        return out

    y_value = y if y is not None else np.zeros(1, x.dtype)
    return lambda: job(x, y_value)


def oneflow_seconds(flow_fn, x, y, copies, iterations):
    many = side_by_side.best_seconds(oneflow_job(flow_fn, x, y, copies), iterations)
    one = side_by_side.best_seconds(oneflow_job(flow_fn, x, y, 1), iterations)
    return (many - one) / (copies - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--copies", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    for name, flow_fn, torch_fn, x_shape, y_shape, dtype in CASES:
        low = 0.01 if name.startswith("log") else -3  # log's domain
        x = rng.uniform(low, 3, size=x_shape).astype(dtype)
        y = None if y_shape is None else rng.uniform(-3, 3, size=y_shape).astype(dtype)
        ours = oneflow_seconds(flow_fn, x, y, args.copies, args.iterations)
        x_torch = torch.from_numpy(x)
        y_torch = None if y is None else torch.from_numpy(y)
        outs = [torch.empty(np.broadcast_shapes(x_shape, y_shape or ()), dtype=x_torch.dtype)
                for _ in range(args.copies)]

        def torch_call():
            for out in outs:
                torch_fn(x_torch, y_torch, out)

        theirs = side_by_side.best_seconds(torch_call, args.iterations) / args.copies
        count = outs[0].numel()
        print(json.dumps({
            "case": "%s_%d" % (name, count),
            "oneflow_ns_per_element": round(ours / count * 1e9, 3),
            "torch_ns_per_element": round(theirs / count * 1e9, 3),
            "ratio": round(theirs / ours, 2),
        }), flush=True)


if __name__ == "__main__":
    main()
