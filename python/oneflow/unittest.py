"""oneflow.unittest: what OneFlow-style test files use before anything else.

TestCase.setUp clears the default session; skip_unless_<N>n<M>d runs a test only when the
number of nodes (ONEFLOW_TEST_NODE_LIST) and devices per node (ONEFLOW_TEST_DEVICE_NUM) match.
"""
import os
import unittest as _unittest

import oneflow


class _Env:
    @property
    def eager_execution_enabled(self):
        return os.getenv("ONEFLOW_TEST_ENABLE_EAGER") == "1"

    @property
    def typing_check_enabled(self):
        return os.getenv("ONEFLOW_TEST_ENABLE_TYPING_CHECK") == "1"

    @property
    def node_list(self):
        value = os.getenv("ONEFLOW_TEST_NODE_LIST")
        return value.split(",") if value else None

    @property
    def has_node_list(self):
        return self.node_list is not None

    @property
    def node_size(self):
        return len(self.node_list) if self.has_node_list else 1

    @property
    def device_num(self):
        return int(os.getenv("ONEFLOW_TEST_DEVICE_NUM", "1"))


env = _Env()
_state = {"env_initialized": False}


class TestCase(_unittest.TestCase):
    def setUp(self):
        if env.has_node_list and env.node_size > 1:
            oneflow.env.machine(env.node_list)
        log_dir = os.getenv("ONEFLOW_TEST_LOG_DIR")
        if log_dir:
            oneflow.env.log_dir(log_dir)
        if not _state["env_initialized"]:
            oneflow.env.init()
            _state["env_initialized"] = True
        oneflow.clear_default_session()
        oneflow.enable_eager_execution(env.eager_execution_enabled)
        oneflow.experimental.enable_typing_check(env.typing_check_enabled)


def _skip_unless(node_size, device_num):
    if env.node_size == node_size and env.device_num == device_num:
        return lambda func: func
    return _unittest.skip(
        "requires %d node(s) with %d device(s) each (ONEFLOW_TEST_NODE_LIST, "
        "ONEFLOW_TEST_DEVICE_NUM)" % (node_size, device_num)
    )


def skip_unless_1n1d():
    return _skip_unless(1, 1)


def skip_unless_1n2d():
    return _skip_unless(1, 2)


def skip_unless_1n4d():
    return _skip_unless(1, 4)


def skip_unless_2n1d():
    return _skip_unless(2, 1)


def skip_unless_2n2d():
    return _skip_unless(2, 2)


def skip_unless_2n4d():
    return _skip_unless(2, 4)


def num_nodes_required(count):
    return lambda cls: cls
