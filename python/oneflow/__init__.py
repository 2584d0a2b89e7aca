"""oneflow: a distributed deep-learning framework with OneFlow 0.3's lazy API.

    import oneflow as flow
    import oneflow.typing as tp

    @flow.global_function(type="train")
    def train_job(x: tp.Numpy.Placeholder((64, 784))) -> tp.Numpy: ...
"""
from oneflow.framework import legacy_aliases as _legacy_aliases
from oneflow.framework.dtypes import (  # noqa: F401
    char, convert_oneflow_dtype_to_numpy_dtype, double, float, float16, float32, float64, half,
    int8, int32, int64, uint8,
)
from oneflow.framework.function import (  # noqa: F401
    FunctionConfig, current_global_function_desc, function_config, global_function,
)
from oneflow.framework.session import clear_default_session, sync_default_session  # noqa: F401
from oneflow.framework.blob import LazyBlob, LocalBlob  # noqa: F401
from oneflow.framework.user_op_builder import (  # noqa: F401
    consistent_user_op_builder, consistent_user_op_module_builder, find_or_create_module,
    user_op_builder, user_op_module_builder,
)
from oneflow.env import eager_execution_enabled, enable_eager_execution  # noqa: F401
from oneflow.ops.array_ops import (  # noqa: F401
    cast, constant, copy, identity, matmul, parallel_cast, reshape, transpose,
)
from oneflow.ops.math_ops import where  # noqa: F401
from oneflow.typing import FixedTensorDef, MirroredTensorDef, MirroredTensorListDef  # noqa: F401
from oneflow.ops.layers import categorical_ordinal_encode  # noqa: F401
from oneflow.math import broadcast_to_compatible_with  # noqa: F401 - also top-level in 0.3
from oneflow.ops.shape_ops import (  # noqa: F401
    broadcast_like, concat, constant_like, constant_pad2d, expand_dims, flatten, logical_slice,
    ones, ones_like, pad, pad_grad, reflection_pad2d, replication_pad2d, reshape_like, reverse,
    same_padding, slice, slice_update, slice_v2, split, squeeze, stack, zero_pad2d, zeros,
    zeros_like,
)
from oneflow.ops.index_ops import (  # noqa: F401
    argwhere, clip_by_value, dim_gather, gather, gather_nd, nonzero, one_hot, scatter_nd,
    tensor_scatter_nd_add, unsorted_batch_segment_sum, unsorted_segment_sum,
    unsorted_segment_sum_like,
)
from oneflow.ops.index_ops import (  # noqa: F401 - OneFlow 0.3's other names of clip_by_value
    clip_by_value as clamp, clip_by_value as clip, clip_by_value as clip_by_scalar,
)
from oneflow.ops.sort_ops import argsort, in_top_k, sort  # noqa: F401
from oneflow.ops.range_ops import range  # noqa: F401,A004 - OneFlow's name
from oneflow.ops.variables import assign, get_variable  # noqa: F401
from oneflow.ops.watch import watch, watch_diff  # noqa: F401
from oneflow.ops.loss_ops import ctc_loss, smooth_l1_loss  # noqa: F401
from oneflow.ops.extra_array_ops import (  # noqa: F401
    acc, amp_white_identity, cast_to_static_shape, constant_scalar, dynamic_reshape, elem_cnt,
    identity_n, masked_fill, pack, repeat, sync_dynamic_resize, tensor_scatter_nd_update,
    unpack,
)
from oneflow.ops.extra_math_ops import (  # noqa: F401
    count_not_finite, diag, multi_count_not_finite,
)
from oneflow.ops.extra_nn_ops import (  # noqa: F401
    combined_margin_loss, distributed_partial_fc_sample,
)
from oneflow.ops.initializers import (  # noqa: F401
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    kaiming_initializer, ones_initializer, random_normal_initializer, random_uniform_initializer,
    truncated_normal, truncated_normal_initializer, variance_scaling_initializer, xavier_normal_initializer,
    xavier_uniform_initializer, zeros_initializer,
)
from oneflow import (  # noqa: F401
    advanced, checkpoint, config, data, deprecated, distribute, env, experimental, image, keras, layers,
    linalg, losses, math, nn, optimizer, quantization, random, regularizers, scope, train, typing,
    unittest,
)
from oneflow import sysconfig  # noqa: F401
from oneflow.version import __version__  # noqa: F401
from oneflow.scope import deprecated_name_scope as name_scope  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

INVALID_SPLIT_AXIS = None
INVALID_BATCH_AXIS = None


def cast_to_current_logical_view(x):
    """`x` as seen in the current logical view (mirrored: one value per device; consistent: one
    logical blob). See oneflow/framework/mirrored.py."""
    from oneflow.framework import mirrored

    return mirrored.cast_to_current_logical_view(x)


def tensor_to_tensor_buffer(x, instance_dims, name=None):
    """x's last `instance_dims` axes as one tensor per element of a buffer of shape
    x.shape[:-instance_dims] (OneFlow 0.3's TensorBuffer). Every such tensor has the same shape,
    so the buffer keeps x itself (see framework/tensor_buffer.py); flow.tensor_buffer_to_tensor
    reads it back."""
    from oneflow.framework import tensor_buffer

    return tensor_buffer.from_tensor(x, instance_dims)


def tensor_buffer_to_tensor(x, dtype, instance_shape, name=None):
    """A tensor buffer (flow.tensor_to_tensor_buffer) or a batch of host images or values (an
    image list), each of instance_shape, as one x.shape + instance_shape blob of dtype."""
    from oneflow.framework import dtypes, image_pipeline, op_builder, tensor_buffer

    where = "tensor_buffer_to_tensor"
    dtype = dtypes.check(dtype, where + " dtype")
    if isinstance(x, tensor_buffer.TensorBuffer):
        return tensor_buffer.to_tensor(x, dtype, instance_shape, name)
    return image_pipeline.to_tensor(x, dtype, instance_shape,
                                    op_builder.op_name(name, "TensorBufferToTensor"), where)


image_resize = image.Resize
image_target_resize = image.target_resize
image_random_crop = image.random_crop
image_decode = image.decode
image_flip = image.flip
image_normalize = image.normalize
image_batch_align = image.batch_align


def dtypes():
    """The data types blobs can have (OneFlow 0.3's flow.dtypes())."""
    from oneflow.framework import dtypes as types

    return [types.int8, types.float32, types.float64, types.float16, types.int32, types.int64,
            types.uint8]


def fixed_placement(device_tag, machine_device_ids):
    """OneFlow 0.2's name of flow.scope.placement, kept by 0.3 (deprecated)."""
    return scope.placement(device_tag, machine_device_ids)


device_prior_placement = fixed_placement


def current_scope():
    from oneflow.framework import session as session_util

    return session_util.default_session().scope


def load_variables(value_dict, ignore_mismatch=True):
    """Sets variables from name -> value (numpy arrays, flow.checkpoint.get(path)); see
    oneflow/checkpoint.py."""
    return checkpoint.load_variables(value_dict, ignore_mismatch=ignore_mismatch)


def get_all_variables():
    """name -> value (.numpy(), .shape, .dtype) of every variable of the session."""
    return checkpoint.get_all_variables()


__getattr__ = _missing_name_hook("oneflow")

_legacy_aliases.restore()
