"""flow.sysconfig: what this package was built with and the GPUs it can see.

    flow.sysconfig.with_cuda()          # built with CUDA (ONEFLOW_WITH_CUDA)
    flow.sysconfig.gpu_device_count()   # GPUs this process can use; 0 without a driver or GPU
    flow.sysconfig.cuda_info()          # the details, including why no GPU is usable

OneFlow 0.3 exported with_cuda, with_xla, has_rpc_backend_grpc, has_rpc_backend_local,
get_include, get_lib, get_compile_flags and get_link_flags here. Building custom C++ ops against
the installed package is not supported (no headers are installed), so the last three raise
NotImplementedError.
"""
import os

from oneflow import _oneflow_internal


def cuda_info():
    """A dict: built_with_cuda, runtime_version and driver_version (CUDA's integer form, e.g.
    13000; 0 when absent), device_count, reason (why device_count is 0, else "") and allow_tf32
    (ONEFLOW_CUDA_ALLOW_TF32=1: float32 convolutions and matmuls may use TF32 tensor cores)."""
    return dict(_oneflow_internal.cuda_info())


def with_cuda():
    return bool(cuda_info()["built_with_cuda"])


def gpu_device_count():
    return int(cuda_info()["device_count"])


def gpus_in_use():
    """GPUs per machine that "gpu" placements run on: the visible GPUs of a CUDA build when
    GPU execution is turned on (ONEFLOW_GPU=1), else 0 and gpu placements run on the CPU devices
    of the same ids. GPU execution is off by default until the GPU path has been verified on a
    GPU (scripts/gpu_check.sh)."""
    if os.environ.get("ONEFLOW_GPU", "0") not in ("1", "on", "true"):
        return 0
    return gpu_device_count()


def with_xla():
    return False


def has_rpc_backend_grpc():
    return True


def has_rpc_backend_local():
    return True


def get_lib():
    """The folder holding liboneflow.so and the extension module."""
    return os.path.dirname(os.path.abspath(_oneflow_internal.__file__))


def _no_custom_ops(name):
    raise NotImplementedError(
        "flow.sysconfig.%s: building custom C++ ops against the installed package is not "
        "supported (its headers are not installed)" % name)


def get_include():
    _no_custom_ops("get_include")


def get_compile_flags():
    _no_custom_ops("get_compile_flags")


def get_link_flags():
    _no_custom_ops("get_link_flags")
