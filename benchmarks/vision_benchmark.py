"""Transposed convolution, upsampling, PReLU and tril on one thread against PyTorch 1.13
(torch.set_num_threads(1); results written with out= into preallocated tensors where torch
allows it: upsample and tril; conv_transpose2d and prelu allocate their result).

Our side is measured inside real jobs as in index_benchmark.py: a job applies the op
`--copies` times to a variable, a second job once, and the kernel time is the difference
divided by copies - 1. Forward passes only.

Prints one JSON line per case:
    {"case": "upsample_nearest_2x_16x64x32x32_float32", "oneflow_us": ..., "torch_us": ...,
     "ratio": torch time / our time (above 1: we are faster)}

Run: .venv/bin/python benchmarks/vision_benchmark.py [--iterations 20] [--copies 5] [--case tril]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import numpy as np
import torch
import torch.nn.functional as F

import oneflow as flow
from oneflow.ops.prelu_ops import prelu_op

from index_benchmark import run_cases

NCHW = (16, 64, 32, 32)
NHWC = (16, 32, 32, 64)


def cases(rng):
    deconv_weight = rng.uniform(-0.1, 0.1, (64, 32, 3, 3)).astype(np.float32)
    alpha = rng.uniform(0, 0.5, (64, 1, 1)).astype(np.float32)
    nearest = torch._C._nn.upsample_nearest2d
    bilinear = torch._C._nn.upsample_bilinear2d
    return [_nested(*case) for case in [
        # name, flow op of (variable, *feeds), variable shape, feeds, torch call, inputs, out shape
        ("upsample_nearest_2x_16x64x32x32_float32",
         lambda x: flow.layers.upsample_2d(x, 2), NCHW, [],
         lambda t, out: nearest(t, (64, 64), 2.0, 2.0, out=out), [torch.zeros(NCHW)],
         (16, 64, 64, 64)),
        ("upsample_bilinear_2x_16x64x32x32_float32",
         lambda x: flow.layers.upsample_2d(x, 2, interpolation="bilinear"), NCHW, [],
         lambda t, out: bilinear(t, (64, 64), False, 2.0, 2.0, out=out), [torch.zeros(NCHW)],
         (16, 64, 64, 64)),
        ("upsample_bilinear_2x_16x32x32x64_nhwc_float32",
         lambda x: flow.layers.upsample_2d(x, 2, "NHWC", "bilinear"), NHWC, [],
         lambda t, out: bilinear(t, (64, 64), False, 2.0, 2.0, out=out),
         [torch.zeros(NCHW).contiguous(memory_format=torch.channels_last)],
         (16, 64, 64, 64)),
        ("conv2d_transpose_3x3_s2_same_16x64x32x32_to_32ch_float32",
         lambda x, w: flow.nn.conv2d_transpose(x, w, strides=2, padding="SAME",
                                               output_shape=(16, 32, 64, 64)),
         NCHW, [deconv_weight],
         lambda t, w, out: F.conv_transpose2d(t, w, stride=2, padding=1, output_padding=1),
         [torch.zeros(NCHW), torch.from_numpy(deconv_weight)], (16, 32, 64, 64)),
        ("prelu_per_channel_16x64x32x32_float32",
         lambda x, a: prelu_op(x, a), NCHW, [alpha],
         lambda t, a, out: F.prelu(t, a.reshape(-1)), [torch.zeros(NCHW), torch.from_numpy(alpha)],
         NCHW),
        ("tril_64x256x256_float32",
         lambda x: flow.math.tril(x), (64, 256, 256), [],
         lambda t, out: torch.tril(t, out=out), [torch.zeros(64, 256, 256)], (64, 256, 256)),
    ]]


def _nested(name, op, shape, feeds, torch_fn, torch_inputs, out_shape):
    return name, op, shape, feeds, (torch_fn, torch_inputs, out_shape)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], cases, iterations=20, copies=5)
