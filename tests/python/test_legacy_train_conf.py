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


def legacy_error(conf, error, message, loss_scale_factor=None):
    config = legacy_config(0.1, conf)
    if loss_scale_factor is not None:
        config.train.loss_scale_factor(loss_scale_factor)

    @flow.global_function(type="train", function_config=config)
    def train() -> tp.Numpy:
        w = flow.get_variable("w", shape=(1,), initializer=flow.constant_initializer(0.0))
        flow.losses.add_loss(flow.math.reduce_sum(w))
        return w

    with pytest.raises(error, match=message):
        train()


NAN = float("nan")
DECAY = "train.model_update_conf: learning_rate_decay."


@pytest.mark.parametrize("decay, message", [
    ({"exponential_conf": {"decay_batches": 5, "decay_rate": NAN}},
     DECAY + r"exponential_conf.decay_rate must be a finite number, got nan"),
    ({"exponential_conf": {"decay_batches": 1, "decay_rate": -2.0}},
     DECAY + r"exponential_conf.decay_rate must be > 0, got -2.0"),
    ({"cosine_conf": {"decay_batches": 2, "alpha": NAN}}, DECAY + r"cosine_conf.alpha must be a"),
    ({"cosine_conf": {"decay_batches": 2, "alpha": -1.0}}, DECAY + r"cosine_conf.alpha must be >="),
    ({"piecewise_constant_conf": {"boundaries": [1], "values": [0.1, -5.0]}},
     DECAY + r"piecewise_constant_conf.values must be >= 0, got -5.0"),
    ({"piecewise_constant_conf": {"boundaries": [1], "values": [0.1]}},
     DECAY + r"piecewise_constant_conf.values must have one entry more than boundaries"),
    ({"piecewise_scaling_conf": {"boundaries": [1], "scales": [-0.5]}},
     DECAY + r"piecewise_scaling_conf.scales must be >= 0"),
    ({"polynomial_conf": {"decay_batches": 2, "end_learning_rate": -10.0}},
     DECAY + r"polynomial_conf.end_learning_rate must be >= 0, got -10.0"),
    ({"polynomial_conf": {"decay_batches": 5, "power": -1.0}},
     DECAY + r"polynomial_conf.power must be >= 0"),
    ({"natural_exp_conf": {"decay_batches": 1, "decay_rate": -100.0}},
     DECAY + r"natural_exp_conf.decay_rate must be >= 0"),
    ({"linear_cosine_conf": {"decay_batches": 10, "beta": -5.0}},
     DECAY + r"linear_cosine_conf.beta must be >= 0"),
    ({"cosine_conf": {"decay_batches": 0}}, DECAY + r"cosine_conf.decay_batches must be >= 1"),
    ({"cosine_conf": {"alpha": 0.1}}, DECAY + r"cosine_conf needs the field 'decay_batches'"),
    ({"inverse_time_conf": {"decay_batches": 2}},
     DECAY + r"inverse_time_conf needs the field 'decay_rate'"),
])
def test_legacy_decays_are_checked_as_the_schedulers_are(decay, message):
    legacy_error({"naive_conf": {}, "learning_rate_decay": decay}, ValueError, message)


