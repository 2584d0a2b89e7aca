"""Checkpoints: flow.checkpoint.save/get, flow.load_variables, flow.get_all_variables,
flow.assign and the legacy flow.train.CheckPoint, in OneFlow 0.3's on-disk layout.

Expected values come from numpy arrays the tests set and from uninterrupted training runs, never
from the implementation."""
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow import checkpoint as checkpoint_module

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(flow.__file__)))
SUBPROCESS_TIMEOUT = 120


def define_reader(name, shape, dtype=flow.float32, devices="0:0", distribute=None,
                  job_name=None):
    """A predict job returning variable `name` (constant-initialised to 0.5)."""

    def reader() -> tp.Numpy:
        with flow.scope.placement("cpu", devices):
            return flow.get_variable(name, shape=shape, dtype=dtype, distribute=distribute,
                                     initializer=flow.constant_initializer(0.5))

    reader.__name__ = job_name or "read_" + name.replace("-", "_")
    return flow.global_function()(reader)


def define_two_variables():
    @flow.global_function()
    def read_both() -> tp.Numpy:
        a = flow.get_variable("a", shape=(2, 3), initializer=flow.constant_initializer(1.0))
        b = flow.get_variable("b", shape=(4,), dtype=flow.float64,
                              initializer=flow.constant_initializer(2.0))
        return flow.math.reduce_sum(a) + flow.cast(flow.math.reduce_sum(b), flow.float32)

    return read_both


A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
B = np.array([0.25, -1.0, 3.5, 8.0], dtype=np.float64)


# ---- layout -------------------------------------------------------------------------------------

def test_save_writes_oneflow_layout(tmp_path):
    define_two_variables()
    flow.load_variables({"a": A, "b": B})
    path = tmp_path / "model"
    flow.checkpoint.save(str(path))
    assert sorted(os.listdir(path)) == ["a", "b", "snapshot_done"]
    assert os.path.getsize(path / "snapshot_done") == 0
    assert sorted(os.listdir(path / "a")) == ["meta", "out"]
    assert (path / "a" / "out").read_bytes() == A.tobytes(order="C")
    assert (path / "b" / "out").read_bytes() == B.tobytes(order="C")
    assert ((path / "a" / "meta").read_text()
            == "shape {\n  dim: 2\n  dim: 3\n}\ndata_type: kFloat\n")
    assert (path / "b" / "meta").read_text() == "shape {\n  dim: 4\n}\ndata_type: kDouble\n"
    # Nothing else (no temporary folder) is left beside the checkpoint.
    assert os.listdir(tmp_path) == ["model"]


def test_get_reads_a_checkpoint_written_by_oneflow(tmp_path):
    """A folder as OneFlow writes it (later versions add a `stride`; enums may be numbers)."""
    path = tmp_path / "oneflow_ckpt"
    (path / "a").mkdir(parents=True)
    (path / "a" / "out").write_bytes(A.tobytes())
    (path / "a" / "meta").write_text(
        "shape {\n  dim: 2\n  dim: 3\n}\nstride {\n  dim: 3\n  dim: 1\n}\ndata_type: kFloat\n")
    (path / "b").mkdir()
    (path / "b" / "out").write_bytes(B.tobytes())
    (path / "b" / "meta").write_text("shape { dim: 4 } data_type: 3")  # 3: OneFlow's kDouble
    (path / "snapshot_done").write_text("")
    values = flow.checkpoint.get(str(path))
    assert sorted(values) == ["a", "b"]
    assert values["a"].shape == (2, 3) and values["a"].dtype == flow.float32
    assert values["b"].shape == (4,) and values["b"].dtype == flow.float64
    np.testing.assert_array_equal(values["a"].numpy(), A)
    np.testing.assert_array_equal(values["b"].numpy(), B)
    single = flow.checkpoint.get(str(path / "a"))  # one variable's folder
    np.testing.assert_array_equal(single.numpy(), A)

    read_both = define_two_variables()
    flow.load_variables(values)
    assert read_both() == pytest.approx(A.sum() + B.sum())


def test_folder_without_meta_takes_shape_and_dtype_from_the_variable(tmp_path):
    path = tmp_path / "old"
    (path / "a").mkdir(parents=True)
    (path / "a" / "out").write_bytes(A.tobytes())
    (path / "snapshot_done").write_text("")
    value = flow.checkpoint.get(str(path))["a"]
    assert value.shape is None
    with pytest.raises(ValueError, match="no 'meta'"):
        value.numpy()
    read_a = define_reader("a", (2, 3))
    flow.load_variables({"a": value})
    np.testing.assert_array_equal(read_a(), A)


