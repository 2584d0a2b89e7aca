"""FunctionConfig.enable_auto_mixed_precision. It converts only ops that run on GPUs; where the
job has none (no GPU here, or cpu placements), training is the float32 training, number for
number, and Python says so once per process. Which ops become float16 on GPUs is tested in
tests/cpp/compiler/auto_mixed_precision_test.cpp."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import session as session_util

BATCH, FEATURES, HIDDEN, CLASSES = 16, 4, 8, 3


def make_data():
    rng = np.random.RandomState(3)
    points = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    labels = (np.arange(BATCH) % CLASSES).astype(np.int32)
    return points, labels


def train_losses(amp, device_tag, sgd, steps=5):
    flow.clear_default_session()
    config = flow.FunctionConfig()
    config.enable_auto_mixed_precision(amp)

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.Numpy.Placeholder((BATCH, FEATURES)),
              labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement(device_tag, "0:0"):
            hidden = flow.layers.dense(
                x, HIDDEN, activation=flow.math.tanh, name="hidden",
                kernel_initializer=flow.random_uniform_initializer(-0.5, 0.5, seed=1))
            logits = flow.layers.dense(
                hidden, CLASSES, name="output",
                kernel_initializer=flow.random_uniform_initializer(-0.5, 0.5, seed=2))
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            sgd(0.5).minimize(loss)
        return loss

    points, labels = make_data()
    return [train(points, labels) for _ in range(steps)]


@pytest.mark.parametrize("device_tag", ["cpu", "gpu"])
def test_amp_trains_like_float32(device_tag, sgd):
    """Without GPUs in use (or on cpu placements) AMP changes nothing: the float32 training,
    number for number. On a GPU the matmuls run in float16 (under dynamic loss scaling): the
    float32 losses to float16's precision, and the loss falls as in float32."""
    on_gpu = device_tag == "gpu" and flow.sysconfig.gpus_in_use() > 0
    plain = train_losses(False, device_tag, sgd)
    amp = train_losses(True, device_tag, sgd)
    rtol, atol = (2e-2, 2e-2) if on_gpu else (0, 1e-6)
    for expected, got in zip(plain, amp):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    assert plain[-1].mean() < plain[0].mean()
    assert amp[-1].mean() < amp[0].mean()


def test_note_once_per_process(monkeypatch, capsys, sgd):
    monkeypatch.setattr(session_util._DefaultSession, "amp_note_printed", False)
    train_losses(True, "cpu", sgd, steps=1)
    train_losses(True, "cpu", sgd, steps=1)
    notes = [line for line in capsys.readouterr().err.splitlines()
             if "auto mixed precision" in line]
    assert len(notes) == 1, notes
    assert "runs in float32" in notes[0]


def test_no_note_without_amp(monkeypatch, capsys, sgd):
    monkeypatch.setattr(session_util._DefaultSession, "amp_note_printed", False)
    train_losses(False, "cpu", sgd, steps=1)
    assert "auto mixed precision" not in capsys.readouterr().err


def test_setting_takes_a_bool():
    config = flow.FunctionConfig()
    config.enable_auto_mixed_precision()
    assert config._auto_mixed_precision
    config.enable_auto_mixed_precision(False)
    assert not config._auto_mixed_precision
    with pytest.raises(TypeError, match="enable_auto_mixed_precision"):
        config.enable_auto_mixed_precision("yes")
