"""Helpers in the style of OneFlow 0.3's oneflow/python/test/ops/test_util.py (written from scratch)."""
import itertools
import os
from collections import OrderedDict

import numpy as np

import oneflow as flow


def GenCartesianProduct(sets):
    assert isinstance(sets, (list, tuple))
    for s in sets:
        assert isinstance(s, (list, tuple))
    return itertools.product(*sets)


def GenArgList(arg_dict):
    assert isinstance(arg_dict, OrderedDict)
    assert all(isinstance(v, (list, tuple)) for v in arg_dict.values())
    return [list(x) for x in GenCartesianProduct(list(arg_dict.values()))]


def GenArgDict(arg_dict):
    return [dict(zip(arg_dict.keys(), args)) for args in GenArgList(arg_dict)]


def device_types():
    """["gpu", "cpu"], dropping "gpu" under ONEFLOW_TEST_CPU_ONLY like OneFlow's tests do."""
    return ["cpu"] if os.getenv("ONEFLOW_TEST_CPU_ONLY") else ["gpu", "cpu"]


type_name_to_flow_type = {
    "float32": flow.float32,
    "double": flow.double,
    "float64": flow.float64,
    "int32": flow.int32,
    "int64": flow.int64,
    "int8": flow.int8,
}

type_name_to_np_type = {
    "float32": np.float32,
    "double": np.float64,
    "float64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "int8": np.int8,
}


def tolerance(data_type):
    """(rtol, atol) for comparing against a float64/float32 reference."""
    if data_type in ("double", "float64"):
        return 1e-10, 1e-10
    return 1e-4, 1e-5


def make_func_config(data_type="float32"):
    func_config = flow.FunctionConfig()
    func_config.default_data_type(type_name_to_flow_type[data_type])
    func_config.default_logical_view(flow.scope.consistent_view())
    return func_config


def zero_lr_sgd():
    return flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0]), momentum=0)
