"""oneflow.config: session options, read when the session starts (cleared with the session)."""
import os

import numpy as np

from oneflow.config import collective_boxing  # noqa: F401


def _config():
    """The default session's config; changing it once the session runs has no effect (as in
    OneFlow 0.3), which is said once rather than ignored silently."""
    import sys

    from oneflow.framework import session as session_util

    session = session_util.default_session()
    if session.started:
        print("WARNING: flow.config.* has no effect once the session has started; call "
              "flow.clear_default_session() first", file=sys.stderr)
    return session.config


def _positive_int(value, what):
    """`value` as a Python int (numpy integers too): TypeError for other types, ValueError below
    1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be a positive int, got %r (%s)"
                        % (what, value, type(value).__name__))
    if value < 1:
        raise ValueError("%s must be a positive int, got %r" % (what, value))
    return int(value)


def _device_count(value, what):
    """A positive int no larger than the CPU devices a machine may have (gpu devices without
    GPUs are CPU devices)."""
    from oneflow import _oneflow_internal

    value = _positive_int(value, what)
    if value > _oneflow_internal.max_cpu_devices:
        raise ValueError("%s(%d): at most %d devices per machine are supported"
                         % (what, value, _oneflow_internal.max_cpu_devices))
    return value


def cpu_device_num(value):
    _config().cpu_device_num = _device_count(value, "cpu_device_num")


def gpu_device_num(value):
    """GPUs per machine. Without GPUs in use (flow.sysconfig.gpus_in_use()), gpu devices are
    CPU devices (one informational message) and this sets the CPU device count."""
    from oneflow import sysconfig
    from oneflow.framework import session as session_util

    value = _device_count(value, "gpu_device_num") if value != 0 else 0
    session_util.default_session().note_gpu_mapped_to_cpu()
    in_use = sysconfig.gpus_in_use()
    if in_use and value > in_use:
        raise ValueError("flow.config.gpu_device_num(%d), but this machine has %d GPU(s)"
                         % (value, in_use))
    if value and not in_use:
        _config().cpu_device_num = value
    if in_use:
        _config().gpu_device_num = value  # the default placement: these GPUs


def machine_num(value):
    """The number of machines (processes) of the run; it must match how the script was started
    (one process per machine: python -m oneflow.distributed.launch, or flow.env.machine)."""
    _config().machine_num = _positive_int(value, "machine_num")


def enable_debug_mode(value=True):
    if not isinstance(value, bool):  # bool('no') is True
        raise TypeError("flow.config.enable_debug_mode: value must be a bool, got %r" % (value,))
    _config().debug_mode = value


# More compute threads per device than this would only oversubscribe the cores; tens of
# thousands exhaust the process's thread limit.
_MAX_COMPUTE_THREADS = 1024


def compute_thread_pool_size(value):
    """Compute threads per CPU device (kernels' ParallelFor and BLAS), at most 1024."""
    threads = _positive_int(value, "compute_thread_pool_size")
    if threads > _MAX_COMPUTE_THREADS:
        raise ValueError("compute_thread_pool_size: %d threads per device is more than the %d "
                         "allowed (this machine has %d cores)"
                         % (threads, _MAX_COMPUTE_THREADS, os.cpu_count() or 1))
    _config().compute_threads = threads


def collect_act_event(value=True):
    """Records the actor timeline (one event per act: actor, op, thread, iteration, start and
    end) and writes it as Chrome trace JSON to <log dir>/act_events.json when the session stops
    (or to $ONEFLOW_ACT_EVENT_FILE, which also switches it on). See docs/parallelism.md."""
    _config().collect_act_event = bool(value)


def enable_legacy_model_io(value=True):
    _config().legacy_model_io = bool(value)


def _bool(value, what):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError("%s takes a bool, got %r (%s)" % (what, value, type(value).__name__))
    return bool(value)


def enable_tensor_float_32_compute(val=True):
    """float32 convolutions and matmuls on GPUs may use TF32 tensor cores (10-bit mantissa
    products, about float16's precision, much faster). Not called: ONEFLOW_CUDA_ALLOW_TF32=1
    turns it on, else float32 stays strict (OneFlow 0.3 allowed TF32 by default). No effect on
    CPU devices."""
    _config().tensor_float_32_compute = _bool(val, "enable_tensor_float_32_compute")


def enable_cudnn_conv_heuristic_search_algo(val=True):
    """True (the default): GPU convolutions take the first algorithm of cuDNN's heuristic
    ranking. False: cuDNN's measured search runs every algorithm once per shape, at the first
    call, and takes the fastest (PyTorch's cudnn.benchmark). No effect on CPU devices."""
    _config().cudnn_conv_heuristic_search_algo = _bool(
        val, "enable_cudnn_conv_heuristic_search_algo")


def _ignored(*args, **kwargs):
    """Tuning knobs of OneFlow's GPU/NCCL runtime that have no effect here."""


enable_model_io_v2 = _ignored
comm_net_worker_num = _ignored
use_rdma = _ignored
reserved_device_mem_mbyte = _ignored
reserved_host_mem_mbyte = _ignored
enable_mem_chain_merge = _ignored
nccl_use_compute_stream = _ignored
disable_group_boxing_by_dst_parallel = _ignored
enable_numa_aware_cuda_malloc_host = _ignored
enable_fusion = _ignored
thread_enable_local_message_queue = _ignored
max_mdsave_worker_num = _ignored
rdma_mem_block_mbyte = _ignored
rdma_recv_msg_buf_mbyte = _ignored
save_downloaded_file_to_local_fs = _ignored
persistence_buf_byte = _ignored


def legacy_model_io_enabled():
    """Whether flow.config.enable_legacy_model_io(True) was called for this session."""
    from oneflow.framework import session as session_util

    return bool(session_util.default_session().config.legacy_model_io)


def load_library(path):
    raise NotImplementedError("custom op libraries (flow.config.load_library) are not supported yet")


load_library_now = load_library
