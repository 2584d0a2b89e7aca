"""LeNet's convolution and pooling layers, forward + backward: a train job against PyTorch 1.13.

Layers (NCHW, float32, batch 64): conv1 5x5, 32 filters, SAME on 28x28x1; max-pool 2x2 stride 2;
conv2 5x5, 64 filters, SAME on 14x14x32; max-pool 2x2 stride 2. Cases: each layer alone and the
four stacked ("lenet_stack", the input gets no gradient there, as in training); conv2 with NHWC
activations ("conv2_nhwc"; PyTorch: channels_last tensors); a ResNet 3x3 layer, 64 -> 64
channels on 32x32 at batch 32 ("resnet_3x3", where ours runs Winograd).

Our number is a whole train-job call (SGD with learning rate 0): the placeholder copied in, the
forward ops, autograd's backward ops, the (no-op) update and the output copied back. A layer
whose input needs a gradient (pools, conv2) gets it as in op_checker: placeholder + a zero
variable, which adds an add op and its gradient (memory-bound, small against the layer).
PyTorch: the same layers under autograd, `y.backward(ones)`, weights (and inputs where ours get
a gradient) with requires_grad. "oneflow_plain" reruns ours with the convolutions forced onto
the framework's plain layouts (ONEFLOW_ONEDNN_CONV_LAYOUT=plain), to show what the blocked
layouts buy (not for NHWC, where plain layouts get oneDNN's reference loops: minutes per step).

Prints one JSON line per case and thread count:
    {"case": ..., "threads": n, "oneflow_ms": ..., "oneflow_plain_ms": ..., "torch_ms": ...,
     "ratio": torch / oneflow}

Run: .venv/bin/python benchmarks/conv_benchmark.py [--threads 1 2] [--iterations 20]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import json
import os

import numpy as np

import side_by_side

BATCH = 64
# name -> list of layers applied in order: ("conv", filters, kernel) or ("pool",); input shape
# (N, C, H, W); whether the input gets a gradient; data format.
CASES = {
    "conv1": ([("conv", 32, 5)], (BATCH, 1, 28, 28), False, "NCHW"),
    "pool1": ([("pool",)], (BATCH, 32, 28, 28), True, "NCHW"),
    "conv2": ([("conv", 64, 5)], (BATCH, 32, 14, 14), True, "NCHW"),
    "pool2": ([("pool",)], (BATCH, 64, 14, 14), True, "NCHW"),
    "lenet_stack": ([("conv", 32, 5), ("pool",), ("conv", 64, 5), ("pool",)],
                    (BATCH, 1, 28, 28), False, "NCHW"),
    "conv2_nhwc": ([("conv", 64, 5)], (BATCH, 32, 14, 14), True, "NHWC"),
    "resnet_3x3": ([("conv", 64, 3)], (32, 64, 32, 32), True, "NCHW"),
}


def in_format(shape, data_format):
    """An (N, C, H, W) shape in data_format."""
    return shape if data_format == "NCHW" else (shape[0],) + tuple(shape[2:]) + (shape[1],)


def inputs(shape):
    return np.random.RandomState(0).uniform(-1, 1, size=shape).astype(np.float32)


def weight_shapes(layers, in_channels):
    shapes = []
    for layer in layers:
        if layer[0] == "conv":
            shapes.append((layer[1], in_channels, layer[2], layer[2]))
            in_channels = layer[1]
    return shapes


def oneflow_seconds(name, threads, warmup, iterations):
    import oneflow as flow
    import oneflow.typing as tp

    layers, shape, input_grad, data_format = CASES[name]
    shape = in_format(shape, data_format)
    channel_axis = 1 if data_format == "NCHW" else 3
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(threads)

    @flow.global_function(type="train")
    def train_job(x: tp.Numpy.Placeholder(shape, dtype=flow.float32)) -> tp.Numpy:
        y = x
        if input_grad:
            y = y + flow.get_variable("input_zero", shape=shape,
                                      initializer=flow.zeros_initializer())
        for index, layer in enumerate(layers):
            if layer[0] == "conv":
                weight_shape = (layer[1], y.shape[channel_axis], layer[2], layer[2])
                weight = flow.get_variable(
                    "conv%d_weight" % index, shape=in_format(weight_shape, data_format),
                    initializer=flow.random_uniform_initializer(-0.1, 0.1))
                y = flow.nn.conv2d(y, weight, 1, "SAME", data_format=data_format)
            else:
                y = flow.nn.max_pool2d(y, 2, 2, "VALID", data_format=data_format)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(y)
        return y

    x = inputs(shape)
    return side_by_side.seconds_per_call(lambda: train_job(x), warmup, iterations)


def torch_seconds(name, threads, warmup, iterations):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    layers, shape, input_grad, data_format = CASES[name]
    memory_format = torch.channels_last if data_format == "NHWC" else torch.contiguous_format
    x = torch.tensor(inputs(shape)).to(memory_format=memory_format).requires_grad_(input_grad)
    weights = [torch.empty(s).uniform_(-0.1, 0.1).to(memory_format=memory_format)
               .requires_grad_() for s in weight_shapes(layers, shape[1])]

    def step():
        y = x
        convs = iter(weights)
        for layer in layers:
            if layer[0] == "conv":
                y = F.conv2d(y, next(convs), padding=layer[2] // 2)
            else:
                y = F.max_pool2d(y, 2, 2)
        y.backward(torch.ones_like(y))

    return side_by_side.seconds_per_call(step, warmup, iterations)


def main():
    parser = side_by_side.make_parser(__doc__.split("\n")[0],
                                      ["oneflow", "oneflow_plain", "torch"])
    parser.set_defaults(warmup=3, iterations=20)
    args = parser.parse_args()

    if args.side is not None:
        threads = args.threads[0]
        if args.side == "oneflow_plain":
            os.environ["ONEFLOW_ONEDNN_CONV_LAYOUT"] = "plain"
        seconds = {}
        for name in CASES:
            if args.side == "torch":
                seconds[name] = torch_seconds(name, threads, args.warmup, args.iterations)
            elif args.side == "oneflow_plain" and CASES[name][3] == "NHWC":
                seconds[name] = None  # oneDNN's reference loops there: minutes per step
            else:
                seconds[name] = oneflow_seconds(name, threads, args.warmup, args.iterations)
        print(json.dumps(seconds))
        return

    for threads in args.threads:
        ours = side_by_side.run_side(__file__, "oneflow", threads, args)
        plain = side_by_side.run_side(__file__, "oneflow_plain", threads, args)
        theirs = side_by_side.run_side(__file__, "torch", threads, args)
        for name in CASES:
            print(json.dumps({
                "case": name,
                "threads": threads,
                "oneflow_ms": round(ours[name] * 1e3, 2),
                "oneflow_plain_ms": plain[name] and round(plain[name] * 1e3, 2),
                "torch_ms": round(theirs[name] * 1e3, 2),
                "ratio": round(theirs[name] / ours[name], 3),
            }), flush=True)


if __name__ == "__main__":
    main()
