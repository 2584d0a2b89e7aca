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
"""
import numpy as np

import oneflow as flow
import oneflow.typing as tp

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# Forward tolerances by output dtype; backward (float64 only) against finite differences.
FORWARD_TOLERANCE = {
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-6),
    np.dtype(np.float64): dict(rtol=1e-10, atol=1e-12),
}
BACKWARD_TOLERANCE = dict(rtol=1e-5, atol=1e-7)
FINITE_DIFFERENCE_STEP = 1e-6


_FLOW_DTYPES = {
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
    the placeholder blobs and returns the blob to give back as tp.Numpy."""
    placeholders = [
        tp.Numpy.Placeholder(a.shape, dtype=flow_dtype(a.dtype)) for a in input_arrays
    ]
    names = ["input_%d" % i for i in range(len(placeholders))]
    namespace = {"body": body}
    source = "def check_op_job(%s):\n    return body(%s)\n" % (", ".join(names), ", ".join(names))
    exec(source, namespace)  # a real signature with one annotated parameter per input
    function = namespace["check_op_job"]
    function.__annotations__ = dict(zip(names, placeholders))
    function.__annotations__["return"] = tp.Numpy
    return flow.global_function(type="train" if is_train else "predict")(function)


def run_op(flow_fn, input_arrays, differentiable=(), weight=None, train=True):
    """Runs flow_fn in one job; returns (forward output, {input index: gradient})."""
    flow.clear_default_session()
    gradients = {}
    arrays = list(input_arrays) + ([] if weight is None else [weight])

    def body(*blobs):
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
        out = flow_fn(*inputs)
        if train:
            loss = out if weight is None else out * blobs[-1]
            flow.optimizer.SGD(
                flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0
            ).minimize(loss)
        return out

    job = _placeholder_job(arrays, body, train)
    result = job(*arrays)
    return np.asarray(result), gradients


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
):
    """Checks flow_fn against numpy_fn: forward always, backward for float64 inputs.

    flow_fn(*blobs) -> blob and numpy_fn(*arrays) -> array compute the same op.
    input_shapes: shapes of random inputs of `dtype` (uniform in [low, high)), or
    inputs: explicit numpy arrays (their dtypes are the placeholders' dtypes; integer inputs,
        such as labels, get no variable and no gradient).
    check_backward: default True when every differentiable input is float64.
    differentiable: indices of inputs to check gradients of (default: every float input).
    weight_output: loss = output * random weight instead of the output itself.
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
    return actual, gradients
