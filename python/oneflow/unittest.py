"""oneflow.unittest: what OneFlow-style test files use before anything else.

TestCase.setUp clears the default session; skip_unless_<N>n<M>d runs a test only when the
number of nodes (ONEFLOW_TEST_NODE_LIST) and devices per node (ONEFLOW_TEST_DEVICE_NUM) match.
"""
import os
import unittest as _unittest

import oneflow


def _eager_execution_enabled():
    """Whether the tests are asked to run eagerly (ONEFLOW_TEST_ENABLE_EAGER=1)."""
    return os.getenv("ONEFLOW_TEST_ENABLE_EAGER") == "1"


def _typing_check_enabled():
    return os.getenv("ONEFLOW_TEST_ENABLE_TYPING_CHECK") == "1"


def _has_node_list():
    return bool(os.getenv("ONEFLOW_TEST_NODE_LIST"))


def _node_list():
    """The machines of ONEFLOW_TEST_NODE_LIST (comma separated); an error when it is unset."""
    value = os.getenv("ONEFLOW_TEST_NODE_LIST")
    if not value:
        raise RuntimeError("flow.unittest.env.node_list(): ONEFLOW_TEST_NODE_LIST is not set "
                           "(check flow.unittest.env.has_node_list() first)")
    return value.split(",")


def _node_size():
    return len(_node_list()) if _has_node_list() else 1


def _device_num():
    return int(os.getenv("ONEFLOW_TEST_DEVICE_NUM") or "1")


class _Env:
    """flow.unittest.env: functions, as in OneFlow 0.3 (`flow.unittest.env.node_size()`); each
    reads the environment when called."""

    eager_execution_enabled = staticmethod(_eager_execution_enabled)
    typing_check_enabled = staticmethod(_typing_check_enabled)
    node_list = staticmethod(_node_list)
    has_node_list = staticmethod(_has_node_list)
    node_size = staticmethod(_node_size)
    device_num = staticmethod(_device_num)


env = _Env()
_state = {"env_initialized": False}


class TestCase(_unittest.TestCase):
    def setUp(self):
        if env.has_node_list() and env.node_size() > 1:
            oneflow.env.machine(env.node_list())
            for variable, setter in (("ONEFLOW_TEST_CTRL_PORT", oneflow.env.ctrl_port),
                                     ("ONEFLOW_TEST_DATA_PORT", oneflow.env.data_port)):
                if os.getenv(variable):
                    setter(int(os.getenv(variable)))
        log_dir = os.getenv("ONEFLOW_TEST_LOG_DIR")
        if log_dir:
            oneflow.env.log_dir(log_dir)
        if not _state["env_initialized"]:
            oneflow.env.init()
            _state["env_initialized"] = True
        oneflow.clear_default_session()
        oneflow.enable_eager_execution(env.eager_execution_enabled())
        oneflow.experimental.enable_typing_check(env.typing_check_enabled())


def _skip_unless(node_size, device_num):
    if env.node_size() == node_size and env.device_num() == device_num:
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


def _either_spelling(factory):
    """skip_if_not_<N>n<M>d: some OneFlow test files of the 0.3 period call it
    (`@flow.unittest.skip_if_not_1n1d()`), others apply it bare (`@...skip_if_not_1n1d`)."""

    def decorator(target=None):
        return factory() if target is None else factory()(target)

    decorator.__name__ = factory.__name__.replace("skip_unless", "skip_if_not")
    return decorator


skip_if_not_1n1d = _either_spelling(skip_unless_1n1d)
skip_if_not_1n2d = _either_spelling(skip_unless_1n2d)
skip_if_not_1n4d = _either_spelling(skip_unless_1n4d)
skip_if_not_2n1d = _either_spelling(skip_unless_2n1d)
skip_if_not_2n2d = _either_spelling(skip_unless_2n2d)
skip_if_not_2n4d = _either_spelling(skip_unless_2n4d)


def _marker(attribute):
    def mark(count):
        def decorator(func):
            setattr(func, attribute, count)
            return func

        return decorator

    return mark


# Mark a test function as needing `count` nodes (read by register_test_cases), or `count`
# devices per node (OneFlow 0.2's test files; only recorded, the test sets its device count).
num_nodes_required = _marker("__oneflow_test_case_num_nodes_required__")
num_gpus_per_node_required = _marker("__oneflow_test_case_num_gpus_per_node_required__")


class _ClearDefaultSession:
    def setUp(self):
        oneflow.clear_default_session()
        oneflow.enable_eager_execution(False)


def register_test_cases(scope, directory, filter_by_num_nodes, base_class=_unittest.TestCase,
                        test_case_mixin=_ClearDefaultSession):
    """Legacy: for each test*.py file of `directory`, adds to `scope` a TestCase class (named
    after the file) made of its test* functions whose node count (num_nodes_required, default
    1) passes filter_by_num_nodes."""
    import importlib.util

    for file_name in sorted(os.listdir(directory)):
        path = os.path.join(directory, file_name)
        is_test_file = file_name.startswith("test") and file_name.endswith(".py")
        if not (is_test_file and os.path.isfile(path)):
            continue
        class_name = file_name[:-3]
        spec = importlib.util.spec_from_file_location(class_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        methods = {}
        for name in dir(module):
            method = getattr(module, name)
            nodes = getattr(method, "__oneflow_test_case_num_nodes_required__", 1)
            if name.startswith("test") and callable(method) and filter_by_num_nodes(nodes):
                methods[name] = method
        scope[class_name] = type(class_name, (test_case_mixin, base_class), methods)
