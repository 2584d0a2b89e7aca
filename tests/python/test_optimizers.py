"""Every optimizer's multi-step trajectory against an independent reference: PyTorch's optimizer
where the formula is the same, else a NumPy transcription of OneFlow 0.3's kernel formula.

The model: loss = sum((x @ w + b)^2) with w (4, 3) and b (3,), in float64 so that references
agree to rounding; g_w = 2 x^T r and g_b = 2 sum_rows(r) with r = x @ w + b.
"""
from typing import Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
X = RNG.randn(5, 4)
W0 = RNG.uniform(-1, 1, (4, 3))
B0 = RNG.uniform(-1, 1, (3,))
STEPS = 6
LR = 2.0 ** -6  # exactly a float32: the learning rate blob is float32, as in OneFlow


def schedule(lr=LR):
    return flow.optimizer.PiecewiseConstantScheduler([], [lr])


def gradients(w, b, x=X):
    r = x @ w + b
    return {"w": 2 * x.T @ r, "b": 2 * r.sum(axis=0)}


def train_flow(optimizer, steps=STEPS, dtype=flow.float64, w_regularizer=None, inputs=None):
    """Trains with `optimizer` (built inside the job); returns [{"w", "b"} after each step]."""
    np_dtype = np.float64 if dtype == flow.float64 else np.float32

    def variables():
        w = flow.get_variable("w", shape=(4, 3), dtype=dtype, regularizer=w_regularizer,
                              initializer=flow.constant_initializer(0.0))
        b = flow.get_variable("b", shape=(3,), dtype=dtype,
                              initializer=flow.constant_initializer(0.0))
        return w, b

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((5, 4), dtype=dtype)) -> tp.Numpy:
        w, b = variables()
        loss = flow.math.reduce_sum(flow.math.square(flow.matmul(x, w) + b))
        optimizer().minimize(loss)
        return loss

    @flow.global_function()
    def read() -> Tuple[tp.Numpy, tp.Numpy]:
        return variables()

    _set_initial(variables, dtype, np_dtype)
    trajectory = []
    for step in range(steps):
        x = X if inputs is None else inputs[step]
        train(x.astype(np_dtype))
        w, b = read()
        trajectory.append({"w": w, "b": b})
    return trajectory


def _set_initial(variables, dtype, np_dtype):
    """Sets w and b to W0 and B0 with a one-step SGD job (lr 1, momentum 0) on
    loss = sum((v - target) * c) whose gradient is c = v_now - target: v -= v_now - target."""

    @flow.global_function(type="train")
    def set_values(w_target: tp.Numpy.Placeholder((4, 3), dtype=dtype),
                   b_target: tp.Numpy.Placeholder((3,), dtype=dtype)) -> tp.Numpy:
        w, b = variables()
        loss = flow.math.reduce_sum(w * (w - w_target)) * 0.5
        loss = loss + flow.math.reduce_sum(b * (b - b_target)) * 0.5
        flow.optimizer.SGD(schedule(1.0), momentum=0).minimize(loss)
        return loss

    # loss = 0.5 * sum(v * (v - t)) has gradient v - t/2; from v = 0 one step gives t/2, so use 2t.
    set_values((2 * W0).astype(np_dtype), (2 * B0).astype(np_dtype))


def reference(update, steps=STEPS, inputs=None, regularize=None):
    """Runs update(name, v, g, state, t) (returns the new v) on W0/B0; t = 1, 2, ..."""
    params = {"w": W0.copy(), "b": B0.copy()}
    states = {"w": {}, "b": {}}
    trajectory = []
    for t in range(1, steps + 1):
        x = X if inputs is None else inputs[t - 1]
        grads = gradients(params["w"], params["b"], x)
        if regularize is not None:
            grads = {name: regularize(name, params[name], g) for name, g in grads.items()}
        params = {name: update(name, params[name], grads[name], states[name], t)
                  for name in params}
        trajectory.append({name: value.copy() for name, value in params.items()})
    return trajectory


def assert_trajectories(actual, expected, rtol=1e-9, atol=1e-12):
    for step, (a, e) in enumerate(zip(actual, expected)):
        for name in ("w", "b"):
            np.testing.assert_allclose(a[name], e[name], rtol=rtol, atol=atol,
                                       err_msg="%s after step %d" % (name, step + 1))


