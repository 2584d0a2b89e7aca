"""ResNet-18 in the CIFAR layout (He et al. 2016, as torchvision-style CIFAR variants build it):
a 3x3 stem with 64 channels and no max-pool, four stages of two basic blocks (64, 128, 256, 512
channels; the last three start with stride 2 and a 1x1 projection shortcut), batch
normalization after every convolution, global average pooling and a 10-way classifier.
NCHW input (N, 3, 32, 32).

    python examples/resnet18.py [--steps 3]    # a few training steps on random data
"""
import argparse
import sys
import time

import numpy as np

import oneflow as flow
import oneflow.typing as tp


def conv_bn(x, filters, kernel, stride, train, name, relu=True):
    x = flow.layers.conv2d(x, filters, kernel, strides=stride, padding="SAME", use_bias=False,
                           kernel_initializer=flow.variance_scaling_initializer(
                               2.0, "fan_out", "random_normal", data_format="NCHW"),
                           name=name + "-conv")
    x = flow.layers.batch_normalization(x, axis=1, momentum=0.9, epsilon=1e-5, training=train,
                                        name=name + "-bn")
    return flow.nn.relu(x) if relu else x


def basic_block(x, filters, stride, train, name):
    out = conv_bn(x, filters, 3, stride, train, name + "-a")
    out = conv_bn(out, filters, 3, 1, train, name + "-b", relu=False)
    shortcut = x
    if stride != 1 or x.shape[1] != filters:
        shortcut = conv_bn(x, filters, 1, stride, train, name + "-proj", relu=False)
    return flow.nn.relu(out + shortcut)


def resnet18(images, train=False, classes=10):
    x = conv_bn(images, 64, 3, 1, train, "stem")
    for stage, (filters, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
        x = basic_block(x, filters, stride, train, "stage%d-block0" % stage)
        x = basic_block(x, filters, 1, train, "stage%d-block1" % stage)
    x = flow.nn.avg_pool2d(x, ksize=x.shape[2], strides=1, padding="VALID", data_format="NCHW",
                           name="global_pool")
    x = flow.reshape(x, [x.shape[0], -1])
    return flow.layers.dense(x, classes, kernel_initializer=flow.xavier_uniform_initializer(),
                             name="fc")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    batch = args.batch_size

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((batch, 3, 32, 32), dtype=flow.float),
                  labels: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        logits = resnet18(images, train=True)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05]),
                           momentum=0.9).minimize(loss)
        return loss

    rng = np.random.RandomState(0)
    images = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
    labels = rng.randint(0, 10, size=(batch,)).astype(np.int32)
    for step in range(args.steps):
        start = time.perf_counter()
        loss = float(train_job(images, labels).mean())
        print("step %d: loss %.4f (%.2f s)" % (step + 1, loss, time.perf_counter() - start))
    return 0 if np.isfinite(loss) else 1


if __name__ == "__main__":
    sys.exit(main())
