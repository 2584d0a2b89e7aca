"""oneflow.math"""
from oneflow.ops.math_ops import (  # noqa: F401
    abs, acos, acosh, add, add_n, asin, asinh, atan, atanh, ceil, cos, cosh, divide, equal, erf,
    erfc, exp, expm1, floor, floordiv, gelu, greater, greater_equal, less, less_equal, lgamma,
    log, log1p, log_sigmoid, logical_and, logical_not, logical_or, maximum, minimum, mod,
    multiply, negative, not_equal, pow, reciprocal, reciprocal_no_nan, reduce_mean, reduce_sum,
    relu, rint, round, rsqrt, sigmoid, sigmoid_v2, sign, sin, sinh, softplus, sqrt, square,
    subtract, tan, tanh,
)
from oneflow.ops.index_ops import (  # noqa: F401
    clip_by_value, unsorted_batch_segment_sum, unsorted_segment_sum, unsorted_segment_sum_like,
)
from oneflow.ops.reduce_ops import (  # noqa: F401
    reduce_all, reduce_any, reduce_euclidean_norm, reduce_logsumexp, reduce_max, reduce_min,
    reduce_prod, reduce_std, reduce_variance, two_stage_reduce_max, two_stage_reduce_min,
)
from oneflow.ops.sort_ops import argmax, argmin, in_top_k, top_k  # noqa: F401
from oneflow.ops.triangular_ops import fused_scale_tril, tril  # noqa: F401
from oneflow.ops.extra_math_ops import (  # noqa: F401
    atan2, broadcast_to_compatible_with, invert_permutation, is_non_decreasing,
    is_strictly_increasing, l2_normalize, polyval, sigmoid_grad, squared_difference, xdivy, xlogy,
)
from oneflow.ops.extra_nn_ops import gelu_grad  # noqa: F401
from oneflow.ops.extra_array_ops import reduced_shape_elem_cnt  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

tanh_v2 = tanh  # OneFlow 0.3's deprecated name of tanh

__getattr__ = _missing_name_hook("oneflow.math")