def torch_trajectory(make_optimizer, steps=STEPS):
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    optimizer = make_optimizer([w, b])
    trajectory = []
    for _ in range(steps):
        optimizer.zero_grad()
        (torch.tensor(X) @ w + b).pow(2).sum().backward()
        optimizer.step()
        trajectory.append({"w": w.detach().numpy().copy(), "b": b.detach().numpy().copy()})
    return trajectory


def test_initial_values_are_set():
    trajectory = train_flow(lambda: flow.optimizer.SGD(schedule(0.0), momentum=0), steps=1)
    np.testing.assert_allclose(trajectory[0]["w"], W0, rtol=1e-12)
    np.testing.assert_allclose(trajectory[0]["b"], B0, rtol=1e-12)


# ---- against PyTorch ----

def test_sgd_matches_torch():
    actual = train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0))
    assert_trajectories(actual, torch_trajectory(lambda p: torch.optim.SGD(p, lr=LR)))


def test_momentum_matches_torch():
    actual = train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0.8))
    assert_trajectories(actual, torch_trajectory(
        lambda p: torch.optim.SGD(p, lr=LR, momentum=0.8)))


def test_adagrad_matches_torch():
    actual = train_flow(lambda: flow.optimizer.Adagrad(
        schedule(0.125), lr_decay=0.05, initial_accumulator_value=0.3, epsilon=1e-10,
        weight_decay=0.01))
    assert_trajectories(actual, torch_trajectory(lambda p: torch.optim.Adagrad(
        p, lr=0.125, lr_decay=0.05, initial_accumulator_value=0.3, eps=1e-10, weight_decay=0.01)))


def test_l2_regularizer_matches_torch_weight_decay():
    """flow.regularizers.l2(c) adds c * w to the gradient, as torch's SGD weight_decay does."""
    actual = train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0),
                        w_regularizer=flow.regularizers.l2(0.3))
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    optimizer = torch.optim.SGD([{"params": [w], "weight_decay": 0.3}, {"params": [b]}], lr=LR)
    for step in range(STEPS):
        optimizer.zero_grad()
        (torch.tensor(X) @ w + b).pow(2).sum().backward()
        optimizer.step()
        np.testing.assert_allclose(actual[step]["w"], w.detach().numpy(), rtol=1e-9)
        np.testing.assert_allclose(actual[step]["b"], b.detach().numpy(), rtol=1e-9)


def test_float32_adam_matches_torch():
    actual = train_flow(lambda: flow.optimizer.Adam(schedule(), do_bias_correction=True),
                        dtype=flow.float32)
    expected = torch_trajectory(lambda p: torch.optim.Adam(p, lr=LR))
    assert_trajectories(actual, expected, rtol=1e-4, atol=1e-5)


# ---- against OneFlow 0.3's formulas in NumPy ----

def test_sgdw_with_momentum_and_weight_decay_excludes():
    """SGDW: v = m v - lr g; w += v - lr wd w; "b" excluded from decay by pattern."""
    actual = train_flow(lambda: flow.optimizer.SGDW(
        schedule(), momentum=0.7, weight_decay=0.1, weight_decay_excludes=["^b$"]))

    def update(name, v, g, state, t):
        wd = 0.0 if name == "b" else 0.1
        state["m"] = 0.7 * state.get("m", 0.0) - LR * g
        return v + state["m"] - LR * wd * v

    assert_trajectories(actual, reference(update))


