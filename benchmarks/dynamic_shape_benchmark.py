"""Cost of data-dependent (dynamic) shapes: a wide-and-deep style embedding step on one device.

Three train steps over the same ids (batch x fields, a vocabulary split in two at `--split`):
  - hybrid: OneFlow-Benchmark's hybrid embedding (argwhere -> gather_nd -> gather from two
    tables -> tensor_scatter_nd_update -> cast_to_static_shape), whose shapes change every step;
  - one table: the same lookup from one table, all shapes static;
  - PyTorch 1.13: nn.functional.embedding from one table.
Each ends in a dense layer and a sigmoid cross-entropy loss, trained with SGD.

Prints one JSON line per case: {"case": ..., "ms_per_step": ...}.
Run: PYTHONPATH=python .venv/bin/python benchmarks/dynamic_shape_benchmark.py [--threads 1]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json

import numpy as np
import torch

import oneflow as flow
import oneflow.typing as tp

import side_by_side


def hybrid_embedding(ids, vocab, split, width):
    ids = flow.flatten(ids)
    split_constant = flow.constant(split, dtype=flow.int32)
    high_rows = flow.argwhere(flow.math.less(ids, split_constant))
    low_rows = flow.argwhere(flow.math.greater_equal(ids, split_constant))
    high = flow.gather(flow.get_variable("high", (split, width)),
                       flow.gather_nd(params=ids, indices=high_rows))
    low_ids = flow.gather_nd(params=ids, indices=low_rows) - split_constant
    low = flow.gather(flow.get_variable("low", (vocab - split, width)), low_ids)
    rows = flow.reshape(flow.zeros_like(ids, dtype=flow.float), (-1, 1)) * flow.constant(
        0.0, shape=(1, width))
    rows = flow.tensor_scatter_nd_update(params=rows, updates=high, indices=high_rows)
    rows = flow.tensor_scatter_nd_update(params=rows, updates=low, indices=low_rows)
    return flow.cast_to_static_shape(rows)


def oneflow_step(args, hybrid):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(args.threads)
    batch, fields, width = args.batch, args.fields, args.width

    @flow.global_function(type="train")
    def job(ids: tp.Numpy.Placeholder((batch, fields), dtype=flow.int32),
            labels: tp.Numpy.Placeholder((batch, 1))) -> tp.Numpy:
        if hybrid:
            rows = hybrid_embedding(ids, args.vocab, args.split, width)
        else:
            rows = flow.gather(flow.get_variable("table", (args.vocab, width)), ids)
        features = flow.reshape(rows, (batch, fields * width))
        logits = flow.layers.dense(features, 1, name="fc")
        loss = flow.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                           momentum=0).minimize(loss)
        return flow.math.reduce_mean(loss)

    feeds = make_feeds(args)
    state = {"step": 0}

    def step():
        state["step"] += 1
        job(*feeds[state["step"] % len(feeds)])

    return step


def torch_step(args):
    torch.set_num_threads(args.threads)
    table = torch.nn.Parameter(torch.zeros(args.vocab, args.width))
    fc = torch.nn.Linear(args.fields * args.width, 1)
    optimizer = torch.optim.SGD([table] + list(fc.parameters()), lr=0.01)
    feeds = [(torch.tensor(ids, dtype=torch.long), torch.tensor(labels))
             for ids, labels in make_feeds(args)]
    state = {"step": 0}

    def step():
        state["step"] += 1
        ids, labels = feeds[state["step"] % len(feeds)]
        optimizer.zero_grad()
        logits = fc(torch.nn.functional.embedding(ids, table).reshape(args.batch, -1))
        torch.nn.functional.binary_cross_entropy_with_logits(logits, labels).backward()
        optimizer.step()

    return step


def make_feeds(args):
    rng = np.random.RandomState(0)
    return [(rng.randint(0, args.vocab, (args.batch, args.fields)).astype(np.int32),
             rng.randint(0, 2, (args.batch, 1)).astype(np.float32)) for _ in range(8)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--fields", type=int, default=26)
    parser.add_argument("--vocab", type=int, default=100000)
    parser.add_argument("--split", type=int, default=50000)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=30)
    args = parser.parse_args()
    cases = (("hybrid embedding (dynamic shapes)", lambda: oneflow_step(args, True)),
             ("one table (static shapes)", lambda: oneflow_step(args, False)),
             ("PyTorch one table", lambda: torch_step(args)))
    for case, make_step in cases:  # one session at a time
        seconds = side_by_side.best_seconds(make_step(), args.iterations)
        print(json.dumps({"case": case, "ms_per_step": round(seconds * 1e3, 3)}), flush=True)


if __name__ == "__main__":
    main()
