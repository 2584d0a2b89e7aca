"""oneflow.nn"""
from oneflow.ops.nn_ops import (  # noqa: F401
    bias_add, elu, hardsigmoid, hardswish, hardtanh, leaky_relu, mish, relu, relu6, softmax,
    sparse_softmax_cross_entropy_with_logits, swish,
)
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.nn")