def test_adamw_with_bias_correction_and_includes():
    """AdamW decays only the variables matching an include pattern; lr_t also scales the decay."""
    actual = train_flow(lambda: flow.optimizer.AdamW(
        schedule(), beta1=0.8, beta2=0.95, epsilon=1e-7, do_bias_correction=True,
        weight_decay=0.2, weight_decay_includes="w"))

    def update(name, v, g, state, t):
        wd = 0.2 if name == "w" else 0.0
        state["m"] = 0.8 * state.get("m", 0.0) + 0.2 * g
        state["v"] = 0.95 * state.get("v", 0.0) + 0.05 * g * g
        lr_t = LR * np.sqrt(1 - 0.95 ** t) / (1 - 0.8 ** t)
        return v - lr_t * (state["m"] / (np.sqrt(state["v"]) + 1e-7) + wd * v)

    assert_trajectories(actual, reference(update))


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(centered):
    actual = train_flow(lambda: flow.optimizer.RMSProp(
        schedule(), decay_rate=0.9, epsilon=1e-6, centered=centered))

    def update(name, v, g, state, t):
        state["ms"] = 0.9 * state.get("ms", 0.0) + 0.1 * g * g
        denominator = state["ms"]
        if centered:
            state["mg"] = 0.9 * state.get("mg", 0.0) + 0.1 * g
            denominator = denominator - state["mg"] ** 2
        return v - LR * g / np.sqrt(denominator + 1e-6)

    assert_trajectories(actual, reference(update))


def test_lamb():
    actual = train_flow(lambda: flow.optimizer.LAMB(
        schedule(), beta1=0.9, beta2=0.99, epsilon=1e-6, weight_decay=0.01))

    def update(name, v, g, state, t):
        state["m"] = 0.9 * state.get("m", 0.0) + 0.1 * g
        state["v"] = 0.99 * state.get("v", 0.0) + 0.01 * g * g
        u = (state["m"] / (1 - 0.9 ** t)) / np.sqrt(state["v"] / (1 - 0.99 ** t) + 1e-6)
        w_norm, u_norm = np.linalg.norm(v), np.linalg.norm(u)
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        return v - LR * ratio * (u + 0.01 * v)

    assert_trajectories(actual, reference(update))


def test_lars():
    actual = train_flow(lambda: flow.optimizer.LARS(
        schedule(0.5), momentum_beta=0.9, epsilon=1e-9, lars_coefficient=0.01, weight_decay=0.05))

    def update(name, v, g, state, t):
        # OneFlow's lars_update: lr * c * ||w|| / (eps + ||g|| + wd ||w||), no decay term at
        # train step 0, and a trust ratio of 1 where a norm is 0.
        w_norm, g_norm = np.linalg.norm(v), np.linalg.norm(g)
        denominator = 1e-9 + g_norm + (0.05 * w_norm if t > 1 else 0.0)
        local_lr = 0.5 * (0.01 * w_norm / denominator if w_norm > 0 and g_norm > 0 else 1.0)
        state["m"] = 0.9 * state.get("m", 0.0) - local_lr * (g + 0.05 * v)
        return v + state["m"]

    assert_trajectories(actual, reference(update))


def test_lars_on_a_zero_variable_takes_the_plain_learning_rate():
    """OneFlow-Benchmark's ResNet passes epsilon=0 and starts some gammas at 0: the trust
    ratio is then 1 (OneFlow's lars_update), not 0/0."""
    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2,), initializer=flow.zeros_initializer())
        loss = flow.math.reduce_sum(w * x)
        flow.optimizer.LARS(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                            momentum_beta=0.9, epsilon=0.0, lars_coefficient=0.001).minimize(loss)
        return w

    x = np.array([1.0, 2.0], np.float32)
    job(x)
    np.testing.assert_allclose(job(x), -0.1 * x, rtol=1e-6)  # w after the first step


def test_lazy_adam_leaves_zero_gradient_elements_alone():
    """Inputs whose column 1 is 0 at some steps give w's row 1 a zero gradient there: LazyAdam
    must not move that row (nor decay its moments) at those steps."""
    inputs = []
    for step in range(STEPS):
        x = X.copy()
        if step % 2 == 1:
            x[:, 1] = 0.0
        inputs.append(x)
    actual = train_flow(lambda: flow.optimizer.LazyAdam(schedule(), beta1=0.9, beta2=0.999,
                                                        epsilon=1e-8), inputs=inputs)

    def update(name, v, g, state, t):
        lr_t = LR * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        m = state.setdefault("m", np.zeros_like(v))
        s = state.setdefault("v", np.zeros_like(v))
        live = np.abs(g) >= 1e-12
        m[live] = 0.9 * m[live] + 0.1 * g[live]
        s[live] = 0.999 * s[live] + 0.001 * g[live] ** 2
        out = v.copy()
        out[live] = v[live] - lr_t * m[live] / (np.sqrt(s[live]) + 1e-8)
        return out

    expected = reference(update, inputs=inputs)
    assert_trajectories(actual, expected)
    np.testing.assert_array_equal(actual[1]["w"][1], actual[0]["w"][1])


