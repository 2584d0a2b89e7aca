"""Checkpoints on scikit-learn's 8x8 digits: train and save, resume in a fresh session, then
fine-tune a deeper model that starts from the saved layers.

    python examples/checkpoint_resume.py [--dir /tmp/digits_ckpt]

1. train:     an MLP 64-64-10 with Adam for a few epochs, then flow.checkpoint.save(dir/trained)
2. resume:    a new session loads the checkpoint (weights, Adam's m and v, the step counter) and
              trains on exactly as if it had never stopped
3. fine-tune: a model with an extra hidden layer loads the layers it shares with the checkpoint
              (the new layer keeps its initial value, unknown names are skipped) and trains on
"""
import argparse
import os
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import oneflow as flow
import oneflow.typing as tp

BATCH = 100


def load_split():
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.RandomState(0).permutation(len(labels))
    test, train = order[:300], order[300:]
    return images[train], labels[train], images[test], labels[test]


def define_jobs(extra_layer, optimizer):
    """A train and an eval job for the MLP; with extra_layer, a new hidden layer "extra"."""

    def logits_of(images):
        init = flow.xavier_uniform_initializer()
        h = flow.layers.dense(images, 64, activation=flow.nn.relu, kernel_initializer=init,
                              name="hidden1")
        if extra_layer:
            h = flow.layers.dense(h, 64, activation=flow.nn.relu, kernel_initializer=init,
                                  name="extra")
        return flow.layers.dense(h, 10, kernel_initializer=init, name="logits")

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((BATCH, 64)),
                  labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits_of(images))
        optimizer.minimize(loss)
        return loss

    @flow.global_function()
    def eval_job(images: tp.Numpy.Placeholder((BATCH, 64))) -> tp.Numpy:
        return logits_of(images)

    return train_job, eval_job


def train(train_job, data, epochs):
    train_x, train_y = data[:2]
    losses = []
    for _ in range(epochs):
        for start in range(0, len(train_y) - BATCH + 1, BATCH):
            losses.append(float(train_job(train_x[start:start + BATCH],
                                          train_y[start:start + BATCH]).mean()))
    return losses


def accuracy(eval_job, data):
    test_x, test_y = data[2:]
    predictions = [eval_job(test_x[i:i + BATCH]).argmax(axis=1)
                   for i in range(0, len(test_y), BATCH)]
    return float(np.mean(np.concatenate(predictions) == test_y))


def adam():
    return flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.02]),
                               do_bias_correction=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="where to save (default: a temporary dir)")
    args = parser.parse_args()
    directory = args.dir or tempfile.mkdtemp(prefix="digits_ckpt_")
    trained = os.path.join(directory, "trained")
    data = load_split()

    # 1. Train 2 epochs and save. The uninterrupted run goes on for 2 more, for comparison.
    flow.clear_default_session()
    train_job, eval_job = define_jobs(extra_layer=False, optimizer=adam())
    train(train_job, data, 2)
    flow.checkpoint.save(trained)
    print("1. trained 2 epochs, test accuracy %.3f; saved %d variables to %s"
          % (accuracy(eval_job, data), len(flow.checkpoint.get(trained)), trained))
    uninterrupted = train(train_job, data, 2)

    # 2. Resume in a fresh session: the same jobs, then load everything, optimizer state included.
    flow.clear_default_session()
    train_job, eval_job = define_jobs(extra_layer=False, optimizer=adam())
    flow.load_variables(flow.checkpoint.get(trained))
    step = flow.get_all_variables()["System-Train-TrainStep-train_job"].numpy()[0]
    resumed = train(train_job, data, 2)
    same = "equal" if np.allclose(resumed, uninterrupted) else "DIFFER FROM"
    print("2. resumed at step %d, 2 more epochs: test accuracy %.3f; losses %s the "
          "uninterrupted run's" % (step, accuracy(eval_job, data), same))

    # 3. Fine-tune a deeper model: hidden1 and logits come from the checkpoint, "extra" is new;
    #    the checkpoint's Adam state and step counter are no variables here, so they are skipped.
    flow.clear_default_session()
    sgd = flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05]), momentum=0.9)
    train_job, eval_job = define_jobs(extra_layer=True, optimizer=sgd)
    flow.load_variables(flow.checkpoint.get(trained), ignore_mismatch=True)
    before = accuracy(eval_job, data)
    train(train_job, data, 2)
    print("3. fine-tuned with an extra layer: test accuracy %.3f before, %.3f after 2 epochs"
          % (before, accuracy(eval_job, data)))
    flow.checkpoint.save(os.path.join(directory, "fine_tuned"))


if __name__ == "__main__":
    main()
