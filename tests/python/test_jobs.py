"""Jobs in one session: shared variables, jobs defined after others ran, result annotations
(tp.Numpy, tp.Callback[tp.Numpy], none: a future) and flow.watch."""
from typing import Tuple

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

SHAPE = (3,)
X = np.array([1.0, 2.0, 3.0], np.float32)


def variable():
    return flow.get_variable("shared", shape=SHAPE, initializer=flow.constant_initializer(2.0))


def define_train(sgd, lr=0.3):
    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        loss = x * variable()  # d loss / d v = x, scaled by 1/3
        sgd(lr).minimize(loss)
        return loss

    return train


def define_predict():
    @flow.global_function()
    def predict(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        return x * variable()

    return predict


def trained_value(steps, lr=0.3):
    return 2.0 - steps * lr * X / 3


def test_two_jobs_share_a_variable(sgd):
    train = define_train(sgd)
    predict = define_predict()
    np.testing.assert_allclose(predict(X), X * 2.0, rtol=1e-6)
    train(X)
    train(X)
    np.testing.assert_allclose(predict(X), X * trained_value(2), rtol=1e-6)


def test_jobs_may_name_one_variable_placement_differently(sgd):
    flow.config.cpu_device_num(2)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-0"):
            loss = x * variable()
            sgd(0.3).minimize(loss)
        return loss

    @flow.global_function()
    def predict(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        with flow.scope.placement("cpu", ["0:0"]):
            return x * variable()

    train(X)
    np.testing.assert_allclose(predict(X), X * trained_value(1), rtol=1e-6)

    @flow.global_function()
    def elsewhere(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:1"):
            return x * variable()

    with pytest.raises(ValueError, match="jobs sharing a variable must place it alike"):
        elsewhere(X)


def test_job_defined_after_a_call(sgd):
    train = define_train(sgd)
    first_loss = train(X)
    np.testing.assert_allclose(first_loss, X * 2.0, rtol=1e-6)

    predict = define_predict()  # defined after the session started running
    np.testing.assert_allclose(predict(X), X * trained_value(1), rtol=1e-6)

    # The train job still works and continues from the trained value.
    loss = train(X)
    np.testing.assert_allclose(loss, X * trained_value(1), rtol=1e-6)
    np.testing.assert_allclose(predict(X), X * trained_value(2), rtol=1e-6)


def test_two_late_jobs_with_their_own_variables(sgd):
    train = define_train(sgd)
    train(X)

    @flow.global_function()
    def other(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        return x + flow.get_variable("late", shape=SHAPE, initializer=flow.constant_initializer(5.0))

    np.testing.assert_allclose(other(X), X + 5.0)
    np.testing.assert_allclose(define_predict()(X), X * trained_value(1), rtol=1e-6)


def test_same_job_name_twice_is_an_error():
    define_predict()
    with pytest.raises(ValueError, match="predict"):
        define_predict()


def test_callback_result():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Callback[tp.Numpy]:
        return x * 3

    received = []
    for scale in (1.0, 2.0):
        job(X * scale)(received.append)
    flow.sync_default_session()
    assert len(received) == 2
    for value, scale in zip(received, (1.0, 2.0)):
        assert isinstance(value, np.ndarray)
        np.testing.assert_allclose(value, X * scale * 3)


def test_callback_exception_is_raised_by_sync():
    class CallbackError(Exception):
        pass

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Callback[tp.Numpy]:
        return x

    def callback(value):
        raise CallbackError("from the callback")

    job(X)(callback)
    with pytest.raises(CallbackError, match="from the callback"):
        flow.sync_default_session()
    flow.sync_default_session()  # reported once


def test_unannotated_result_is_a_future():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)):
        return x + 1

    future = job(X)
    assert not isinstance(future, np.ndarray)
    np.testing.assert_allclose(future.get().numpy(), X + 1)


def test_tuple_and_dict_results():
    # A mixed nesting is a Bundle (OneFlow 0.3); a bare tp.Numpy would be a blob only.
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Bundle[tp.Numpy]:
        return x + 1, {"double": x * 2}

    plus_one, named = job(X)
    np.testing.assert_allclose(plus_one, X + 1)
    np.testing.assert_allclose(named["double"], X * 2)


def test_watch_delivers_numpy():
    seen = []

    def handler(value: tp.Numpy):
        seen.append(value)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        y = flow.math.square(x)
        flow.watch(y, handler)
        return y + 1

    out = job(X)
    assert len(seen) == 1
    assert isinstance(seen[0], np.ndarray)
    np.testing.assert_allclose(seen[0], X * X)
    np.testing.assert_allclose(out, X * X + 1)
    job(2 * X)
    assert len(seen) == 2
    np.testing.assert_allclose(seen[1], 4 * X * X)


def test_watch_unannotated_handler_gets_a_local_blob():
    seen = []

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        flow.watch(x, seen.append)
        return x

    job(X)
    np.testing.assert_allclose(seen[0].numpy(), X)


def test_watch_diff_of_variable_sees_unscaled_gradient(sgd):
    seen = []

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Numpy:
        v = variable()
        flow.watch_diff(v, lambda diff: seen.append(np.array(diff)))
        loss = x * v
        sgd(0.0).minimize(loss)
        return loss

    train(X)
    np.testing.assert_allclose(seen[0], X)  # not X / 3: the 1/elem_cnt scaling comes later


def test_job_of_a_cleared_session_refuses_to_run():
    predict = define_predict()
    predict(X)
    flow.clear_default_session()
    with pytest.raises(RuntimeError, match="clear_default_session"):
        predict(X)


def test_many_calls_in_flight_deliver_in_order():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Callback[tp.Numpy]:
        return x * 2

    received = []
    for step in range(12):
        job(X + step)(received.append)
    flow.sync_default_session()
    assert [float(value[0]) for value in received] == [2.0 * (1 + step) for step in range(12)]


def test_callback_with_a_tuple_result():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)) -> tp.Callback[Tuple[tp.Numpy, tp.Numpy]]:
        return x + 1, x * 2

    received = []
    job(X)(received.append)
    flow.sync_default_session()
    (plus_one, double), = received
    np.testing.assert_allclose(plus_one, X + 1)
    np.testing.assert_allclose(double, X * 2)


