"""python -m oneflow.distributed.launch: variables, output prefixes, failure handling, signals,
argument errors. The launched scripts are tiny plain Python files (they do not import oneflow)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import oneflow
from oneflow.distributed import launch

pytestmark = pytest.mark.timeout(60)

# The folder holding the `oneflow` package under test, wherever it is installed.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(oneflow.__file__)))
LAUNCHER = [sys.executable, "-m", "oneflow.distributed.launch"]

# Each rank writes its pid to pid.<rank> (with a rename, so a file is never seen half written);
# rank FAILING_RANK then waits until every rank has started before it fails, so the pids of the
# ranks the launcher stops are known.
_WAIT_FOR_ALL_RANKS = """
import os, signal, subprocess, sys, time
rank = int(os.environ["RANK"])
world_size = int(os.environ["WORLD_SIZE"])

def write_pid(name, pid):
    with open(name + ".tmp", "w") as f:
        f.write(str(pid))
    os.rename(name + ".tmp", name)

def wait_for_all_ranks():
    deadline = time.monotonic() + 40
    while not all(os.path.exists("pid.%d" % r) for r in range(world_size)):
        if time.monotonic() > deadline:
            sys.exit("the other ranks never started")
        time.sleep(0.02)
"""


def _env():
    return dict(os.environ, PYTHONPATH=PACKAGE_PARENT)


def run_launcher(arguments, cwd):
    return subprocess.run(LAUNCHER + [str(a) for a in arguments], cwd=str(cwd), env=_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=50)


def write_script(directory, body, name="script.py"):
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


def read_pids(directory, world_size):
    return [int((directory / ("pid.%d" % rank)).read_text()) for rank in range(world_size)]


def wait_for_pid_files(directory, world_size, launcher):
    """Waits (with a generous bound) until every rank started by `launcher` wrote its pid."""
    deadline = time.monotonic() + 40
    while not all((directory / ("pid.%d" % r)).exists() for r in range(world_size)):
        assert launcher.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


def alive(pid):
    """Whether `pid` is a live process (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def assert_gone(pids):
    """Every pid ends within a generous bound (an orphan may need a moment to die)."""
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []


PRINT_ENV = """
import os, sys
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
         "PYTHONUNBUFFERED", "FROM_PARENT"]
print("env " + " ".join(os.environ.get(name, "-") for name in names))
print("args " + " ".join(sys.argv[1:]))
print("err " + os.environ["RANK"], file=sys.stderr)
sys.stdout.write("no newline " + os.environ["RANK"])
"""


def lines_of(rank, output):
    prefix = "[rank %d] " % rank
    return [line[len(prefix):] for line in output.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize("nproc", [2, 3])
def test_each_rank_gets_its_variables_and_prefixed_output(nproc, tmp_path, monkeypatch):
    write_script(tmp_path, PRINT_ENV)
    monkeypatch.setenv("FROM_PARENT", "kept")
    result = run_launcher(["--nproc_per_node", nproc, "script.py", "--lr", "0.5"], tmp_path)
    assert result.returncode == 0, result.stderr
    for line in result.stdout.splitlines():
        assert line.startswith("[rank "), line
    for rank in range(nproc):
        assert lines_of(rank, result.stdout) == [
            "env %d %d %d %d 127.0.0.1 29500 1 kept" % (rank, rank, nproc, nproc),
            "args --lr 0.5",
            "no newline %d" % rank,
        ]
        assert lines_of(rank, result.stderr) == ["err %d" % rank]


def test_second_node_ranks_follow_the_first_nodes(tmp_path):
    write_script(tmp_path, PRINT_ENV)
    result = run_launcher(["--nproc_per_node", 2, "--nnodes", 2, "--node_rank", 1,
                           "--master_addr", "10.1.2.3", "--master_port", 12345, "script.py"],
                          tmp_path)
    assert result.returncode == 0, result.stderr
    assert lines_of(0, result.stdout) == lines_of(1, result.stdout) == []
    for local_rank, rank in enumerate([2, 3]):
        assert lines_of(rank, result.stdout)[0] == (
            "env %d %d 4 2 10.1.2.3 12345 1 -" % (rank, local_rank))


def test_module_form(tmp_path):
    write_script(tmp_path, PRINT_ENV, name="printenv_module.py")
    result = run_launcher(["--nproc_per_node", 2, "--module", "printenv_module", "x"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert lines_of(1, result.stdout)[:2] == ["env 1 1 2 2 127.0.0.1 29500 1 -", "args x"]


def test_failing_rank_stops_the_others_and_sets_the_exit_code(tmp_path):
    write_script(tmp_path, _WAIT_FOR_ALL_RANKS + """
if rank == 0:  # a process started by a rank is stopped too
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    write_pid("grandchild", sleeper.pid)
write_pid("pid.%d" % rank, os.getpid())
if rank == 1:
    wait_for_all_ranks()
    for line in range(30):
        print("stderr line %d" % line, file=sys.stderr)
    sys.exit(3)
time.sleep(60)
""")
    started = time.monotonic()
    result = run_launcher(["--nproc_per_node", 3, "script.py"], tmp_path)
    assert result.returncode == 3, result.stderr
    assert time.monotonic() - started < 40  # not the ranks' 60 s sleep
    assert "rank 1 (local rank 1) exited with code 3" in result.stderr
    summary = result.stderr[result.stderr.index("exited with code 3"):]
    assert "    stderr line 29\n" in summary
    assert "    stderr line 10\n" in summary
    assert "stderr line 9\n" not in summary  # only the last 20 lines
    pids = read_pids(tmp_path, 3)
    for pid in pids:  # the launcher has reaped its children
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert_gone([int((tmp_path / "grandchild").read_text())])


def test_rank_killed_by_a_signal(tmp_path):
    write_script(tmp_path, _WAIT_FOR_ALL_RANKS + """
write_pid("pid.%d" % rank, os.getpid())
if rank == 0:
    wait_for_all_ranks()
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(60)
""")
    result = run_launcher(["--nproc_per_node", 2, "script.py"], tmp_path)
    assert result.returncode == 128 + signal.SIGKILL, result.stderr
    assert "rank 0 (local rank 0) was killed by SIGKILL" in result.stderr
    assert "rank 0 wrote nothing to stderr" in result.stderr
    assert_gone(read_pids(tmp_path, 2))


def test_rank_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    write_script(tmp_path, _WAIT_FOR_ALL_RANKS + """
signal.signal(signal.SIGTERM, signal.SIG_IGN)
write_pid("pid.%d" % rank, os.getpid())
if rank == 1:
    wait_for_all_ranks()
    sys.exit(5)
time.sleep(60)
""")
    result = run_launcher(["--nproc_per_node", 2, "--grace_period", 0.5, "script.py"], tmp_path)
    assert result.returncode == 5, result.stderr
    assert "rank 0 was killed by SIGKILL" in result.stderr
    assert_gone(read_pids(tmp_path, 2))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_the_launcher_reaches_every_rank(signum, tmp_path):
    write_script(tmp_path, _WAIT_FOR_ALL_RANKS + """
write_pid("pid.%d" % rank, os.getpid())
time.sleep(60)
""")
    launcher = subprocess.Popen(LAUNCHER + ["--nproc_per_node", "2", "script.py"],
                                cwd=str(tmp_path), env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)
    try:
        wait_for_pid_files(tmp_path, 2, launcher)
        launcher.send_signal(signum)
        _, stderr = launcher.communicate(timeout=40)
    finally:
        launcher.kill()
        launcher.wait()
    assert launcher.returncode == 128 + signum, stderr
    assert "received %s" % signal.Signals(signum).name in stderr
    for pid in read_pids(tmp_path, 2):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses PR_SET_PDEATHSIG")
def test_ranks_die_with_a_killed_launcher(tmp_path):
    write_script(tmp_path, _WAIT_FOR_ALL_RANKS + """
write_pid("pid.%d" % rank, os.getpid())
time.sleep(60)
""")
    launcher = subprocess.Popen(LAUNCHER + ["--nproc_per_node", "2", "script.py"],
                                cwd=str(tmp_path), env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    try:
        wait_for_pid_files(tmp_path, 2, launcher)
    finally:
        launcher.kill()  # no cleanup of the launcher's runs
        launcher.wait()
    assert_gone(read_pids(tmp_path, 2))


@pytest.mark.parametrize("arguments, message", [
    (["--nproc_per_node", "0", "script.py"], "--nproc_per_node must be at least 1"),
    (["--nnodes", "0", "script.py"], "--nnodes must be at least 1"),
    (["--nnodes", "2", "--node_rank", "2", "script.py"], "--node_rank must be in 0..1"),
    (["--master_port", "0", "script.py"], "--master_port 0 is not allowed"),
    (["--master_port", "70000", "script.py"], "--master_port must be in 1..65535"),
    (["--nproc_per_node", "two", "script.py"], "invalid int value"),
    (["--nproc_per_node", "2"], "the following arguments are required: script"),
    (["missing.py"], "script 'missing.py' not found"),
])
def test_bad_arguments(arguments, message, tmp_path, monkeypatch, capsys):
    write_script(tmp_path, "")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        launch.parse_args(arguments)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_arguments_exit_2_from_the_command_line(tmp_path):
    result = run_launcher(["--nproc_per_node", 0, "script.py"], tmp_path)
    assert result.returncode == 2
    assert "--nproc_per_node must be at least 1" in result.stderr


def test_help_explains_the_variables(tmp_path):
    result = run_launcher(["--help"], tmp_path)
    assert result.returncode == 0
    for name in ["RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "128 + N"]:
        assert name in result.stdout


def test_script_arguments_that_look_like_launcher_options_go_to_the_script(tmp_path,
                                                                           monkeypatch):
    write_script(tmp_path, "")
    monkeypatch.chdir(tmp_path)
    args = launch.parse_args(["--nproc_per_node", "2", "script.py", "--nproc_per_node", "5"])
    assert args.nproc_per_node == 2
    assert args.script_args == ["--nproc_per_node", "5"]
