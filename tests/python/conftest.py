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
