"""flow.FunctionConfig: the settings of one global function, with OneFlow 0.3's names.

Every setting OneFlow 0.3's FunctionConfig had falls in exactly one of three groups:
  - implemented: the methods of FunctionConfig below (data type, logical view, placement,
    default initializer, optimizer placement, auto mixed precision, quantization aware
    training);
  - accepted and ignored: _TUNING_NO_OPS, knobs that change speed or memory but not the numbers
    a job computes (or that OneFlow 0.3 itself had deprecated to no effect);
  - not implemented: _NOT_IMPLEMENTED, settings that would change what a job computes; they
    raise NotImplementedError, except for the values that keep OneFlow's default behaviour.
Any other name raises UnknownSettingError (an AttributeError) with the closest known names, so a
typo such as `default_data_typ` never passes silently.
"""
import difflib

from oneflow.framework import dtypes

# name -> why ignoring it keeps the results. Dotted names are reached as config.group.name(...).
_TUNING_NO_OPS = {
    "enable_cudnn": "cuDNN or not: the same convolution values either way",
    "enable_tensor_float_32_compute":
        "TF32 tensor-core math on GPUs, chosen per session here "
        "(flow.config.enable_tensor_float_32_compute)",
    "cudnn_buf_limit_mbyte": "cuDNN workspace size",
    "cudnn_conv_force_fwd_algo": "cuDNN algorithm choice",
    "cudnn_conv_force_bwd_data_algo": "cuDNN algorithm choice",
    "cudnn_conv_force_bwd_filter_algo": "cuDNN algorithm choice",
    "cudnn_conv_heuristic_search_algo":
        "cuDNN algorithm search, chosen per session here "
        "(flow.config.enable_cudnn_conv_heuristic_search_algo)",
    "cudnn_conv_use_deterministic_algo_only":
        "cuDNN algorithm choice; kernels here are deterministic",
    "cudnn_conv_enable_pseudo_half": "float16 cuDNN convolutions, which are not run here",
    "enable_cudnn_conv_pseudo_half": "float16 cuDNN convolutions, which are not run here",
    "cudnn_conv_enable_true_half": "float16 cuDNN convolutions, which are not run here",
    "enable_true_half_config_when_conv": "float16 cuDNN convolutions, which are not run here",
    "enable_cudnn_fused_normalization_add_relu": "kernel fusion",
    "enable_fuse_add_to_output": "kernel fusion",
    "enable_fuse_cast_scale": "kernel fusion",
    "enable_fuse_model_update_ops": "kernel fusion of the optimizer's update",
    "enable_gradients_stats_aggregation": "fuses the gradient statistics ops",
    "enable_pseudo_chain_merge": "task-graph chain merging",
    "enable_reused_mem": "memory reuse between registers",
    "enable_inplace": "in-place kernels",
    "enable_inplace_in_reduce_struct": "deprecated in OneFlow 0.3 (no effect there)",
    "use_memory_allocation_algorithm_v2": "memory planner choice",
    "static_mem_alloc_policy_white_list.has": "memory planner policy",
    "static_mem_alloc_policy_white_list.add": "memory planner policy",
    "static_mem_alloc_policy_white_list.remove": "memory planner policy",
    "static_mem_alloc_policy_white_list.policy_mem_size_first": "memory planner policy name",
    "static_mem_alloc_policy_white_list.policy_mutual_exclusion_first":
        "memory planner policy name",
    "static_mem_alloc_policy_white_list.policy_time_line": "memory planner policy name",
    "static_mem_alloc_algo_white_list.show": "memory planner policy names",
    "enable_nccl": "deprecated in OneFlow 0.3 (no effect there)",
    "use_nccl_inter_node_communication": "deprecated in OneFlow 0.3 (no effect there)",
    "use_boxing_v2": "deprecated in OneFlow 0.3 (no effect there)",
    "enable_all_reduce_group": "deprecated in OneFlow 0.3 (no effect there)",
    "all_reduce_group_num": "deprecated in OneFlow 0.3 (no effect there)",
    "all_reduce_lazy_ratio": "deprecated in OneFlow 0.3 (no effect there)",
    "all_reduce_group_min_mbyte": "deprecated in OneFlow 0.3 (no effect there)",
    "all_reduce_group_size_warmup": "deprecated in OneFlow 0.3 (no effect there)",
    "all_reduce_fp16": "deprecated in OneFlow 0.3 (no effect there)",
    "disable_all_reduce_sequence": "deprecated in OneFlow 0.3 (no effect there)",
    "non_distributed_optimizer_group_size_mbyte": "deprecated in OneFlow 0.3 (no effect there)",
    "enable_keep_header_only": "deprecated in OneFlow 0.3 (no effect there)",
    "enable_float_compute_for_half_gemm":
        "deprecated in OneFlow 0.3: half gemm always accumulates in float",
    "do_parallel_cast_before_widening_type_cast": "op order of a graph rewrite; same values",
    "prune_parallel_cast_ops": "removes redundant parallel_cast ops; same values",
    "prune_cast_to_static_shape_ops": "removes no-op shape casts; same values",
    "optimizer_placement_optimization_threshold": "which variables get sharded; same values",
    "train.optimizer_placement_optimization_threshold": "which variables get sharded; same values",
    "concurrency_width": "scheduling width",
    "allow_cpu_return_op": "the device the return op runs on",
    "use_xla_jit": "XLA compilation of the same ops",
    "use_tensorrt": "TensorRT compilation of the same ops (float32)",
    "exp_run_conf": "experiment-run (profiling) settings",
}

