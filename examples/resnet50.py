"""ResNet-50 in the ImageNet layout (He et al. 2016; the "v1.5" variant torchvision builds, with
the stride on each bottleneck's 3x3 convolution): a 7x7 stride-2 stem with 64 channels and a
3x3 stride-2 max-pool, four stages of 3, 4, 6 and 3 bottleneck blocks (1x1 reduce, 3x3, 1x1
expand x4; widths 64, 128, 256, 512, so 256 to 2048 channels out; the last three stages start
with stride 2), a 1x1 projection shortcut where the shape changes, batch normalization after
every convolution, global average pooling and a 1000-way classifier. NCHW input (N, 3, H, W).

    python examples/resnet50.py [--steps 3] [--batch-size 8] [--image-size 224] [--device cpu|gpu]

Random images and labels; a few SGD steps with momentum. "gpu" runs on GPU 0 when GPUs are in
use (ONEFLOW_GPU=1 on a CUDA build, flow.sysconfig.gpus_in_use()), else on CPU device 0.
Used by benchmarks/gpu_benchmark.py.
"""
import argparse
import os
import sys
import time

import numpy as np

import oneflow as flow
import oneflow.typing as tp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resnet18 import conv_bn  # noqa: E402  (the same convolution + batch norm + ReLU unit)

STAGES = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]  # (width, blocks, first stride)
EXPANSION = 4


def bottleneck(x, width, stride, train, name):
    out = conv_bn(x, width, 1, 1, train, name + "-a")
    out = conv_bn(out, width, 3, stride, train, name + "-b")
    out = conv_bn(out, width * EXPANSION, 1, 1, train, name + "-c", relu=False)
    shortcut = x
    if stride != 1 or x.shape[1] != width * EXPANSION:
        shortcut = conv_bn(x, width * EXPANSION, 1, stride, train, name + "-proj", relu=False)
    return flow.nn.relu(out + shortcut)


def resnet50(images, train=False, classes=1000):
    """Logits (N, classes) of NCHW images (N, 3, H, W); H and W at least 32."""
    x = conv_bn(images, 64, 7, 2, train, "stem")
    x = flow.nn.max_pool2d(x, ksize=3, strides=2, padding="SAME", data_format="NCHW",
                           name="stem-pool")
    for stage, (width, blocks, stride) in enumerate(STAGES):
        for block in range(blocks):
            x = bottleneck(x, width, stride if block == 0 else 1, train,
                           "stage%d-block%d" % (stage, block))
    x = flow.nn.avg_pool2d(x, ksize=[x.shape[2], x.shape[3]], strides=1, padding="VALID",
                           data_format="NCHW", name="global_pool")
    x = flow.reshape(x, [x.shape[0], -1])
    return flow.layers.dense(x, classes, kernel_initializer=flow.xavier_uniform_initializer(),
                             name="fc")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    args = parser.parse_args()
    shape = (args.batch_size, 3, args.image_size, args.image_size)

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder(shape, dtype=flow.float),
                  labels: tp.Numpy.Placeholder((args.batch_size,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement(args.device, "0:0"):
            logits = resnet50(images, train=True)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05]),
                               momentum=0.9).minimize(loss)
        return loss

    rng = np.random.RandomState(0)
    images = rng.standard_normal(shape).astype(np.float32)
    labels = rng.randint(0, 1000, size=(args.batch_size,)).astype(np.int32)
    print("device %s (GPUs in use: %d)" % (args.device, flow.sysconfig.gpus_in_use()))
    loss = float("nan")
    for step in range(args.steps):
        start = time.perf_counter()
        loss = float(train_job(images, labels).mean())
        print("step %d: loss %.4f (%.2f s)" % (step + 1, loss, time.perf_counter() - start))
    return 0 if np.isfinite(loss) else 1


if __name__ == "__main__":
    sys.exit(main())
