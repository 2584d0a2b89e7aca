"""Several machines: the same script runs in 2 or 4 processes on loopback, started by
`python -m oneflow.distributed.launch`; machine 0 compiles and drives, the others serve.

- data-parallel, model-parallel and hybrid MLP training across machines follow the
  single-process loss trajectory (rtol 1e-4) and end with the same variables (read back on
  machine 0 from the machines that updated them);
- the boxing matrix across machines is the identity (collectives over Gloo when the same devices
  span machines, slice copies with transfers between machines otherwise);
- a pipeline whose two stages are on two machines gives the single-process numbers;
- failures: a machine that never starts is named by the rendezvous error; a machine killed
  mid-training makes the others raise a clear error within the heartbeat bound and exit; a dead
  master makes the workers exit; no process is left behind.

Each test starts its processes through the launcher with a free MASTER_PORT and bounds them in
time; the scripts import the models of test_parallel_training.py and the chains of
test_boxing.py, so the single-process tests and these check the very same code.
"""
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import oneflow as flow

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(flow.__file__)))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(tmp_path, body, nproc, timeout=240, extra_env=None, check=True):
    """Runs `body` (a script, dedented) in `nproc` processes through the launcher; returns the
    CompletedProcess. Rank 0 reports results as lines "RESULT <json>"."""
    script = tmp_path / "script.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\n" % HERE + textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ONEFLOW_DEBUG_DIR", None)
    env.update(extra_env or {})
    command = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node",
               str(nproc), "--master_port", str(free_port()), "--grace_period", "2",
               str(script)]
    completed = subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True,
                               text=True, timeout=timeout)
    if check:
        assert completed.returncode == 0, (completed.stdout[-3000:], completed.stderr[-3000:])
    return completed


def results(completed):
    return [json.loads(line.split("RESULT ", 1)[1]) for line in completed.stdout.splitlines()
            if "RESULT " in line]


TRAIN_SCRIPT = """
    import json
    import numpy as np
    import test_parallel_training as models

    model, batch_axis, names, _ = models.MODES[{mode!r}]
    losses, variables, _, _ = models.train({devices}, model, batch_axis, names)
    print("RESULT " + json.dumps({{
        "losses": [np.asarray(loss).tolist() for loss in losses],
        "variables": {{name: value.tolist() for name, value in variables.items()}}}}),
        flush=True)
"""


@pytest.mark.parametrize("mode,nproc,devices", [
    ("data_parallel", 2, 1),
    ("data_parallel", 4, 1),
    ("data_parallel", 2, 2),
    ("model_parallel", 2, 1),
    ("model_parallel", 2, 2),
    ("hybrid", 2, 1),
    ("hybrid", 4, 1),
])
def test_training_across_machines_follows_the_single_process_run(mode, nproc, devices, tmp_path):
    import test_parallel_training as models

    model, batch_axis, names, _ = models.MODES[mode]
    reference_losses, reference_variables, _, _ = models.train(1, model, batch_axis, names)
    completed = launch(tmp_path, TRAIN_SCRIPT.format(mode=mode, devices=devices), nproc)
    (actual,) = results(completed)
    where = "%s on %d machines x %d devices" % (mode, nproc, devices)
    np.testing.assert_allclose(np.array(actual["losses"]), np.array(reference_losses),
                               rtol=models.LOSS_RTOL, err_msg=where)
    for name, value in reference_variables.items():
        np.testing.assert_allclose(np.array(actual["variables"][name], dtype=value.dtype), value,
                                   err_msg="%s: variable %s" % (where, name),
                                   **models.VARIABLE_TOLERANCE)


BOXING_SCRIPT = """
    import json, os, pathlib
    import test_boxing as boxing

    pairs = {pairs!r}
    failures = []
    for source, target in pairs:
        directory = pathlib.Path(os.getcwd()) / ("debug%d" % len(failures))
        os.environ["ONEFLOW_DEBUG_DIR"] = str(directory)
        failures += boxing.run_chains(source, target, boxing.CONVERSIONS, directory)
        boxing.flow.clear_default_session()
    print("RESULT " + json.dumps(failures), flush=True)
"""


