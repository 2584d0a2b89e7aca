"""Calling a global function: inputs captured at call time, Tuple arguments, and results
checked against their annotation (OneFlow 0.3's typing rules)."""
from typing import Dict, List, Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

F32 = np.float32


# ---- inputs are read at call time ----

def test_callback_calls_see_the_buffer_as_it_was_at_each_call():
    """A loader that refills one buffer: each asynchronous call must use that call's data."""

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4,))) -> tp.Callback[tp.Numpy]:
        return flow.identity(x)

    buffer = np.zeros(4, F32)
    received = {}
    for step in range(50):
        buffer[:] = step
        job(buffer)(lambda result, step=step: received.__setitem__(step, result.copy()))
    flow.sync_default_session()
    assert sorted(received) == list(range(50))
    for step, result in received.items():
        np.testing.assert_array_equal(result, np.full(4, step, F32))


def test_future_calls_see_the_buffer_as_it_was_at_each_call():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))):  # un-annotated: returns a future
        return flow.identity(x)

    buffer = np.zeros(3, F32)
    futures = []
    for step in range(20):
        buffer[:] = step
        futures.append(job(buffer))
    buffer[:] = -1
    for step, future in enumerate(futures):
        np.testing.assert_array_equal(future.get().numpy(), np.full(3, step, F32))


def test_tuple_argument_items_are_captured_too():
    @flow.global_function()
    def job(xs: Tuple[tp.Numpy.Placeholder((2,)), tp.Numpy.Placeholder((2,))]) \
            -> tp.Callback[tp.Numpy]:
        return xs[0] - xs[1]

    a, b = np.zeros(2, F32), np.zeros(2, F32)
    received = []
    for step in range(10):
        a[:], b[:] = 3 * step, step
        job((a, b))(received.append)
    flow.sync_default_session()
    assert [float(r[0]) for r in received] == [2.0 * step for step in range(10)]


# ---- -> None and results checked against the annotation ----

def test_job_annotated_none_returns_none():
    seen = []

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> None:
        flow.watch(x * 2, lambda value: seen.append(value))

    assert job(np.ones(2, F32)) is None
    assert len(seen) == 1  # the call has completed when it returns


@pytest.mark.parametrize("annotation, make_result, expected", [
    (None, lambda x: x, "None"),
    (tp.Numpy, lambda x: (x, x), "a blob"),
    (tp.Numpy, lambda x: [x], "a blob"),
    (tp.ListNumpy, lambda x: {"x": x}, "a blob"),
    (Tuple[tp.Numpy, tp.Numpy], lambda x: x, "a tuple of 2 items"),
    (Tuple[tp.Numpy, tp.Numpy], lambda x: (x, x, x), "a tuple of 2 items"),
    (Tuple[tp.Numpy, tp.Numpy], lambda x: [x, x], "a tuple of 2 items"),
    (Tuple[tp.Numpy, Tuple[tp.Numpy, tp.Numpy]], lambda x: (x, x), "a tuple of 2 items"),
    (List[tp.Numpy], lambda x: (x,), "a list"),
    (Dict[str, tp.Numpy], lambda x: [x], "a dict"),
    (Dict[str, tp.Numpy], lambda x: {1: x}, "a key of type str"),
    (tp.Callback[Tuple[tp.Numpy]], lambda x: x, "a tuple of 1 items"),
    (tp.Bundle[tp.Numpy], lambda x: 3, "a blob or a tuple, list or dict of blobs"),
    (tp.Bundle[tp.Numpy], lambda x: None, "a blob or a tuple, list or dict of blobs"),
])
def test_result_that_does_not_match_its_annotation_is_a_type_error(annotation, make_result,
                                                                   expected):
    def mismatched_job(x: tp.Numpy.Placeholder((2,))):
        return make_result(x)

    mismatched_job.__annotations__["return"] = annotation
    job = flow.global_function()(mismatched_job)
    with pytest.raises(TypeError, match=r"job 'mismatched_job'.*expected %s" % expected):
        job(np.ones(2, F32))


@pytest.mark.parametrize("annotation", [
    int, List[tp.Numpy.Placeholder((2,))], Tuple[()], tp.Bundle[int],
    tp.Callback[int], Dict[str, str],
])
def test_unsupported_return_annotation_fails_at_declaration(annotation):
    def bad_annotation(x: tp.Numpy.Placeholder((2,))):
        return x

    bad_annotation.__annotations__["return"] = annotation
    with pytest.raises(TypeError, match="job 'bad_annotation'"):
        flow.global_function()(bad_annotation)


