"""flow.data.load_mnist: OneFlow 0.3's batching and normalization of mnist.npz, its sha256 check,
and the offline fallback to Debian's Fashion-MNIST, which OneFlow 0.3's quick-start MLP then
trains on unchanged."""
import hashlib
import os
from typing import Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow import data as data_module

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
UNREACHABLE_URL = "http://127.0.0.1:9/mnist.npz"  # the discard port: connection refused
needs_fashion_mnist = pytest.mark.skipif(
    not os.path.isdir(FASHION_MNIST),
    reason="Debian's dataset-fashion-mnist is not installed (scripts/install_deps.sh installs it)")


def write_npz(directory, train=600, test=200, seed=0):
    rng = np.random.RandomState(seed)
    arrays = {"x_train": rng.randint(0, 256, (train, 28, 28)).astype(np.uint8),
              "y_train": rng.randint(0, 10, train).astype(np.uint8),
              "x_test": rng.randint(0, 256, (test, 28, 28)).astype(np.uint8),
              "y_test": rng.randint(0, 10, test).astype(np.uint8)}
    path = os.path.join(str(directory), "mnist.npz")
    np.savez(path, **arrays)
    return path, arrays


@pytest.fixture(autouse=True)
def no_environment_overrides(monkeypatch):
    monkeypatch.delenv("ONEFLOW_MNIST_NPZ", raising=False)
    monkeypatch.delenv("ONEFLOW_FASHION_MNIST_DIR", raising=False)


def test_batches_and_normalizes_like_oneflow(tmp_path):
    _, arrays = write_npz(tmp_path)
    (train_x, train_y), (test_x, test_y) = flow.data.load_mnist(
        100, 50, url=UNREACHABLE_URL, hash_check=None, out_dir=str(tmp_path))
    assert train_x.shape == (6, 100, 1, 28, 28) and train_x.dtype == np.float32
    assert train_y.shape == (6, 100) and train_y.dtype == np.int32
    assert test_x.shape == (4, 50, 1, 28, 28) and test_y.shape == (4, 50)
    expected = (arrays["x_train"].astype(np.float64) - 128.0) / 255.0
    np.testing.assert_allclose(train_x.reshape(600, 28, 28), expected, rtol=0, atol=1e-7)
    np.testing.assert_array_equal(train_y.reshape(-1), arrays["y_train"])
    np.testing.assert_array_equal(test_y.reshape(-1), arrays["y_test"])

    (nhwc, _), _ = flow.data.load_mnist(100, 50, data_format="NHWC", url=UNREACHABLE_URL,
                                        hash_check=None, out_dir=str(tmp_path))
    assert nhwc.shape == (6, 100, 28, 28, 1)
    np.testing.assert_array_equal(nhwc[..., 0], train_x[:, :, 0])