@pytest.mark.parametrize("pairs", [
    # the same devices spanning the machines: collectives over Gloo (2 ranks per process too)
    [(["0:0", "1:0"], ["0:0", "1:0"]), (["0:0", "0:1", "1:0"], ["0:0", "0:1", "1:0"])],
    # different devices: slice copies whose parts cross machines
    [("0:0-1", "1:0-1"), (["0:0", "1:0"], "1:0-2"), ("1:1", ["0:0", "1:0", "0:2"]),
     (["0:0", "1:1"], "0:0")],
], ids=["same-devices", "other-devices"])
def test_boxing_across_machines_is_the_identity(pairs, tmp_path):
    completed = launch(tmp_path, BOXING_SCRIPT.format(pairs=pairs), 2)
    (failures,) = results(completed)
    assert failures == [], "\n".join(failures)


PIPELINE_SCRIPT = """
    import json
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    flow.config.cpu_device_num(1)
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (6, 5)).astype(np.float32)
    second = {second!r}

    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder((6, 5))) -> tp.Numpy:
        init = flow.random_uniform_initializer(-0.5, 0.5, seed=4)
        with flow.scope.placement("cpu", "0:0"):
            h = flow.layers.dense(x, 7, activation=flow.math.relu, kernel_initializer=init,
                                  name="stage1")
        with flow.scope.placement("cpu", second):
            out = flow.layers.dense(h, 3, kernel_initializer=init, name="stage2")
            loss = flow.math.reduce_mean(flow.math.square(out))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0.9).minimize(loss)
        return loss

    # Several calls in flight together: the stages pipeline across the machines.
    futures = [step(x) for _ in range(6)]
    losses = [np.asarray(future).item() for future in futures]
    weight = flow.get_all_variables()["stage2-weight"].numpy().tolist()
    print("RESULT " + json.dumps({{"losses": losses, "weight": weight}}), flush=True)
"""


def test_pipeline_stages_on_two_machines_give_the_single_process_numbers(tmp_path):
    (single,) = results(launch(tmp_path, PIPELINE_SCRIPT.format(second="0:0"), 1))
    (across,) = results(launch(tmp_path, PIPELINE_SCRIPT.format(second="1:0"), 2))
    np.testing.assert_allclose(across["losses"], single["losses"], rtol=1e-5)
    np.testing.assert_allclose(across["weight"], single["weight"], rtol=1e-5, atol=1e-7)
    assert len(set(single["losses"])) == len(single["losses"])  # it did train


ERROR_ON_WORKER = """
    import json
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    @flow.global_function()
    def loss_of(logits: tp.Numpy.Placeholder((4, 3)),
                labels: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "1:0"):
            return flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

    logits = np.zeros((4, 3), np.float32)
    good = loss_of(logits, np.array([0, 1, 2, 0], np.int32))
    try:
        loss_of(logits, np.array([0, 1, 7, 0], np.int32))
        outcome = "no error"
    except Exception as error:
        outcome = "%s: %s" % (type(error).__name__, error)
    again = loss_of(logits, np.array([2, 2, 2, 2], np.int32))
    print("RESULT " + json.dumps({"good": good.tolist(), "outcome": outcome,
                                  "again": again.tolist()}), flush=True)
"""


def test_a_kernel_error_on_another_machine_fails_the_call_on_machine_0(tmp_path):
    (result,) = results(launch(tmp_path, ERROR_ON_WORKER, 2))
    np.testing.assert_allclose(result["good"], np.full(4, np.log(3.0)), rtol=1e-6)
    # The same exception type as on one machine, saying where it happened and why.
    assert result["outcome"].startswith("ValueError: on machine 1:"), result["outcome"]
    assert "7" in result["outcome"], result["outcome"]
    # Only that call failed: the next one runs.
    np.testing.assert_allclose(result["again"], np.full(4, np.log(3.0)), rtol=1e-6)


