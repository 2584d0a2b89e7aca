"""oneflow.nn"""
from oneflow.ops.nn_ops import (  # noqa: F401
    bias_add, elu, hardsigmoid, hardswish, hardtanh, leaky_relu, mish, relu, relu6, softmax,
    sparse_softmax_cross_entropy_with_logits, swish,
)
from oneflow.ops.conv_ops import (  # noqa: F401
    avg_pool1d, avg_pool2d, avg_pool3d, compat_conv2d, conv1d, conv2d, conv3d, max_pool1d,
    max_pool2d, max_pool3d,
)
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.nn")
