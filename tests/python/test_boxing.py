"""Boxing is the identity: every conversion between the layouts S(0), S(1), B and P, between
placements of 1 to 4 devices (the same devices, other device counts, disjoint devices), moves a
blob of an uneven logical shape without changing a value, forward and backward.

One job per pair of placements holds 16 independent chains, one per (source layout, target
layout), called 3 times back to back with different inputs (calls in flight together):

    x_k (+ a zero variable, so x_k gets a gradient)
      -> identity "pre_k"  forced to S(0) on the source placement
      -> identity "src_k"  forced to layout L1 on the source placement
      -> identity "dst_k"  forced to layout L2 on the target placement   <- the conversion
      -> loss_k = dst_k * w_k   (on the target placement; w_k random and fixed)

"pre_k" makes a P source hold real addends (each device its rows of x among zeros) rather than
the whole value on one device and zeros elsewhere. Every identity copies float32 values and every
partial sum adds one value to zeros, so the forward result must equal x_k exactly; the gradient
reaching x_k must be w_k. Each chain checks that the forced layouts were really chosen and that
the TaskGraph holds the boxing the conversion calls for (a collective on the same devices, a
slice copy between different ones, nothing when the consumer can read the producer's parts).
"""
import inspect
import re

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import op_builder
from oneflow.framework import session as session_util

DEVICES = 4
SHAPE = (5, 7)  # uneven over 2, 3 and 4 devices along both axes
LAYOUTS = ("S(0)", "S(1)", "B", "P")
ITERATIONS = 3  # calls in flight together, each with its own inputs
CONVERSIONS = [(source, target) for source in LAYOUTS for target in LAYOUTS]

# (source placement, target placement): the same devices for each count, other counts both ways,
# disjoint devices, one device to several and back, overlapping shifted devices, a list placement.
PLACEMENT_PAIRS = [
    ("0:0-3", "0:0-3"),
    ("0:0-2", "0:0-2"),
    ("0:0-1", "0:0-1"),
    ("0:2", "0:2"),
    ("0:0-1", "0:0-2"),
    ("0:0-2", "0:0-1"),
    ("0:0-1", "0:0-3"),
    ("0:0-3", "0:0-2"),
    ("0:0-3", "0:0"),
    ("0:0", "0:0-3"),
    ("0:0-1", "0:2-3"),
    ("0:3", "0:0-2"),
    ("0:0-2", "0:1-3"),
    (["0:0", "0:2"], "0:1-3"),
]


def devices_of(placement):
    """"0:1-3" -> ["0:1", "0:2", "0:3"]; a list names its devices."""
    if isinstance(placement, list):
        return list(placement)
    machine, _, ids = placement.partition(":")
    first, _, last = ids.partition("-")
    return ["%s:%d" % (machine, i) for i in range(int(first), int(last or first) + 1)]


def placement_id(placement):
    return ",".join(devices_of(placement))


def short_id(placement):
    """"0:1-3" -> "dev123", usable with pytest -k."""
    return "dev" + "".join(device.split(":")[1] for device in devices_of(placement))


def normalized(layout, device_count):
    """On one device every layout is the whole blob."""
    return "B" if device_count == 1 else layout


def expected_boxing(source, source_devices, target, target_devices):
    """The kind of TaskGraph node that converts source@source_devices to target@target_devices
    (None: the consumer reads the producer's registers directly), per docs/parallelism.md."""
    source = normalized(source, len(source_devices))
    target = normalized(target, len(target_devices))
    if source_devices == target_devices:
        if source == target:
            return None
        if source == "P":
            return "all_reduce" if target == "B" else "reduce_scatter"
        if source.startswith("S") and target == "B":
            return "all_gather"
        if source.startswith("S") and target.startswith("S"):
            return "all_to_all"
        return "slice_boxing"  # B->S, B->P, S->P: a local slice or zero-padding
    # Every target part is a whole source part: B->B, one device -> B, S(i)->S(i) on as many.
    if target == "B" and (source == "B" or len(source_devices) == 1):
        return None
    if source == target and source.startswith("S") and len(source_devices) == len(target_devices):
        return None
    return "slice_boxing"