def test_converted_folder_of_bare_out_files_loads_without_snapshot_done(tmp_path):
    """OneFlow-Benchmark's convert_tf_ckpt_to_of.py writes only <name>/out files; OneFlow 0.3
    loads them into variables of the right size (fine-tuning BERT from a TF checkpoint)."""
    path = tmp_path / "converted"
    (path / "a").mkdir(parents=True)
    (path / "a" / "out").write_bytes(A.tobytes())
    read_a = define_reader("a", (2, 3))
    flow.train.CheckPoint().load(str(path))
    np.testing.assert_array_equal(read_a(), A)
    (path / "a" / "meta").write_text("shape { dim: 2 dim: 3 } data_type: kFloat")
    with pytest.raises(ValueError, match="not saved completely"):  # a save of ours, interrupted
        flow.checkpoint.get(str(path))


# ---- round trips and when the calls may be made -------------------------------------------------

def test_round_trip_into_a_fresh_session_before_its_first_call(tmp_path):
    read_both = define_two_variables()
    flow.load_variables({"a": A, "b": B})  # before any call: traces and starts the session
    flow.checkpoint.save(str(tmp_path / "c"))
    flow.clear_default_session()

    read_a = define_reader("a", (2, 3))
    read_b = define_reader("b", (4,), flow.float64)
    variables = flow.get_all_variables()  # before any call
    assert sorted(variables) == ["a", "b"]
    np.testing.assert_array_equal(variables["a"].numpy(), np.full((2, 3), 0.5, np.float32))
    flow.load_variables(flow.checkpoint.get(str(tmp_path / "c")))
    np.testing.assert_array_equal(read_a(), A)
    np.testing.assert_array_equal(read_b(), B)
    assert variables["b"].numpy().dtype == np.float64  # values are live
    np.testing.assert_array_equal(variables["b"].numpy(), B)
    assert read_both is not None


def test_get_all_variables_without_functions_is_empty():
    assert flow.get_all_variables() == {}


def test_values_are_those_after_asynchronous_calls_in_flight(tmp_path):
    x = np.random.RandomState(1).randn(4, 3).astype(np.float32)

    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((4, 3))):  # no annotation: asynchronous, returns a future
        w = flow.get_variable("w", shape=(4, 3), initializer=flow.constant_initializer(0.0))
        loss = flow.math.reduce_sum(w * x)  # d loss / d w = x
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(loss)
        return loss

    futures = [train(x * (i + 1)) for i in range(5)]
    flow.checkpoint.save(str(tmp_path / "c"))  # waits for the five calls
    expected = -0.1 * x * (1 + 2 + 3 + 4 + 5)
    np.testing.assert_allclose(flow.checkpoint.get(str(tmp_path / "c"))["w"].numpy(), expected,
                               rtol=1e-5)
    futures += [train(x)]
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), expected - 0.1 * x,
                               rtol=1e-5)
    flow.load_variables({"w": np.zeros((4, 3), np.float32)})
    futures += [train(x)]
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), -0.1 * x, rtol=1e-5)
    assert all(f.get().shape == (1,) for f in futures)


@pytest.mark.parametrize("call", [
    lambda: flow.get_all_variables(),
    lambda: flow.load_variables({"w": np.zeros(3, np.float32)}),
    lambda: flow.checkpoint.save("/nonexistent_dir_never_written/x"),
], ids=["get_all_variables", "load_variables", "save"])
def test_refused_inside_a_callback(call):
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))
        y = x + w
        flow.watch(y, lambda value: call())
        return y

    with pytest.raises(RuntimeError, match="not allowed inside a watch or result callback"):
        job(np.ones(3, np.float32))
    assert not os.path.exists("/nonexistent_dir_never_written")


def test_refused_inside_a_callback_while_the_main_thread_saves(tmp_path):
    """The main thread holds the session while it waits for the call whose callback asks."""
    errors = []

    def callback(value):
        try:
            flow.get_all_variables()
        except RuntimeError as error:
            errors.append(error)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))):  # asynchronous
        w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))
        y = x + w
        flow.watch(y, callback)
        return y

    futures = [job(np.ones(3, np.float32)) for _ in range(3)]
    flow.checkpoint.save(str(tmp_path / "c"))
    assert len(errors) == 3 and "callback" in str(errors[0])
    assert all(np.array_equal(f.get().numpy(), [2, 2, 2]) for f in futures)


