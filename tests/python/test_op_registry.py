"""Every registered op is complete: a CPU kernel for at least one dtype, a gradient rule or a
not-differentiable mark, and a checker case. CHECKER_CASES maps each op type to the test file
that covers it and a string that file must contain (gradient ops and internal ops are covered
by the test that makes autograd or the compiler add them). A new op fails here until it is
listed, so an op never lands without a test."""
import os

import pytest

import oneflow as flow  # loads the extension and its registrations
from oneflow import _oneflow_internal

HERE = os.path.dirname(os.path.abspath(__file__))

UNARY_MATH = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf",
    "erfc", "exp", "expm1", "floor", "lgamma", "log", "log1p", "log_sigmoid", "negative",
    "reciprocal", "reciprocal_no_nan", "rint", "round", "rsqrt", "sigmoid_v2", "sign", "sin",
    "sinh", "softplus", "sqrt", "tan", "gelu", "hardsigmoid", "hardswish", "hardtanh",
    "leaky_relu", "elu",
]
ZERO_GRADIENT = {"ceil", "floor", "rint", "round", "sign"}

CHECKER_CASES = {}
for _op in UNARY_MATH:
    CHECKER_CASES[_op] = ("test_math_unary.py", '"%s"' % _op)
    if _op not in ZERO_GRADIENT:
        CHECKER_CASES[_op + "_grad"] = ("test_math_unary.py", '"%s"' % _op)
for _op in ["pow", "maximum", "minimum", "floordiv"]:
    CHECKER_CASES["broadcast_" + _op] = ("test_math_binary.py", "flow.math.%s" % _op)
CHECKER_CASES["broadcast_floor_mod"] = ("test_math_binary.py", "flow.math.mod")
for _op in ["equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
            "logical_and", "logical_or"]:
    CHECKER_CASES["broadcast_" + _op] = ("test_math_binary.py", "flow.math.%s" % _op)
for _op in ["add", "sub", "mul", "div"]:
    CHECKER_CASES["broadcast_" + _op] = ("test_broadcast_math.py", "flow.math.")
