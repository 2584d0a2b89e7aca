"""Trains LeNet (examples/lenet.py) on the full Fashion-MNIST (60,000 training and 10,000 test
images of 28x28, from Debian's dataset-fashion-mnist package), with a progress bar, and prints
the test accuracy after each epoch (about 90 % after 2 epochs).

    python examples/train_fashion_mnist.py [--epochs 2] [--batch-size 64] [--data-dir DIR]
"""
import argparse
import os
import sys
import time

import numpy as np

import oneflow as flow
import oneflow.typing as tp
from oneflow.data import read_idx_split

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lenet import lenet  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]


def load(data_dir, split):
    try:
        images, labels = read_idx_split(data_dir, split)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            "Fashion-MNIST %s split: %s; install Debian's dataset-fashion-mnist package "
            "(apt-get install dataset-fashion-mnist) or pass --data-dir" % (split, error)) from None
    images = images.astype(np.float32) / 255.0
    images = ((images - 0.2860) / 0.3530)[:, None, :, :]  # the training set's mean and std
    return np.ascontiguousarray(images), labels.astype(np.int32)


def progress(epoch, epochs, step, steps, loss, samples_per_s, width=30):
    """A bar redrawn in place on a terminal; a line every 10 % in a log."""
    interactive = sys.stdout.isatty()
    if not interactive and step != steps and step % max(1, steps // 10) != 0:
        return
    done = int(width * step / steps)
    line = "epoch %d/%d [%s%s] %4d/%d  loss %.4f  %6.0f samples/s" % (
        epoch, epochs, "#" * done, "-" * (width - done), step, steps, loss, samples_per_s)
    end = "\n" if step == steps or not interactive else ""
    sys.stdout.write(("\r" if interactive else "") + line + end)
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--limit", type=int, default=0, help="use only this many training images")
    parser.add_argument("--test-limit", type=int, default=0, help="use only this many test images")
    args = parser.parse_args()
    batch = args.batch_size

    train_x, train_y = load(args.data_dir, "train")
    test_x, test_y = load(args.data_dir, "test")
    if args.limit:
        train_x, train_y = train_x[:args.limit], train_y[:args.limit]
    if args.test_limit:
        test_x, test_y = test_x[:args.test_limit], test_y[:args.test_limit]
    steps = len(train_y) // batch
    print("Fashion-MNIST: %d training, %d test images; LeNet, batch %d, Adam lr %g"
          % (len(train_y), len(test_y), batch, args.learning_rate))

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((batch, 1, 28, 28), dtype=flow.float),
                  labels: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        logits = lenet(images, train=True)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [args.learning_rate]),
                            do_bias_correction=True).minimize(loss)
        return loss

    @flow.global_function(type="predict")
    def eval_job(images: tp.Numpy.Placeholder((batch, 1, 28, 28), dtype=flow.float)) -> tp.Numpy:
        return flow.math.argmax(lenet(images, train=False))

    def accuracy():
        correct = 0
        usable = len(test_y) // batch * batch
        for start in range(0, usable, batch):
            predicted = eval_job(test_x[start:start + batch])
            correct += int((predicted == test_y[start:start + batch]).sum())
        return correct / usable

    shuffle = np.random.RandomState(0)
    for epoch in range(1, args.epochs + 1):
        order = shuffle.permutation(len(train_y))
        running, start = None, time.perf_counter()
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            loss = float(train_job(train_x[index], train_y[index]).mean())
            running = loss if running is None else 0.98 * running + 0.02 * loss
            progress(epoch, args.epochs, step + 1, steps, running,
                     (step + 1) * batch / (time.perf_counter() - start))
        test_accuracy = accuracy()
        print("epoch %d: test accuracy %.2f%%" % (epoch, 100 * test_accuracy))
    return 0 if test_accuracy >= 0.89 or args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