def test_refused_inside_a_job_function():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(1.0))
        flow.load_variables({"w": np.zeros(3, np.float32)})
        return x

    with pytest.raises(RuntimeError, match="not allowed inside a job function"):
        job(np.ones(3, np.float32))


def test_legacy_checkpoint_save_and_load(tmp_path):
    read_a = define_reader("a", (2, 3))
    check_point = flow.train.CheckPoint()
    check_point.init()
    np.testing.assert_array_equal(read_a(), np.full((2, 3), 0.5, np.float32))
    flow.load_variables({"a": A})
    check_point.save(str(tmp_path / "legacy"))
    flow.load_variables({"a": np.zeros((2, 3), np.float32)})
    check_point.load(str(tmp_path / "legacy"))
    np.testing.assert_array_equal(read_a(), A)


def test_save_replaces_an_earlier_checkpoint(tmp_path):
    read_a = define_reader("a", (2, 3))
    path = str(tmp_path / "c")
    flow.checkpoint.save(path)
    flow.load_variables({"a": A})
    flow.checkpoint.save(path)
    np.testing.assert_array_equal(flow.checkpoint.get(path)["a"].numpy(), A)
    assert os.listdir(tmp_path) == ["c"]
    assert read_a is not None


@pytest.mark.parametrize("exchange", ["renameat2", "two_renames"])
def test_save_over_a_checkpoint_swaps_it(tmp_path, monkeypatch, exchange):
    read_a = define_reader("a", (2, 3))
    path = str(tmp_path / "c")
    flow.checkpoint.save(path)
    if exchange == "two_renames":  # systems without RENAME_EXCHANGE
        monkeypatch.setattr(checkpoint_module, "_exchange", lambda first, second: False)
    else:
        swapped = []
        original = checkpoint_module._exchange
        monkeypatch.setattr(checkpoint_module, "_exchange",
                            lambda first, second: swapped.append(1) or original(first, second))
    flow.load_variables({"a": A})
    flow.checkpoint.save(path)
    np.testing.assert_array_equal(flow.checkpoint.get(path)["a"].numpy(), A)
    assert os.listdir(tmp_path) == ["c"]
    assert exchange == "two_renames" or swapped
    assert read_a is not None


def test_values_of_a_closed_session_refuse_to_read():
    define_reader("a", (2, 3))
    value = flow.get_all_variables()["a"]
    flow.clear_default_session()
    with pytest.raises(RuntimeError, match="'a'.*session has been closed"):
        value.numpy()


# ---- ignore_mismatch and validation -------------------------------------------------------------

def test_ignore_mismatch():
    read_a = define_reader("a", (2, 3))
    flow.load_variables({"a": A, "not_a_variable": np.ones(2, np.float32)})  # default: skipped
    np.testing.assert_array_equal(read_a(), A)
    with pytest.raises(ValueError, match="'not_a_variable' is not a variable"):
        flow.load_variables({"a": A * 0, "not_a_variable": np.ones(2, np.float32)},
                            ignore_mismatch=False)
    np.testing.assert_array_equal(read_a(), A)  # nothing written


@pytest.mark.parametrize("bad_b, error, words", [
    (np.zeros(5, np.float64), ValueError, ["'b'", "shape (4,)", "(5,)"]),
    (np.zeros(4, np.float32), TypeError, ["'b'", "float64", "float32"]),
    ([1.0, 2.0, 3.0, 4.0], TypeError, ["'b'", "numpy array", "list"]),
    (np.zeros(4, np.bool_), TypeError, ["'b'", "dtype"]),
], ids=["shape", "dtype", "list", "bool"])
def test_bad_value_leaves_every_variable_untouched(bad_b, error, words):
    read_both = define_two_variables()
    before = read_both()
    with pytest.raises(error) as info:
        flow.load_variables({"a": A, "b": bad_b})  # "a" is valid and comes first
    for word in words:
        assert word in str(info.value)
    assert read_both() == before
    np.testing.assert_array_equal(flow.get_all_variables()["a"].numpy(), np.ones((2, 3)))


def _save_a_and_b(path):
    read_both = define_two_variables()
    flow.load_variables({"a": A, "b": B})
    flow.checkpoint.save(str(path))
    flow.load_variables({"a": A * 0, "b": B * 0})
    return read_both


