"""Trains an MLP on the 1,797 real handwritten 8x8 digits that ship with scikit-learn, with a
held-out test split, a progress bar showing the running loss, and the test accuracy at the end.

    python examples/train_digits.py [--epochs 40] [--batch-size 50]
"""
import argparse
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

import oneflow as flow
import oneflow.typing as tp


def load_split(test_size, seed):
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)  # pixel values 0..16 -> 0..1
    labels = digits.target.astype(np.int32)
    order = np.random.RandomState(seed).permutation(len(labels))
    test, train = order[:test_size], order[test_size:]
    return images[train], labels[train], images[test], labels[test]


def mlp(images, hidden):
    initializer = flow.xavier_uniform_initializer()
    h = flow.layers.dense(images, hidden, activation=flow.nn.relu,
                          kernel_initializer=initializer, name="hidden1")
    h = flow.layers.dense(h, hidden, activation=flow.nn.relu,
                          kernel_initializer=initializer, name="hidden2")
    return flow.layers.dense(h, 10, kernel_initializer=initializer, name="logits")


def progress(epoch, epochs, step, steps, loss, width=30):
    """A progress bar redrawn in place on a terminal; one line per epoch in a log."""
    interactive = sys.stdout.isatty()
    if not interactive and step != steps:
        return
    done = int(width * step / steps)
    bar = "#" * done + "-" * (width - done)
    line = "epoch %2d/%d [%s] %3d/%d  loss %.4f" % (epoch, epochs, bar, step, steps, loss)
    sys.stdout.write(("\r" + line + ("\n" if step == steps else "")) if interactive else line + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    args = parser.parse_args()
    batch = args.batch_size

    train_x, train_y, test_x, test_y = load_split(test_size=6 * batch, seed=0)
    steps = len(train_y) // batch
    print("digits: %d train, %d test images of 8x8; MLP 64-%d-%d-10, batch %d"
          % (len(train_y), len(test_y), args.hidden, args.hidden, batch))

    flow.clear_default_session()
    scheduler = flow.optimizer.PiecewiseConstantScheduler(
        [steps * args.epochs // 2], [args.learning_rate, args.learning_rate / 10])

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((batch, 64), dtype=flow.float),
                  labels: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            logits = mlp(images, args.hidden)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.SGD(scheduler, momentum=0.9).minimize(loss)
        return loss

    @flow.global_function(type="predict")
    def eval_job(images: tp.Numpy.Placeholder((batch, 64), dtype=flow.float)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            return flow.nn.softmax(mlp(images, args.hidden))

    start = time.perf_counter()
    shuffle = np.random.RandomState(1)
    for epoch in range(1, args.epochs + 1):
        order = shuffle.permutation(len(train_y))
        running = None
        for step in range(steps):
            index = order[step * batch:(step + 1) * batch]
            loss = float(train_job(train_x[index], train_y[index]).mean())
            running = loss if running is None else 0.9 * running + 0.1 * loss
            progress(epoch, args.epochs, step + 1, steps, running)
    train_seconds = time.perf_counter() - start

    correct = 0
    for start_index in range(0, len(test_y), batch):
        probabilities = eval_job(test_x[start_index:start_index + batch])
        correct += int((probabilities.argmax(axis=1) == test_y[start_index:start_index + batch]).sum())
    accuracy = correct / len(test_y)
    print("trained %d epochs in %.1f s; test accuracy %.2f%% (%d/%d)"
          % (args.epochs, train_seconds, 100 * accuracy, correct, len(test_y)))
    return 0 if accuracy >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
