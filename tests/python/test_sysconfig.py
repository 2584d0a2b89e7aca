"""flow.sysconfig: build facts and visible GPUs, checked against the machine (NVIDIA device files,
the library's contents) rather than against what the package says of itself."""
import glob
import json
import os
import subprocess
import sys

import pytest

import oneflow as flow

def test_cuda_info_is_consistent():
    info = flow.sysconfig.cuda_info()
    assert set(info) == {"built_with_cuda", "runtime_version", "driver_version", "device_count",
                         "reason", "allow_tf32"}
    assert flow.sysconfig.with_cuda() is info["built_with_cuda"]
    assert flow.sysconfig.gpu_device_count() == info["device_count"] >= 0
    if not info["built_with_cuda"]:
        assert info["runtime_version"] == 0 and info["device_count"] == 0
        assert "no CUDA" in info["reason"]
    else:
        assert info["runtime_version"] >= 11000
    if info["device_count"] == 0:
        assert info["reason"], "a zero GPU count must say why"
    else:
        assert info["reason"] == ""


@pytest.mark.parametrize("value, allowed", [(None, False), ("0", False), ("1", True)])
def test_allow_tf32_follows_the_environment(value, allowed):
    """ONEFLOW_CUDA_ALLOW_TF32=1 (only "1") lets float32 GPU kernels use TF32; off by default."""
    env = {key: item for key, item in os.environ.items() if key != "ONEFLOW_CUDA_ALLOW_TF32"}
    if value is not None:
        env["ONEFLOW_CUDA_ALLOW_TF32"] = value
    code = "import oneflow as flow; print(flow.sysconfig.cuda_info()['allow_tf32'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120,
                         stdout=subprocess.PIPE, text=True).stdout
    assert out.strip() == str(allowed)


GPU_OPTIONS_CODE = """
import json
import numpy as np
import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import session as session_util

def options(tf32=None, heuristic=None):
    flow.clear_default_session()
    if tf32 is not None:
        flow.config.enable_tensor_float_32_compute(tf32)
    if heuristic is not None:
        flow.config.enable_cudnn_conv_heuristic_search_algo(heuristic)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x + 1

    assert (job(np.zeros(2, np.float32)) == 1).all()
    return session_util.default_session().cpp.gpu_options

print(json.dumps([options(), options(True), options(False, False), options(heuristic=True)]))
"""


@pytest.mark.parametrize("environment", [None, "1"])
def test_gpu_options_reach_the_session(environment):
    """flow.config.enable_tensor_float_32_compute and enable_cudnn_conv_heuristic_search_algo
    reach the C++ session (its GPU devices' options); not called, TF32 follows
    ONEFLOW_CUDA_ALLOW_TF32 and convolutions use cuDNN's heuristics."""
    env = {key: item for key, item in os.environ.items() if key != "ONEFLOW_CUDA_ALLOW_TF32"}
    if environment is not None:
        env["ONEFLOW_CUDA_ALLOW_TF32"] = environment
    out = subprocess.run([sys.executable, "-c", GPU_OPTIONS_CODE], env=env, check=True,
                         timeout=240, stdout=subprocess.PIPE, text=True).stdout
    default_tf32 = environment == "1"
    assert json.loads(out.strip().splitlines()[-1]) == [
        {"allow_tf32": default_tf32, "conv_heuristic_search": True},
        {"allow_tf32": True, "conv_heuristic_search": True},
        {"allow_tf32": False, "conv_heuristic_search": False},
        {"allow_tf32": default_tf32, "conv_heuristic_search": True},
    ]


@pytest.mark.parametrize("setter", ["enable_tensor_float_32_compute",
                                    "enable_cudnn_conv_heuristic_search_algo"])
def test_gpu_option_setters_take_a_bool(setter):
    with pytest.raises(TypeError, match=setter):
        getattr(flow.config, setter)(1)
    with pytest.raises(TypeError, match=setter):
        getattr(flow.config, setter)("False")


def test_no_gpu_without_nvidia_device_files():
    if glob.glob("/dev/nvidia[0-9]*"):
        pytest.skip("this machine has NVIDIA devices")
    assert flow.sysconfig.gpu_device_count() == 0


def test_cuda_visible_devices_hides_every_gpu():
    """CUDA_VISIBLE_DEVICES="" leaves no GPU, and importing the package still works."""
    code = "import oneflow as flow; print(flow.sysconfig.gpu_device_count())"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120,
                         stdout=subprocess.PIPE, text=True).stdout
    assert out.strip() == "0"


def test_with_cuda_matches_the_library():
    """The library links the CUDA runtime (statically: its error texts are in the binary) exactly
    when the package says it was built with CUDA."""
    library = os.path.join(flow.sysconfig.get_lib(), "liboneflow.so")
    with open(library, "rb") as f:
        has_cuda_runtime = b"no CUDA-capable device is detected" in f.read()
    assert flow.sysconfig.with_cuda() == has_cuda_runtime


def test_oneflow_03_sysconfig_names():
    assert flow.sysconfig.with_xla() is False
    assert flow.sysconfig.has_rpc_backend_grpc() is True
    assert os.path.exists(os.path.join(flow.sysconfig.get_lib(), "liboneflow.so"))
    for name in ("get_include", "get_compile_flags", "get_link_flags"):
        with pytest.raises(NotImplementedError, match=name):
            getattr(flow.sysconfig, name)()


@pytest.mark.parametrize("gpus_in_use, expected", [(0, "cpu"), (2, "gpu")])
def test_gpu_placements_stay_on_gpus_in_use(monkeypatch, gpus_in_use, expected):
    """A "gpu" placement runs on the CPU devices only when no GPU is in use; with GPUs in use
    it stays a gpu placement (the compiler then puts its ops on the GPUs)."""
    monkeypatch.setattr(flow.sysconfig, "gpus_in_use", lambda: gpus_in_use)
    flow.clear_default_session()
    assert flow.scope.placement("gpu", "0:0-1").device_tag == expected
    assert flow.scope.placement("cpu", "0:0").device_tag == "cpu"