def _assert_untouched():
    variables = flow.get_all_variables()
    np.testing.assert_array_equal(variables["a"].numpy(), A * 0)
    np.testing.assert_array_equal(variables["b"].numpy(), B * 0)


def test_truncated_file_is_refused_naming_variable_and_file(tmp_path):
    _save_a_and_b(tmp_path / "c")
    values = flow.checkpoint.get(str(tmp_path / "c"))
    data = tmp_path / "c" / "b" / "out"
    data.write_bytes(data.read_bytes()[:-8])  # truncated after get()
    with pytest.raises(ValueError) as info:
        flow.load_variables(values)
    assert "'b'" in str(info.value) and str(data) in str(info.value)
    assert "24 bytes" in str(info.value) and "needs 32" in str(info.value)
    _assert_untouched()
    with pytest.raises(ValueError, match="truncated"):  # and get() checks it too
        flow.checkpoint.get(str(tmp_path / "c"))


def test_missing_file_is_refused_naming_variable_and_file(tmp_path):
    _save_a_and_b(tmp_path / "c")
    values = flow.checkpoint.get(str(tmp_path / "c"))
    os.remove(tmp_path / "c" / "b" / "out")
    with pytest.raises(FileNotFoundError) as info:
        flow.load_variables(values)
    assert "'b'" in str(info.value) and str(tmp_path / "c" / "b" / "out") in str(info.value)
    _assert_untouched()
    with pytest.raises(FileNotFoundError, match="'b'.*missing"):
        flow.checkpoint.get(str(tmp_path / "c"))


@pytest.mark.parametrize("meta, error, words", [
    ("shape {\n  dim: 2\n  dim: 2\n}\ndata_type: kDouble\n", ValueError, ["shape (4,)", "(2, 2)"]),
    ("shape {\n  dim: 8\n}\ndata_type: kFloat\n", TypeError, ["float64", "float32"]),
    ("shape {\n  dim: 16\n}\ndata_type: kFloat16\n", TypeError, ["float64", "float16"]),
    ("shape {\n  dim: 4\n}\ndata_type: kBFloat16\n", ValueError, ["kBFloat16", "not supported"]),
    ("shape {\n  dim: 4\n}\ndata_type: 11\n", ValueError, ["kBFloat16", "not supported"]),
    ("shape { dim: 4 ", ValueError, ["not a valid VariableMetaInfo"]),
    ("shape {" * 101 + "}" * 101 + "\ndata_type: kDouble\n", ValueError,
     ["not a valid VariableMetaInfo", "nested more than 100 levels"]),
    ("a {" * 100000 + "}" * 100000, ValueError,
     ["not a valid VariableMetaInfo", "nested more than 100 levels"]),
], ids=["shape", "dtype", "float16_dtype", "unsupported_dtype", "unsupported_dtype_number",
        "malformed", "nested_too_deep", "nested_far_too_deep"])
def test_meta_mismatch_is_refused(tmp_path, meta, error, words):
    _save_a_and_b(tmp_path / "c")
    (tmp_path / "c" / "b" / "meta").write_text(meta)
    with pytest.raises(error) as info:
        flow.load_variables(flow.checkpoint.get(str(tmp_path / "c")))
    assert "'b'" in str(info.value)
    for word in words:
        assert word in str(info.value)
    _assert_untouched()