def test_l1_l2_regularizer():
    actual = train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0),
                        w_regularizer=flow.regularizers.l1_l2(l1=0.2, l2=0.05))

    def regularize(name, v, g):
        return g + 0.2 * np.sign(v) + 0.05 * v if name == "w" else g

    assert_trajectories(actual, reference(lambda name, v, g, state, t: v - LR * g,
                                          regularize=regularize))


def test_dense_kernel_regularizer_changes_only_the_kernel():
    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((5, 4), dtype=flow.float64)) -> tp.Numpy:
        out = flow.layers.dense(x, 3, kernel_regularizer=flow.regularizers.l2(0.5),
                                kernel_initializer=flow.constant_initializer(1.0), name="fc")
        loss = flow.math.reduce_sum(out * 0.0)
        flow.optimizer.SGD(schedule(0.125), momentum=0).minimize(loss)
        return loss

    @flow.global_function()
    def read() -> Tuple[tp.Numpy, tp.Numpy]:
        with flow.scope.namespace("fc"):
            return (flow.get_variable("weight", shape=(3, 4), dtype=flow.float64),
                    flow.get_variable("bias", shape=(3,), dtype=flow.float64))

    train(X)
    weight, bias = read()
    np.testing.assert_allclose(weight, np.full((3, 4), 1.0 - 0.125 * 0.5), rtol=1e-12)
    np.testing.assert_allclose(bias, np.zeros(3), atol=0)


# ---- several optimizers, bad input ----

def test_combined_optimizer_trains_each_variable_with_its_own_rule():
    actual = train_flow(lambda: flow.optimizer.CombinedOptimizer([
        flow.optimizer.SGD(schedule(), momentum=0, variables=["w"]),
        flow.optimizer.SGD(schedule(0.0625), momentum=0.5, variables=["b"]),
    ]))

    def update(name, v, g, state, t):
        if name == "w":
            return v - LR * g
        state["m"] = 0.5 * state.get("m", 0.0) - 0.0625 * g
        return v + state["m"]

    assert_trajectories(actual, reference(update))


@pytest.mark.parametrize("make, message", [
    (lambda: flow.optimizer.Adam(schedule(), beta1=1.0), "beta1 must be < 1"),
    (lambda: flow.optimizer.SGD(schedule(), momentum=-0.1), "momentum must be >= 0"),
    (lambda: flow.optimizer.RMSProp(schedule(), centered="yes"), "centered must be a bool"),
    (lambda: flow.optimizer.SGD(0.1), "lr_scheduler must be"),
    (lambda: flow.optimizer.AdamW(schedule(), weight_decay=0.1, weight_decay_includes=["a"],
                                  weight_decay_excludes=["b"]), "not both"),
    (lambda: flow.optimizer.SGD(schedule(), grad_clipping=1.0), "grad_clipping must be"),
    (lambda: flow.optimizer.LARS(schedule(), lars_coefficient=-1), "lars_coefficient"),
])
def test_bad_hyper_parameters_are_clear_errors(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


def test_optimizer_naming_a_missing_variable_is_a_clear_error():
    with pytest.raises(ValueError, match="names variable 'nope'"):
        train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0, variables=["nope"]), steps=1)


