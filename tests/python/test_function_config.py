"""flow.FunctionConfig: unknown settings fail with suggestions, tuning knobs are accepted,
default_initializer_conf is honoured, settings that change semantics raise NotImplementedError."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.framework import function_config as function_config_module


def read_variable(config, **kwargs):
    """Runs a predict job returning a (4, 50) variable created with `kwargs`."""

    @flow.global_function(function_config=config)
    def read() -> tp.Numpy:
        return flow.get_variable("v", shape=(4, 50), **kwargs)

    return read()


@pytest.mark.parametrize("typo, suggestion", [
    ("default_data_typ", "default_data_type"),
    ("default_logical_veiw", "default_logical_view"),
    ("enable_inplac", "enable_inplace"),
    ("enable_auto_mixed_precison", "enable_auto_mixed_precision"),
])
def test_unknown_setting_is_an_error_with_suggestions(typo, suggestion):
    config = flow.FunctionConfig()
    with pytest.raises(AttributeError, match=r"no setting %r.*did you mean '%s'"
                       % (typo, suggestion)) as error:
        getattr(config, typo)(flow.float)
    assert isinstance(error.value, function_config_module.UnknownSettingError)


def test_unknown_setting_without_close_match_and_in_a_group():
    config = flow.FunctionConfig()
    with pytest.raises(AttributeError, match="no setting 'frobnicate'"):
        config.frobnicate(True)
    with pytest.raises(AttributeError, match=r"no setting 'train\.primary_lrr'.*"
                                             r"did you mean 'train\.primary_lr'"):
        config.train.primary_lrr(0.1)
    assert not hasattr(config, "definitely_not_a_setting")


def test_tuning_knobs_are_accepted_and_change_nothing():
    config = flow.FunctionConfig()
    config.default_data_type(flow.float)
    config.enable_inplace()
    config.enable_fuse_add_to_output(True)
    config.enable_fuse_model_update_ops(True)
    config.enable_cudnn(False)
    config.cudnn_conv_force_fwd_algo(1)
    config.use_xla_jit(True)
    config.use_tensorrt(True)
    config.enable_reused_mem(False)
    config.concurrency_width(4)
    config.prune_parallel_cast_ops(True)
    config.train.optimizer_placement_optimization_threshold(1024)
    white_list = config.static_mem_alloc_policy_white_list
    policy = white_list.policy_mem_size_first()
    assert policy == "use_mem_size_first_algo"
    white_list.add(policy)
    assert white_list.has(policy)
    white_list.remove(policy)
    assert not white_list.has(policy)
    assert "use_time_line_algo" in config.static_mem_alloc_algo_white_list.show()

    @flow.global_function(function_config=config)
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2 + 1

    np.testing.assert_allclose(job(np.arange(3, dtype=np.float32)), [1, 3, 5])


def test_session_tuning_knobs_of_oneflow_03_are_accepted():
    """flow.config's GPU/NCCL/RDMA tuning setters (Wide & Deep calls nccl_use_compute_stream)
    are accepted and leave the job's result unchanged."""
    flow.clear_default_session()
    flow.config.gpu_device_num(1)
    flow.config.nccl_use_compute_stream(True)
    flow.config.disable_group_boxing_by_dst_parallel(True)
    flow.config.enable_numa_aware_cuda_malloc_host(True)
    flow.config.thread_enable_local_message_queue(True)
    flow.config.max_mdsave_worker_num(4)
    flow.config.rdma_mem_block_mbyte(8)
    flow.config.persistence_buf_byte(1 << 20)
    assert flow.config.legacy_model_io_enabled() is False
    flow.config.enable_legacy_model_io(True)
    assert flow.config.legacy_model_io_enabled() is True
    with pytest.raises(NotImplementedError, match="load_library"):
        flow.config.load_library_now("libcustom.so")

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2 + 1

    np.testing.assert_allclose(job(np.arange(3, dtype=np.float32)), [1, 3, 5])


def test_every_tuning_knob_has_a_reason_and_is_callable():
    config = flow.FunctionConfig()
    table = function_config_module._TUNING_NO_OPS
    assert len(table) > 40
    for name, reason in table.items():
        assert reason, name
        setter = config
        for part in name.split("."):
            setter = getattr(setter, part)
        assert callable(setter), name
    assert not set(table) & set(function_config_module._NOT_IMPLEMENTED)