def test_bad_paths(tmp_path):
    define_reader("a", (2, 3))
    with pytest.raises(TypeError, match="path must be a str"):
        flow.checkpoint.save(123)
    with pytest.raises(TypeError, match="path must be a str"):
        flow.checkpoint.get(["x"])
    with pytest.raises(ValueError, match="must not be empty"):
        flow.checkpoint.save("")
    missing = str(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="does not exist") as info:
        flow.checkpoint.get(missing)
    assert missing in str(info.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file"):
        flow.checkpoint.get(str(tmp_path / "file"))
    with pytest.raises(FileExistsError, match="is a file"):
        flow.checkpoint.save(str(tmp_path / "file"))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a checkpoint"):
        flow.checkpoint.save(str(tmp_path / "notes"))
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"
    with pytest.raises(TypeError, match="value_dict must be a dict"):
        flow.load_variables([("a", A)])
    with pytest.raises(ValueError, match="cannot name a variable's folder"):
        flow.checkpoint.save(str(tmp_path / "d"), {"x/y": A})
    flow.checkpoint.save(tmp_path / "pathlike")  # os.PathLike is fine
    assert (tmp_path / "pathlike" / "snapshot_done").exists()


def test_incomplete_checkpoint_is_refused(tmp_path):
    _save_a_and_b(tmp_path / "c")
    os.remove(tmp_path / "c" / "snapshot_done")
    with pytest.raises(ValueError, match="snapshot_done"):
        flow.checkpoint.get(str(tmp_path / "c"))


# ---- atomic saving ------------------------------------------------------------------------------

def test_failure_mid_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    _save_a_and_b(tmp_path / "c")  # the checkpoint holds A, B; the variables now hold zeros
    written = []
    original = checkpoint_module._write_variable

    def failing_write(directory, array):
        if written:
            raise OSError(28, "No space left on device (injected)")
        written.append(directory)
        original(directory, array)

    monkeypatch.setattr(checkpoint_module, "_write_variable", failing_write)
    with pytest.raises(OSError, match="injected"):
        flow.checkpoint.save(str(tmp_path / "c"))
    assert written  # it failed after writing one variable
    values = flow.checkpoint.get(str(tmp_path / "c"))
    np.testing.assert_array_equal(values["a"].numpy(), A)
    np.testing.assert_array_equal(values["b"].numpy(), B)
    assert os.listdir(tmp_path) == ["c"]  # the temporary folder is removed


KILLED_SAVE = """
import os, signal, sys
import numpy as np
import oneflow as flow
import oneflow.typing as tp
from oneflow import checkpoint

@flow.global_function()
def read() -> tp.Numpy:
    a = flow.get_variable("a", shape=(2, 3), initializer=flow.constant_initializer(7.0))
    b = flow.get_variable("b", shape=(4,), initializer=flow.constant_initializer(7.0))
    return a

original = checkpoint._write_variable
def write_then_die(directory, array):
    original(directory, array)
    os.kill(os.getpid(), signal.SIGKILL)  # a crash after the first variable's files
checkpoint._write_variable = write_then_die
flow.checkpoint.save(sys.argv[1])
"""


def test_killed_mid_save_keeps_the_previous_checkpoint(tmp_path):
    _save_a_and_b(tmp_path / "c")
    script = tmp_path / "killed_save.py"
    script.write_text(KILLED_SAVE)
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "c")],
                            env=dict(os.environ, PYTHONPATH=PYTHON_DIR), capture_output=True,
                            timeout=SUBPROCESS_TIMEOUT)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    values = flow.checkpoint.get(str(tmp_path / "c"))
    np.testing.assert_array_equal(values["a"].numpy(), A)
    np.testing.assert_array_equal(values["b"].numpy(), B)
    # The dead save's temporary folder stays beside it (hidden) and is not a checkpoint.
    leftovers = [name for name in os.listdir(tmp_path) if name not in ("c", "killed_save.py")]
    assert len(leftovers) == 1 and leftovers[0].startswith(".c.saving-")
    assert not os.path.exists(tmp_path / leftovers[0] / "snapshot_done")


# ---- resuming training in a fresh process -------------------------------------------------------

RESUME = """
import sys
import numpy as np
import oneflow as flow
import oneflow.typing as tp

mode, steps, path, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = np.random.RandomState(0)
X = rng.randn(40, 8, 5).astype(np.float32)
Y = rng.randn(40, 8, 2).astype(np.float32)
schedule = flow.optimizer.PiecewiseConstantScheduler([3, 6], [0.05, 0.02, 0.01])

def model(x, y, prefix):
    hidden = flow.layers.dense(x, 4, activation=flow.math.tanh, name=prefix + "1",
                               kernel_initializer=flow.random_normal_initializer(stddev=0.5))
    out = flow.layers.dense(hidden, 2, name=prefix + "2",
                            kernel_initializer=flow.random_normal_initializer(stddev=0.5))
    return flow.math.reduce_mean(flow.math.square(out - y))

@flow.global_function(type="train")
def adam_step(x: tp.Numpy.Placeholder((8, 5)), y: tp.Numpy.Placeholder((8, 2))) -> tp.Numpy:
    loss = model(x, y, "adam")
    flow.optimizer.Adam(schedule, beta1=0.8, beta2=0.9, do_bias_correction=True).minimize(loss)
    return loss

@flow.global_function(type="train")
def sgd_step(x: tp.Numpy.Placeholder((8, 5)), y: tp.Numpy.Placeholder((8, 2))) -> tp.Numpy:
    loss = model(x, y, "sgd")
    flow.optimizer.SGD(schedule, momentum=0.9).minimize(loss)
    return loss

first = 0
if mode == "resume":
    values = flow.checkpoint.get(path)
    first = int(values["System-Train-TrainStep-adam_step"].numpy()[0])
    flow.load_variables(values)
losses = []
for step in range(first, first + steps):
    losses.append([adam_step(X[step], Y[step]), sgd_step(X[step], Y[step])])
if mode == "first":
    flow.checkpoint.save(path)
variables = {name: value.numpy() for name, value in flow.get_all_variables().items()}
np.savez(out, losses=np.array(losses), **variables)
"""


