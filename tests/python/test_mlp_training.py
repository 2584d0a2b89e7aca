"""A two-layer MLP learns a small deterministic classification problem."""
import numpy as np

import oneflow as flow
import oneflow.typing as tp

BATCH, FEATURES, HIDDEN, CLASSES = 32, 4, 16, 3


def make_dataset():
    """Three well-separated Gaussian blobs, fixed by the seed."""
    rng = np.random.RandomState(1)
    centers = rng.uniform(-2, 2, size=(CLASSES, FEATURES))
    labels = np.arange(BATCH) % CLASSES
    points = centers[labels] + 0.3 * rng.standard_normal((BATCH, FEATURES))
    return points.astype(np.float32), labels.astype(np.int32)


def build_jobs(sgd):
    def mlp(x):
        hidden = flow.layers.dense(
            x, HIDDEN, activation=flow.nn.relu, name="hidden",
            kernel_initializer=flow.random_uniform_initializer(-0.5, 0.5, seed=1),
            bias_initializer=flow.constant_initializer(0.1))
        return flow.layers.dense(
            hidden, CLASSES, name="output",
            kernel_initializer=flow.random_uniform_initializer(-0.5, 0.5, seed=2))

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((BATCH, FEATURES)),
              labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, mlp(x))
        sgd(0.5).minimize(loss)
        return loss

    @flow.global_function()
    def predict(x: tp.Numpy.Placeholder((BATCH, FEATURES))) -> tp.Numpy:
        return mlp(x)

    return train, predict


def test_mlp_loss_halves_in_50_steps(sgd):
    points, labels = make_dataset()
    train, predict = build_jobs(sgd)
    losses = [float(train(points, labels).mean()) for _ in range(50)]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], losses
    # The predict job shares the trained variables and classifies the training points.
    accuracy = np.mean(np.argmax(predict(points), axis=1) == labels)
    assert accuracy >= 0.9


def test_mlp_training_is_deterministic(sgd):
    points, labels = make_dataset()
    runs = []
    for _ in range(2):
        flow.clear_default_session()
        train, _ = build_jobs(sgd)
        runs.append([train(points, labels) for _ in range(3)])
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)