RESTORE_SCRIPT = """
    import json
    import numpy as np
    import oneflow as flow
    import test_parallel_training as models

    # train() clears the session at its end; keep it alive by training here instead.
    model, batch_axis, names, _ = models.MODES["model_parallel"]
    flow.config.cpu_device_num(1)
    x, y, _ = models.make_data()
    optimizer = flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                                   momentum=0.9)
    import oneflow.typing as tp

    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder((models.BATCH, models.FEATURES), batch_axis=None),
             y: tp.Numpy.Placeholder((models.BATCH, models.OUTPUTS), batch_axis=None)
             ) -> tp.Numpy:
        loss = flow.math.reduce_mean(flow.math.square(model(x) - y))
        optimizer.minimize(loss)
        return loss

    for _ in range(2):
        step(x, y)
    snapshot = {name: value.numpy() for name, value in flow.get_all_variables().items()}
    first = [step(x, y).item() for _ in range(3)]
    flow.load_variables(snapshot)  # the parts on machine 1 too, momentum and step included
    second = [step(x, y).item() for _ in range(3)]
    print("RESULT " + json.dumps({"first": first, "second": second,
                                  "names": sorted(snapshot)}), flush=True)
"""


def test_variables_read_and_written_on_machine_0_reach_the_other_machines(tmp_path):
    (result,) = results(launch(tmp_path, RESTORE_SCRIPT, 2))
    assert "w1" in result["names"] and "w1-momentum" in result["names"], result["names"]
    assert result["first"][0] != result["first"][2]
    np.testing.assert_allclose(result["second"], result["first"], rtol=1e-6)


LONG_TRAINING = """
    import os, signal, sys, threading, time
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    # The victim dies DIE_AFTER seconds after machine 0's first call returned (it writes
    # TRAINING_STARTED then), so always mid-training: a loaded machine may take longer than
    # DIE_AFTER to import, meet and compile. Workers serve inside their first call, which only
    # returns when the cluster stops, so they learn it from the file. Times count from there.
    marker = os.environ["TRAINING_STARTED"]
    if int(os.environ["RANK"]) == int(os.environ["VICTIM"]):
        def die():
            while not os.path.exists(marker):
                time.sleep(0.05)
            time.sleep(float(os.environ["DIE_AFTER"]))
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=die, daemon=True).start()
    print("PID", os.getpid(), flush=True)
    x = np.random.RandomState(0).randn(32, 16).astype(np.float32)

    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder((32, 16))) -> tp.Numpy:
        h = flow.layers.dense(x, 16, activation=flow.math.relu, name="d1")
        loss = flow.math.reduce_mean(h * h)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01])).minimize(loss)
        return loss

    started = time.time()
    try:
        while time.time() - started < 120:
            step(x)
            if not os.path.exists(marker):
                started = time.time()
                open(marker, "w").close()
    except Exception as error:
        print("RAISED %.1f %s" % (time.time() - started, str(error).replace(chr(10), " ")),
              flush=True)
        sys.exit(7)
    print("NEVER RAISED", flush=True)
"""


def started_pids(completed):
    return [int(pid) for pid in re.findall(r"PID (\d+)", completed.stdout)]


def assert_all_gone(pids):
    deadline = time.time() + 10
    for pid in pids:
        while True:
            try:
                with open("/proc/%d/stat" % pid) as stat:
                    if stat.read().split(") ", 1)[1].startswith("Z"):
                        break  # a zombie: it has exited
            except FileNotFoundError:
                break
            assert time.time() < deadline, "process %d is still running" % pid
            time.sleep(0.1)