def _run_resume_script(tmp_path, *args):
    script = tmp_path / "resume.py"
    script.write_text(RESUME)
    subprocess.run([sys.executable, str(script)] + [str(arg) for arg in args],
                   env=dict(os.environ, PYTHONPATH=PYTHON_DIR), check=True,
                   timeout=SUBPROCESS_TIMEOUT)


def test_resumed_training_follows_the_uninterrupted_trajectory(tmp_path):
    """N steps + save in one process, load + M steps in another == N + M steps in one; with
    Adam's bias correction (the step counter matters), SGD momentum and an LR schedule whose
    boundaries fall after the resume point."""
    n, m = 4, 5
    path = tmp_path / "ckpt"
    _run_resume_script(tmp_path, "full", n + m, path, tmp_path / "full.npz")
    _run_resume_script(tmp_path, "first", n, path, tmp_path / "first.npz")
    _run_resume_script(tmp_path, "resume", m, path, tmp_path / "resumed.npz")
    full, first, resumed = (np.load(tmp_path / name) for name in
                            ("full.npz", "first.npz", "resumed.npz"))
    saved = set(os.listdir(path))
    for state in ("adam1-weight-m", "adam1-weight-v", "sgd1-weight-momentum",
                  "System-Train-TrainStep-adam_step", "System-Train-TrainStep-sgd_step"):
        assert state in saved
    np.testing.assert_array_equal(first["losses"], full["losses"][:n])
    np.testing.assert_array_equal(resumed["losses"], full["losses"][n:])
    assert sorted(resumed.files) == sorted(full.files)
    for name in set(full.files) - {"losses"}:
        np.testing.assert_array_equal(resumed[name], full[name], err_msg=name)
    assert full["System-Train-TrainStep-adam_step"][0] == n + m


# ---- variables split across devices -------------------------------------------------------------

def _split_jobs(devices, mode):
    placement = "0:0" if devices == 1 else "0:0-%d" % (devices - 1)
    config = flow.FunctionConfig()
    if mode == "distributed_split":
        config.optimizer_placement_optimization_mode("distributed_split")

    @flow.global_function(type="train", function_config=config)
    def train(x: tp.Numpy.Placeholder((6, 5))) -> tp.Numpy:
        with flow.scope.placement("cpu", placement):
            w = flow.get_variable("w", shape=(5, 3),
                                  initializer=flow.random_uniform_initializer(-1, 1))
            m = flow.get_variable("m", shape=(7, 2), distribute=flow.distribute.split(0),
                                  initializer=flow.random_uniform_initializer(-1, 1))
            loss = flow.math.reduce_sum(flow.math.square(flow.matmul(x, w)))
            loss = loss + flow.math.reduce_sum(flow.math.square(m))
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                               momentum=0.9).minimize(loss)
        return loss

    return train


def test_split_variables_are_saved_whole_and_load_into_any_placement(tmp_path):
    x = np.random.RandomState(2).randn(6, 5).astype(np.float32)
    flow.config.cpu_device_num(2)
    train = _split_jobs(2, "distributed_split")
    flow.load_variables({"w": np.arange(15, dtype=np.float32).reshape(5, 3) / 10,
                         "m": np.arange(14, dtype=np.float32).reshape(7, 2) / 10})
    train(x)
    train(x)
    expected = {name: value.numpy() for name, value in flow.get_all_variables().items()}
    assert {"w", "m", "w-momentum", "m-momentum"} <= set(expected)
    assert np.abs(expected["w-momentum"]).min() > 0
    flow.checkpoint.save(str(tmp_path / "c"))
    for name, value in expected.items():  # the files hold the whole logical values
        assert (tmp_path / "c" / name / "out").read_bytes() == value.tobytes(), name
    after_third_step = train(x), flow.get_all_variables()["w"].numpy()

    for devices, mode in [(1, None), (3, "distributed_split"), (3, None)]:
        flow.clear_default_session()
        flow.config.cpu_device_num(devices)
        train = _split_jobs(devices, mode)
        flow.load_variables(flow.checkpoint.get(str(tmp_path / "c")))
        for name, value in flow.get_all_variables().items():
            np.testing.assert_array_equal(value.numpy(), expected[name],
                                          err_msg="%s on %d devices" % (name, devices))
        loss = train(x)  # and training continues from there
        np.testing.assert_allclose(loss, after_third_step[0], rtol=1e-5)
        np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), after_third_step[1],
                                   rtol=1e-5, atol=1e-6)


