"""Training on several devices follows the single-device run: data-parallel, model-parallel and
hybrid MLPs, and a classifier with class-split logits, trained 10 steps with SGD + momentum on
2, 3 and 4 CPU devices give the 1-device loss trajectory (float32, rtol 1e-4) and end with the
same variables. The reference is the same model code run with flow.config.cpu_device_num(1).

Each mode also checks that the intended layout was used: the chosen SBP signature of each
matmul (read during tracing) and the collectives in the TaskGraph dump.

Sizes are uneven over 2, 3 and 4 devices: batch 10, features 7, hidden 11 and 13, outputs 5,
classes 10.
"""
import re

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import session as session_util

BATCH, FEATURES, HIDDEN1, HIDDEN2, OUTPUTS, CLASSES = 10, 7, 11, 13, 5, 10
STEPS = 10
LR, MOMENTUM = 0.1, 0.9
LOSS_RTOL = 1e-4
VARIABLE_TOLERANCE = dict(rtol=1e-4, atol=1e-6)


def make_data():
    rng = np.random.RandomState(7)
    x = rng.uniform(-1, 1, (BATCH, FEATURES)).astype(np.float32)
    y = rng.uniform(-1, 1, (BATCH, OUTPUTS)).astype(np.float32)
    labels = rng.randint(0, CLASSES, BATCH).astype(np.int32)
    return x, y, labels


def uniform(seed, scale=0.5):
    return flow.random_uniform_initializer(-scale, scale, seed=seed)


def variable(name, shape, seed, distribute=None):
    return flow.get_variable(name, shape=shape, initializer=uniform(seed), distribute=distribute)


def mlp_matmul(x):
    """x @ W1 + b1 -> relu -> @ W2 + b2 -> relu -> @ W3 + b3 with flow.matmul, W of shape
    (in, out) and the bias added by broadcasting. Data-parallel (all weights broadcast)."""
    h = flow.math.relu(flow.matmul(x, variable("w1", (FEATURES, HIDDEN1), 1), name="mm1")
                       + variable("b1", (HIDDEN1,), 2))
    h = flow.math.relu(flow.matmul(h, variable("w2", (HIDDEN1, HIDDEN2), 3), name="mm2")
                       + variable("b2", (HIDDEN2,), 4))
    return flow.matmul(h, variable("w3", (HIDDEN2, OUTPUTS), 5), name="mm3") + variable(
        "b3", (OUTPUTS,), 6)


def mlp_model_parallel(x):
    """The same MLP, Megatron style: W1 split along its outputs (and b1 with it), W2 split
    along its inputs, so h1 is S(1) and h1 @ W2 is a partial sum; W3 broadcast."""
    split = flow.distribute.split
    h = flow.math.relu(
        flow.matmul(x, variable("w1", (FEATURES, HIDDEN1), 1, split(1)), name="mm1")
        + variable("b1", (HIDDEN1,), 2, split(0)))
    h = flow.math.relu(
        flow.matmul(h, variable("w2", (HIDDEN1, HIDDEN2), 3, split(0)), name="mm2")
        + variable("b2", (HIDDEN2,), 4))
    return flow.matmul(h, variable("w3", (HIDDEN2, OUTPUTS), 5), name="mm3") + variable(
        "b3", (OUTPUTS,), 6)


def mlp_hybrid(x):
    """flow.layers.dense: a data-parallel first layer, a model-parallel second layer (weight
    and bias split along units), a data-parallel output layer."""
    h = flow.layers.dense(x, HIDDEN1, activation=flow.math.relu, name="dense1",
                          kernel_initializer=uniform(1), bias_initializer=uniform(2))
    h = flow.layers.dense(h, HIDDEN2, activation=flow.math.relu, name="dense2",
                          kernel_initializer=uniform(3), bias_initializer=uniform(4),
                          model_distribute=flow.distribute.split(0))
    return flow.layers.dense(h, OUTPUTS, name="dense3", kernel_initializer=uniform(5),
                             bias_initializer=uniform(6))


def classifier(x):
    """A hidden layer, then logits split along the classes (Wc split(1), bc split(0))."""
    h = flow.math.relu(flow.matmul(x, variable("w1", (FEATURES, HIDDEN1), 1), name="mm1")
                       + variable("b1", (HIDDEN1,), 2))
    split = flow.distribute.split
    logits = flow.matmul(h, variable("wc", (HIDDEN1, CLASSES), 3, split(1)), name="logits")
    return flow.math.add(logits, variable("bc", (CLASSES,), 4, split(0)), name="logits_bias")