# name -> (values that keep OneFlow's default behaviour, what the setting would do). A setter
# called without a value means True, as in OneFlow 0.3.
_NOT_IMPLEMENTED = {
    "tensorrt.use_fp16": ((False,), "TensorRT float16 compute is not supported"),
    "tensorrt.use_int8": ((False,), "TensorRT int8 compute is not supported"),
    "tensorrt.int8_calibration": ((), "TensorRT int8 compute is not supported"),
    "train.secondary_lr": ((), "the legacy train.* learning rate is not supported"),
}

# Implemented under another name: name -> FunctionConfig method.
_ALIASES = {
    "train.optimizer_placement_optimization_mode": "optimizer_placement_optimization_mode",
    "train.primary_lr": "_legacy_primary_lr",
    "train.model_update_conf": "_legacy_model_update_conf",
    "train.loss_scale_factor": "_legacy_loss_scale_factor",
    "enable_quantization_aware_training": "enable_qat",
    "qat.per_channel_weight_quantization": "_qat_per_channel_weight_quantization",
    "qat.symmetric": "_qat_symmetric",
    "qat.moving_min_max_momentum": "_qat_moving_min_max_momentum",
    "qat.moving_min_max_stop_update_after_iters": "_qat_moving_min_max_stop_update_after_iters",
    "qat.target_backend": "_qat_target_backend",
}

# OneFlow's QatConfig defaults (moving_min_max_stop_update_after_iters has none: it must be set).
_QAT_DEFAULTS = {"per_channel_weight_quantization": False, "symmetric": True,
                 "moving_min_max_momentum": 0.95, "moving_min_max_stop_update_after_iters": None,
                 "target_backend": ""}
_QAT_TARGET_BACKENDS = ("", "tensorrt7", "cambricon")


class UnknownSettingError(AttributeError):
    """A FunctionConfig setting OneFlow 0.3 never had (usually a typo)."""


def _known_names():
    methods = [name for name in vars(FunctionConfig) if not name.startswith("_")]
    return sorted(set(methods) | set(_TUNING_NO_OPS) | set(_NOT_IMPLEMENTED) | set(_ALIASES))


def _unknown(name):
    close = difflib.get_close_matches(name, _known_names(), n=3, cutoff=0.6)
    hint = "; did you mean %s?" % " or ".join(repr(c) for c in close) if close else ""
    return UnknownSettingError(
        "FunctionConfig has no setting %r (OneFlow 0.3's FunctionConfig had none by that "
        "name)%s" % (name, hint))


def _flag_value(args, kwargs):
    """The value given to a setter; OneFlow 0.3's boolean setters default to True."""
    values = list(args) + list(kwargs.values())
    return values[0] if values else True


def _no_op(config, name):
    def setter(*args, **kwargs):
        config._ignored[name] = (args, kwargs)
        return _NO_OP_RESULTS.get(name, lambda *a: None)(config, *args)

    setter.__doc__ = "Accepted and ignored: %s." % _TUNING_NO_OPS[name]
    return setter


def _not_implemented(name):
    allowed, effect = _NOT_IMPLEMENTED[name]

    def setter(*args, **kwargs):
        value = _flag_value(args, kwargs)
        if any(value is a or (type(value) is type(a) and value == a) for a in allowed):
            return None
        raise NotImplementedError("FunctionConfig.%s(%r): %s" % (name, value, effect))

    return setter


