"""Shared fixtures: every test starts and ends with a fresh default session.

Every test runs under a timeout (pytest.ini: timeout, timeout_method = thread).
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # op_checker

import oneflow as flow  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_session():
    """Clears the default session around each test so no job or variable leaks between tests."""
    flow.clear_default_session()
    yield
    flow.clear_default_session()


def pytest_generate_tests(metafunc):
    """Tests of modules that use the op checker run twice: on CPU devices, and ("gpu") with the
    op checker's GPU pass, which is skipped, and counted as skipped, without GPUs in use."""
    import op_checker

    uses_checker = any(value is op_checker or value is op_checker.check_op
                       for value in vars(metafunc.module).values())
    if "op_device" in metafunc.fixturenames and uses_checker:
        metafunc.parametrize("op_device", ["cpu", "gpu"], indirect=True)


@pytest.fixture(autouse=True)
def op_device(request):
    """"cpu", or "gpu": check_op then also runs each op on GPUs against its CPU kernels."""
    import op_checker

    device = getattr(request, "param", "cpu")
    if device == "gpu" and flow.sysconfig.gpus_in_use() == 0:
        pytest.skip("GPU pass of the op checker: no GPU in use (flow.sysconfig.gpus_in_use() "
                    "is 0; run on a machine with a GPU and ONEFLOW_GPU=1)")
    op_checker.DEVICE = device
    yield device
    op_checker.DEVICE = "cpu"


@pytest.fixture
def sgd():
    """sgd(lr, momentum=0, boundaries=()) -> a flow.optimizer.SGD with a piecewise constant
    schedule; `lr` is one value, or a list of len(boundaries) + 1 values."""

    def make(lr, momentum=0.0, boundaries=()):
        values = list(lr) if isinstance(lr, (list, tuple)) else [lr]
        scheduler = flow.optimizer.PiecewiseConstantScheduler(list(boundaries), values)
        return flow.optimizer.SGD(scheduler, momentum=momentum)

    return make


@pytest.fixture
def rng():
    return np.random.RandomState(0)