@pytest.mark.parametrize("conf, error, message", [
    ({"adam_conf": [1]}, TypeError, r"model_update_conf: adam_conf must be a dict of fields"),
    ({"naive_conf": {}, "learning_rate_decay": {"cosine_conf": "x"}}, TypeError,
     r"learning_rate_decay.cosine_conf must be a dict of fields, got 'x'"),
    ({"naive_conf": {}, "learning_rate_decay": 5}, TypeError,
     r"learning_rate_decay must be a dict with one of"),
    ({"naive_conf": {}, "clip_conf": {"clip_by_global_norm": 5}}, TypeError,
     r"clip_conf.clip_by_global_norm must be a dict of fields, got 5"),
    ({"naive_conf": {}, "weight_decay_conf": 0.1}, TypeError,
     r"weight_decay_conf must be a dict of fields, got 0.1"),
    ({"naive_conf": {}, "weight_decay_conf": {"weight_decay_rate": 0.1, "includes": "w"}},
     TypeError, r"weight_decay_conf.includes must be a dict of fields, got 'w'"),
    # Unknown fields (typos) are refused everywhere, as in learning_rate_decay.
    ({"adam_conf": {"beta_1": 0.5}}, ValueError,
     r"adam_conf has no field 'beta_1' .*did you mean 'beta1'"),
    ({"naive_conf": {"beta": 0.9}}, ValueError, r"naive_conf has no field 'beta' \(its fields: "
                                                r"none\)"),
    ({"naive_conf": {}, "warmup_conf": {"linear_conf": {"warmup_batch": 3}}}, ValueError,
     r"warmup_conf.linear_conf has no field 'warmup_batch' .*did you mean 'warmup_batches'"),
    ({"naive_conf": {}, "clip_conf": {"clip_by_global_norm": {"clipnorm": 0.1}}}, ValueError,
     r"clip_conf.clip_by_global_norm has no field 'clipnorm' .*did you mean 'clip_norm'"),
    ({"naive_conf": {}, "weight_decay_conf": {"weight_decay": 0.1}}, ValueError,
     r"weight_decay_conf has no field 'weight_decay' .*did you mean 'weight_decay_rate'"),
    ({"naive_conf": {}, "warmup_conf": {"constant_conf": {"warmup_batches": 3,
                                                          "multiplier": 1.5}}},
     ValueError, r"warmup_conf.constant_conf.multiplier must be < 1, got 1.5"),
    ({"naive_conf": {}, "warmup_conf": {"constant_conf": {"warmup_batches": 3}}}, ValueError,
     r"warmup_conf.constant_conf needs the field 'multiplier'"),
])
def test_legacy_conf_structure_and_fields_are_checked(conf, error, message):
    legacy_error(conf, error, message)


def test_legacy_loss_scale_factor_must_fit_float32():
    legacy_error({"naive_conf": {}}, ValueError,
                 r"train.loss_scale_factor 1e\+300 is out of float32 range",
                 loss_scale_factor=1e300)


def test_legacy_decay_defaults_are_oneflows():
    """Left-out fields take OneFlow's LearningRateDecayConf defaults: polynomial
    end_learning_rate 0.0001 and power 1; linear_cosine num_periods 0.5, alpha 0, beta 0.001."""
    config = legacy_config(0.5, {"naive_conf": {},
                                 "learning_rate_decay": {"polynomial_conf": {"decay_batches": 4}}})
    expected = [(0.5 - 1e-4) * (1 - min(t, 4) / 4) + 1e-4 for t in range(6)]
    np.testing.assert_allclose(rates(config, 6), expected, rtol=1e-6)
    flow.clear_default_session()
    config = legacy_config(0.5, {"naive_conf": {}, "learning_rate_decay": {
        "linear_cosine_conf": {"decay_batches": 4}}})
    expected = [0.5 * ((4 - min(t, 4)) / 4 * 0.5 * (1 + math.cos(math.pi * min(t, 4) / 4))
                       + 0.001) for t in range(6)]
    np.testing.assert_allclose(rates(config, 6), expected, rtol=1e-6)


def test_legacy_edge_values_and_numpy_numbers_train():
    """An exponential rate > 1 and numpy numbers are legal, as in OneFlow 0.3; an empty
    clip_conf / weight_decay_conf means none."""
    config = legacy_config(np.float32(0.25), {
        "momentum_conf": {"beta": np.float64(0.0)},
        "learning_rate_decay": {"exponential_conf": {"decay_batches": np.int64(2),
                                                     "decay_rate": np.float32(2.0),
                                                     "staircase": True}},
        "warmup_conf": {"constant_conf": {"warmup_batches": 1, "multiplier": 0.5}},
        "clip_conf": {},
        "weight_decay_conf": {},
    })
    expected = [0.125] + [0.25 * 2.0 ** math.floor(t / 2) for t in range(1, 6)]
    np.testing.assert_allclose(rates(config, 6), expected, rtol=1e-6)