# ---- Tuple arguments and nested results ----

def test_tuple_of_placeholders_argument():
    """OneFlow 0.3's add_n tests: `xs: Tuple[(tp.Numpy.Placeholder(shape),) * n]`."""
    received = []

    @flow.global_function()
    def job(xs: Tuple[(tp.Numpy.Placeholder((5, 2)),) * 3]) -> tp.Numpy:
        received.append(xs)
        return xs[0] + xs[1] * 2 + xs[2] * 3

    arrays = [np.random.RandomState(i).rand(5, 2).astype(F32) for i in range(3)]
    np.testing.assert_allclose(job(tuple(arrays)), arrays[0] + 2 * arrays[1] + 3 * arrays[2],
                               rtol=1e-6)
    (xs,), = [received]
    assert isinstance(xs, tuple) and len(xs) == 3
    assert all(isinstance(x, flow.LazyBlob) and x.shape == (5, 2) for x in xs)


def test_nested_tuple_argument_next_to_a_plain_one():
    @flow.global_function()
    def job(scale: tp.Numpy.Placeholder((1,)),
            pairs: Tuple[tp.Numpy.Placeholder((2,)),
                         Tuple[tp.Numpy.Placeholder((2,)), tp.Numpy.Placeholder((2,))]]) \
            -> tp.Numpy:
        first, (second, third) = pairs
        return (first + second + third) * scale

    ones = np.ones(2, F32)
    np.testing.assert_allclose(job(np.array([2.0], F32), (ones, (2 * ones, 3 * ones))),
                               12 * ones)
    np.testing.assert_allclose(job(scale=np.array([1.0], F32), pairs=[ones, [ones, ones]]),
                               3 * ones)


@pytest.mark.parametrize("value, message", [
    ((np.ones(2, F32),), r"argument 'xs': expected a tuple of 2 values"),
    (np.ones(2, F32), r"argument 'xs': expected a tuple of 2 values"),
    ((np.ones(2, F32), np.ones(3, F32)), r"argument 'xs\[1\]': expected shape \(2,\)"),
])
def test_tuple_argument_with_wrong_items_names_the_item(value, message):
    @flow.global_function()
    def job(xs: Tuple[tp.Numpy.Placeholder((2,)), tp.Numpy.Placeholder((2,))]) -> tp.Numpy:
        return xs[0] + xs[1]

    with pytest.raises(ValueError, match="job 'job', " + message):
        job(value)
    np.testing.assert_allclose(job((np.ones(2, F32), np.ones(2, F32))), [2, 2])


def test_tuple_argument_needs_placeholders():
    @flow.global_function()
    def job(xs: Tuple[tp.Numpy.Placeholder((2,)), int]) -> tp.Numpy:
        return xs[0]

    with pytest.raises(TypeError, match=r"job 'job': argument 'xs\[1\]' must be annotated"):
        job((np.ones(2, F32), 1))


X = np.array([1.0, 2.0], F32)


def nested_job_result(x):
    return x, (x + 1, x + 2, x + 3)


NESTED = Tuple[tp.Numpy, Tuple[tp.Numpy, tp.ListNumpy, tp.ListListNumpy]]


def check_nested(result):
    assert isinstance(result, tuple) and len(result) == 2
    first, (second, third, fourth) = result
    np.testing.assert_array_equal(first, X)
    np.testing.assert_array_equal(second, X + 1)
    assert isinstance(third, list) and len(third) == 1
    np.testing.assert_array_equal(third[0], X + 2)
    assert isinstance(fourth, list) and isinstance(fourth[0], list) and len(fourth[0]) == 1
    np.testing.assert_array_equal(fourth[0][0], X + 3)


def test_nested_tuple_result_with_every_kind():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> NESTED:
        return nested_job_result(x)

    check_nested(job(X))


def test_callback_of_a_nested_tuple_result():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[NESTED]:
        return nested_job_result(x)

    received = []
    job(X)(received.append)
    flow.sync_default_session()
    assert len(received) == 1
    check_nested(received[0])


def test_list_and_dict_results():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> Dict[str, List[tp.ListNumpy]]:
        return {"a": [x, x * 2], "b": []}

    result = job(X)
    assert set(result) == {"a", "b"} and result["b"] == []
    np.testing.assert_array_equal(result["a"][1][0], 2 * X)


