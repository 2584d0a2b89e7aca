"""OneFlow's older way to train: flow.losses.add_loss(loss) in the job and the optimizer from
FunctionConfig.train.primary_lr / train.model_update_conf (dicts of OneFlow's optimizer conf)."""
import math

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

from test_optimizers import LR, W0, X, torch_trajectory, train_flow  # noqa: F401


def legacy_config(lr, model_update_conf):
    config = flow.FunctionConfig()
    config.default_data_type(flow.float64)
    config.train.primary_lr(lr)
    config.train.model_update_conf(model_update_conf)
    return config


def rates(config, steps):
    """The rate of each step, seen through loss = sum(w) (gradient 1)."""

    @flow.global_function(type="train", function_config=config)
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.0))
        flow.losses.add_loss(flow.math.reduce_sum(w))
        return w

    values = [float(train()[0]) for _ in range(steps + 1)]
    return [before - after for before, after in zip(values, values[1:])]


def test_momentum_conf_with_add_loss_matches_torch():
    torch = pytest.importorskip("torch")
    config = legacy_config(LR, {"momentum_conf": {"beta": 0.8}})

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.Numpy.Placeholder((5, 4), dtype=flow.float64)) -> tp.Numpy:
        w = flow.get_variable("w", shape=(4, 3), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.5))
        loss = flow.math.reduce_sum(flow.math.square(flow.matmul(x, w)))
        flow.losses.add_loss(loss)
        return w

    got = [train(X) for _ in range(5)]  # each returns w before that step's update
    w = torch.full((4, 3), 0.5, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=LR, momentum=0.8)
    for step in range(5):
        np.testing.assert_allclose(got[step], w.detach().numpy(), rtol=1e-9)
        optimizer.zero_grad()
        (torch.tensor(X) @ w).pow(2).sum().backward()
        optimizer.step()


def test_decay_and_warmup_dicts():
    config = legacy_config(0.5, {
        "naive_conf": {},
        "learning_rate_decay": {"cosine_conf": {"decay_batches": 6, "alpha": 0.1}},
        "warmup_conf": {"linear_conf": {"warmup_batches": 2, "start_multiplier": 0.5}},
    })

    def expected(t):
        if t < 2:
            return 0.5 * (0.5 + 0.5 * t / 2)
        s = min(t, 6)
        return 0.5 * (0.9 * 0.5 * (1 + math.cos(math.pi * s / 6)) + 0.1)

    np.testing.assert_allclose(rates(config, 8), [expected(t) for t in range(8)], rtol=1e-6)


def test_minimize_replaces_earlier_losses_and_add_loss_after_it_adds():
    """OneFlow 0.3's minimize sets the job's whole train conf (JobBuildAndInferCtx::SetTrainConf
    assigns it), dropping losses add_loss gave before; add_loss after minimize adds one. So
    BERT's add_loss(x); minimize(x) trains x once."""

    def rate_of_w(before, after):
        flow.clear_default_session()

        @flow.global_function(type="train")
        def train() -> tp.Numpy:
            w = flow.get_variable("w", shape=(1,), dtype=flow.float64,
                                  initializer=flow.constant_initializer(0.0))
            if before:
                flow.losses.add_loss(flow.math.reduce_sum(w) * 3.0)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.25]),
                               momentum=0).minimize(flow.math.reduce_sum(w))
            if after:
                flow.losses.add_loss(flow.math.reduce_sum(w) * 3.0)
            return w

        train()
        return float(train()[0])

    assert rate_of_w(before=True, after=False) == -0.25
    assert rate_of_w(before=False, after=True) == -0.25 * 4.0


def test_minimize_in_a_predict_job_trains_it_with_earlier_ops_in_inference_mode():
    """OneFlow 0.3's minimize set the job's train conf whatever its declared type, and its
    own tests train predict jobs that way (test_fused_self_attention_query_mul_key_and_value).
    Ops traced before minimize saw a predict job: dropout there keeps every value."""
    x = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]])

    @flow.global_function(type="predict")
    def train(x_blob: tp.Numpy.Placeholder((2, 3), dtype=flow.float64)) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.5))
        kept = flow.nn.dropout(x_blob * w, rate=0.5)
        loss = flow.math.reduce_sum(flow.math.square(kept))
        # The rate is a float32 blob, as in OneFlow: 0.125 is exact there.
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.125]),
                           momentum=0).minimize(loss)
        return w

    w = np.full(3, 0.5)
    for _ in range(3):
        np.testing.assert_allclose(train(x), w, rtol=1e-12)  # w before this call's update
        w = w - 0.125 * (2.0 * x * x * w).sum(axis=0)
    np.testing.assert_allclose(train(x), w, rtol=1e-12)


def test_add_loss_without_any_optimizer_is_a_clear_error():
    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), initializer=flow.constant_initializer(0.0))
        flow.losses.add_loss(flow.math.reduce_sum(w))
        return w

    with pytest.raises(ValueError, match="primary_lr"):
        train()


@pytest.mark.parametrize("conf, message", [
    ({"sgd_conf": {}}, "one of"),
    ({"naive_conf": {}, "momentum_conf": {}}, "one of"),
    ({"naive_conf": {}, "learning_rate_decay": {"cosine_conf": {"steps": 3}}}, "no field"),
])
def test_bad_legacy_confs(conf, message):
    @flow.global_function(type="train", function_config=legacy_config(0.1, conf))
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), initializer=flow.constant_initializer(0.0))
        flow.losses.add_loss(flow.math.reduce_sum(w))
        return w

    with pytest.raises(ValueError, match=message):
        train()


def test_config_as_the_only_argument_of_global_function(capsys):
    """OneFlow's deprecated @flow.global_function(func_config): a train job when the config has
    the legacy train settings, a predict job otherwise; a warning says so."""

    @flow.global_function(legacy_config(0.25, {"naive_conf": {}}))
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), dtype=flow.float64,
                              initializer=flow.constant_initializer(0.0))
        flow.losses.add_loss(flow.math.reduce_sum(w))
        return w

    assert [float(train()[0]) for _ in range(3)] == [0.0, -0.25, -0.5]
    assert "deprecated" in capsys.readouterr().err
    config = flow.FunctionConfig()
    config.default_data_type(flow.float64)

    @flow.global_function(config)
    def predict(x: tp.Numpy.Placeholder((2,), dtype=flow.float64)) -> tp.Numpy:
        return x * 2

    np.testing.assert_array_equal(predict(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(TypeError, match="both"):
        flow.global_function(config, config)
