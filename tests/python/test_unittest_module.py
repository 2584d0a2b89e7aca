"""flow.unittest: skip_unless_<N>n<M>d decorators, env accessors and TestCase.setUp."""
import unittest

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

DECORATORS = {
    "1n1d": (1, 1), "1n2d": (1, 2), "1n4d": (1, 4),
    "2n1d": (2, 1), "2n2d": (2, 2), "2n4d": (2, 4),
}


def run_case(case_class):
    """Runs a unittest.TestCase class; returns its unittest.TestResult."""
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case_class)
    result = unittest.TestResult()
    suite.run(result)
    return result


def make_case(decorator):
    calls = []

    @decorator
    class Case(flow.unittest.TestCase):
        def test_runs(self):
            calls.append(True)

    return Case, calls


@pytest.mark.parametrize("name", sorted(DECORATORS))
@pytest.mark.parametrize("device_num", [None, "1", "2", "4"])
@pytest.mark.parametrize("node_list", [None, "10.0.0.1", "10.0.0.1,10.0.0.2"])
def test_skip_unless(name, device_num, node_list, monkeypatch):
    for variable, value in (("ONEFLOW_TEST_DEVICE_NUM", device_num),
                            ("ONEFLOW_TEST_NODE_LIST", node_list)):
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, value)
    nodes, devices = DECORATORS[name]
    actual_nodes = 1 if node_list is None else len(node_list.split(","))
    actual_devices = 1 if device_num is None else int(device_num)
    should_run = (nodes, devices) == (actual_nodes, actual_devices)
    decorator = getattr(flow.unittest, "skip_unless_" + name)()
    if should_run and actual_nodes > 1:
        # Running the case would make setUp join the listed machines; the decorator must
        # simply leave the class alone.
        assert decorator(make_case) is make_case
        return

    case, calls = make_case(decorator)
    result = run_case(case)
    assert result.errors == [] and result.failures == []
    if should_run:
        assert calls == [True] and result.skipped == []
    else:
        assert calls == [] and len(result.skipped) == 1
        assert "device" in result.skipped[0][1]


def test_skip_unless_1n2d_skips_without_device_num(monkeypatch):
    monkeypatch.delenv("ONEFLOW_TEST_DEVICE_NUM", raising=False)
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST", raising=False)
    case, calls = make_case(flow.unittest.skip_unless_1n2d())
    result = run_case(case)
    assert calls == [] and len(result.skipped) == 1
    case, calls = make_case(flow.unittest.skip_unless_1n1d())
    result = run_case(case)
    assert calls == [True] and result.skipped == []


def test_skip_unless_on_a_method(monkeypatch):
    monkeypatch.delenv("ONEFLOW_TEST_DEVICE_NUM", raising=False)
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST", raising=False)
    calls = []

    class Case(flow.unittest.TestCase):
        @flow.unittest.skip_unless_1n4d()
        def test_skipped(self):
            calls.append("1n4d")

        @flow.unittest.skip_unless_1n1d()
        def test_run(self):
            calls.append("1n1d")

    result = run_case(Case)
    assert calls == ["1n1d"] and len(result.skipped) == 1


def test_env_members_are_functions_as_in_oneflow(monkeypatch):
    """OneFlow 0.3 exports flow.unittest.env.* as functions: checkpoint tests call
    `flow.unittest.env.eager_execution_enabled()` in decorators at import time."""
    monkeypatch.setenv("ONEFLOW_TEST_DEVICE_NUM", "4")
    monkeypatch.setenv("ONEFLOW_TEST_NODE_LIST", "a,b")
    assert flow.unittest.env.device_num() == 4
    assert flow.unittest.env.node_list() == ["a", "b"]
    assert flow.unittest.env.has_node_list() is True and flow.unittest.env.node_size() == 2
    monkeypatch.delenv("ONEFLOW_TEST_DEVICE_NUM")
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST")
    assert flow.unittest.env.device_num() == 1
    assert flow.unittest.env.has_node_list() is False and flow.unittest.env.node_size() == 1
    with pytest.raises(RuntimeError, match="ONEFLOW_TEST_NODE_LIST"):
        flow.unittest.env.node_list()
    for variable, accessor in (("ONEFLOW_TEST_ENABLE_EAGER", "eager_execution_enabled"),
                               ("ONEFLOW_TEST_ENABLE_TYPING_CHECK", "typing_check_enabled")):
        monkeypatch.setenv(variable, "1")
        assert getattr(flow.unittest.env, accessor)() is True
        monkeypatch.setenv(variable, "0")
        assert getattr(flow.unittest.env, accessor)() is False
        monkeypatch.delenv(variable)
        assert getattr(flow.unittest.env, accessor)() is False