def test_future_async_get():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(SHAPE)):
        return x - 1

    received = []
    future = job(X)
    future.async_get(received.append)
    flow.sync_default_session()
    np.testing.assert_allclose(received[0].numpy(), X - 1)
    np.testing.assert_allclose(future.get().numpy(), X - 1)  # get() may follow async_get


def test_calls_from_several_python_threads():
    """Tracing, recompiling and launching are serialised; results go to the right caller."""
    import threading

    @flow.global_function()
    def double(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2

    @flow.global_function()
    def triple(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 3

    failures = []

    def worker(index):
        job, factor = (double, 2) if index % 2 == 0 else (triple, 3)
        for step in range(20):
            value = np.full(3, index * 100 + step, np.float32)
            result = job(value)
            if not np.array_equal(result, value * factor):
                failures.append((index, step, result))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_two_watches_of_one_blob_both_fire(sgd):
    """flow.watch and flow.watch_diff twice on the same blob (e.g. flow.cast of a float blob to
    float, which returns the blob itself): every handler gets the value."""
    seen = {}

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2, 3), initializer=flow.ones_initializer())
        same = flow.cast(w, flow.float)
        for key in ("a", "b"):
            flow.watch(same, lambda blob, key=key: seen.setdefault("value_" + key, blob))
            flow.watch_diff(same, lambda blob, key=key: seen.setdefault("diff_" + key,
                                                                          blob.numpy()))
        loss = flow.math.reduce_sum(w * x)
        sgd(0.0).minimize(loss)
        return loss

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    job(x)
    for key in ("a", "b"):
        np.testing.assert_array_equal(seen["value_" + key], np.ones((2, 3), np.float32))
        np.testing.assert_array_equal(seen["diff_" + key], x)
    assert seen["value_a"].is_dynamic is False  # OneFlow 0.3's LocalBlob attribute