def _memory_policies(config, *args):
    return config._ignored.setdefault("memory_policies", set())


_NO_OP_RESULTS = {
    "static_mem_alloc_policy_white_list.has":
        lambda config, policy: policy in _memory_policies(config),
    "static_mem_alloc_policy_white_list.add":
        lambda config, policy: _memory_policies(config).add(policy),
    "static_mem_alloc_policy_white_list.remove":
        lambda config, policy: _memory_policies(config).discard(policy),
    "static_mem_alloc_policy_white_list.policy_mem_size_first":
        lambda config: "use_mem_size_first_algo",
    "static_mem_alloc_policy_white_list.policy_mutual_exclusion_first":
        lambda config: "use_mutual_exclusion_first_algo",
    "static_mem_alloc_policy_white_list.policy_time_line": lambda config: "use_time_line_algo",
    "static_mem_alloc_algo_white_list.show": lambda config: [
        "use_mem_size_first_algo", "use_mutual_exclusion_first_algo", "use_time_line_algo"],
}


def _setting(config, name):
    """The setter (or group of settings, for a dotted prefix) called `name`."""
    if name in _ALIASES:
        return getattr(config, _ALIASES[name])
    if name in _TUNING_NO_OPS:
        return _no_op(config, name)
    if name in _NOT_IMPLEMENTED:
        return _not_implemented(name)
    if any(known.startswith(name + ".") for known in _known_names()):
        return _SettingGroup(config, name)
    raise _unknown(name)


class _SettingGroup:
    """A dotted group of settings, e.g. config.train or config.tensorrt."""

    def __init__(self, config, prefix):
        self._config, self._prefix = config, prefix

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _setting(self._config, "%s.%s" % (self._prefix, name))


class _FunctionDescView:
    """OneFlow 0.3's config.function_desc: the values set so far, read by setting name
    (config.function_desc.enable_inplace after config.enable_inplace() is True)."""

    def __init__(self, config):
        self._config = config

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        config = self._config
        if name in config._ignored:
            return _flag_value(*config._ignored[name])
        semantic = {"default_data_type": config._data_type,
                    "default_placement_scope": config._placement,
                    "default_logical_view": config._logical_view,
                    "enable_auto_mixed_precision": config._auto_mixed_precision,
                    "enable_qat": config._qat_enabled,
                    "enable_quantization_aware_training": config._qat_enabled}
        if name in semantic:
            return semantic[name]
        raise AttributeError("FunctionConfig.function_desc: %r was not set" % name)