def conversion_name(source, source_placement, target, target_placement):
    return "%s@%s -> %s@%s" % (source, placement_id(source_placement), target,
                               placement_id(target_placement))


def make_job(parameter_names, body):
    """A train global function with one (5, 7) float32 broadcast placeholder per name; `body`
    gets {name: blob} and returns a list of blobs. Unannotated return: each call gives a future,
    so several calls can be in flight."""

    def boxing_chains(*blobs):
        return tuple(body(dict(zip(parameter_names, blobs))))

    placeholder = tp.Numpy.Placeholder(SHAPE, dtype=flow.float32, batch_axis=None)
    boxing_chains.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=placeholder)
         for name in parameter_names])
    return flow.global_function(type="train")(boxing_chains)


def boxing_nodes(task_graph_text, lbn):
    """{kind: device indices} of the boxing nodes that convert blob `lbn`."""
    nodes = {}
    pattern = r'name: "(\w+)\(%s ([^"]*)\)@(\d+)"' % re.escape(lbn)
    for kind, _, index in re.findall(pattern, task_graph_text):
        nodes.setdefault(kind, set()).add(int(index))
    return nodes


def run_chains(source_placement, target_placement, conversions, debug_dir):
    """Runs one job with a chain per conversion, ITERATIONS calls in flight at once with
    different inputs; returns a list of failure messages, each naming its conversion."""
    flow.config.cpu_device_num(DEVICES)
    rng = np.random.RandomState(len(conversions))
    names = ["%s%d" % (kind, k) for k in range(len(conversions)) for kind in ("x", "w")]
    inputs = [
        {name: rng.uniform(*((-1, 1) if name[0] == "x" else (0.5, 2.0)), size=SHAPE).astype(
            np.float32) for name in names}
        for _ in range(ITERATIONS)
    ]
    gradients = {k: [] for k in range(len(conversions))}  # one per call, in call order
    chosen = {}

    def body(blobs):
        cpp = session_util.default_session().cpp
        outs, losses = [], []
        for k, (source, target) in enumerate(conversions):
            zero = flow.get_variable("zero%d" % k, shape=SHAPE,
                                     initializer=flow.zeros_initializer())
            x = blobs["x%d" % k] + zero
            flow.watch_diff(x, lambda diff, k=k: gradients[k].append(np.array(diff)))
            required = {
                "pre%d" % k: {"in_0": "S(0)", "out_0": "S(0)"},
                "src%d" % k: {"in_0": source, "out_0": source},
                "dst%d" % k: {"in_0": target, "out_0": target},
            }
            with op_builder.required_sbp(required):
                with flow.scope.placement("cpu", source_placement):
                    x = flow.identity(x, name="pre%d" % k)
                    x = flow.identity(x, name="src%d" % k)
                with flow.scope.placement("cpu", target_placement):
                    out = flow.identity(x, name="dst%d" % k)
                    losses.append(out * blobs["w%d" % k])
            chosen[k] = (cpp.sbp_signature("src%d" % k), cpp.sbp_signature("dst%d" % k))
            outs.append(out)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(losses)
        return outs

    job = make_job(names, body)
    futures = [job(*[values[name] for name in names]) for values in inputs]
    results = [future.get() for future in futures]
    task_graph = (debug_dir / "task_graph_boxing_chains.prototxt").read_text()

    source_devices = devices_of(source_placement)
    target_devices = devices_of(target_placement)
    failures = []
    for k, (source, target) in enumerate(conversions):
        name = conversion_name(source, source_placement, target, target_placement)
        src_sbp, dst_sbp = chosen[k]
        wanted_src = normalized(source, len(source_devices))
        wanted_dst = normalized(target, len(target_devices))
        if normalized(src_sbp["out_0"], len(source_devices)) != wanted_src or normalized(
                dst_sbp["in_0"], len(target_devices)) != wanted_dst:
            failures.append("%s: the chain took src %s, dst %s" % (name, src_sbp, dst_sbp))
        kind = expected_boxing(source, source_devices, target, target_devices)
        nodes = boxing_nodes(task_graph, "src%d/out_0" % k)
        wanted_nodes = {} if kind is None else {kind: set(range(len(target_devices)))}
        if nodes != wanted_nodes:
            failures.append("%s: boxing nodes %s in the TaskGraph, expected %s"
                            % (name, nodes, wanted_nodes))
        if len(gradients[k]) != ITERATIONS:
            failures.append("%s: %d gradients reached the input in %d calls"
                            % (name, len(gradients[k]), ITERATIONS))
        for call, values in enumerate(inputs):
            x, w = values["x%d" % k], values["w%d" % k]
            out = np.asarray(results[call][k])
            if out.shape != SHAPE or not np.array_equal(out, x):
                difference = np.abs(out - x).max() if out.shape == SHAPE else out.shape
                failures.append("%s, call %d: forward differs from the input (max |diff| or "
                                "shape: %s)" % (name, call, difference))
            if call < len(gradients[k]) and not np.allclose(gradients[k][call], w, rtol=1e-6,
                                                             atol=0):
                failures.append("%s, call %d: gradient differs from w (max |diff| %g)"
                                % (name, call, np.abs(gradients[k][call] - w).max()))
    return failures


