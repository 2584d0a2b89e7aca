"""Normalization forward + backward on one thread against PyTorch 1.13 CPU
(torch.set_num_threads(1), compute_thread_pool_size(1)):
  batch norm, training mode (batch statistics), float32 (32, 64, 16, 16), axis 1 (NCHW);
  layer norm over the last axis with gamma and beta, float32 (2048, 512).

Both sides chain `--copies` layers (each with its own gamma and beta) and take the gradient of
the sum of the last output, so every layer runs its forward and its full backward (dx, dgamma,
dbeta); the time per layer is (time of `copies` layers - time of one) / (copies - 1), which
removes the per-call costs (feeding the input, the loss seed, returning the result). Ours runs
in a real train job (SGD with learning rate 0).

Prints one JSON line per case: {"case", "oneflow_ms", "torch_ms", "ratio": torch / ours}.
Run: .venv/bin/python benchmarks/norm_benchmark.py [--iterations 20] [--copies 5]
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

CASES = [
    ("batch_norm_train_fwd_bwd_32x64x16x16", (32, 64, 16, 16),
     lambda y, i: flow.layers.batch_normalization(y, axis=1, epsilon=1e-5, name="bn%d" % i),
     lambda y, w, b: F.batch_norm(y, None, None, w, b, training=True, eps=1e-5), 64),
    ("layer_norm_fwd_bwd_2048x512", (2048, 512),
     lambda y, i: flow.layers.layer_norm(y, begin_norm_axis=1, name="ln%d" % i),
     lambda y, w, b: F.layer_norm(y, (512,), w, b, eps=1e-5), 512),
]


def oneflow_call(flow_layer, x, copies):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)

    @flow.global_function(type="train")
    def job(x_blob: tp.Numpy.Placeholder(x.shape)) -> tp.Numpy:
        y = x_blob
        for i in range(copies):
            y = flow_layer(y, i)
        loss = flow.math.reduce_sum(y)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(loss)
        return loss

    return lambda: job(x)


def torch_call(torch_layer, x, params, copies):
    tensors = [(torch.ones(params, requires_grad=True), torch.zeros(params, requires_grad=True))
               for _ in range(copies)]
    x_torch = torch.from_numpy(x)

    def call():
        y = x_torch
        for w, b in tensors:
            y = torch_layer(y, w, b)
        y.sum().backward()

    return call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--copies", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    for name, shape, flow_layer, torch_layer, params in CASES:
        x = rng.randn(*shape).astype(np.float32)
        best = side_by_side.best_seconds
        ours = (best(oneflow_call(flow_layer, x, args.copies), args.iterations)
                - best(oneflow_call(flow_layer, x, 1), args.iterations)) / (args.copies - 1)
        theirs = (best(torch_call(torch_layer, x, params, args.copies), args.iterations)
                  - best(torch_call(torch_layer, x, params, 1), args.iterations))
        theirs /= args.copies - 1
        print(json.dumps({"case": name, "oneflow_ms": round(ours * 1e3, 3),
                          "torch_ms": round(theirs * 1e3, 3), "ratio": round(theirs / ours, 2)}),
              flush=True)
    flow.clear_default_session()


if __name__ == "__main__":
    main()
