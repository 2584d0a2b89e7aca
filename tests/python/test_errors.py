"""User errors surface as clear Python exceptions naming the facts; afterwards
flow.clear_default_session() and a fresh job work again."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def assert_fresh_job_works():
    flow.clear_default_session()

    @flow.global_function()
    def fresh(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x * 2

    np.testing.assert_allclose(fresh(np.array([1.0, 2.0], np.float32)), [2.0, 4.0])


def identity_job(shape=(2, 3), dtype=flow.float32):
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape, dtype=dtype)) -> tp.Numpy:
        return x + 1

    return job


def test_wrong_placeholder_shape():
    job = identity_job()
    job(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError) as info:
        job(np.zeros((3, 2), np.float32))
    message = str(info.value)
    assert "(2, 3)" in message and "(3, 2)" in message
    assert "expected" in message and "'x'" in message
    np.testing.assert_allclose(job(np.zeros((2, 3), np.float32)), 1.0)  # same session recovers
    assert_fresh_job_works()


def test_placeholder_dtype_conversions_of_the_same_kind_as_oneflow_03():
    # OneFlow 0.3 cast the arrays it was given; here only numpy's same-kind casts are made.
    job = identity_job()
    np.testing.assert_allclose(job(np.full((2, 3), 0.5, np.float64)), 1.5)
    np.testing.assert_allclose(job(np.full((2, 3), 2, np.int32)), 3.0)
    assert_fresh_job_works()


def test_placeholder_dtype_that_would_truncate():
    job = identity_job(dtype=flow.int32)
    with pytest.raises(TypeError) as info:
        job(np.full((2, 3), 1.5, np.float32))
    message = str(info.value)
    assert "int32" in message and "float32" in message and "'x'" in message
    assert_fresh_job_works()


def test_integer_placeholder_dtype():
    job = identity_job(dtype=flow.int32)
    np.testing.assert_array_equal(job(np.full((2, 3), 7, np.int64)), 8)
    with pytest.raises(ValueError, match=r"values in \[0, 4294967296\], outside int32's range"):
        job(np.array([[0, 1, 2], [3, 4, 2 ** 32]], np.int64))
    assert_fresh_job_works()


@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_shape_mismatch(transpose_b):
    @flow.global_function()
    def job(a: tp.Numpy.Placeholder((2, 3)), b: tp.Numpy.Placeholder((4, 5))) -> tp.Numpy:
        return flow.matmul(a, b, transpose_b=transpose_b)

    with pytest.raises(ValueError) as info:
        job(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))
    message = str(info.value)
    assert "matmul" in message
    assert "(2, 3)" in message and "(4, 5)" in message
    assert_fresh_job_works()


def test_broadcast_shape_mismatch():
    @flow.global_function()
    def job(a: tp.Numpy.Placeholder((2, 3)), b: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        return a + b

    with pytest.raises(ValueError) as info:
        job(np.zeros((2, 3), np.float32), np.zeros((4,), np.float32))
    message = str(info.value)
    assert "broadcast" in message and "(2, 3)" in message and "(4,)" in message
    assert_fresh_job_works()


@pytest.mark.parametrize("shape", [(4, 2), (4, -1), (-1, -1)], ids=str)
def test_impossible_reshape(shape):
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.reshape(x, shape)

    with pytest.raises(ValueError) as info:
        job(np.zeros((2, 3), np.float32))
    assert "reshape" in str(info.value) and "(2, 3)" in str(info.value)
    assert_fresh_job_works()


def test_loss_without_variables(sgd):
    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        loss = x * 2
        sgd(0.1).minimize(loss)
        return loss

    with pytest.raises(ValueError, match="variable"):
        job(np.zeros((2, 3), np.float32))
    assert_fresh_job_works()


def test_eager_execution_request_runs_lazily_and_says_so(capfd):
    """Eager mode is not available: asking for it says so once and functions run lazily (the
    mode eager_execution_enabled() reports), so OneFlow 0.3 tests run with
    ONEFLOW_TEST_ENABLE_EAGER=1 still run."""
    import oneflow.typing as tp
    from oneflow import env

    env._state["eager_request_noted"] = False
    flow.enable_eager_execution(True)
    flow.enable_eager_execution(True)
    assert capfd.readouterr().err.count("eager execution is not available") == 1
    assert not flow.eager_execution_enabled()

    @flow.global_function()
    def double(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2

    np.testing.assert_array_equal(double(np.arange(3, dtype=np.float32)), [0, 2, 4])
    flow.enable_eager_execution(False)
    assert not flow.eager_execution_enabled()
    assert_fresh_job_works()


def test_op_outside_a_job():
    with pytest.raises(RuntimeError, match="global_function"):
        flow.get_variable("v", shape=(1,))


def test_runtime_error_of_a_kernel():
    """A label out of range is found while the job runs; the call raises it and the session
    keeps working."""

    @flow.global_function()
    def job(labels: tp.Numpy.Placeholder((2,), dtype=flow.int32),
            logits: tp.Numpy.Placeholder((2, 5))) -> tp.Numpy:
        return flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

    logits = np.zeros((2, 5), np.float32)
    with pytest.raises(ValueError, match="7"):
        job(np.array([1, 7], np.int32), logits)
    np.testing.assert_allclose(job(np.array([1, 4], np.int32), logits), np.log(5), rtol=1e-6)
    assert_fresh_job_works()


def test_error_in_a_trace_leaves_other_jobs_working():
    good = identity_job()

    @flow.global_function()
    def bad(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.reshape(x, (5,))

    with pytest.raises(ValueError, match="reshape"):
        bad(np.zeros((2, 3), np.float32))
    np.testing.assert_allclose(good(np.zeros((2, 3), np.float32)), 1.0)


def test_error_in_a_trace_is_raised_by_the_save_that_compiles_it(tmp_path):
    """OneFlow 0.3's session start (CheckPoint().init() then save) compiled every job and failed
    there; a save never writes a snapshot while a job of the session cannot be built."""
    @flow.global_function(type="train")
    def bad(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        v = flow.get_variable("v", shape=(3,), initializer=flow.zeros_initializer())
        loss = flow.math.reduce_sum(flow.reshape(x + v, (5,)))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
        return loss

    checkpoint = flow.train.CheckPoint()
    checkpoint.init()
    with pytest.raises(ValueError, match="reshape"):
        checkpoint.save(str(tmp_path / "initial"))
    assert not (tmp_path / "initial").exists()
    with pytest.raises(ValueError, match="reshape"):  # the job's own call says it again
        bad(np.zeros((2, 3), np.float32))


def test_zero_dimensional_placeholder():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(())) -> tp.Numpy:
        return x * 2

    np.testing.assert_allclose(job(np.array(1.5, np.float32)), 3.0)


# Exceptions raised by Python handlers while a job runs. These run in a subprocess, because
# the bug marked below aborts the whole interpreter (it would take pytest down with it).
HANDLER_SCRIPT = textwrap.dedent("""
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    class HandlerError(Exception):
        pass

    def handler(value):
        raise HandlerError("raised by the handler")

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        x = x + flow.get_variable("v", shape=(2,), initializer=flow.zeros_initializer())
        flow.{watch}(x, handler)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                           momentum=0).minimize(x)
        return x

    try:
        job(np.zeros(2, np.float32))
        print("no exception", flush=True)
    except HandlerError as error:
        print("re-raised:", error, flush=True)
    flow.clear_default_session()

    @flow.global_function()
    def fresh(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x * 2

    print("fresh job:", fresh(np.array([1.0, 2.0], np.float32)).tolist(), flush=True)
""")


def run_handler_script(watch):
    return subprocess.run([sys.executable, "-c", HANDLER_SCRIPT.format(watch=watch)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("watch", ["watch", "watch_diff"])
def test_handler_exception_is_reraised_from_the_call(watch):
    result = run_handler_script(watch)
    assert "re-raised: raised by the handler" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("watch", ["watch", "watch_diff"])
def test_session_recovers_after_a_handler_exception(watch):
    result = run_handler_script(watch)
    assert result.returncode == 0, result.stderr
    assert "fresh job: [2.0, 4.0]" in result.stdout


FUTURE_SCRIPT = textwrap.dedent("""
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    class HandlerError(Exception):
        pass

    def handler(value):
        raise HandlerError("raised by the handler")

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))):
        flow.watch(x, handler)
        return x

    future = job(np.zeros(2, np.float32))
    for attempt in range(2):
        try:
            future.get()
        except HandlerError:
            print("get raised", attempt, flush=True)