# ---- flow.assign --------------------------------------------------------------------------------

def test_assign_writes_the_variable_after_its_readers():
    @flow.global_function()
    def step(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2, 3), initializer=flow.constant_initializer(1.0))
        before = w + 0  # a reader in the same call sees the value before the assignment
        flow.assign(w, x)
        return before

    np.testing.assert_array_equal(step(A), np.ones((2, 3)))
    np.testing.assert_array_equal(step(A * 2), A)
    np.testing.assert_array_equal(flow.get_all_variables()["w"].numpy(), A * 2)


def test_assign_in_a_train_job_counts_steps():
    @flow.global_function(type="train")
    def train(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(0.0))
        count = flow.get_variable("count", shape=(1,), dtype=flow.int32, trainable=False,
                                  initializer=flow.constant_initializer(0))
        flow.assign(count, count + flow.constant(1, dtype=flow.int32, shape=(1,)))
        loss = flow.math.reduce_sum(w * x)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0]),
                           momentum=0).minimize(loss)
        return loss

    for _ in range(3):
        train(np.ones(3, np.float32))
    variables = flow.get_all_variables()
    np.testing.assert_array_equal(variables["count"].numpy(), [3])
    np.testing.assert_allclose(variables["w"].numpy(), [-3, -3, -3])


@pytest.mark.parametrize("devices, distribute", [
    ("0:0-1", lambda: flow.distribute.split(0)),
    ("0:0-2", lambda: flow.distribute.split(0)),  # uneven: rows 2 + 2 + 1
    ("0:0-1", lambda: flow.distribute.split(1)),
    ("0:0-2", lambda: None),  # broadcast: a replica per device
], ids=["S0_2", "S0_3", "S1_2", "B_3"])
def test_assign_to_a_variable_over_several_devices(devices, distribute):
    value = np.arange(10, dtype=np.float32).reshape(5, 2)

    @flow.global_function()
    def step(x: tp.Numpy.Placeholder((5, 2))) -> tp.Numpy:
        with flow.scope.placement("cpu", devices):
            w = flow.get_variable("w", shape=(5, 2), distribute=distribute(),
                                  initializer=flow.constant_initializer(0.0))
            flow.assign(w, flow.math.relu(x))
            # Read as S(0): each device contributes rows of its own part (or replica).
            return flow.identity(w.with_distribute(flow.distribute.split(0)))

    np.testing.assert_array_equal(step(value), np.zeros((5, 2)))
    np.testing.assert_array_equal(step(value * 0), value)
    np.testing.assert_array_equal(step(value), np.zeros((5, 2)))


@pytest.mark.parametrize("make, error, words", [
    (lambda x, w: flow.assign(x, w), ValueError, ["ref must be a variable"]),
    (lambda x, w: flow.assign(w, flow.reshape(x, (3, 2))), ValueError, ["assign", "(2, 3)"]),
    (lambda x, w: flow.assign(w, flow.cast(x, flow.float64)), TypeError, ["assign", "float64"]),
    (lambda x, w: flow.assign(w, np.ones((2, 3), np.float32)), TypeError, ["assign", "value"]),
], ids=["not_a_variable", "shape", "dtype", "not_a_blob"])
def test_assign_errors(make, error, words):
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2, 3), initializer=flow.constant_initializer(1.0))
        make(x, w)
        return x

    with pytest.raises(error) as info:
        job(A)
    for word in words:
        assert word in str(info.value)


@pytest.mark.slow
def test_example_resumes_exactly(tmp_path):
    pytest.importorskip("sklearn")
    example = os.path.join(os.path.dirname(PYTHON_DIR), "examples", "checkpoint_resume.py")
    if not os.path.exists(example):
        pytest.skip("oneflow is not imported from a source tree")
    result = subprocess.run([sys.executable, example, "--dir", str(tmp_path)],
                            env=dict(os.environ, PYTHONPATH=PYTHON_DIR), capture_output=True,
                            text=True, timeout=SUBPROCESS_TIMEOUT, check=True)
    assert "losses equal the uninterrupted run's" in result.stdout
    assert sorted(os.listdir(tmp_path)) == ["fine_tuned", "trained"]
    assert "extra-weight" in flow.checkpoint.get(str(tmp_path / "fine_tuned"))