@pytest.mark.parametrize("kind, unwrap", [
    (tp.Numpy, lambda value: value),
    (tp.ListNumpy, lambda value: value[0]),
    (tp.ListListNumpy, lambda value: value[0][0]),
])
def test_bundle_result_keeps_the_nesting(kind, unwrap):
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Bundle[kind]:
        return [x, (x + 1, {"two": x + 2})]

    first, (second, named) = job(X)
    np.testing.assert_array_equal(unwrap(first), X)
    np.testing.assert_array_equal(unwrap(second), X + 1)
    np.testing.assert_array_equal(unwrap(named["two"]), X + 2)

    @flow.global_function()
    def single(x: tp.Numpy.Placeholder((2,))) -> tp.Bundle[kind]:
        return x

    np.testing.assert_array_equal(unwrap(single(X)), X)


def test_current_global_function_desc_says_whether_the_job_trains():
    seen = {}

    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        seen["train"] = flow.current_global_function_desc().IsTrainable()
        w = flow.get_variable("w", shape=(1,), initializer=flow.constant_initializer(1.0))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(w)
        return w

    @flow.global_function()
    def predict() -> tp.Numpy:
        seen["predict"] = flow.current_global_function_desc().IsTrainable()
        return flow.constant(1.0, shape=(1,))

    train()
    predict()
    assert seen == {"train": True, "predict": False}
    with pytest.raises(RuntimeError, match="inside a global function"):
        flow.current_global_function_desc()


def test_arguments_declared_the_older_way_with_tensor_defs():
    """OneFlow's older spelling (OneFlow-Benchmark's dcgan.py): placeholders as default values,
    `x=flow.FixedTensorDef(shape, dtype)`, and MirroredTensorDef for one value per device."""
    @flow.global_function()
    def add(x=flow.FixedTensorDef((2, 3)), y=flow.FixedTensorDef((3,), dtype=flow.float64)):
        return x + flow.cast(y, flow.float32)

    x, y = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float64)
    np.testing.assert_array_equal(add(x, y).get().numpy(), x + y)
    with pytest.raises(TypeError, match="job 'add': missing a value for argument 'y'"):
        add(x)

    flow.clear_default_session()
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=config)
    def double(x=flow.MirroredTensorDef((2, 3))):
        return x * 2

    out = double([x]).get().numpy_list()
    assert len(out) == 1
    np.testing.assert_array_equal(out[0], 2 * x)


def test_local_blob_reductions_are_numpy_scalars():
    """Scripts compute metrics on what .get() returns (OneFlow's DCGAN: `loss.mean()` printed and
    summed); as on OneFlow 0.3's ndarray those are numpy scalars."""
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))):
        return x * 2

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    blob = job(x).get()
    mean = blob.mean()
    assert type(mean) is np.float32 and mean == pytest.approx(5.0)
    assert {mean: "hashable"}[mean] == "hashable"
    assert type(blob.argmax()) is np.int64 and blob.argmax() == 5
    assert type(np.sum(blob)) is np.float32 and np.sum(blob) == 30
    np.testing.assert_array_equal(blob.sum(axis=0), [6, 10, 14])
    np.testing.assert_array_equal(blob.numpy(), 2 * x)


def test_tensor_lists_of_several_tensors_are_refused_clearly():
    """ListListNumpy with several arrays per device (a tensor list, OneFlow 0.3's image tests)
    is not supported: the error says so, whatever the arrays' shapes."""
    config = flow.FunctionConfig()
    config.default_logical_view(flow.scope.mirrored_view())

    @flow.global_function(function_config=config)
    def job(x: tp.ListListNumpy.Placeholder((2, 4, 5, 3))):
        return x

    for images in ([np.ones((1, 4, 5, 3), np.float32)] * 2,
                   [np.ones((1, 4, 5, 3), np.float32), np.ones((1, 3, 2, 3), np.float32)]):
        with pytest.raises(NotImplementedError, match="tensor lists of more than one tensor per "
                                                      "device are not supported"):
            job([images])


def test_a_callback_that_is_not_callable_is_refused_at_once():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x + 1

    with pytest.raises(TypeError, match=r"job 'job': the callback for its result must be "
                                        r"callable .*got 5"):
        job(np.ones(2, F32))(5)
    flow.sync_default_session()  # the call itself ran; nothing more is raised
    received = []
    job(np.ones(2, F32))(received.append)
    flow.sync_default_session()
    np.testing.assert_array_equal(received[0], [2, 2])
