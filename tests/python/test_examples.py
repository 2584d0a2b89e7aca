"""The examples run: a short Fashion-MNIST LeNet run (a few hundred images; the full run is the
README's example) and a ResNet-18 step, each in a subprocess with a timeout."""
import os
import subprocess
import sys

import pytest

import oneflow as flow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def run_example(*arguments, timeout=240):
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(flow.__file__)))
    return subprocess.run([sys.executable] + list(arguments), capture_output=True, text=True,
                          timeout=timeout, env=environment, cwd=ROOT)


@pytest.mark.skipif(not os.path.isdir(FASHION_MNIST),
                    reason="Debian's dataset-fashion-mnist is not installed (scripts/install_deps.sh "
                           "installs it)")
def test_fashion_mnist_lenet_trains_and_reports_accuracy():
    done = run_example(os.path.join(EXAMPLES, "train_fashion_mnist.py"), "--epochs", "1",
                       "--limit", "1280", "--test-limit", "640")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "epoch 1/1" in done.stdout and "test accuracy" in done.stdout
    accuracy = float(done.stdout.split("test accuracy")[1].split("%")[0])
    assert accuracy > 50.0, done.stdout  # 20 steps from scratch; chance is 10 %


def test_resnet18_takes_training_steps():
    done = run_example(os.path.join(EXAMPLES, "resnet18.py"), "--steps", "2", "--batch-size", "4")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("loss") == 2