CHECKER_CASES.update({
    "logical_not": ("test_math_binary.py", "flow.math.logical_not"),
    "where": ("test_math_binary.py", "flow.where"),
    "add_n": ("test_math_binary.py", "flow.math.add_n"),
    "scalar_pow": ("test_math_binary.py", "x**2"),
    "scalar_add": ("test_broadcast_math.py", "x+2"),
    "scalar_mul": ("test_broadcast_math.py", "3*x"),
    "relu": ("test_activations.py", "flow.nn.relu"),
    "relu_grad": ("test_activations.py", "flow.nn.relu"),
    "sigmoid": ("test_activations.py", "flow.math.sigmoid"),
    "sigmoid_grad": ("test_activations.py", "flow.math.sigmoid"),
    "tanh": ("test_activations.py", "flow.math.tanh"),
    "tanh_grad": ("test_activations.py", "flow.math.tanh"),
    "square": ("test_activations.py", "flow.math.square"),
    "softmax": ("test_softmax.py", "flow.nn.softmax"),
    "softmax_grad": ("test_softmax.py", "flow.nn.softmax"),
    "sparse_softmax_cross_entropy": ("test_sparse_softmax_cross_entropy.py",
                                     "sparse_softmax_cross_entropy_with_logits"),
    "sparse_softmax_cross_entropy_grad": ("test_sparse_softmax_cross_entropy.py",
                                          "sparse_softmax_cross_entropy_with_logits"),
    "ctc_loss": ("test_ctc_loss.py", "flow.nn.CTCLoss"),
    "ctc_loss_grad": ("test_ctc_loss.py", "ctc_loss_grad"),
    "ctc_greedy_decoder": ("test_ctc_loss.py", "flow.nn.ctc_greedy_decoder"),
    "bias_add": ("test_bias_add.py", "flow.nn.bias_add"),
    "matmul": ("test_matmul.py", "flow.matmul"),
    "transpose": ("test_transpose.py", "flow.transpose"),
    "identity": ("test_identity.py", "flow.identity"),
    "cast_to_static_shape": ("test_identity.py", "flow.cast_to_static_shape"),
    "cast": ("test_cast.py", "flow.cast"),
    "constant": ("test_constant.py", "flow.constant"),
    "reshape": ("test_reshape.py", "flow.reshape"),
    "reduce_sum": ("test_reduce.py", "reduce_sum"),
    # Internal ops, added by autograd, the compiler or the train step.
    "constant_like": ("test_math_unary.py", "test_zero_gradient_ops"),  # zero gradients
    "reduce_sum_like": ("test_broadcast_math.py", "((3, 4), (4,))"),  # broadcast gradients
    "broadcast_like": ("test_reduce.py", "reduce_sum"),  # reduce_sum's gradient
    "reshape_like": ("test_reshape.py", "flow.reshape"),  # reshape's gradient
    "input": ("test_jobs.py", "Placeholder"),
    "return": ("test_jobs.py", "tp.Numpy"),
    "watch": ("test_jobs.py", "watch"),
    "variable": ("test_variables.py", "get_variable"),
    "slice_boxing": ("test_boxing.py", "split"),
    "copy_hd": ("test_gpu.py", "copy_hd"),
    "parallel_cast": ("test_boxing.py", "parallel_cast"),
    "cast_to_mirrored": ("test_mirrored_view.py", "mirrored_view"),
    "cast_from_mirrored": ("test_mirrored_view.py", "cast_to_current_logical_view"),
    "sgd_update": ("test_sgd.py", "SGD"),
    "momentum_update": ("test_sgd.py", "momentum"),
    "adam_update": ("test_adam.py", "Adam"),
    "learning_rate_schedule": ("test_lr_schedules.py", "def test_schedule_rate_at_each_step"),
    "lazy_adam_update": ("test_optimizers.py", "LazyAdam"),
    "rmsprop_update": ("test_optimizers.py", "RMSProp"),
    "centered_rmsprop_update": ("test_optimizers.py", "centered=centered"),
    "adagrad_update": ("test_optimizers.py", "Adagrad"),
    "lamb_update": ("test_optimizers.py", "LAMB"),
    "lars_update": ("test_optimizers.py", "LARS"),
    "loss_scale_seed": ("test_loss_scaling_and_clipping.py", "dynamic_loss_scale"),
    "loss_scale_inverse": ("test_loss_scaling_and_clipping.py", "dynamic_loss_scale"),
    "count_not_finite": ("test_loss_scaling_and_clipping.py", "skips_non_finite_steps"),
    "dynamic_loss_scale_schedule": ("test_loss_scaling_and_clipping.py",
                                    "adapts_the_scale"),
    "scale_regularize_gradient": ("test_loss_scaling_and_clipping.py",
                                  "clipping_includes_the_regularization"),
    "square_sum": ("test_loss_scaling_and_clipping.py", "by_global_norm"),
    "global_norm_clip_factor": ("test_loss_scaling_and_clipping.py", "by_global_norm"),
    "assign": ("test_checkpoint.py", "flow.assign"),
    "logical_slice_assign": ("test_more_ops.py", "logical_slice_assign"),
    "increment_counter": ("test_sgd.py", "PiecewiseConstantScheduler"),  # the train step
})
# normalization, dropout, softmax, losses
CHECKER_CASES.update({
    "normalization": ("test_batch_norm.py", "flow.nn.batch_normalization"),
    "normalization_grad": ("test_batch_norm.py", "flow.nn.batch_normalization"),
    "batch_norm_mean": ("test_batch_norm.py", "flow.layers.batch_normalization"),
    "batch_norm_variance": ("test_batch_norm.py", "flow.layers.batch_normalization"),
    "normalization_train": ("test_batch_norm.py", "flow.layers.batch_normalization"),
    "normalization_train_grad_stats": ("test_batch_norm.py", "flow.layers.batch_normalization"),
    "normalization_train_grad": ("test_batch_norm.py", "flow.layers.batch_normalization"),
    "layer_norm": ("test_layer_norm.py", "flow.nn.layer_norm"),
    "layer_norm_grad": ("test_layer_norm.py", "flow.nn.layer_norm"),
    "layer_norm_param_grad": ("test_layer_norm.py", "flow.nn.layer_norm"),
    "dropout": ("test_dropout.py", "flow.nn.dropout"),
    "dropout_grad": ("test_dropout.py", "flow.nn.dropout"),
    "log_softmax": ("test_softmax.py", "flow.nn.logsoftmax"),
    "log_softmax_grad": ("test_softmax.py", "flow.nn.logsoftmax"),
    "softmax_cross_entropy": ("test_losses.py", "softmax_cross_entropy_with_logits"),
    "softmax_cross_entropy_grad": ("test_losses.py", "softmax_cross_entropy_with_logits"),
    "sigmoid_cross_entropy": ("test_losses.py", "sigmoid_cross_entropy_with_logits"),
    "sigmoid_cross_entropy_grad": ("test_losses.py", "sigmoid_cross_entropy_with_logits"),
    "smooth_l1_loss": ("test_losses.py", "flow.smooth_l1_loss"),
    "smooth_l1_loss_grad": ("test_losses.py", "flow.smooth_l1_loss"),
})