def test_oneflow_checkpoint_test_idiom_imports(monkeypatch):
    """The decorator OneFlow 0.3's test_checkpoint.py puts on its methods."""
    monkeypatch.delenv("ONEFLOW_TEST_ENABLE_EAGER", raising=False)

    class Case(flow.unittest.TestCase):
        @unittest.skipIf(flow.unittest.env.eager_execution_enabled(), "lazy only")
        def test_lazy(self):
            pass

    assert run_case(Case).skipped == []
    assert callable(flow.eager_execution_enabled) and flow.eager_execution_enabled() is False


def test_unittest_module_members_match_oneflow():
    for name in ("TestCase", "register_test_cases", "num_nodes_required", "skip_unless_1n1d",
                 "skip_unless_1n2d", "skip_unless_1n4d", "skip_unless_2n1d", "skip_unless_2n2d",
                 "skip_unless_2n4d"):
        assert callable(getattr(flow.unittest, name)), name
    for name in ("eager_execution_enabled", "typing_check_enabled", "node_list",
                 "has_node_list", "node_size", "device_num"):
        assert callable(getattr(flow.unittest.env, name)), name


def test_num_gpus_per_node_required_marks_the_function():
    def body(test_case):
        return 7

    marked = flow.unittest.num_gpus_per_node_required(2)(body)
    assert marked is body and marked(None) == 7
    assert marked.__oneflow_test_case_num_gpus_per_node_required__ == 2


def test_skip_if_not_spelling_is_the_same_decorator(monkeypatch):
    monkeypatch.setenv("ONEFLOW_TEST_DEVICE_NUM", "1")
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST", raising=False)
    runs, _ = make_case(flow.unittest.skip_if_not_1n1d())
    skipped, _ = make_case(flow.unittest.skip_if_not_1n2d())
    assert run_case(runs).skipped == [] and len(run_case(skipped).skipped) == 1
    # Applied bare, as some files of the period do.
    runs, calls = make_case(flow.unittest.skip_if_not_1n1d)
    skipped, skipped_calls = make_case(flow.unittest.skip_if_not_2n1d)
    assert run_case(runs).skipped == [] and calls == [True]
    assert len(run_case(skipped).skipped) == 1 and skipped_calls == []


def test_register_test_cases_filters_by_node_count(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        "import oneflow as flow\n"
        "def test_one(test_case):\n"
        "    test_case.assertTrue(True)\n"
        "@flow.unittest.num_nodes_required(2)\n"
        "def test_two(test_case):\n"
        "    pass\n"
        "def helper():\n"
        "    pass\n")
    (tmp_path / "not_a_test.py").write_text("raise RuntimeError('must not be imported')\n")
    scope = {}
    flow.unittest.register_test_cases(scope, str(tmp_path), lambda nodes: nodes == 1)
    assert list(scope) == ["test_sample"]
    case = scope["test_sample"]
    assert issubclass(case, unittest.TestCase)
    assert hasattr(case, "test_one") and not hasattr(case, "test_two")
    result = run_case(case)
    assert result.testsRun == 1 and result.errors == [] and result.failures == []


def test_setup_clears_the_session(monkeypatch):
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST", raising=False)
    monkeypatch.delenv("ONEFLOW_TEST_ENABLE_EAGER", raising=False)

    @flow.global_function()
    def before(x: tp.Numpy.Placeholder((1,))) -> tp.Numpy:
        return x

    before(np.ones(1, np.float32))
    observed = {}

    class Case(flow.unittest.TestCase):
        def test_fresh(self):
            # The function of the old session is gone: its name can be defined again.
            @flow.global_function()
            def before(x: tp.Numpy.Placeholder((1,))) -> tp.Numpy:
                return x * 3

            observed["value"] = before(np.ones(1, np.float32))

    result = run_case(Case)
    assert result.errors == [] and result.failures == []
    np.testing.assert_allclose(observed["value"], [3.0])
    with pytest.raises(RuntimeError, match="clear_default_session"):
        before(np.ones(1, np.float32))


def test_setup_with_eager_requested_runs_the_test_lazily(monkeypatch):
    """ONEFLOW_TEST_ENABLE_EAGER=1: setUp asks for eager mode, which is not available; the test
    still runs, its global function lazily."""
    monkeypatch.setenv("ONEFLOW_TEST_ENABLE_EAGER", "1")
    monkeypatch.delenv("ONEFLOW_TEST_NODE_LIST", raising=False)
    results = []

    class Case(flow.unittest.TestCase):
        def test_square(self):
            @flow.global_function()
            def square(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
                return flow.math.square(x)

            results.append(square(np.array([2.0, 3.0], np.float32)))

    result = run_case(Case)
    assert result.errors == [] and result.failures == []
    np.testing.assert_array_equal(results[0], [4.0, 9.0])
    assert not flow.eager_execution_enabled()