def start_by_hand(tmp_path, body, world_size, extra_env):
    """Starts the ranks without the launcher (which would stop the others as soon as one dies):
    each process must notice a lost peer on its own."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    port = str(free_port())
    processes = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world_size),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **extra_env)
        env["PYTHONPATH"] = PACKAGE_DIR + os.pathsep + env.get("PYTHONPATH", "")
        processes.append(subprocess.Popen([sys.executable, str(script)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
    outputs = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=90))
    finally:
        for process in processes:
            process.kill()
    return processes, outputs


@pytest.mark.parametrize("world_size", [2, 3])
def test_a_machine_killed_mid_training_fails_the_others_clearly(world_size, tmp_path):
    victim = world_size - 1
    processes, outputs = start_by_hand(tmp_path, LONG_TRAINING, world_size, {
        "VICTIM": str(victim), "DIE_AFTER": "3", "ONEFLOW_HEARTBEAT_TIMEOUT": "5",
        "TRAINING_STARTED": str(tmp_path / "training_started")})
    assert processes[victim].returncode == -9
    master_out, master_err = outputs[0]
    raised = re.search(r"RAISED ([\d.]+) (.*)", master_out)
    assert raised, (master_out[-2000:], master_err[-2000:])
    # The iteration in flight fails at once (the data plane's connection breaks) or, at the
    # latest, when the heartbeats time out.
    assert float(raised.group(1)) < 3 + 5 + 5, raised.group(0)
    assert "machine %d" % victim in raised.group(2), raised.group(2)
    assert processes[0].returncode == 7, master_err[-2000:]
    for rank in range(1, victim):  # the other workers exit when the master halts the cluster
        assert processes[rank].returncode in (0, 1), outputs[rank][1][-2000:]
    assert_all_gone([process.pid for process in processes])


def test_workers_exit_when_the_master_dies(tmp_path):
    processes, outputs = start_by_hand(tmp_path, LONG_TRAINING, 2, {
        "VICTIM": "0", "DIE_AFTER": "3", "ONEFLOW_HEARTBEAT_TIMEOUT": "3",
        "TRAINING_STARTED": str(tmp_path / "training_started")})
    worker_err = outputs[1][1]
    assert processes[0].returncode == -9
    assert processes[1].returncode == 1, worker_err[-2000:]
    assert "machine 0" in worker_err and "stopped answering heartbeats" in worker_err, \
        worker_err[-2000:]


def test_a_machine_that_never_starts_is_named_by_the_rendezvous(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(TRAIN_SCRIPT.format(mode="data_parallel", devices=1)))
    env = dict(os.environ, RANK="0", WORLD_SIZE="3", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), ONEFLOW_RENDEZVOUS_TIMEOUT="2")
    env["PYTHONPATH"] = HERE + os.pathsep + PACKAGE_DIR + os.pathsep + env.get("PYTHONPATH", "")
    started = time.time()
    completed = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                               text=True, timeout=60)
    assert completed.returncode == 1
    assert time.time() - started < 30
    assert re.search(r"rendezvous at 127\.0\.0\.1:\d+ timed out after 2 s: machines 1, 2 of 3 "
                     r"never registered", completed.stderr), completed.stderr[-2000:]


def test_machines_listed_with_flow_env_machine(tmp_path):
    """OneFlow 0.3's way: flow.env.machine + flow.env.ctrl_port, and RANK in each environment."""
    port = free_port()
    body = textwrap.dedent(TRAIN_SCRIPT.format(mode="data_parallel", devices=1)).replace(
        "import json", "import json\nimport oneflow as flow\nflow.env.machine([{'addr': "
        "'127.0.0.1'}, {'addr': '127.0.0.1'}])\nflow.env.ctrl_port(%d)" % port, 1)
    script = tmp_path / "script.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\n" % HERE + body)
    processes = []
    for rank in (0, 1):
        env = {k: v for k, v in os.environ.items()
               if k not in ("WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK")}
        env.update(RANK=str(rank), PYTHONPATH=PACKAGE_DIR + os.pathsep + env.get("PYTHONPATH", ""))
        processes.append(subprocess.Popen([sys.executable, str(script)], env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outputs = [process.communicate(timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs[0][1][-2000:]
    import test_parallel_training as models

    model, batch_axis, names, _ = models.MODES["data_parallel"]
    reference_losses = models.train(1, model, batch_axis, names)[0]
    (line,) = [line for line in outputs[0][0].splitlines() if line.startswith("RESULT ")]
    np.testing.assert_allclose(json.loads(line[7:])["losses"], np.array(reference_losses),
                               rtol=models.LOSS_RTOL)


def test_one_process_cannot_run_a_placement_on_another_machine(tmp_path):
    body = """
        import numpy as np
        import oneflow as flow
        import oneflow.typing as tp

        @flow.global_function()
        def f(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
            with flow.scope.placement("cpu", "1:0"):
                return flow.math.relu(x)

        try:
            f(np.ones(2, np.float32))
        except ValueError as error:
            print("RAISED", str(error).replace(chr(10), " "), flush=True)
    """
    completed = launch(tmp_path, body, 1)
    assert "RAISED" in completed.stdout and "names machine 1" in completed.stdout, \
        completed.stdout
    assert "oneflow.distributed.launch" in completed.stdout


def test_mirrored_values_across_machines(tmp_path):
    """The mirrored view over two machines: one array per device comes back per device; arrays
    of different shapes per device (one device's shape each, tests/python/
    test_mirrored_per_device_shapes.py) are refused there, saying why, and the job still runs."""
    body = """
        import json
        import numpy as np
        import oneflow as flow
        import oneflow.typing as tp

        config = flow.FunctionConfig()
        config.default_logical_view(flow.scope.mirrored_view())

        @flow.global_function(function_config=config)
        def f(x: tp.ListNumpy.Placeholder((4, 2))) -> tp.ListNumpy:
            with flow.scope.placement("cpu", ["0:0", "1:0"]):
                return flow.math.relu(x) * 2.0

        same = [np.arange(8, dtype=np.float32).reshape(4, 2) - 3, -np.ones((4, 2), np.float32)]
        first = [value.tolist() for value in f(same)]
        try:
            f([np.ones((3, 2), np.float32), np.ones((2, 2), np.float32)])
            outcome = "ran"
        except ValueError as error:
            outcome = str(error).replace(chr(10), " ")
        again = [value.tolist() for value in f(same)]
        print("RESULT " + json.dumps({"first": first, "outcome": outcome, "again": again}),
              flush=True)
    """
    (result,) = results(launch(tmp_path, body, 2))
    expected = [(np.arange(8).reshape(4, 2) - 3).clip(0) * 2, np.zeros((4, 2))]
    for got in (result["first"], result["again"]):
        for value, want in zip(got, expected):
            np.testing.assert_array_equal(value, want)
    assert "several machines" in result["outcome"], result["outcome"]


def test_a_dynamic_blob_is_not_read_across_machines(tmp_path):
    """Transfers between machines carry no run shapes: a reader of argwhere's result on another
    machine is refused at compile time, saying why; one on the same machine runs."""
    body = """
        import json
        import numpy as np
        import oneflow as flow
        import oneflow.typing as tp

        def make(reader):
            def f(x: tp.Numpy.Placeholder((4,), batch_axis=None)) -> tp.Numpy:
                with flow.scope.placement("cpu", "0:0"):
                    rows = flow.argwhere(x)
                with flow.scope.placement("cpu", reader):
                    return flow.gather_nd(params=x, indices=rows)
            f.__name__ = "read_on_" + reader.replace(":", "_")
            return flow.global_function()(f)

        x = np.array([0, 2, 0, 3], np.float32)
        near = make("0:0")(x).tolist()
        try:
            make("1:0")(x)
            outcome = "ran"
        except ValueError as error:
            outcome = str(error).replace(chr(10), " ")
        print("RESULT " + json.dumps({"near": near, "outcome": outcome}), flush=True)
    """
    (result,) = results(launch(tmp_path, body, 2))
    assert result["near"] == [2.0, 3.0]
    assert "depends on the data" in result["outcome"] and "across machines" in result["outcome"], \
        result["outcome"]