# convolution and pooling
CHECKER_CASES.update({
    "conv1d": ("test_conv.py", "flow.nn.conv1d"),
    "conv2d": ("test_conv.py", "flow.nn.conv2d"),
    "conv3d": ("test_conv.py", "flow.nn.conv3d"),
    "conv_data_grad": ("test_conv.py", "def test_conv_data_grad_op"),
    "conv_filter_grad": ("test_conv.py", "def test_conv_filter_grad_op"),
    **{"%s_pool_%dd" % (kind, rank): ("test_pool.py", "flow.nn.%s_pool%dd" % (kind, rank))
       for kind in ("max", "avg") for rank in (1, 2, 3)},
    **{"%s_pool_%dd_grad" % (kind, rank): ("test_pool.py", "def test_pool_grad_op")
       for kind in ("max", "avg") for rank in (1, 2, 3)},
})

# shape and indexing
CHECKER_CASES.update({
    "concat": ("test_shape_ops.py", "flow.concat"),
    "split_like": ("test_user_op_builder.py", "Op(\"split_like\")"),
    "argwhere": ("test_argwhere.py", "flow.argwhere"),
    "repeat": ("test_time_shape.py", "flow.repeat"),
    "acc": ("test_time_shape.py", "flow.acc"),
    "unpack": ("test_time_shape.py", "flow.unpack"),
    "pack": ("test_time_shape.py", "flow.pack"),
    # Added by the compiler: a watch inside a section, a variable read inside one.
    "acc_tick": ("test_time_shape.py", "def test_a_watch_inside_a_section_sees_every_piece"),
    "slice": ("test_slice.py", "flow.slice_v2"),
    "slice_update": ("test_slice.py", "flow.slice_update"),
    "pad": ("test_pad.py", "flow.pad"),
    "reflection_pad2d": ("test_pad.py", "flow.reflection_pad2d"),
    "reflection_pad2d_grad": ("test_pad.py", "flow.reflection_pad2d"),
    "replication_pad2d": ("test_pad.py", "flow.replication_pad2d"),
    "replication_pad2d_grad": ("test_pad.py", "flow.replication_pad2d"),
    "gather": ("test_gather.py", "flow.gather"),
    "unsorted_segment_sum": ("test_gather.py", "flow.math.unsorted_segment_sum"),
    "unsorted_segment_sum_like": ("test_gather.py", "flow.math.unsorted_segment_sum_like"),
    "gather_nd": ("test_gather.py", "flow.gather_nd"),
    "scatter_nd": ("test_gather.py", "flow.scatter_nd"),
    "scatter_nd_like": ("test_gather.py", "flow.tensor_scatter_nd_add"),
    "one_hot": ("test_gather.py", "flow.one_hot"),
    "clip_by_scalar": ("test_gather.py", "flow.clip_by_value"),
    "clip_by_scalar_grad": ("test_gather.py", "flow.clip_by_value"),
})