@pytest.mark.parametrize("call, message", [
    (lambda c: c.train.secondary_lr(0.1), r"train\.secondary_lr"),
    (lambda c: c.tensorrt.use_fp16(), r"tensorrt\.use_fp16"),
    (lambda c: c.default_distribute_strategy("mirrored"), "default_distribute_strategy"),
    (lambda c: c.default_initializer_conf({"range_conf": {}}), "range_conf"),
])
def test_settings_that_change_semantics_are_not_implemented(call, message):
    with pytest.raises(NotImplementedError, match=message):
        call(flow.FunctionConfig())


def test_semantic_settings_at_their_default_value_are_accepted():
    config = flow.FunctionConfig()
    config.enable_qat(False)
    config.tensorrt.use_fp16(False)
    config.enable_non_distributed_optimizer(True)
    config.train.optimizer_placement_optimization_mode("distributed_split")
    assert config._optimizer_placement == "distributed_split"
    config.default_distribute_strategy(flow.distribute.mirrored_strategy())
    assert config._logical_view == "mirrored"


def test_wrong_kind_of_value_for_implemented_settings():
    config = flow.FunctionConfig()
    with pytest.raises(TypeError, match="default_logical_view"):
        config.default_logical_view("mirrored")
    with pytest.raises(TypeError, match="default_placement_scope"):
        config.default_placement_scope("0:0")


@pytest.mark.parametrize("conf, check", [
    ({"constant_conf": {"value": 1.5}}, lambda v: np.all(v == 1.5)),
    ({"constant_conf": {}}, lambda v: np.all(v == 0)),
    ({"random_uniform_conf": {"min": 2.0, "max": 3.0}},
     lambda v: v.min() >= 2.0 and v.max() <= 3.0 and v.std() > 0.1),
    ({"random_normal_conf": {"mean": 10.0, "std": 0.01}},
     lambda v: abs(v.mean() - 10.0) < 0.01 and 0 < v.std() < 0.02),
    ({"truncated_normal_conf": {"mean": 0.0, "std": 1.0}},
     lambda v: np.abs(v).max() <= 2.0 + 1e-6 and v.std() > 0.3),
    ({"variance_scaling_conf": {"scale": 3.0, "variance_norm": "kFanIn",
                                "distribution": "kRandomUniform"}},
     # fan_in 50: uniform on +-sqrt(3 * scale / fan_in) = +-0.424
     lambda v: np.abs(v).max() <= 0.43 and np.abs(v).max() > 0.3),
])
def test_default_initializer_conf_is_used_by_get_variable_without_initializer(conf, check):
    config = flow.FunctionConfig()
    config.default_initializer_conf(conf)
    value = read_variable(config)
    assert value.shape == (4, 50) and check(value), value


def test_explicit_initializer_wins_over_the_default():
    config = flow.FunctionConfig()
    config.default_initializer_conf({"constant_conf": {"value": 7.0}})
    value = read_variable(config, initializer=flow.constant_initializer(2.0))
    assert np.all(value == 2.0)


@pytest.mark.parametrize("conf, error, message", [
    ({"constant_conf": {"valu": 1.0}}, ValueError, "no field 'valu'"),
    ({"constant": {"value": 1.0}}, ValueError, "unknown initializer 'constant'"),
    ({"constant_conf": 1.0}, TypeError, "dict of fields"),
    ("constant_conf", TypeError, "default_initializer_conf: an initializer must come from"),
    ({}, TypeError, "default_initializer_conf takes a dict"),
])
def test_bad_default_initializer_conf(conf, error, message):
    with pytest.raises(error, match=message):
        flow.FunctionConfig().default_initializer_conf(conf)


def test_function_desc_and_current_scope_as_oneflow_03_reads_them():
    """OneFlow 0.3's test_function_config: config.function_desc.<setting> reads what was set,
    and flow.current_scope().device_parallel_desc_symbol.device_tag the placement in use."""
    config = flow.FunctionConfig()
    config.enable_inplace()
    config.default_placement_scope(flow.scope.placement("cpu", "0:0"))
    assert config.function_desc.enable_inplace is True
    assert config.function_desc.default_data_type == flow.float32
    with pytest.raises(AttributeError, match="'enable_fuse_add_to_output' was not set"):
        config.function_desc.enable_fuse_add_to_output
    seen = {}

    @flow.global_function(function_config=config)
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        seen["default"] = flow.current_scope().device_parallel_desc_symbol.device_tag
        with flow.scope.placement("cpu", "0:0"):
            seen["inner"] = flow.current_scope().device_parallel_desc_symbol.device_names
        return x

    job(np.zeros(2, np.float32))
    assert seen == {"default": "cpu", "inner": ["0:0"]}