def test_variables_by_function_as_oneflow_benchmark_lists_them():
    """OneFlow-Benchmark's optimizer_util.py (--optimizer sgdwlars): functions that read the
    job's variables through oneflow_api / oneflow.python.framework.session_context choose what
    LARS and SGDW train; Optimizer.Variables() gives the names."""
    import oneflow_api
    import oneflow.python.framework.session_context as session_ctx

    def job_variables():
        job_name = oneflow_api.JobBuildAndInferCtx_GetCurrentJobName()
        return list(session_ctx.GetDefaultSession().job_name2var_name2var_blob_[job_name])

    def lars_variables():
        return [v for v in job_variables() if not v.endswith("bias")]

    def sgdw_variables():
        return [v for v in job_variables() if v.endswith("bias")]

    seen = {}

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        out = flow.layers.dense(x, 2, kernel_initializer=flow.constant_initializer(0.5),
                                name="fc")
        loss = flow.math.reduce_mean(out * out)
        schedule = flow.optimizer.PiecewiseConstantScheduler([], [0.1])
        lars = flow.optimizer.LARS(schedule, variables=lars_variables)
        sgdw = flow.optimizer.SGDW(schedule, momentum=0, variables=sgdw_variables)
        flow.optimizer.CombinedOptimizer([lars, sgdw]).minimize(loss)
        seen.update(lars=lars.Variables(), sgdw=sgdw.Variables(),
                    job=oneflow_api.JobBuildAndInferCtx_GetCurrentJobName())
        assert isinstance(out, oneflow_api.BlobDesc)
        return loss

    train(np.ones((4, 3), np.float32))
    assert seen == {"lars": ["fc-weight"], "sgdw": ["fc-bias"], "job": "train"}
    assert flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                              variables=["a", "b"]).Variables() == ["a", "b"]
    with pytest.raises(RuntimeError, match="no job is being built"):
        oneflow_api.JobBuildAndInferCtx_GetCurrentJobName()


# ---- numbers that float32 cannot hold, and numpy numbers ----

@pytest.mark.parametrize("make, message", [
    (lambda: flow.optimizer.SGD(schedule(1e39)), r"values 1e\+39 .*beyond float32"),
    (lambda: flow.optimizer.SGD(schedule(), loss_scale_factor=1e300),
     r"static_loss_scale: loss_scale_factor 1e\+300 is out of float32 range"),
    (lambda: flow.optimizer.SGD(schedule(), loss_scale_factor=1e-300),
     r"static_loss_scale: loss_scale_factor 1e-300 is out of float32 range"),
    # Its float32 rounding is not 0, but 1 / it is inf.
    (lambda: flow.optimizer.SGD(schedule(), loss_scale_factor=1e-40),
     r"loss_scale_factor 1e-40 is out of float32 range"),
    (lambda: flow.optimizer.loss_scale.dynamic_loss_scale(initial_loss_scale=1e-300),
     r"dynamic_loss_scale: initial_loss_scale 1e-300 is out of float32 range"),
    (lambda: flow.optimizer.loss_scale.dynamic_loss_scale(initial_loss_scale=1e300),
     r"dynamic_loss_scale: initial_loss_scale 1e\+300 is out of float32 range"),
    (lambda: flow.optimizer.loss_scale.dynamic_loss_scale(multiplier=1e39),
     r"dynamic_loss_scale: multiplier 1e\+39 is out of float32 range"),
    (lambda: flow.optimizer.SGD(schedule(), momentum=np.bool_(False)),
     r"momentum must be a number"),
])
def test_hyper_parameters_beyond_float32_are_refused(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


@pytest.mark.parametrize("policy", [
    lambda: flow.optimizer.loss_scale.static_loss_scale(2.0 ** 100),
    lambda: flow.optimizer.loss_scale.static_loss_scale(2.0 ** -100),
    lambda: flow.optimizer.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0 ** -100),
    lambda: flow.optimizer.loss_scale.dynamic_loss_scale(initial_loss_scale=2.0 ** 100),
])
def test_loss_scales_float32_holds_leave_the_update_unchanged(policy):
    """Extreme scales that float32 holds, with their reciprocals, are accepted and train as SGD."""
    actual = train_flow(lambda: flow.optimizer.SGD(schedule(), momentum=0,
                                                   loss_scale_policy=policy()))
    assert_trajectories(actual, torch_trajectory(lambda p: torch.optim.SGD(p, lr=LR)))


def test_numpy_numbers_are_taken_as_oneflow_0_3_did():
    actual = train_flow(lambda: flow.optimizer.SGD(
        flow.optimizer.PiecewiseConstantScheduler([], [np.float32(LR)]),
        momentum=np.float64(0.8)))
    assert_trajectories(actual, torch_trajectory(
        lambda p: torch.optim.SGD(p, lr=LR, momentum=0.8)))