def test_interface_blob_values_read_and_write_variables():
    """OneFlow 0.3's flow.experimental.get/set_interface_blob_value on variables (its
    test_interface_op_read_and_write)."""
    @flow.global_function()
    def add() -> tp.Numpy:
        x = flow.get_variable("x", shape=(2, 3), initializer=flow.random_uniform_initializer())
        y = flow.get_variable("y", shape=(2, 3), initializer=flow.random_uniform_initializer())
        return flow.math.add_n([x, y])

    xv, yv = np.full((2, 3), 1.5, np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    flow.experimental.set_interface_blob_value("x", xv)
    flow.experimental.set_interface_blob_value("y", yv)
    np.testing.assert_array_equal(flow.experimental.get_interface_blob_value("x"), xv)
    np.testing.assert_array_equal(add(), xv + yv)
    with pytest.raises(ValueError, match="'z' is no variable of the session"):
        flow.experimental.get_interface_blob_value("z")
    with pytest.raises(ValueError, match=r"shape"):
        flow.experimental.set_interface_blob_value("x", np.zeros((3, 2), np.float32))


# ---- float16 values and files of the wrong kind -------------------------------------------------

def test_float16_values_are_saved_as_oneflow_kfloat16(tmp_path):
    """OneFlow 0.3's DataType enum (data_type.proto) has kFloat16 = 9, and its checkpoint.save
    wrote a float16 variable's meta with it and its raw IEEE half bytes in `out`."""
    define_two_variables()
    half = np.array([0.5, -2.0, 65504.0], dtype=np.float16)
    flow.checkpoint.save(str(tmp_path / "c"), {"h": half, "a": A})
    assert ((tmp_path / "c" / "h" / "meta").read_text()
            == "shape {\n  dim: 3\n}\ndata_type: kFloat16\n")
    assert (tmp_path / "c" / "h" / "out").read_bytes() == half.tobytes()
    values = flow.checkpoint.get(str(tmp_path / "c"))
    assert values["h"].dtype == flow.float16 and values["h"].shape == (3,)
    np.testing.assert_array_equal(values["h"].numpy(), half)
    # The enum number reads the same.
    (tmp_path / "c" / "h" / "meta").write_text("shape { dim: 3 }\ndata_type: 9\n")
    assert flow.checkpoint.get(str(tmp_path / "c"))["h"].dtype == flow.float16
    # A float16 value is no float32 variable's.
    with pytest.raises(TypeError) as info:
        flow.load_variables({"a": flow.checkpoint.get(str(tmp_path / "c"))["h"]})
    assert "'a'" in str(info.value) and "float32" in str(info.value) and "float16" in str(
        info.value)


def test_a_variable_named_out_is_not_mistaken_for_a_single_variable_folder(tmp_path):
    define_two_variables()
    flow.checkpoint.save(str(tmp_path / "c"), {"out": A, "b": B})
    values = flow.checkpoint.get(str(tmp_path / "c"))
    assert sorted(values) == ["b", "out"]
    np.testing.assert_array_equal(values["out"].numpy(), A)


def _make_directory(path):
    os.mkdir(path)


def _make_fifo(path):
    os.mkfifo(path)


def _make_broken_link(path):
    os.symlink(str(path) + "-nowhere", path)


@pytest.mark.parametrize("file_name", ["out", "meta"])
@pytest.mark.parametrize("make, kind", [
    (_make_directory, "is a directory"),
    (_make_fifo, "is a special file"),
    (_make_broken_link, "is a broken symbolic link"),
], ids=["directory", "fifo", "broken_link"])
def test_checkpoint_file_of_the_wrong_kind_is_not_called_missing(tmp_path, file_name, make, kind):
    _save_a_and_b(tmp_path / "c")
    path = tmp_path / "c" / "b" / file_name
    os.remove(path)
    make(path)
    for target in (tmp_path / "c", tmp_path / "c" / "b"):  # the checkpoint, the single variable
        with pytest.raises(ValueError) as info:
            flow.checkpoint.get(str(target))
        message = str(info.value)
        assert "'b'" in message and str(path) in message and kind in message, message
        assert "not a regular file" in message and "missing" not in message
    _assert_untouched()
