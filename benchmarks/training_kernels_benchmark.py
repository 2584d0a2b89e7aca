"""Training-step kernels not covered by the other benchmarks, on one thread: bias_add, softmax,
log-softmax, sparse softmax cross-entropy, cast to and from float16 (forward, float32), relu
forward + backward and the optimizer updates (SGD, momentum, Adam) of a (1024, 1024) variable.

Written to compare builds of this framework (generic x86-64 with per-ISA clones against
-march=native: docs/kernels.md), so every case prints our time; forward cases also print PyTorch
1.13's (torch.set_num_threads(1), results written into `copies` rotating preallocated tensors
where the function has out=).

Our side is measured inside real jobs with the per-call cost removed: a job applies the op
`--copies` times, a second job once, and the op's time is the difference divided by copies - 1.
- forward cases: a predict job, each copy reading the same input;
- "relu_fwd_bwd": a train job over a (1024, 1024) variable, y = relu applied `copies` times,
  loss = sum(y): one relu and one relu_grad per copy;
- "<optimizer>_update": a train job with `copies` (1024, 1024) variables, loss = sum of their
  sums: per variable one reduce_sum, the fill of its gradient and the optimizer's update.

Prints one JSON line per case: {"case", "oneflow_us", "torch_us" (forward cases), "ratio":
torch / ours}. Run: .venv/bin/python benchmarks/training_kernels_benchmark.py [--case softmax]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp

import side_by_side

ROWS, COLUMNS = 4096, 256

# name, flow function of (x, aux), torch function of (x, aux, out) or None, x shape, aux, out dtype
FORWARD_CASES = [
    ("bias_add_1024x1024", lambda x, b: flow.nn.bias_add(x, b),
     lambda x, b, out: torch.add(x, b, out=out), (1024, 1024), "bias", torch.float32),
    ("softmax_4096x256", lambda x, _: flow.nn.softmax(x),
     lambda x, _, out: torch.softmax(x, -1), (ROWS, COLUMNS), None, torch.float32),
    ("log_softmax_4096x256", lambda x, _: flow.nn.logsoftmax(x),
     lambda x, _, out: torch.log_softmax(x, -1), (ROWS, COLUMNS), None, torch.float32),
    ("softmax_axis1_64x32x32x32", lambda x, _: flow.nn.softmax(x, axis=1),
     lambda x, _, out: torch.softmax(x, 1), (64, 32, 32, 32), None, torch.float32),
    ("sparse_softmax_cross_entropy_4096x256",
     lambda x, labels: flow.nn.sparse_softmax_cross_entropy_with_logits(labels, x),
     lambda x, labels, out: F.cross_entropy(x, labels, reduction="none"), (ROWS, COLUMNS),
     "labels", torch.float32),
    ("softmax_65536x10", lambda x, _: flow.nn.softmax(x),
     lambda x, _, out: torch.softmax(x, -1), (65536, 10), None, torch.float32),
    ("log_softmax_26214x40", lambda x, _: flow.nn.logsoftmax(x),
     lambda x, _, out: torch.log_softmax(x, -1), (26214, 40), None, torch.float32),
    ("sparse_softmax_cross_entropy_65536x10",
     lambda x, labels: flow.nn.sparse_softmax_cross_entropy_with_logits(labels, x),
     lambda x, labels, out: F.cross_entropy(x, labels, reduction="none"), (65536, 10),
     "labels", torch.float32),
    ("transpose_1024x1024", lambda x, _: flow.transpose(x, [1, 0]),
     lambda x, _, out: out.copy_(x.t()), (1024, 1024), None, torch.float32),
    ("cast_float32_to_float16_1048576", lambda x, _: flow.cast(x, flow.float16),
     lambda x, _, out: out.copy_(x), (1 << 20,), None, torch.float16),
    ("cast_float16_to_float32_1048576", lambda x, _: flow.cast(x, flow.float32),
     lambda x, _, out: out.copy_(x), (1 << 20,), "half", torch.float32),
]

OPTIMIZERS = {
    "sgd": lambda: flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-6]),
                                      momentum=0),
    "momentum": lambda: flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1e-6]),
                                           momentum=0.9),
    "adam": lambda: flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [1e-6])),
}


def forward_job(flow_fn, x, aux_kind, copies):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)
    if aux_kind == "labels":
        aux = (np.arange(x.shape[0]) % x.shape[1]).astype(np.int32)
        aux_type = tp.Numpy.Placeholder(aux.shape, dtype=flow.int32)
    elif aux_kind == "bias":
        aux = np.linspace(-1, 1, x.shape[1]).astype(np.float32)
        aux_type = tp.Numpy.Placeholder(aux.shape)
    else:
        aux = np.zeros(1, np.float32)
        aux_type = tp.Numpy.Placeholder((1,))

    @flow.global_function()
    def job(x_blob: tp.Numpy.Placeholder(x.shape), aux_blob: aux_type) -> tp.Numpy:
        source = flow.cast(x_blob, flow.float16) if aux_kind == "half" else x_blob
        out = None
        for _ in range(copies):
            out = flow_fn(source, aux_blob)
        return flow.cast(out, flow.float32) if out.dtype == flow.float16 else out

    return lambda: job(x, aux)


def train_job(case, copies):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)

    @flow.global_function(type="train")
    def job() -> tp.Numpy:
        init = flow.random_uniform_initializer(-1, 1)
        if case == "relu_fwd_bwd":
            y = flow.get_variable("w", shape=(1024, 1024), initializer=init)
            for _ in range(copies):
                y = flow.math.relu(y)
            loss = flow.math.reduce_sum(y)
            OPTIMIZERS["sgd"]().minimize(loss)
            return loss
        loss = None
        for i in range(copies):
            w = flow.get_variable("w%d" % i, shape=(1024, 1024), initializer=init)
            term = flow.math.reduce_sum(w)
            loss = term if loss is None else loss + term
        OPTIMIZERS[case[:-len("_update")]]().minimize(loss)
        return loss

    return job


def marginal_seconds(make_call, copies, iterations):
    many = side_by_side.best_seconds(make_call(copies), iterations)
    one = side_by_side.best_seconds(make_call(1), iterations)
    return (many - one) / (copies - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--case", default="", help="run only cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    for name, flow_fn, torch_fn, shape, aux_kind, out_dtype in FORWARD_CASES:
        if args.case not in name:
            continue
        x = rng.uniform(-3, 3, size=shape).astype(np.float32)
        ours = marginal_seconds(lambda k: forward_job(flow_fn, x, aux_kind, k), args.copies,
                                args.iterations)
        x_torch = torch.from_numpy(x)
        if aux_kind == "half":
            x_torch = x_torch.half()
        aux = None
        if aux_kind == "labels":
            aux = torch.arange(shape[0]) % shape[1]
        elif aux_kind == "bias":
            aux = torch.linspace(-1, 1, shape[1])
        outs = [torch.empty(shape, dtype=out_dtype) for _ in range(args.copies)]

        def torch_call():
            for out in outs:
                torch_fn(x_torch, aux, out)

        theirs = side_by_side.best_seconds(torch_call, args.iterations) / args.copies
        print(json.dumps({"case": name, "oneflow_us": round(ours * 1e6, 1),
                          "torch_us": round(theirs * 1e6, 1),
                          "ratio": round(theirs / ours, 2)}), flush=True)
    for name in ["relu_fwd_bwd"] + ["%s_update" % o for o in OPTIMIZERS]:
        if args.case not in name:
            continue
        ours = marginal_seconds(lambda k: train_job(name, k), args.copies, args.iterations)
        print(json.dumps({"case": name, "oneflow_us": round(ours * 1e6, 1)}), flush=True)
    flow.clear_default_session()


if __name__ == "__main__":
    main()
