"""oneflow.env: the process's environment (machines, ports, log dir). One machine for now."""
import os

_state = {"initialized": False, "machines": None, "log_dir": None, "eager": False}


def init():
    """Initialises the environment once per process (repeated calls do nothing)."""
    machines = _state["machines"]
    if machines is not None and len(machines) > 1:
        raise NotImplementedError(
            "running on several machines (flow.env.machine with %d machines) arrives in a later "
            "version" % len(machines)
        )
    _state["initialized"] = True
    return True


def machine(*machines):
    if len(machines) == 1 and isinstance(machines[0], (list, tuple)):
        machines = machines[0]
    _state["machines"] = list(machines)


def ctrl_port(port):
    _state["ctrl_port"] = int(port)


def data_port(port):
    _state["data_port"] = int(port)


def log_dir(path):
    _state["log_dir"] = str(path)


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
    return {"machine_num": 1, "cpu_device_num": config.cpu_device_num or 1, "gpu_device_num": 0}


def enable_eager_execution(enabled=True):
    if enabled:
        raise NotImplementedError(
            "eager execution is not supported: oneflow runs jobs lazily (compiled Plans); "
            "call flow.enable_eager_execution(False) or leave it unset"
        )
    _state["eager"] = False


def eager_execution_enabled():
    return False