class FunctionConfig:
    """Per-function settings (see the module docstring for the three kinds)."""

    @property
    def function_desc(self):
        return _FunctionDescView(self)

    def __init__(self):
        self._data_type = dtypes.float32
        self._placement = None
        self._logical_view = "consistent"
        self._optimizer_placement = "non_distributed"
        self._default_initializer = None  # an InitializerConf, for get_variable without one
        self._ignored = {}  # accepted tuning settings: name -> (args, kwargs)
        # The legacy train.* settings (primary_lr, model_update_conf, loss_scale_factor): the
        # optimizer of a train job that calls flow.losses.add_loss instead of minimize.
        self._legacy_train = {}
        self._auto_mixed_precision = False
        self._indexed_slices_variables = []
        self._qat_enabled = False
        self._qat = dict(_QAT_DEFAULTS)

    def indexed_slices_optimizer_conf(self, conf):
        """OneFlow 0.3's sparse updates: {"include_op_names": {"op_name": [variable names]}}.
        A listed variable whose gradient comes from flow.gather (an embedding lookup, possibly
        scaled or cast on the way) is updated only on the rows the lookup used: the other rows,
        and their optimizer state (momentum, Adam's moments), are left untouched, and weight
        decay applies to the used rows only. Other variables update densely, as in OneFlow.
        Works with SGD (with or without momentum), SGDW, Adam, AdamW, LazyAdam, RMSProp and
        Adagrad; LAMB and LARS need whole-variable norms and stay dense."""
        where = "FunctionConfig.indexed_slices_optimizer_conf"
        if not isinstance(conf, dict):
            raise TypeError("%s takes a dict such as {'include_op_names': {'op_name': "
                            "['embeddings']}}, got %r" % (where, conf))
        unknown = set(conf) - {"include_op_names", "enable"}
        if unknown:
            raise ValueError("%s: unknown key(s) %s; expected 'include_op_names'"
                             % (where, sorted(unknown)))
        if not conf.get("enable", True):
            self._indexed_slices_variables = []
            return
        names = conf.get("include_op_names", {})
        if not isinstance(names, dict) or set(names) - {"op_name"}:
            raise ValueError("%s: include_op_names must be a dict {'op_name': [names]}, got %r"
                             % (where, names))
        op_names = names.get("op_name", [])
        if isinstance(op_names, str):
            op_names = [op_names]
        if not all(isinstance(name, str) for name in op_names):
            raise TypeError("%s: op_name must be a list of variable names (str), got %r"
                            % (where, op_names))
        self._indexed_slices_variables = list(op_names)

    def enable_auto_mixed_precision(self, value=True):
        """OneFlow 0.3's automatic mixed precision: matmuls and convolutions that run on GPUs,
        and the elementwise and data-moving ops between them, compute in float16; variables,
        reductions and losses stay float32. A train job without a loss scale gets dynamic loss
        scaling. Ops on CPU devices are not changed, so without GPUs the job runs in float32."""
        if not isinstance(value, bool):
            raise TypeError("FunctionConfig.enable_auto_mixed_precision takes a bool, got %r"
                            % (value,))
        self._auto_mixed_precision = value

    def enable_qat(self, value=True):
        """Quantization-aware training (OneFlow's QAT pass): the job computes as its int8
        deployment would. Convolutions, matmuls, add_n and 2-D pooling, with a convolution's
        bias_add / batch normalization / relu, form the int8 part; the float32 blobs entering it
        and leaving each int8 op go through flow.quantization.fake_quantization: weights with a
        min_max_observer, activations with a moving_average_min_max_observer whose moving
        ranges are variables named after the blob ("conv1/out_0" ->
        "conv1-out_0-fake-quant-observer-fake-quant-moving-max"), learnt by train jobs and read
        by predict jobs. Set qat.moving_min_max_stop_update_after_iters(n) too; see qat.*."""
        if not isinstance(value, bool):
            raise TypeError("FunctionConfig.enable_qat takes a bool, got %r" % (value,))
        self._qat_enabled = value

    def _qat_flag(self, name, value):
        if not isinstance(value, bool):
            raise TypeError("FunctionConfig.qat.%s takes a bool, got %r" % (name, value))
        self._qat[name] = value

    def _qat_per_channel_weight_quantization(self, value=True):
        """Weights get one scale per output channel (axis 0) instead of one."""
        self._qat_flag("per_channel_weight_quantization", value)

    def _qat_symmetric(self, value=True):
        """True (the default): int8 values with zero point 0; False: uint8 with a zero point."""
        self._qat_flag("symmetric", value)

    def _qat_moving_min_max_momentum(self, value):
        """The activation observers' moving average: range = range * momentum + batch range *
        (1 - momentum); default 0.95."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError("FunctionConfig.qat.moving_min_max_momentum takes a number in "
                             "[0, 1], got %r" % (value,))
        self._qat["moving_min_max_momentum"] = float(value)

    def _qat_moving_min_max_stop_update_after_iters(self, value):
        """The activation observers update their ranges while the train step (0 at the first
        iteration) is at most `value`, then keep them."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 63:
            raise ValueError("FunctionConfig.qat.moving_min_max_stop_update_after_iters takes an "
                             "int >= 0, got %r" % (value,))
        self._qat["moving_min_max_stop_update_after_iters"] = value

    def _qat_target_backend(self, value):
        """"" (the default) or "tensorrt7": Google's formula, fake quantization after the int8
        ops; "cambricon": power-of-two scales, fake quantization of convolutions' and matmuls'
        inputs."""
        if value not in _QAT_TARGET_BACKENDS:
            raise ValueError("FunctionConfig.qat.target_backend must be one of %r, got %r"
                             % (_QAT_TARGET_BACKENDS, value))
        self._qat["target_backend"] = value

    def _qat_settings(self):
        """The QatConfig of a job with quantization-aware training, else None."""
        if not self._qat_enabled:
            return None
        if self._qat["moving_min_max_stop_update_after_iters"] is None:
            raise ValueError(
                "FunctionConfig.enable_qat(True) needs qat.moving_min_max_stop_update_after_iters"
                "(n): the train step after which the activation observers keep their ranges "
                "(OneFlow has no default either), e.g. func_config.qat."
                "moving_min_max_stop_update_after_iters(1000)")
        return dict(self._qat)

    def default_data_type(self, dtype=None):
        """The data type of the job's blobs where an op does not say (default float32)."""
        if dtype is None:
            return self._data_type
        self._data_type = dtypes.check(dtype, "default_data_type")

    def data_type(self):
        return self._data_type

    def default_initializer_conf(self, conf):
        """The initializer of flow.get_variable calls without one, in OneFlow 0.3's dict form:
        {"constant_conf": {"value": 1.0}}, {"random_uniform_conf": {"min": 0, "max": 1}},
        {"random_normal_conf" or "truncated_normal_conf": {"mean": 0, "std": 1}} or
        {"variance_scaling_conf": {"scale": 1, "variance_norm": "kFanIn",
        "distribution": "kTruncatedNormal"}}, or that InitializerConf message."""
        from oneflow.ops import initializers

        self._default_initializer = initializers.as_initializer(
            conf, "FunctionConfig.default_initializer_conf")

    def default_logical_view(self, view):
        """flow.scope.consistent_view() (the default) or flow.scope.mirrored_view()."""
        from oneflow.framework.scope import LogicalView

        if not isinstance(view, LogicalView):
            raise TypeError("FunctionConfig.default_logical_view takes flow.scope."
                            "consistent_view() or flow.scope.mirrored_view(), got %r" % (view,))
        self._logical_view = view.name

    def default_distribute_strategy(self, strategy):
        """Deprecated name of default_logical_view (OneFlow 0.3 printed a warning)."""
        from oneflow.framework.scope import LogicalView

        if not isinstance(strategy, LogicalView):
            raise NotImplementedError(
                "FunctionConfig.default_distribute_strategy(%r): only flow.distribute."
                "consistent_strategy() / mirrored_strategy() (the same as flow.scope."
                "consistent_view() / mirrored_view()) are supported" % (strategy,))
        self.default_logical_view(strategy)

    def default_placement_scope(self, placement):
        """The placement of ops created outside any flow.scope.placement in the job."""
        from oneflow.framework.scope import Placement

        if not isinstance(placement, Placement):
            raise TypeError("FunctionConfig.default_placement_scope takes flow.scope."
                            "placement(device_tag, devices), got %r" % (placement,))
        self._placement = placement

    def optimizer_placement_optimization_mode(self, mode):
        """"distributed_split" (ZeRO-style): a trainable variable of a train job that would be
        broadcast over several devices is stored split along axis 0 instead; its readers get it
        whole through an all-gather, its gradient is reduce-scattered, and each device updates
        (and keeps the optimizer state of) its own slice only. Same numbers, less update work and
        memory per device. "non_distributed" (the default): replicated variables."""
        if mode not in ("distributed_split", "non_distributed"):
            raise ValueError("optimizer_placement_optimization_mode must be 'distributed_split' "
                             "or 'non_distributed', got %r" % (mode,))
        self._optimizer_placement = mode

    def enable_non_distributed_optimizer(self, value=True):
        """OneFlow 0.3's older switch: True means optimizer_placement_optimization_mode(
        "non_distributed"); False leaves the mode as it is."""
        if value:
            self.optimizer_placement_optimization_mode("non_distributed")

    def _legacy_primary_lr(self, lr):
        """train.primary_lr(lr): the base learning rate of the legacy training settings."""
        from oneflow.ops import optimizer

        self._legacy_train["primary_lr"] = optimizer._learning_rate(lr, "train.primary_lr")

    def _legacy_model_update_conf(self, conf):
        """train.model_update_conf(dict): OneFlow's optimizer conf in dict form, e.g.
        {"momentum_conf": {"beta": 0.9}, "learning_rate_decay": {...}, "warmup_conf": {...}}."""
        if not isinstance(conf, dict):
            raise TypeError("train.model_update_conf takes a dict such as {'naive_conf': {}}, "
                            "got %r" % (conf,))
        self._legacy_train["model_update_conf"] = conf

    def _legacy_loss_scale_factor(self, factor):
        from oneflow.ops import optimizer

        self._legacy_train["loss_scale_factor"] = optimizer._number(
            factor, "train.loss_scale_factor", above=0)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _setting(self, name)