# reductions, sorting, random
CHECKER_CASES.update({
    "reduce_max": ("test_reduce.py", "flow.math.reduce_max"),
    "reduce_min": ("test_reduce.py", "flow.math.reduce_min"),
    "reduce_prod": ("test_reduce.py", "flow.math.reduce_prod"),
    "reduce_prod_grad": ("test_reduce.py", "test_prod_gradient_with_zeros_is_exact"),
    "reduce_any": ("test_reduce.py", "flow.math.reduce_any"),
    "reduce_all": ("test_reduce.py", "flow.math.reduce_all"),
    "argmax": ("test_arg_sort.py", "flow.math.argmax"),
    "argmin": ("test_arg_sort.py", "flow.math.argmin"),
    "top_k": ("test_arg_sort.py", "flow.math.top_k"),
    "sort": ("test_arg_sort.py", "flow.sort"),
    "argsort": ("test_arg_sort.py", "flow.argsort"),
    "random_uniform": ("test_random.py", "flow.random.uniform"),
    "random_normal": ("test_random.py", "flow.random.normal"),
    "bernoulli": ("test_random.py", "flow.random.bernoulli"),
    "range": ("test_range_and_cast.py", "flow.range"),
})

# transposed convolution, upsampling, prelu, triangular masks, in_top_k
CHECKER_CASES.update({
    "deconv2d": ("test_conv_transpose.py", "flow.nn.conv2d_transpose"),
    "upsample": ("test_upsample.py", "flow.layers.upsample_2d"),
    "upsample_grad": ("test_upsample.py", "def test_upsample_grad_op"),
    "prelu": ("test_prelu.py", "check_op(prelu_op"),
    "prelu_grad": ("test_prelu.py", "def test_prelu_grad_op"),
    "tril": ("test_tril.py", "flow.math.tril"),
    "fused_scale_tril": ("test_tril.py", "flow.math.fused_scale_tril"),
    "in_top_k": ("test_in_top_k.py", "flow.math.in_top_k"),
})

# more math, indexing and random ops (flow.math.atan2 / xdivy / xlogy, tensor_scatter_nd_update,
# random_mask_like, shuffle)
CHECKER_CASES.update({
    "broadcast_atan2": ("test_more_math.py", "flow.math.atan2"),
    "broadcast_xdivy": ("test_more_math.py", "flow.math.xdivy"),
    "broadcast_xlogy": ("test_more_math.py", "flow.math.xlogy"),
    "tensor_scatter_nd_update": ("test_more_array_ops.py", "flow.tensor_scatter_nd_update"),
    "random_mask_like": ("test_more_random.py", "flow.nn.random_mask_like"),
    "generate_random_batch_permutation_indices": ("test_more_random.py",
                                                  "flow.random.shuffle"),
})

CHECKER_CASES["multi_square_sum"] = ("test_user_op_builder.py", "multi_square_sum")
CHECKER_CASES["fused_cast_scale"] = ("test_user_op_builder.py", "fused_cast_scale")
CHECKER_CASES["unique_with_counts"] = ("test_more_ops.py",
                                       "flow.experimental.unique_with_counts")
CHECKER_CASES["categorical_ordinal_encode"] = ("test_more_ops.py",
                                               "flow.categorical_ordinal_encode")

CHECKER_CASES["distributed_partial_fc_sample"] = ("test_partial_fc.py",
                                                  "flow.distributed_partial_fc_sample")
CHECKER_CASES["sync_dynamic_resize"] = ("test_dynamic_shapes.py", "flow.sync_dynamic_resize")
# OneFlow 0.3's framework-test ops, built with flow.user_op_builder
CHECKER_CASES.update({
    op: ("test_fixture_ops.py", '"%s"' % op) for op in [
        "ccrelu", "cpu_only_relu_test", "TestReshape", "TestReshape4KeepHeaderOnly",
        "TestSource", "TestSourceMultiGpuFixedOutNum", "TestDynamicSource", "TestRandomSource",
        "TestMultiOutputOrder", "TestMultiInput", "TestDataTypeAttr",
        "TestListDataTypeAndListShapeAndListStringAttr", "test_user_op_attr_auto_type"]})
