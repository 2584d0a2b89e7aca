"""oneflow.layers"""
from oneflow.ops.layers import (  # noqa: F401
    affine_channel, categorical_ordinal_encoder, dense,
)
from oneflow.ops.norm_ops import (  # noqa: F401
    batch_normalization_add_relu, batch_normalization_relu,
    layer_batch_normalization as batch_normalization, layer_norm, layer_norm_grad,
    layer_norm_param_grad,
)
from oneflow.ops.conv_ops import (  # noqa: F401
    layers_conv1d as conv1d, layers_conv2d as conv2d, layers_conv3d as conv3d,
)
from oneflow.ops.prelu_ops import prelu  # noqa: F401
from oneflow.ops.upsample_ops import upsample_2d  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.layers")