@pytest.mark.parametrize(
    "source_placement, target_placement", PLACEMENT_PAIRS,
    ids=["%s_to_%s" % (short_id(s), short_id(t)) for s, t in PLACEMENT_PAIRS],
)
def test_every_layout_conversion_is_the_identity(source_placement, target_placement, tmp_path,
                                                 monkeypatch):
    monkeypatch.setenv("ONEFLOW_DEBUG_DIR", str(tmp_path))
    failures = run_chains(source_placement, target_placement, CONVERSIONS, tmp_path)
    assert not failures, "\n".join(failures)


def test_every_pair_and_conversion_is_covered():
    """The matrix: all 16 conversions for 1, 2, 3 and 4 devices on the same devices, between
    different device counts (both ways), disjoint devices and one device to several."""
    counts = {(len(devices_of(s)), len(devices_of(t))) for s, t in PLACEMENT_PAIRS}
    assert {(1, 1), (2, 2), (3, 3), (4, 4), (2, 3), (3, 2), (4, 1), (1, 4), (1, 3)} <= counts
    assert ("0:0-1", "0:2-3") in PLACEMENT_PAIRS and ("0:3", "0:0-2") in PLACEMENT_PAIRS
    assert len(set(CONVERSIONS)) == 16


# Splitting an axis shorter than the device count: each way of asking for such a split.
def _required(x):
    with op_builder.required_sbp({"short": {"in_0": "S(0)", "out_0": "S(0)"}}):
        return flow.identity(x, name="short")


def _variable(x):
    return x + flow.get_variable("short", shape=(3, 7), distribute=flow.distribute.split(0))


def _with_distribute(x):
    return flow.identity(x.with_distribute(flow.distribute.split(0)), name="short")


def _parallel_cast(x):
    return flow.parallel_cast(x, distribute=flow.distribute.split(0), name="short")


@pytest.mark.parametrize("make", [
    pytest.param(_required, id="required_sbp"),
    pytest.param(_with_distribute, id="with_distribute"),
    pytest.param(_variable, id="variable"),
    pytest.param(_parallel_cast, id="parallel_cast"),
])
def test_splitting_an_axis_shorter_than_the_device_count_is_a_value_error(make):
    flow.config.cpu_device_num(DEVICES)

    @flow.global_function()
    def short(x: tp.Numpy.Placeholder((3, 7), batch_axis=None)) -> tp.Numpy:
        return make(x)

    with pytest.raises(ValueError) as info:
        short(np.ones((3, 7), np.float32))
    message = str(info.value)
    assert "'short'" in message, message
    assert "shorter than the device count" in message, message


def test_a_placeholder_batch_shorter_than_the_device_count_is_a_value_error():
    flow.config.cpu_device_num(DEVICES)

    @flow.global_function()
    def short_batch(x: tp.Numpy.Placeholder((3, 7))) -> tp.Numpy:
        return flow.identity(x)

    with pytest.raises(ValueError, match="Input_x.*shorter than the device count"):
        short_batch(np.ones((3, 7), np.float32))
