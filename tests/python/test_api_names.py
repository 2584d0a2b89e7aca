"""Names OneFlow 0.3 exported that this version lacks raise NotImplementedError naming them;
other unknown names stay AttributeErrors."""
import importlib

import numpy as np
import pytest

import oneflow as flow
from oneflow.framework import api_names


@pytest.mark.parametrize("module_name, name", [
    ("oneflow", "detection"), ("oneflow.data", "coco_reader"),
    ("oneflow", "tensor_list_split"), ("oneflow.nn", "unfold3d"),
])
def test_missing_oneflow_03_name_is_not_implemented(module_name, name):
    module = importlib.import_module(module_name)
    with pytest.raises(NotImplementedError, match=r"%s\.%s" % (module_name.replace(".", r"\."), name)):
        getattr(module, name)


@pytest.mark.parametrize("module_name", sorted(api_names.EXPORTED_NAMES))
def test_unknown_name_stays_attribute_error(module_name):
    module = importlib.import_module(module_name)
    with pytest.raises(AttributeError):
        module.no_such_name_in_any_version
    assert not hasattr(module, "__no_such_dunder__")


@pytest.mark.parametrize("module_name", sorted(api_names.EXPORTED_NAMES))
def test_every_name_resolves_or_is_not_implemented(module_name):
    module = importlib.import_module(module_name)
    for name in sorted(api_names.EXPORTED_NAMES[module_name]):
        try:
            getattr(module, name)
        except NotImplementedError as error:
            assert name in str(error)


def test_new_ops_are_exported_where_oneflow_03_had_them():
    for name in ["abs", "exp", "gelu", "pow", "mod", "maximum", "greater", "logical_and",
                 "add_n", "sigmoid_v2", "log_sigmoid", "reciprocal_no_nan"]:
        assert callable(getattr(flow.math, name)), name
    for name in ["leaky_relu", "elu", "hardsigmoid", "hardswish", "hardtanh", "relu6", "mish",
                 "swish"]:
        assert callable(getattr(flow.nn, name)), name
    assert callable(flow.where)
    assert callable(flow.keras.activations.gelu)


def test_oneflow_core_protobuf_enums():
    """The enum constants of OneFlow 0.3's generated modules that scripts import (BERT:
    op_conf_util.kNone; data_type_util), with OneFlow's numbers."""
    import oneflow.core.common.data_type_pb2 as data_type_util
    import oneflow.core.operator.op_conf_pb2 as op_conf_util

    assert (op_conf_util.kNone, op_conf_util.kTanH, op_conf_util.kSigmoid, op_conf_util.kRelu) \
        == (0, 1, 2, 3)
    assert op_conf_util.ActivationType.Name(3) == "kRelu"
    assert (data_type_util.kFloat, data_type_util.kDouble, data_type_util.kInt32,
            data_type_util.kInt64, data_type_util.kFloat16) == (2, 3, 5, 6, 9)
    assert data_type_util.DataType.Value("kUInt8") == 7


def test_oneflow_03_internal_module_paths_that_scripts_import():
    """0.3-era scripts import the pybind module `oneflow_api` and a few `oneflow.python.*`
    modules (OneFlow-Benchmark's optimizer_util.py and Generative/layers.py)."""
    import oneflow_api
    import oneflow.python.framework.distribute as distribute_util
    import oneflow.python.framework.session_context as session_ctx

    assert distribute_util.broadcast() == flow.distribute.broadcast()
    assert distribute_util.split(1) == flow.distribute.split(1)
    assert callable(oneflow_api.JobBuildAndInferCtx_GetCurrentJobName)
    assert session_ctx.GetDefaultSession().job_name2var_name2var_blob_ == {}
    from oneflow.python.ops import transpose_util

    perm = transpose_util.get_perm_when_transpose_axis_to_last_dim(4, 1)
    assert perm == (0, 2, 3, 1)
    x = np.arange(24).reshape(2, 3, 4, 1)
    np.testing.assert_array_equal(
        x.transpose(perm).transpose(transpose_util.get_inversed_perm(perm)), x)


def test_version_is_the_implemented_api_level_and_the_packages():
    # Scripts compare it (e.g. "0.3" <= flow.__version__); setup.py reads the same file.
    import os
    import subprocess
    import sys
    major, minor = (int(part) for part in flow.__version__.split(".")[:2])
    assert (major, minor) == (0, 3)
    setup_py = os.path.join(os.path.dirname(__file__), "..", "..", "setup.py")
    if os.path.exists(setup_py):
        reported = subprocess.run([sys.executable, setup_py, "--version"], capture_output=True,
                                  text=True, timeout=60, cwd=os.path.dirname(setup_py))
        assert reported.stdout.strip().splitlines()[-1] == flow.__version__, reported.stderr


def test_importing_oneflow_restores_the_aliases_0_3_era_scripts_use():
    # Python 3.10 removed collections.Sized & co. (OneFlow's test_pool reads it); NumPy 1.24
    # removed np.float & co. (2020 test files list dtypes with them).
    import collections
    import collections.abc

    assert collections.Sized is collections.abc.Sized
    assert collections.Iterable is collections.abc.Iterable
    assert np.dtype(np.float) == np.float64 and np.dtype(np.int) == np.int_
    assert np.bool is bool or np.bool is np.bool_  # NumPy 2 has np.bool again, as np.bool_
    assert np.array([1.5], dtype=np.float).dtype == np.float64
