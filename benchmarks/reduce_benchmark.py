"""Reduction and arg/sort kernel time on one thread against PyTorch 1.13
(torch.set_num_threads(1)): reduce_sum over the last and over the first axis of a (1024, 1024)
float32, the full sum, reduce_max over the last axis, argmax over the last axis, and top_k
(k = 5) over the last axis; then reduce_sum and reduce_max over short last axes, (65536, 16) and
(16384, 64) (rows of up to 128 floats are reduced 8 at a time).

Our side is measured inside real jobs with the per-call runtime cost removed, as in
elementwise_benchmark.py: a job applies the op `--copies` times to the same input, a second
job once, and the kernel time is the difference divided by copies - 1. PyTorch writes into a
preallocated `out=` where it has one.

Prints one JSON line per case:
    {"case": ..., "oneflow_us": ..., "torch_us": ..., "ratio": torch / ours (above 1: faster)}

Run: .venv/bin/python benchmarks/reduce_benchmark.py [--iterations 30] [--copies 9]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp

import side_by_side

SHAPE = (1024, 1024)


def _torch_sum(dim):
    def run(x, out):
        return torch.sum(x, dim=dim, out=out)
    return run


CASES = [
    # name, flow function, torch function (x, out), torch out shape
    ("reduce_sum_last_axis", lambda x: flow.math.reduce_sum(x, axis=1), _torch_sum(1),
     (SHAPE[0],), torch.float32),
    ("reduce_sum_first_axis", lambda x: flow.math.reduce_sum(x, axis=0), _torch_sum(0),
     (SHAPE[1],), torch.float32),
    ("reduce_sum_all", lambda x: flow.math.reduce_sum(x), lambda x, out: torch.sum(x), None,
     None),
    ("reduce_max_last_axis", lambda x: flow.math.reduce_max(x, axis=1),
     lambda x, out: torch.amax(x, dim=1, out=out), (SHAPE[0],), torch.float32),
    ("argmax_last_axis", lambda x: flow.math.argmax(x, axis=1),
     lambda x, out: torch.argmax(x, dim=1, out=out), (SHAPE[0],), torch.int64),
    ("top_k_5_last_axis", lambda x: flow.math.top_k(x, k=5),
     lambda x, out: torch.topk(x, 5, dim=1), None, None),
]

SHORT_ROW_SHAPES = [(65536, 16), (16384, 64)]


def _short_row_cases():
    for rows, length in SHORT_ROW_SHAPES:
        yield ("reduce_sum_rows_of_%d" % length, lambda x: flow.math.reduce_sum(x, axis=1),
               _torch_sum(1), (rows,), torch.float32, (rows, length))
        yield ("reduce_max_rows_of_%d" % length, lambda x: flow.math.reduce_max(x, axis=1),
               lambda x, out: torch.amax(x, dim=1, out=out), (rows,), torch.float32,
               (rows, length))


def oneflow_job(flow_fn, x, copies):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)

    @flow.global_function()
    def job(x_blob: tp.Numpy.Placeholder(x.shape, dtype=flow.float32)) -> tp.Numpy:
        out = None
        for _ in range(copies):
            out = flow_fn(x_blob)
        return out

    return lambda: job(x)


def oneflow_seconds(flow_fn, x, copies, iterations):
    many = side_by_side.best_seconds(oneflow_job(flow_fn, x, copies), iterations)
    one = side_by_side.best_seconds(oneflow_job(flow_fn, x, 1), iterations)
    return (many - one) / (copies - 1)


def torch_seconds(torch_fn, x, out_shape, out_dtype, iterations):
    tensor = torch.from_numpy(x)
    out = None if out_shape is None else torch.empty(out_shape, dtype=out_dtype)
    return side_by_side.best_seconds(lambda: torch_fn(tensor, out), iterations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--copies", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = [case + (SHAPE,) for case in CASES] + list(_short_row_cases())
    for name, flow_fn, torch_fn, out_shape, out_dtype, shape in cases:
        x = np.random.RandomState(0).standard_normal(shape).astype(np.float32)
        ours = oneflow_seconds(flow_fn, x, args.copies, args.iterations)
        theirs = torch_seconds(torch_fn, x, out_shape, out_dtype, args.iterations * 10)
        print(json.dumps({"case": name, "oneflow_us": round(ours * 1e6, 1),
                          "torch_us": round(theirs * 1e6, 1),
                          "ratio": round(theirs / ours, 2) if ours > 0 else None}), flush=True)


if __name__ == "__main__":
    main()
