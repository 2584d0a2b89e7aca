"""Shape and indexing kernels on one thread against PyTorch 1.13 (torch.set_num_threads(1),
results written with out= into preallocated tensors where torch allows it).

Our side is measured inside real jobs, with the per-call runtime cost removed as in
elementwise_benchmark.py: a job applies the op `--copies` times, a second job once, and the
kernel time is the difference divided by copies - 1. Large tables are variables, so no call
feeds them.

Prints one JSON line per case:
    {"case": "gather_64_rows_of_100000x128_float32", "oneflow_us": ..., "torch_us": ...,
     "ratio": torch time / our time (above 1: we are faster)}

Run: .venv/bin/python benchmarks/index_benchmark.py [--iterations 30] [--copies 9] [--case concat]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp

import side_by_side

TABLE = (100000, 128)
ROWS = 64


def oneflow_job(op, shape, feeds, copies):
    """A job with `copies` applications of op(variable of `shape`, *placeholders)."""
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)
    names = ["feed_%d" % i for i in range(len(feeds))]
    annotations = {
        name: tp.Numpy.Placeholder(value.shape, dtype={
            np.dtype(np.float32): flow.float32, np.dtype(np.int32): flow.int32}[value.dtype])
        for name, value in zip(names, feeds)}

    def body(*blobs):
        table = flow.get_variable("table", shape=shape, initializer=flow.zeros_initializer())
        out = None
        for _ in range(copies):
            out = op(table, *blobs)
        return flow.slice_v2(flow.reshape(out, (-1,)), [(0, 1, 1)])  # a tiny result to fetch

    source = "def job(%s):\n    return body(%s)\n" % (", ".join(names), ", ".join(names))
    namespace = {"body": body}
    exec(source, namespace)
    function = namespace["job"]
    function.__annotations__ = dict(annotations, **{"return": tp.Numpy})
    job = flow.global_function()(function)
    return lambda: job(*feeds)


def oneflow_seconds(op, shape, feeds, copies, iterations):
    many = side_by_side.best_seconds(oneflow_job(op, shape, feeds, copies), iterations)
    one = side_by_side.best_seconds(oneflow_job(op, shape, feeds, 1), iterations)
    return (many - one) / (copies - 1)


def cases(rng):
    indices = rng.randint(0, TABLE[0], size=(ROWS,)).astype(np.int32)
    wide = rng.uniform(-1, 1, (1024, 512)).astype(np.float32)
    return [
        # name, flow op of (variable, *feeds), variable shape, feeds, torch call of (outs, i)
        ("gather_%d_rows_of_%dx%d_float32" % ((ROWS,) + TABLE),
         lambda table, i: flow.gather(table, i), TABLE, [indices],
         _torch_case(lambda t, i, out: torch.index_select(t, 0, i, out=out),
                     [torch.zeros(TABLE), torch.from_numpy(indices).long()], (ROWS, TABLE[1]))),
        ("concat_axis1_2x1024x512_float32",
         lambda table, x: flow.concat([table, x], axis=1), (1024, 512), [wide],
         _torch_case(lambda t, x, out: torch.cat([t, x], dim=1, out=out),
                     [torch.zeros(1024, 512), torch.from_numpy(wide)], (1024, 1024))),
        ("concat_axis0_2x1024x512_float32",
         lambda table, x: flow.concat([table, x], axis=0), (1024, 512), [wide],
         _torch_case(lambda t, x, out: torch.cat([t, x], dim=0, out=out),
                     [torch.zeros(1024, 512), torch.from_numpy(wide)], (2048, 512))),
        ("slice_rows_and_columns_1024x1024_float32",
         lambda table: flow.slice_v2(table, [(100, 900, 1), (64, 960, 1)]), (1024, 1024), [],
         _torch_case(lambda t, out: out.copy_(t[100:900, 64:960]), [torch.zeros(1024, 1024)],
                     (800, 896))),
        ("pad_1_each_side_1024x1024_float32",
         lambda table: flow.pad(table, [(1, 1), (1, 1)]), (1024, 1024), [],
         _torch_case(lambda t, out: out.copy_(torch.nn.functional.pad(t, (1, 1, 1, 1))),
                     [torch.zeros(1024, 1024)], (1026, 1026))),
        ("segment_sum_%d_rows_into_%dx%d_float32" % ((ROWS,) + TABLE),
         lambda rows, i, like: flow.math.unsorted_segment_sum_like(rows, i, like),
         (ROWS, TABLE[1]), [indices, np.zeros(TABLE, np.float32)],
         _torch_case(lambda rows, i, out: out.zero_().index_add_(0, i, rows),
                     [torch.zeros(ROWS, TABLE[1]), torch.from_numpy(indices).long()], TABLE)),
    ]


def _torch_case(call, inputs, out_shape):
    return call, inputs, out_shape


def run_cases(description, cases, iterations=30, copies=9):
    """Parses the command line and prints one JSON line per case of `cases(rng)`: entries
    (name, op, shape, feeds, (torch_fn, torch_inputs, out_shape)), timed on 1 thread."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--copies", type=int, default=copies)
    parser.add_argument("--case", default="", help="run only cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    for name, op, shape, feeds, (torch_fn, torch_inputs, out_shape) in cases(rng):
        if args.case not in name:
            continue
        ours = oneflow_seconds(op, shape, feeds, args.copies, args.iterations)
        outs = [torch.empty(out_shape) for _ in range(args.copies)]

        def torch_call():
            for out in outs:
                torch_fn(*torch_inputs, out)

        theirs = side_by_side.best_seconds(torch_call, args.iterations) / args.copies
        print(json.dumps({
            "case": name,
            "oneflow_us": round(ours * 1e6, 2),
            "torch_us": round(theirs * 1e6, 2),
            "ratio": round(theirs / ours, 2),
        }), flush=True)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], cases)
