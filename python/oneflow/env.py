"""oneflow.env: the process's environment: which machine of a cluster it is, where the
control plane listens, the log dir.

One process is one machine. Several machines (processes) come from the launcher's variables
(`python -m oneflow.distributed.launch`, torchrun, mpirun, Slurm: see
oneflow/distributed/process_identity.py) or from `flow.env.machine([...])` plus RANK. The first
session start (the first call of a global function) initialises the environment: every process
joins the cluster (rendezvous at MASTER_ADDR:MASTER_PORT); machine 0 goes on running the script
and drives every call; the other machines serve the Plans it sends and exit when it is done (as
in OneFlow 0.3), so the rest of the script runs on machine 0 only. See docs/distributed.md.
"""
import ipaddress
import math
import numbers
import os
import socket
import sys

import numpy as np

_state = {
    "initialized": False,
    "machines": None,
    "ctrl_port": None,
    "log_dir": None,
    "eager_request_noted": False,  # flow.enable_eager_execution(True) said it runs lazily
    "cluster": None,
    "identity": None,
    "rendezvous_timeout": None,
    "heartbeat_timeout": None,
}


def _seconds_from_env(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError("%s must be a number of seconds, got %r" % (name, value)) from None
    if seconds <= 0:
        raise ValueError("%s must be positive, got %r" % (name, value))
    return seconds


def _identity():
    """(rank, world_size, master_addr, master_port, data_address, processes_per_host)."""
    from oneflow.distributed import process_identity

    machines = _state["machines"]
    if machines is None or len(machines) <= 1:
        found = process_identity.discover()
        master_port = _state["ctrl_port"] or found.master_port
        local = int(os.environ.get("LOCAL_WORLD_SIZE") or 1) if found.world_size > 1 else 1
        return (found.rank, found.world_size, found.master_addr, master_port,
                _data_address(found.master_addr, found.rank), max(1, local))
    # flow.env.machine([...]): machine i is entry i; the process's rank comes from RANK (or an
    # MPI/Slurm rank); machine 0's address is the master's.
    addresses = [m["addr"] if isinstance(m, dict) else str(m) for m in machines]
    environ = dict(os.environ)
    environ.setdefault("WORLD_SIZE", str(len(machines)))
    environ.setdefault("MASTER_ADDR", addresses[0])
    found = process_identity.discover(environ)
    if found.source == process_identity.SOURCE_SINGLE_PROCESS:
        raise ValueError(
            "flow.env.machine lists %d machines: set RANK (0-%d) in each machine's environment "
            "so each process knows which one it is, or start the script with "
            "python -m oneflow.distributed.launch" % (len(machines), len(machines) - 1))
    if found.world_size != len(machines):
        raise ValueError(
            "flow.env.machine lists %d machines, but %s says the job has %d processes"
            % (len(machines), found.source, found.world_size))
    master_port = _state["ctrl_port"] or found.master_port
    same_host = addresses.count(addresses[found.rank])
    return (found.rank, len(machines), addresses[0], master_port, addresses[found.rank],
            same_host)


def _data_address(master_addr, rank):
    """This machine's address as the others reach it: ONEFLOW_NODE_ADDR if set; the loopback
    address when the master is on this host's loopback; else the address of the interface that
    routes to the master."""
    explicit = os.environ.get("ONEFLOW_NODE_ADDR")
    if explicit:
        return explicit
    try:
        if ipaddress.ip_address(socket.gethostbyname(master_addr)).is_loopback:
            return "127.0.0.1"
    except (OSError, ValueError):
        pass
    if rank == 0:
        return master_addr
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((master_addr, 9))  # no packet is sent: only a route is chosen
        return probe.getsockname()[0]
    except OSError:
        return socket.gethostbyname(socket.gethostname())
    finally:
        probe.close()


def init():
    """Initialises the environment once per process (repeated calls do nothing). On machines
    other than 0 of a cluster it never returns: the process serves machine 0 and exits."""
    if _state["initialized"]:
        return True
    rank, world_size, master_addr, master_port, data_address, per_host = _identity()
    _state["identity"] = {"rank": rank, "world_size": world_size, "processes_per_host": per_host}
    if world_size > 1:
        _bind_cores(per_host)
        from oneflow import _oneflow_internal

        cluster = _oneflow_internal.Cluster(
            rank=rank,
            world_size=world_size,
            master_addr=master_addr,
            master_port=master_port,
            data_address=data_address,
            rendezvous_timeout_s=_state["rendezvous_timeout"]
            or _seconds_from_env("ONEFLOW_RENDEZVOUS_TIMEOUT", 300.0),
            heartbeat_timeout_s=_state["heartbeat_timeout"]
            or _seconds_from_env("ONEFLOW_HEARTBEAT_TIMEOUT", 30.0),
        )
        _state["cluster"] = cluster
        if rank != 0:
            _serve_and_exit(cluster, rank)
    _state["initialized"] = True
    return True


def _bind_cores(per_host):
    """Processes sharing a host each get their own share of its cores (LOCAL_RANK picks it), so
    the threads of one process are not scheduled against another's: on 2 cores, a transfer's
    round trip between 2 processes took 0.6 ms bound and 2-4 ms unbound. ONEFLOW_BIND_CORES=0
    leaves the affinity alone (e.g. when an MPI launcher binds processes itself)."""
    if per_host <= 1 or os.environ.get("ONEFLOW_BIND_CORES", "1") == "0":
        return
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    share = len(cores) // per_host
    if share < 1 or local_rank >= per_host:
        return
    os.sched_setaffinity(0, cores[local_rank * share:(local_rank + 1) * share])


def _serve_and_exit(cluster, rank):
    """A worker's life: serve machine 0 until it halts the cluster, then exit (status 0), or
    exit with status 1 and the reason when the cluster fails."""
    status = 0
    try:
        cluster.serve_as_worker()
    except BaseException as error:  # noqa: B902 - the process ends here either way
        print("oneflow: machine %d stops: %s" % (rank, error), file=sys.stderr)
        status = 1
    try:
        cluster.halt()
    except BaseException:  # noqa: B902
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def cluster():
    """The cluster this process belongs to (None for a single process)."""
    return _state["cluster"]


def processes_per_host():
    identity = _state["identity"]
    return identity["processes_per_host"] if identity else 1


def machine_num():
    identity = _state["identity"]
    return identity["world_size"] if identity else 1


def shutdown():
    """Machine 0 at exit: tells the other machines to exit, then leaves the cluster."""
    cluster_ = _state["cluster"]
    if cluster_ is not None:
        cluster_.halt()


def _seconds(value, what):
    """A positive, finite number of seconds (numpy numbers too)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise TypeError("flow.env.%s: seconds must be a number, got %r" % (what, value))
    if not math.isfinite(value) or value <= 0:
        raise ValueError("flow.env.%s: seconds must be positive and finite, got %r"
                         % (what, value))
    return float(value)


def _port(value, what):
    """A TCP port number, 1-65535 (numpy integers too)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("flow.env.%s: port must be an int, got %r" % (what, value))
    if not 1 <= value <= 65535:
        raise ValueError("flow.env.%s: port must be in [1, 65535], got %d" % (what, value))
    return int(value)


def rendezvous_timeout(seconds):
    """How long the first session start waits for every machine to join (default 300 s, or
    $ONEFLOW_RENDEZVOUS_TIMEOUT)."""
    _state["rendezvous_timeout"] = _seconds(seconds, "rendezvous_timeout")


def heartbeat_timeout(seconds):
    """How long a silent machine may stay silent before every other one fails naming it
    (default 30 s, or $ONEFLOW_HEARTBEAT_TIMEOUT)."""
    _state["heartbeat_timeout"] = _seconds(seconds, "heartbeat_timeout")


def machine(*machines):
    """The machines of the job, as OneFlow 0.3 listed them: [{"addr": "192.168.1.1"}, ...] (or
    address strings)."""
    if len(machines) == 1 and isinstance(machines[0], (list, tuple)):
        machines = machines[0]
    for index, entry in enumerate(machines):
        address = entry.get("addr") if isinstance(entry, dict) else entry
        if not isinstance(address, str) or not address:
            raise TypeError("flow.env.machine: machine %d must be {\"addr\": \"<host>\"} or a "
                            "host name, got %r" % (index, entry))
    _state["machines"] = list(machines)


def ctrl_port(port):
    """The port machine 0's control plane (gRPC) listens on (default $MASTER_PORT or 29500)."""
    _state["ctrl_port"] = _port(port, "ctrl_port")


def data_port(port):
    """Accepted for OneFlow 0.3 scripts. The data plane (Gloo TCP) picks its own ports."""
    _state["data_port"] = _port(port, "data_port")


def log_dir(path):
    """Where logs (the actor timeline of flow.config.collect_act_event) are written."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("flow.env.log_dir: path must be a str or os.PathLike, got %r" % (path,))
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError("flow.env.log_dir: %r exists and is not a directory" % os.fspath(path))
    try:  # created now, so a folder that cannot be is an error here, not when logs are written
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise ValueError("flow.env.log_dir: cannot create the directory %r: %s"
                         % (os.fspath(path), error.strerror or error)) from None
    _state["log_dir"] = os.fspath(path)


def current_log_dir():
    return _state["log_dir"] or os.path.join(os.getcwd(), "log")


def logtostderr(value):
    pass


def logbuflevel(value):
    pass


def grpc_use_no_signal(value=True):
    pass


def current_resource():
    from oneflow.framework import session as session_util

    config = session_util.default_session().config
    return {"machine_num": machine_num(), "cpu_device_num": config.cpu_device_num or 1,
            "gpu_device_num": 0}


def enable_eager_execution(enabled=True):
    """OneFlow 0.3's experimental eager mode is not available: global functions are always
    traced once, compiled and run as a Plan. Asking for eager mode says so once on stderr and
    goes on lazily, which gives the same results for functions whose bodies do not read blob
    values while they are traced (OneFlow 0.3's tests, run with ONEFLOW_TEST_ENABLE_EAGER=1).
    eager_execution_enabled() stays False: the mode in use."""
    if enabled and not _state["eager_request_noted"]:
        print("oneflow: eager execution is not available in this version; global functions are "
              "compiled and run lazily", file=sys.stderr)
        _state["eager_request_noted"] = True


def eager_execution_enabled():
    return False