def test_checks_sha256(tmp_path):
    path, _ = write_npz(tmp_path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    flow.data.load_mnist(100, 100, hash_check=digest, url=UNREACHABLE_URL, out_dir=str(tmp_path))
    with pytest.raises(ValueError, match="sha256 verification of .*mnist.npz failed"):
        flow.data.load_mnist(100, 100, url=UNREACHABLE_URL, out_dir=str(tmp_path))


def test_environment_names_the_file(tmp_path, monkeypatch):
    path, _ = write_npz(tmp_path, train=300, test=100)
    monkeypatch.setenv("ONEFLOW_MNIST_NPZ", path)
    (train_x, _), _ = flow.data.load_mnist(100, 100, hash_check=None, url=UNREACHABLE_URL,
                                           out_dir=str(tmp_path / "empty"))
    assert train_x.shape == (3, 100, 1, 28, 28)


@pytest.mark.parametrize("kwargs, message", [
    (dict(train_batch_size=7), "training batch size 7 does not divide the 600 training images"),
    (dict(test_batch_size=0), "test_batch_size must be a positive int, got 0"),
    (dict(train_batch_size=2.5), "train_batch_size must be a positive int, got 2.5"),
    (dict(data_format="NCWH"), "data_format must be 'NCHW' or 'NHWC', got 'NCWH'"),
])
def test_bad_arguments(tmp_path, kwargs, message):
    write_npz(tmp_path)
    arguments = dict(train_batch_size=100, test_batch_size=100, url=UNREACHABLE_URL,
                     hash_check=None, out_dir=str(tmp_path))
    arguments.update(kwargs)
    with pytest.raises(ValueError, match="load_mnist: " + message.replace(".", r"\.")):
        flow.data.load_mnist(**arguments)


def test_npz_without_the_arrays(tmp_path):
    np.savez(os.path.join(str(tmp_path), "mnist.npz"), x_train=np.zeros((1, 28, 28), np.uint8))
    with pytest.raises(ValueError, match="lacks the arrays y_train, x_test, y_test"):
        flow.data.load_mnist(1, 1, url=UNREACHABLE_URL, hash_check=None, out_dir=str(tmp_path))


def test_offline_without_stand_in_explains(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_FASHION_MNIST_DIR", str(tmp_path / "nothing"))
    with pytest.raises(RuntimeError) as info:
        flow.data.load_mnist(100, 100, url=UNREACHABLE_URL, out_dir=str(tmp_path))
    text = str(info.value)
    assert "mnist.npz is missing and downloading %s failed" % UNREACHABLE_URL in text
    assert "ONEFLOW_MNIST_NPZ" in text and "dataset-fashion-mnist" in text
    assert os.listdir(str(tmp_path)) == []  # the failed download left no partial file


@needs_fashion_mnist
def test_offline_falls_back_to_fashion_mnist(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(data_module, "_fallback_noted", False)
    (train_x, train_y), (test_x, test_y) = flow.data.load_mnist(
        100, 100, url=UNREACHABLE_URL, out_dir=str(tmp_path))
    assert "using Fashion-MNIST" in capsys.readouterr().err
    assert train_x.shape == (600, 100, 1, 28, 28) and test_x.shape == (100, 100, 1, 28, 28)
    images, labels = data_module.read_idx_split(FASHION_MNIST, "test")
    np.testing.assert_allclose(test_x.reshape(10000, 28, 28),
                               (images.astype(np.float64) - 128) / 255, atol=1e-7)
    np.testing.assert_array_equal(test_y.reshape(-1), labels)
    assert sorted(np.unique(train_y)) == list(range(10))


@needs_fashion_mnist
def test_quick_start_mlp_trains_on_it(tmp_path, monkeypatch):
    """OneFlow 0.3's quick-start MLP (mlp_mnist.py), as written, for 60 steps."""
    monkeypatch.chdir(tmp_path)
    BATCH_SIZE = 100

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((BATCH_SIZE, 1, 28, 28), dtype=flow.float),
                  labels: tp.Numpy.Placeholder((BATCH_SIZE,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            reshape = flow.reshape(images, [images.shape[0], -1])
            initializer1 = flow.random_uniform_initializer(-1 / 28.0, 1 / 28.0)
            hidden = flow.layers.dense(reshape, 500, activation=flow.nn.relu,
                                       kernel_initializer=initializer1,
                                       bias_initializer=initializer1, name="dense1")
            initializer2 = flow.random_uniform_initializer(-np.sqrt(1 / 500.0),
                                                           np.sqrt(1 / 500.0))
            logits = flow.layers.dense(hidden, 10, kernel_initializer=initializer2,
                                       bias_initializer=initializer2, name="dense2")
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        lr_scheduler = flow.optimizer.PiecewiseConstantScheduler([], [0.001])
        flow.optimizer.Adam(lr_scheduler).minimize(loss)
        return loss

    (train_images, train_labels), _ = flow.data.load_mnist(BATCH_SIZE, BATCH_SIZE,
                                                           url=UNREACHABLE_URL)
    losses = [train_job(images, labels).mean()
              for images, labels in zip(train_images[:60], train_labels[:60])]
    assert np.mean(losses[:5]) > 1.5
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5])


def test_decode_random_feeds_a_benchmark_style_train_job():
    """OneFlow-Benchmark's synthetic input: zero int32 labels and uniform images, fresh each
    iteration; the model learns to predict class 0."""
    batch = 8

    @flow.global_function(type="train")
    def train_job() -> Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        label = flow.data.decode_random(shape=(), dtype=flow.int32, batch_size=batch,
                                        initializer=flow.zeros_initializer(flow.int32))
        image = flow.data.decode_random(shape=(3, 4, 4), dtype=flow.float, batch_size=batch)
        logits = flow.layers.dense(flow.reshape(image, (batch, -1)), 10, name="fc")
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(label, logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5])).minimize(loss)
        return loss, image, label

    results = [train_job() for _ in range(20)]
    first_loss, first_image, label = results[0]
    assert first_image.shape == (batch, 3, 4, 4) and first_image.dtype == np.float32
    assert label.shape == (batch,) and label.dtype == np.int32 and not label.any()
    images = np.stack([image for _, image, _ in results])
    assert images.min() >= 0 and images.max() < 1 and abs(images.mean() - 0.5) < 0.05
    assert not np.array_equal(results[1][1], first_image)  # fresh data every iteration
    assert results[-1][0].mean() < 0.5 * first_loss.mean()


def test_decode_random_initializers():
    @flow.global_function()
    def sample() -> Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        normal = flow.data.decode_random(
            (64,), flow.float64, batch_size=64,
            initializer=flow.random_normal_initializer(2.0, 0.5, seed=3))
        ints = flow.data.decode_random((100,), flow.int32, batch_size=10,
                                       initializer=flow.random_uniform_initializer(0, 10))
        constant = flow.data.decode_random((2,), flow.float, batch_size=3,
                                           initializer=flow.constant_initializer(1.5))
        return normal, ints, constant

    normal, ints, constant = sample()
    assert normal.dtype == np.float64 and normal.shape == (64, 64)
    assert abs(normal.mean() - 2.0) < 0.05 and abs(normal.std() - 0.5) < 0.05
    assert ints.dtype == np.int32 and ints.min() == 0 and ints.max() == 9
    np.testing.assert_array_equal(constant, np.full((3, 2), 1.5, np.float32))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(dtype=None), TypeError, "dtype is required"),
    (dict(batch_size=0), ValueError, "batch_size must be a positive int, got 0"),
    (dict(initializer=flow.truncated_normal(0.1)), NotImplementedError,
     "initializer truncated_normal is not supported"),
    (dict(initializer="uniform"), TypeError, "initializer must be a flow"),
])
def test_decode_random_bad_arguments(kwargs, error, message):
    arguments = dict(shape=(2,), dtype=flow.float, batch_size=2)
    arguments.update(kwargs)

    @flow.global_function()
    def job() -> tp.Numpy:
        return flow.data.decode_random(**arguments)

    with pytest.raises(error, match="data.decode_random: " + message):
        job()