MLP_VARIABLES = ("w1", "b1", "w2", "b2", "w3", "b3")
DENSE_VARIABLES = tuple("dense%d-%s" % (i, part) for i in (1, 2, 3) for part in ("weight", "bias"))
CLASSIFIER_VARIABLES = ("w1", "b1", "wc", "bc")

# mode -> (model, batch_axis of the placeholders, variable names, {op: expected signature})
MODES = {
    "data_parallel": (mlp_matmul, 0, MLP_VARIABLES, {
        "mm1": {"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"},
        "mm2": {"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"},
        "mm3": {"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"},
    }),
    "model_parallel": (mlp_model_parallel, None, MLP_VARIABLES, {
        "mm1": {"a_0": "B", "b_0": "S(1)", "out_0": "S(1)"},
        "mm2": {"a_0": "S(1)", "b_0": "S(0)", "out_0": "P"},
    }),
    "hybrid": (mlp_hybrid, 0, DENSE_VARIABLES, {
        "dense1-matmul": {"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"},
        "dense2-matmul": {"a_0": "B", "b_0": "S(0)", "out_0": "S(1)"},
        "dense2-bias_add": {"a_0": "S(1)", "b_0": "S(0)", "out_0": "S(1)"},
    }),
}


def train(devices, model, batch_axis, variable_names, loss_kind="mse", debug_dir=None,
          monkeypatch=None, watched_ops=(), function_config=None):
    """Trains `model` STEPS steps on `devices` CPU devices in a fresh session; returns (losses,
    {variable: final value}, {op: chosen SBP signature}, TaskGraph text or None)."""
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    if debug_dir is not None:
        monkeypatch.setenv("ONEFLOW_DEBUG_DIR", str(debug_dir))
    x_data, y_data, label_data = make_data()
    chosen = {}

    def record_layouts():
        cpp = session_util.default_session().cpp
        for name in watched_ops:
            chosen[name] = cpp.sbp_signature(name)

    optimizer = flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LR]),
                                   momentum=MOMENTUM)
    if loss_kind == "mse":
        @flow.global_function(type="train", function_config=function_config)
        def train_step(x: tp.Numpy.Placeholder((BATCH, FEATURES), batch_axis=batch_axis),
                       y: tp.Numpy.Placeholder((BATCH, OUTPUTS), batch_axis=batch_axis)
                       ) -> tp.Numpy:
            loss = flow.math.reduce_mean(flow.math.square(model(x) - y))
            record_layouts()
            optimizer.minimize(loss)
            return loss

        arguments = (x_data, y_data)
    else:
        @flow.global_function(type="train")
        def train_step(x: tp.Numpy.Placeholder((BATCH, FEATURES), batch_axis=batch_axis),
                       labels: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32, batch_axis=None)
                       ) -> tp.Numpy:
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, model(x))
            record_layouts()
            optimizer.minimize(loss)
            return loss

        arguments = (x_data, label_data)

    losses = [np.array(train_step(*arguments)) for _ in range(STEPS)]
    cpp = session_util.default_session().cpp  # a split variable comes back whole
    variables = {name: cpp.variable_value(name) for name in variable_names}
    task_graph = None
    if debug_dir is not None:
        task_graph = (debug_dir / "task_graph_train_step.prototxt").read_text()
    flow.clear_default_session()
    return losses, variables, chosen, task_graph


def boxing_names(task_graph):
    """The boxing nodes of a TaskGraph dump (part 0 of each), for messages."""
    return sorted(set(re.findall(r'name: "(\w+\([^"]*\))@0"', task_graph)))


# Boxing nodes each mode must have (regular expressions on the TaskGraph dump) ...
EXPECTED_BOXING = {
    # Each broadcast weight's gradient is a partial sum (one addend per batch part), reduced.
    "data_parallel": [r'name: "all_reduce\(mm%d-b_grad/out_0 P->B\)@0"' % i for i in (1, 2, 3)],
    # h1 @ W2 is a partial sum, reduced before the bias is added.
    "model_parallel": [r'name: "(all_reduce|reduce_scatter)\(mm2/out_0 P->'],
    # The batch-split activations are gathered for the model-parallel layer; the data-parallel
    # layer's weight gradient is reduced.
    "hybrid": [r'name: "all_gather\(dense1-activation/y_0 S\(0\)->B\)@0"',
               r'name: "all_reduce\(dense1-matmul-b_grad/out_0 P->B\)@0"'],
}
# ... and must not have: W1's gradient is computed split like W1, so nothing converts it.
FORBIDDEN_BOXING = {
    "data_parallel": [],
    "model_parallel": [r'name: "\w+\(mm1-b_grad/'],
    "hybrid": [],
}


