"""The shared op checker: runs one op inside a real train job and compares it with NumPy.

    check_op(flow.math.tanh, np.tanh, [(3, 4)], flow.float64)

For each input i the job has a placeholder plus a zero-initialised variable of the same shape
(`x_i = placeholder_i + variable_i`), so x_i is on the path from a trainable variable to the
loss and gets a gradient. The op's output is the loss (OneFlow accepts a non-scalar loss and
seeds its diff with ones). The optimizer is SGD with learning rate 0, so running the job does not
change anything. The forward result comes back through the `tp.Numpy` return, the input
gradients through `flow.watch_diff(x_i, handler)`; `watch_diff` sees the unscaled gradient, so
it must equal d sum(numpy_fn(...)) / d x_i, which we get by central finite differences.

When a ones seed would hide errors (softmax: sum(softmax(x)) is constant, so its gradient is
zero), `weight_output=True` makes the loss `op(...) * w` with w a random placeholder, and the
reference becomes sum(numpy_fn(...) * w).

The multi-device pass. After the single-device check, check_op runs the same job again on
2, 3 and 4 CPU devices (MULTI_DEVICE_COUNTS; the default placement spans them all) and requires
the single-device run's forward output and input gradients, within MULTI_DEVICE_TOLERANCE
(sums split over devices round differently). On each device count it makes
  1. one run in which the compiler chooses every signature; it also records the ops flow_fn
     adds (op names are deterministic, so they are the same in every run) and, for each, the
     SBP signatures it declares that fit its placement (`sbp_candidates`);
  2. one run per other candidate of each of those ops, that op required to take it
     (op_builder.required_sbp), which the run asserts it did. The other ops, the boxing between
     layouts and the gradient ops autograd adds choose their own signatures.
The GPU pass (DEVICE == "gpu", set by the `op_device` fixture of conftest.py when GPUs are in
use): instead of the multi-device CPU pass, check_op runs the job with flow_fn's ops placed on
one GPU, then on each GPU count up to 4 with every SBP candidate as above, and requires the
single-device CPU numbers within GPU_TOLERANCE (float16 looser). Inputs, variables and the
watched gradients stay on the host; the compiler copies between host and GPU.
The placeholders are broadcast (batch_axis=None), so boxing slices them into whatever a
signature requires. A candidate that does not fit a device count (an axis shorter than the
device count) is not declared, so not run; uneven splits (3 rows on 2 devices) are run.

Policy: every check_op call gets the whole pass, every (device count, op, candidate): a run
takes a few milliseconds, and the suite's ~260 check_op calls make ~3,400 runs, ~20 s in all.
A check that fails on several devices because of a framework bug keeps its check and is marked
`pytest.mark.xfail(strict=True, reason=...)` in its test file; if the bug hangs, the test cannot
recover in-process (even clear_default_session waits for the call): pass multi_device=False
there and reproduce the hang in a subprocess under a strict xfail. No check is marked today.
"""
import collections

import numpy as np

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import op_builder
from oneflow.framework import session as session_util

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# Forward tolerances by output dtype; backward (float64 only) against finite differences.
FORWARD_TOLERANCE = {
    np.dtype(np.float16): dict(rtol=1e-3, atol=1e-3),
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-6),
    np.dtype(np.float64): dict(rtol=1e-10, atol=1e-12),
}
BACKWARD_TOLERANCE = dict(rtol=1e-5, atol=1e-7)
FINITE_DIFFERENCE_STEP = 1e-6
# Multi-device results against the single-device ones, (rtol, atol) by dtype; atol also grows
# with the result's magnitude, since sums split over devices round differently.
MULTI_DEVICE_TOLERANCE = {
    np.dtype(np.float16): (1e-3, 1e-3),
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-10, 1e-12),
}
MULTI_DEVICE_COUNTS = (2, 3, 4)
# "cpu" or "gpu": where check_op runs its device pass (conftest.py's op_device fixture).
DEVICE = "cpu"
# GPU results against the CPU kernels' single-device ones, (rtol, atol) by dtype.
GPU_TOLERANCE = {
    np.dtype(np.float16): (1e-2, 1e-3),
    np.dtype(np.float32): (2e-5, 1e-6),
    np.dtype(np.float64): (1e-10, 1e-12),
}