CHECKER_CASES.update({  # their gradient ops
    "ccrelu_grad": ("test_fixture_ops.py", '"ccrelu"'),
    "TestReshapeLike4KeepHeaderOnly": ("test_fixture_ops.py", '"TestReshape4KeepHeaderOnly"'),
    "TestMultiInputGrad": ("test_fixture_ops.py", '"TestMultiInput"'),
})

# quantization-aware training (flow.quantization)
CHECKER_CASES.update({
    "min_max_observer": ("test_quantization.py", "flow.quantization.min_max_observer"),
    "moving_average_min_max_observer": ("test_quantization.py",
                                        "flow.quantization.moving_average_min_maxObserver"),
    "fake_quantization": ("test_quantization.py", "flow.quantization.fake_quantization"),
})

# Ops that need no gradient rule though they are not marked not differentiable.
NO_GRADIENT_NEEDED = {
    "variable": "a source op: autograd stops at trainable variables, whose diffs it collects",
}


@pytest.fixture(scope="module")
def report():
    return _oneflow_internal.op_registry_report()


# System ops that only exist on GPUs: the copies between host and GPU memory.
GPU_ONLY_OPS = {"copy_hd"}


def test_every_op_has_a_cpu_kernel(report):
    missing = sorted(op for op, entry in report.items()
                     if not entry["cpu_dtypes"] and op not in GPU_ONLY_OPS)
    assert not missing, "ops without any CPU kernel: %s" % missing


def test_gpu_kernels_take_only_dtypes_the_cpu_kernels_take(report):
    """A GPU kernel (CUDA builds) exists only for dtypes the op's CPU kernels take, plus float16,
    which only GPU kernels compute in: an op's dtype rules are the same on both devices."""
    extra = {}
    for op, entry in report.items():
        if op in GPU_ONLY_OPS:
            continue
        beyond = set(entry["gpu_dtypes"]) - set(entry["cpu_dtypes"]) - {"float16"}
        if beyond:
            extra[op] = sorted(beyond)
    assert not extra, "GPU kernels for dtypes without a CPU kernel: %s" % extra


def test_gpu_only_ops_have_gpu_kernels_in_cuda_builds(report):
    if not flow.sysconfig.with_cuda():
        pytest.skip("a CPU-only build has no GPU kernels")
    assert all(report[op]["gpu_dtypes"] for op in GPU_ONLY_OPS)


def test_every_op_has_a_gradient_rule_or_is_not_differentiable(report):
    missing = sorted(op for op, entry in report.items()
                     if not entry["has_grad_rule"] and not entry["non_differentiable"]
                     and op not in NO_GRADIENT_NEEDED)
    assert not missing, ("ops with neither a gradient rule (SetGradFn) nor NonDifferentiable(): "
                         "%s" % missing)


def test_every_op_has_a_checker_case(report):
    unlisted = sorted(set(report) - set(CHECKER_CASES))
    assert not unlisted, ("ops with no checker case: add each to CHECKER_CASES with the test "
                          "that covers it: %s" % unlisted)
    stale = sorted(set(CHECKER_CASES) - set(report))
    assert not stale, "CHECKER_CASES lists ops that are not registered: %s" % stale


@pytest.mark.parametrize("op_type", sorted(CHECKER_CASES))
def test_checker_case_exists(op_type):
    file_name, marker = CHECKER_CASES[op_type]
    path = os.path.join(HERE, file_name)
    assert os.path.exists(path), "%s: checker file %s does not exist" % (op_type, file_name)
    with open(path) as handle:
        assert marker in handle.read(), "%s: %s does not contain %r" % (op_type, file_name, marker)


def test_floating_math_ops_have_float_and_double_kernels(report):
    for op in UNARY_MATH:
        assert {"float32", "float64"} <= set(report[op]["cpu_dtypes"]), op


def test_comparisons_are_not_differentiable(report):
    for op in ["broadcast_equal", "broadcast_less", "broadcast_logical_and", "logical_not"]:
        assert report[op]["non_differentiable"], op
