"""oneflow.nn"""
from oneflow.ops.nn_ops import (  # noqa: F401
    bias_add, elu, hardsigmoid, hardswish, hardtanh, leaky_relu, mish, relu, relu6, softmax,
    sparse_softmax_cross_entropy_with_logits, swish,
)
from oneflow.ops.norm_ops import (  # noqa: F401
    batch_normalization, dropout, instance_normalization1d as InstanceNorm1d,
    instance_normalization2d as InstanceNorm2d, instance_normalization3d as InstanceNorm3d,
    nn_layer_norm as layer_norm,
)
from oneflow.ops.loss_ops import (  # noqa: F401
    bce_loss as BCELoss, bce_with_logits_loss as BCEWithLogitsLoss, ctc_greedy_decoder,
    ctc_loss as CTCLoss,
    kl_div_loss as KLDivLoss, l1_loss as L1Loss, logsoftmax, mse_loss as MSELoss,
    sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits,
)
from oneflow.ops.conv_ops import (  # noqa: F401
    avg_pool1d, avg_pool2d, avg_pool3d, compat_conv2d, conv1d, conv2d, conv2d_transpose, conv3d,
    max_pool1d, max_pool2d, max_pool3d, unfold2d,
)
from oneflow.ops.extra_nn_ops import (  # noqa: F401
    fused_bias_add_dropout, fused_bias_add_gelu, fused_self_attention_query_mul_key_and_value,
    margin_ranking_loss as MarginRankingLoss, moments, pixel_shuffle as PixelShuffle,
    pixel_shufflev2 as PixelShufflev2, random_mask_like, softmax_grad, sparse_cross_entropy,
    triplet_margin_loss as TripletMarginLoss,
)
from oneflow.ops.norm_ops import group_normalization as GroupNorm  # noqa: F401
from oneflow.ops.conv_ops import torch_conv2d_transpose  # noqa: F401
from oneflow.ops.triangular_ops import fused_scale_tril, tril  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

# OneFlow 0.3's TensorFlow-style transposed convolution (output_shape with "SAME" / "VALID"),
# which conv2d_transpose already is.
conv2d_transpose_V2 = conv2d_transpose

__getattr__ = _missing_name_hook("oneflow.nn")