_FLOW_DTYPES = {
    np.dtype(np.float16): flow.float16,
    np.dtype(np.float32): flow.float32,
    np.dtype(np.float64): flow.float64,
    np.dtype(np.int8): flow.int8,
    np.dtype(np.int32): flow.int32,
    np.dtype(np.int64): flow.int64,
    np.dtype(np.uint8): flow.uint8,
}


def numpy_dtype(dtype):
    """The numpy dtype of a oneflow or numpy dtype."""
    if dtype in _FLOW_DTYPES.values():
        return np.dtype(flow.convert_oneflow_dtype_to_numpy_dtype(dtype))
    return np.dtype(dtype)


def flow_dtype(dtype):
    """The oneflow dtype of a oneflow or numpy dtype."""
    return _FLOW_DTYPES[numpy_dtype(dtype)]


def random_inputs(input_shapes, dtype, seed=0, low=-1.0, high=1.0):
    """Deterministic inputs: uniform in [low, high), kept away from 0 by at least 0.05 so
    kinks (relu) and poles (1/x) stay outside the finite-difference step."""
    rng = np.random.RandomState(seed)
    arrays = []
    for shape in input_shapes:
        values = rng.uniform(low, high, size=shape)
        if low < 0 < high:
            values = np.where(np.abs(values) < 0.05, np.copysign(0.05, values) + values, values)
        arrays.append(values.astype(numpy_dtype(dtype)))
    return arrays