""")


def test_future_get_twice_after_a_handler_exception():
    result = subprocess.run([sys.executable, "-c", FUTURE_SCRIPT], capture_output=True,
                            text=True, timeout=120)
    assert "get raised 0" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    assert "get raised 1" in result.stdout


@pytest.mark.parametrize("expression", [lambda x: x * 0.5, lambda x: x + 0.25, lambda x: x / 2])
def test_integer_blob_with_fractional_scalar_is_a_type_error(expression):
    """An int blob times 0.5 must not silently truncate the scalar to 0."""

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return expression(x)

    with pytest.raises(TypeError, match="int32"):
        job(np.arange(3, dtype=np.int32))
    flow.clear_default_session()

    @flow.global_function()
    def fine(x: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return x * 2.0 + 1

    np.testing.assert_array_equal(fine(np.arange(3, dtype=np.int32)), [1, 3, 5])


def test_reading_a_traced_blob_value_says_there_is_no_eager_mode():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        y = x + 1.0
        y.numpy(0)
        return y

    with pytest.raises(NotImplementedError,
                       match=r"LazyBlob.numpy\(\): blob '.*' has no value while its global "
                             r"function is being traced; eager execution is not available"):
        job(np.zeros(3, np.float32))


def test_an_op_outside_a_global_function_is_refused_as_oneflow_did():
    # OneFlow 0.3 raised NotImplementedError (no variant of the op for "normal mode"); it is
    # also a RuntimeError.
    flow.clear_default_session()
    for make in (lambda: flow.losses.add_loss(None),
                 lambda: flow.constant(1.0, shape=(2,), dtype=flow.float32)):
        with pytest.raises(NotImplementedError,
                           match="can only be created inside a function decorated with "
                                 "@flow.global_function"):
            make()


@pytest.mark.parametrize("setter", ["cpu_device_num", "gpu_device_num"])
def test_device_counts_are_checked_when_set(setter):
    flow.clear_default_session()
    with pytest.raises(ValueError, match=r"%s must be a positive int, got -1" % setter):
        getattr(flow.config, setter)(-1)
    with pytest.raises(ValueError, match=r"%s\(1000000\): at most 64 devices per machine" % setter):
        getattr(flow.config, setter)(1000000)
    flow.clear_default_session()


def test_device_counts_take_numpy_integers_and_refuse_other_types():
    flow.clear_default_session()
    flow.config.cpu_device_num(np.int64(2))

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        return x * 2.0

    np.testing.assert_array_equal(job(np.arange(4, dtype=np.float32)), np.arange(4) * 2.0)
    flow.clear_default_session()
    for bad in ("2", 2.0, True, None):
        with pytest.raises(TypeError, match=r"cpu_device_num must be a positive int, got"):
            flow.config.cpu_device_num(bad)
    flow.clear_default_session()


def test_a_blob_has_no_truth_value_while_traced():
    """`if x > 100:` inside a job would always take one branch (the value exists only when the
    job runs); it raises instead, and `is None` tests still work."""
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        if x > 100:
            return x * 0.0
        return x

    with pytest.raises(TypeError, match="has no truth value while its global function is "
                                        "traced.*flow.where"):
        job(np.ones(2, np.float32))

    flow.clear_default_session()

    @flow.global_function()
    def with_none_test(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        bias = None
        return x if bias is None else x + bias

    np.testing.assert_array_equal(with_none_test(np.ones(2, np.float32)), np.ones(2))


def test_a_numpy_array_is_not_an_operand_of_a_blob_but_a_numpy_scalar_is():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return np.float32(2) * x + np.int64(1)

    np.testing.assert_array_equal(job(np.array([1, 2], np.float32)), [3, 5])
    flow.clear_default_session()

    @flow.global_function()
    def with_array(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return np.ones(2, np.float32) + x  # numpy defers to the blob, which refuses arrays

    with pytest.raises(TypeError, match="broadcast_add: operands must be blobs or numbers, got "
                                        "ndarray"):
        with_array(np.ones(2, np.float32))


def test_calls_and_signatures_that_do_not_fit_say_why():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
        return x + 1.0

    with pytest.raises(ValueError, match="job 'job', argument 'x': a list of 2 items is not an "
                                         "array"):
        job([[1.0] * 3, [1.0]])
    with pytest.raises(TypeError, match="job 'job': got an unexpected keyword argument 'y' "
                                        r"\(its parameters: x\)"):
        job(y=np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(job(x=np.ones((4, 3), np.float32)), np.full((4, 3), 2.0))
    flow.clear_default_session()

    def keyword_only(*, x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x

    def variadic(*xs: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return xs[0]

    for function, kind in [(keyword_only, "keyword-only"), (variadic, "variadic positional")]:
        flow.clear_default_session()
        job = flow.global_function()(function)
        with pytest.raises(TypeError, match="parameter '.*' is %s; a global function takes one "
                                            "placeholder per ordinary parameter" % kind):
            job(np.ones(2, np.float32)) if kind != "keyword-only" else job(
                x=np.ones(2, np.float32))


def test_env_settings_are_checked_when_set(tmp_path):
    for setter, bad, error, words in [
            ("ctrl_port", "abc", TypeError, "port must be an int"),
            ("ctrl_port", -5, ValueError, r"port must be in \[1, 65535\], got -5"),
            ("data_port", 70000, ValueError, r"port must be in .*, got 70000"),
            ("rendezvous_timeout", "abc", TypeError, "seconds must be a number"),
            ("rendezvous_timeout", -1, ValueError, "seconds must be positive and finite, got -1"),
            ("heartbeat_timeout", float("nan"), ValueError,
             "seconds must be positive and finite, got nan"),
            ("log_dir", None, TypeError, "path must be a str"),
    ]:
        with pytest.raises(error, match="flow.env.%s: %s" % (setter, words)):
            getattr(flow.env, setter)(bad)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    with pytest.raises(ValueError, match="flow.env.log_dir: .* exists and is not a directory"):
        flow.env.log_dir(str(a_file))
    with pytest.raises(ValueError, match="flow.env.log_dir: cannot create the directory "
                                         "'.*a_file/logs': Not a directory"):
        flow.env.log_dir(str(a_file / "logs"))
    with pytest.raises(TypeError, match=r"flow.env.machine: machine 1 must be .* or a host name, "
                                        r"got 5"):
        flow.env.machine([{"addr": "127.0.0.1"}, 5])
    with pytest.raises(TypeError, match=r"parallel_cast: distribute: expected a flow.distribute "
                                        r"value .*, got 'S\(0\)'"):
        _trace(lambda x: flow.parallel_cast(x, distribute="S(0)"))


def _trace(body):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return body(x)

    return job(np.ones(2, np.float32))


def test_a_blob_of_another_job_is_refused():
    # Blobs are names inside their job: the other job's 'ScalarOp_0/out_0' was silently this
    # job's op of the same name.
    saved = {}

    @flow.global_function()
    def first(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        saved["y"] = flow.math.relu(x) * 100
        return saved["y"]

    @flow.global_function()
    def second(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x * 1 + saved["y"]

    np.testing.assert_array_equal(first(np.array([1, 2], np.float32)), [100, 200])
    with pytest.raises(ValueError, match=r"input 'y' is blob 'ScalarOp_0/out_0' of job 'first', "
                                         r"but job 'second' is being traced"):
        second(np.array([1, 2], np.float32))


def test_a_timeline_that_cannot_be_written_is_reported_and_the_next_session_works(
        tmp_path, monkeypatch):
    from oneflow import env

    monkeypatch.setitem(env._state, "log_dir", None)  # restored after the test
    logs = tmp_path / "logs"
    flow.env.log_dir(str(logs))
    logs.rmdir()
    logs.write_text("")  # now a file where the folder was
    flow.config.collect_act_event(True)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return flow.math.relu(x)

    job(np.ones(2, np.float32))
    with pytest.raises(RuntimeError):
        flow.clear_default_session()
    flow.env.log_dir(str(tmp_path))

    @flow.global_function()
    def after(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x + 1

    np.testing.assert_array_equal(after(np.ones(2, np.float32)), [2, 2])