def assert_same_training(reference, actual, what):
    ref_losses, ref_variables = reference[:2]
    losses, variables = actual[:2]
    for step, (expected, got) in enumerate(zip(ref_losses, losses)):
        np.testing.assert_allclose(got, expected, rtol=LOSS_RTOL, atol=0,
                                   err_msg="%s: loss at step %d" % (what, step))
    # The loss really moved, so the comparison covers training, not just the first forward.
    assert abs(float(np.mean(ref_losses[-1])) - float(np.mean(ref_losses[0]))) > 1e-3, ref_losses
    for name, expected in ref_variables.items():
        np.testing.assert_allclose(variables[name], expected, err_msg="%s: variable %s" % (
            what, name), **VARIABLE_TOLERANCE)


_REFERENCES = {}


def reference_run(mode_key, model, batch_axis, variable_names, loss_kind="mse"):
    """The single-device run of a model (computed once per test session)."""
    if mode_key not in _REFERENCES:
        _REFERENCES[mode_key] = train(1, model, batch_axis, variable_names, loss_kind)
    return _REFERENCES[mode_key]


@pytest.mark.parametrize("devices", [2, 3, 4])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_mlp_follows_the_single_device_run(mode, devices, tmp_path, monkeypatch):
    model, batch_axis, variable_names, expected_layouts = MODES[mode]
    reference = reference_run(mode, model, batch_axis, variable_names)
    actual = train(devices, model, batch_axis, variable_names, debug_dir=tmp_path,
                   monkeypatch=monkeypatch, watched_ops=tuple(expected_layouts))
    chosen, task_graph = actual[2], actual[3]
    for name, signature in expected_layouts.items():
        assert chosen[name] == signature, (mode, devices, name, chosen[name])
    for pattern in EXPECTED_BOXING[mode]:
        assert re.search(pattern, task_graph), (mode, devices, pattern, boxing_names(task_graph))
    for pattern in FORBIDDEN_BOXING[mode]:
        assert not re.search(pattern, task_graph), (mode, devices, pattern)
    assert_same_training(reference, actual, "%s on %d devices" % (mode, devices))


@pytest.mark.parametrize("devices", [4, 3])
def test_classifier_with_class_split_logits_follows_the_single_device_run(devices, tmp_path,
                                                                          monkeypatch):
    reference = reference_run("classifier", classifier, None, CLASSIFIER_VARIABLES, "softmax")
    actual = train(devices, classifier, None, CLASSIFIER_VARIABLES, "softmax", debug_dir=tmp_path,
                   monkeypatch=monkeypatch, watched_ops=("logits", "logits_bias"))
    assert actual[2]["logits"] == {"a_0": "B", "b_0": "S(1)", "out_0": "S(1)"}, actual[2]
    assert actual[2]["logits_bias"] == {"x_0": "S(1)", "y_0": "S(0)", "z_0": "S(1)"}, actual[2]
    # The cross-entropy reads whole rows: the class-split logits are gathered for it.
    assert re.search(r'name: "(all_gather|all_to_all)\(logits_bias/z_0 S\(1\)->', actual[3]), \
        boxing_names(actual[3])
    assert reference[0][0].shape == (BATCH,)
    assert_same_training(reference, actual, "classifier on %d devices" % devices)


@pytest.mark.parametrize("devices", [2, 3])
def test_sharded_optimizer_state_follows_the_single_device_run(devices, tmp_path, monkeypatch):
    """optimizer_placement_optimization_mode("distributed_split"): broadcast weights are stored
    split(0); readers all-gather them, gradients are reduce-scattered, each device updates its
    slice (and keeps its slice of the momentum)."""
    model, batch_axis, variable_names, _ = MODES["data_parallel"]
    reference = reference_run("data_parallel", model, batch_axis, variable_names)
    config = flow.FunctionConfig()
    config.optimizer_placement_optimization_mode("distributed_split")
    actual = train(devices, model, batch_axis, variable_names, debug_dir=tmp_path,
                   monkeypatch=monkeypatch, function_config=config)
    task_graph = actual[3]
    for i in (1, 2, 3):
        assert re.search(r'name: "reduce_scatter\(mm%d-b_grad/out_0 P->S\(0\)\)@0"' % i,
                         task_graph), boxing_names(task_graph)
        assert not re.search(r'name: "all_reduce\(mm%d-b_grad/' % i, task_graph)
    assert re.search(r'name: "all_gather\(w1/out_0 S\(0\)->B\)@0"', task_graph), \
        boxing_names(task_graph)
    assert_same_training(reference, actual, "sharded optimizer on %d devices" % devices)


def test_optimizer_placement_mode_is_checked():
    with pytest.raises(ValueError, match="distributed_split"):
        flow.FunctionConfig().optimizer_placement_optimization_mode("zero3")