def finite_difference_gradients(numpy_fn, arrays, differentiable, weight):
    """d sum(numpy_fn(*arrays) * weight) / d arrays[i] by central differences, for each i in
    `differentiable`, computed in float64."""
    arrays = [a.astype(np.float64) if a.dtype in FLOAT_DTYPES else a for a in arrays]

    def objective(values):
        return float(np.sum(np.asarray(numpy_fn(*values), dtype=np.float64) * weight))

    gradients = {}
    for index in differentiable:
        base = arrays[index]
        gradient = np.zeros_like(base)
        for position in np.ndindex(*base.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[index][position] += FINITE_DIFFERENCE_STEP
            minus[index][position] -= FINITE_DIFFERENCE_STEP
            gradient[position] = (objective(plus) - objective(minus)) / (
                2 * FINITE_DIFFERENCE_STEP
            )
        gradients[index] = gradient
    return gradients


def _placeholder_job(input_arrays, body, is_train):
    """A global function whose positional placeholders match `input_arrays`; `body` receives
    the placeholder blobs and returns the blob to give back as tp.Numpy. The placeholders are
    broadcast (batch_axis=None): on many devices each device sees the whole input, so any
    layout an op requires is reached by boxing, and no axis is too short to split."""
    placeholders = [
        tp.Numpy.Placeholder(a.shape, dtype=flow_dtype(a.dtype), batch_axis=None)
        for a in input_arrays
    ]
    names = ["input_%d" % i for i in range(len(placeholders))]
    namespace = {"body": body}
    source = "def check_op_job(%s):\n    return body(%s)\n" % (", ".join(names), ", ".join(names))
    exec(source, namespace)  # a real signature with one annotated parameter per input
    function = namespace["check_op_job"]
    function.__annotations__ = dict(zip(names, placeholders))
    function.__annotations__["return"] = tp.Numpy
    return flow.global_function(type="train" if is_train else "predict")(function)


# One op that flow_fn added to a traced job: its declared signatures that fit its placement
# (argument key -> "S(k)" / "B" / "P") and the one it took.
TracedOp = collections.namedtuple("TracedOp", "name type candidates signature")

# What one job run gave: the forward output, {input index: gradient}, and flow_fn's ops.
JobRun = collections.namedtuple("JobRun", "output gradients ops")


def run_job(flow_fn, input_arrays, differentiable=(), weight=None, train=True, device_count=None,
            required_sbp=None, device_tag="cpu"):
    """Runs flow_fn in one job of a fresh session and returns a JobRun.

    device_count: the session's CPU device count (None: one device, as in a plain session);
    the job's default placement spans all of them. required_sbp: {op name: signature} that
    flow_fn's ops of those names must take (op_builder.required_sbp). device_tag "gpu": flow_fn's
    ops are placed on GPUs 0..device_count-1 (the rest of the job stays on the host).
    """
    flow.clear_default_session()
    if device_count is not None:
        flow.config.cpu_device_num(device_count)
    gpus = device_count or 1
    gradients = {}
    traced_ops = []
    arrays = list(input_arrays) + ([] if weight is None else [weight])

    def body(*blobs):
        cpp = session_util.default_session().cpp
        inputs = list(blobs[: len(input_arrays)])
        if train:
            for index in differentiable:
                blob = inputs[index]
                variable = flow.get_variable(
                    "check_op_input_%d_zero" % index,
                    shape=blob.shape,
                    dtype=blob.dtype,
                    initializer=flow.zeros_initializer(),
                )
                blob = blob + variable
                flow.watch_diff(
                    blob, lambda diff, index=index: gradients.__setitem__(index, np.array(diff))
                )
                inputs[index] = blob
        ops_before = len(cpp.op_names())
        with op_builder.required_sbp(required_sbp or {}):
            if device_tag == "gpu":
                with flow.scope.placement("gpu", "0:0-%d" % (gpus - 1)):
                    out = flow_fn(*inputs)
            else:
                out = flow_fn(*inputs)
        for name in cpp.op_names()[ops_before:]:
            traced_ops.append(TracedOp(name, cpp.op_type(name), cpp.sbp_candidates(name),
                                       cpp.sbp_signature(name)))
        if train:
            loss = out if weight is None else out * blobs[-1]
            flow.optimizer.SGD(
                flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0
            ).minimize(loss)
        return out

    job = _placeholder_job(arrays, body, train)
    result = job(*arrays)
    return JobRun(np.asarray(result), gradients, traced_ops)


def run_op(flow_fn, input_arrays, differentiable=(), weight=None, train=True):
    """Runs flow_fn in one job on one device; returns (forward output, {input index: gradient})."""
    run = run_job(flow_fn, input_arrays, differentiable, weight, train)
    return run.output, run.gradients


# One run of the multi-device pass: on `devices` CPU devices, op `op_name` (of `op_type`) took
# `signature`; `forced`: the checker required it (else the compiler chose it).
MultiDeviceRun = collections.namedtuple(
    "MultiDeviceRun", "devices op_name op_type signature forced")


def _format_signature(signature):
    return "{%s}" % ", ".join("%s: %s" % item for item in sorted(signature.items()))


def _assert_same_numbers(actual, reference, what, tolerances=None):
    """actual (a multi-device result) equals reference (the single-device one): same shape and
    dtype; floats within MULTI_DEVICE_TOLERANCE (or `tolerances`), whose atol grows with the
    largest |reference|; other dtypes exactly."""
    assert actual.shape == reference.shape, "%s: shape %s, single device %s" % (
        what, actual.shape, reference.shape)
    assert actual.dtype == reference.dtype, "%s: dtype %s, single device %s" % (
        what, actual.dtype, reference.dtype)
    tolerances = tolerances or MULTI_DEVICE_TOLERANCE
    if reference.dtype not in tolerances:
        np.testing.assert_array_equal(actual, reference, err_msg=what)
        return
    rtol, atol = tolerances[reference.dtype]
    magnitude = float(np.max(np.abs(reference))) if reference.size else 0.0
    np.testing.assert_allclose(
        actual, reference, rtol=rtol, atol=atol + rtol * magnitude, err_msg=what)


def _check_multi_device_run(flow_fn, inputs, reference, differentiable, weight, train, devices,
                            forced_op=None, signature=None, device_tag="cpu"):
    """Runs flow_fn on `devices` devices (GPUs with device_tag "gpu"), op `forced_op` (a
    TracedOp) required to take `signature` (no forced_op: every op takes the compiler's choice),
    and compares with `reference`, the single-device CPU (output, {input index: gradient}).
    Returns the JobRun; any failure is an AssertionError naming the op, the signature and the
    device count."""
    kind = "GPUs" if device_tag == "gpu" else "devices"
    if forced_op is None:
        context = "on %d %s with the compiler's own signatures" % (devices, kind)
    else:
        context = "op '%s' (%s) with SBP signature %s on %d %s" % (
            forced_op.name, forced_op.type, _format_signature(signature), devices, kind)
    tolerances = GPU_TOLERANCE if device_tag == "gpu" else None
    try:
        run = run_job(flow_fn, inputs, differentiable, weight, train, device_count=devices,
                      required_sbp=None if forced_op is None else {forced_op.name: signature},
                      device_tag=device_tag)
        if forced_op is not None:
            chosen = {op.name: op.signature for op in run.ops}
            assert forced_op.name in chosen, "flow_fn added no op named '%s' this time" % (
                forced_op.name)
            assert chosen[forced_op.name] == signature, "the op took %s instead" % (
                _format_signature(chosen[forced_op.name]))
        expected_output, expected_gradients = reference
        _assert_same_numbers(run.output, expected_output, "forward output", tolerances)
        assert sorted(run.gradients) == sorted(expected_gradients), (
            "gradients of inputs %s, single device %s" % (
                sorted(run.gradients), sorted(expected_gradients)))
        for index, gradient in sorted(expected_gradients.items()):
            _assert_same_numbers(run.gradients[index], gradient, "gradient of input %d" % index,
                                 tolerances)
    except Exception as error:
        what = "GPU pass" if device_tag == "gpu" else "multi-device pass"
        raise AssertionError("%s: %s does not give the single-device CPU numbers:"
                             "\n%s: %s" % (what, context, type(error).__name__, error)) from error
    return run


def check_multi_device(flow_fn, inputs, reference, differentiable=(), weight=None, train=True,
                       device_counts=None, device_tag="cpu"):
    """The multi-device pass (module docstring) of a check: `reference` is the single-device
    (forward output, {input index: gradient}); device_counts defaults to MULTI_DEVICE_COUNTS.
    Returns a MultiDeviceRun per (device count, op, signature) it ran."""
    runs = []
    for devices in MULTI_DEVICE_COUNTS if device_counts is None else device_counts:
        # This run also tells flow_fn's op names (deterministic) and their candidates.
        first = _check_multi_device_run(
            flow_fn, inputs, reference, differentiable, weight, train, devices,
            device_tag=device_tag)
        runs.extend(MultiDeviceRun(devices, op.name, op.type, op.signature, False)
                    for op in first.ops)
        if devices == 1:
            continue  # one device holds whole blobs under any signature: there is none to force
        for op in first.ops:
            for signature in op.candidates:
                if signature == op.signature:
                    continue  # the first run covered it
                _check_multi_device_run(flow_fn, inputs, reference, differentiable, weight,
                                        train, devices, op, signature, device_tag)
                runs.append(MultiDeviceRun(devices, op.name, op.type, signature, True))
    flow.clear_default_session()  # the caller goes on in a plain session, as after run_op
    return runs


def check_op(
    flow_fn,
    numpy_fn,
    input_shapes=None,
    dtype=flow.float64,
    inputs=None,
    check_backward=None,
    differentiable=None,
    weight_output=False,
    low=-1.0,
    high=1.0,
    seed=0,
    forward_tolerance=None,
    backward_tolerance=None,
    multi_device=True,
):
    """Checks flow_fn against numpy_fn: forward always, backward for float64 inputs.

    flow_fn(*blobs) -> blob and numpy_fn(*arrays) -> array compute the same op.
    input_shapes: shapes of random inputs of `dtype` (uniform in [low, high)), or
    inputs: explicit numpy arrays (their dtypes are the placeholders' dtypes; integer inputs,
        such as labels, get no variable and no gradient).
    check_backward: default True when every differentiable input is float64.
    differentiable: indices of inputs to check gradients of (default: every float input).
    weight_output: loss = output * random weight instead of the output itself.
    multi_device: then run the multi-device pass (module docstring) against this run's numbers.
    Returns (forward output, {input index: gradient}) for extra assertions.
    """
    if inputs is None:
        inputs = random_inputs(input_shapes, dtype, seed=seed, low=low, high=high)
    inputs = [np.asarray(a) for a in inputs]
    float_inputs = [i for i, a in enumerate(inputs) if a.dtype in FLOAT_DTYPES]
    if differentiable is None:
        differentiable = float_inputs
    differentiable = list(differentiable)
    if check_backward is None:
        check_backward = bool(differentiable) and all(
            inputs[i].dtype == np.float64 for i in differentiable
        )

    expected = np.asarray(numpy_fn(*[a.copy() for a in inputs]))  # numpy_fn may mutate
    weight = None
    # A 0-d output needs no weight: a ones seed on one element loses nothing.
    if check_backward and weight_output and expected.ndim > 0:
        rng = np.random.RandomState(seed + 1)
        weight = rng.uniform(0.5, 2.0, size=expected.shape).astype(expected.dtype)
    train = bool(differentiable) and expected.dtype in FLOAT_DTYPES
    actual, gradients = run_op(flow_fn, inputs, differentiable, weight, train=train)
    if expected.ndim == 0 and actual.shape == (1,):
        expected = expected.reshape(1)  # OneFlow 0.3 reduces every axis to shape (1,)

    assert actual.shape == expected.shape, "forward shape %s, expected %s" % (
        actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, "forward dtype %s, expected %s" % (
        actual.dtype, expected.dtype)
    tolerance = forward_tolerance or FORWARD_TOLERANCE.get(actual.dtype, dict(rtol=0, atol=0))
    np.testing.assert_allclose(actual, expected, err_msg="forward", **tolerance)

    if check_backward:
        expected_gradients = finite_difference_gradients(
            numpy_fn, inputs, differentiable, 1.0 if weight is None else weight
        )
        tolerance = backward_tolerance or BACKWARD_TOLERANCE
        for index in differentiable:
            assert index in gradients, "watch_diff of input %d was never called" % index
            assert gradients[index].shape == inputs[index].shape
            np.testing.assert_allclose(
                gradients[index], expected_gradients[index],
                err_msg="gradient of input %d" % index, **tolerance,
            )
    if DEVICE == "gpu":
        check_gpu(flow_fn, inputs, (actual, gradients), differentiable, weight, train,
                  multi_device)
    elif multi_device:
        check_multi_device(flow_fn, inputs, (actual, gradients), differentiable, weight, train)
    return actual, gradients


def check_gpu(flow_fn, inputs, reference, differentiable=(), weight=None, train=True,
              multi_device=True):
    """The GPU pass (module docstring): flow_fn's ops on one GPU, then (multi_device) on 2..4 of
    the GPUs in use with every SBP candidate, against `reference`, the CPU single-device
    (forward output, {input index: gradient})."""
    gpus = flow.sysconfig.gpus_in_use()
    counts = [1] + ([n for n in MULTI_DEVICE_COUNTS if n <= gpus] if multi_device else [])
    return check_multi_device(flow_fn, inputs, reference, differentiable, weight, train,
                              device_counts=counts, device_tag="gpu")
