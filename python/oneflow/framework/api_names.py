"""The names OneFlow 0.3 (v0.3.4) exported, by module, so that a name this package does not
provide yet fails as NotImplementedError naming it, never as a bare AttributeError.

Each public module ends with `__getattr__ = missing_name_hook("oneflow.<module>")`; Python
calls it only for names the module lacks. Sources: OneFlow 0.3's `oneflow_export` names as listed
in the shared OneFlow 0.3 API reference (reference/oneflow-v0.3-api.md) and OneFlow 0.3's
python/oneflow/python/ops/*.py.
"""

ONEFLOW_03_NAMES = {
    "oneflow": """
        FunctionConfig INVALID_BATCH_AXIS INVALID_SPLIT_AXIS argwhere assign broadcast_like cast
        cast_to_current_logical_view checkpoint clear_default_session clip_by_value concat config
        constant constant_initializer constant_like convert_oneflow_dtype_to_numpy_dtype
        current_global_function_desc current_scope data deprecated detection distribute double
        dynamic_reshape eager_execution_enabled elem_cnt enable_eager_execution env expand_dims
        experimental flatten float float16 float32 float64 function_config gather gather_nd
        get_all_variables get_variable glorot_normal_initializer glorot_uniform_initializer
        global_function identity identity_n image int32 int64 int8 kaiming_initializer keras
        layers load_variables losses masked_fill math matmul nn nonzero one_hot ones_initializer
        ones_like optimizer pad pad_grad parallel_cast random random_normal_initializer
        random_uniform_initializer range regularizers repeat reshape reshape_like scatter_nd
        scope slice slice_update slice_v2 sort argsort squeeze stack summary
        sync_default_session tensor_scatter_nd_add tensor_scatter_nd_update train transpose
        truncated_normal truncated_normal_initializer typing uint8 unittest
        variance_scaling_initializer watch watch_diff where xavier_normal_initializer
        xavier_uniform_initializer zeros_initializer zeros_like
    """,
    "oneflow.math": """
        abs acos acosh add add_n argmax asin asinh atan atan2 atanh
        broadcast_to_compatible_with ceil clip_by_value cos cosh divide equal erf erfc exp expm1
        floor floordiv fused_scale_tril gelu greater greater_equal in_top_k l2_normalize less
        less_equal lgamma log log1p log_sigmoid logical_and maximum minimum mod multiply
        negative not_equal polyval pow reciprocal reciprocal_no_nan reduce_all reduce_any
        reduce_euclidean_norm reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod
        reduce_std reduce_sum reduce_variance relu rint round rsqrt sigmoid sigmoid_v2 sign sin
        sinh softplus sqrt square squared_difference subtract tan tanh top_k tril
        two_stage_reduce_max two_stage_reduce_min unsorted_batch_segment_sum
        unsorted_segment_sum unsorted_segment_sum_like xdivy xlogy
    """,
    "oneflow.nn": """
        BCELoss BCEWithLogitsLoss CTCLoss KLDivLoss L1Loss MSELoss MarginRankingLoss
        TripletMarginLoss avg_pool1d avg_pool2d avg_pool3d batch_normalization bias_add
        compat_conv2d conv1d conv2d conv3d conv2d_transpose dropout elu
        fused_bias_add_dropout fused_bias_add_gelu hardsigmoid hardswish hardtanh layer_norm
        leaky_relu logsoftmax max_pool1d max_pool2d max_pool3d mish moments random_mask_like relu
        relu6 sigmoid_cross_entropy_with_logits softmax softmax_cross_entropy_with_logits
        softmax_grad sparse_cross_entropy sparse_softmax_cross_entropy_with_logits swish
    """,
    "oneflow.layers": """
        batch_normalization batch_normalization_add_relu batch_normalization_relu conv1d conv2d
        conv3d dense layer_norm layer_norm_grad layer_norm_param_grad prelu upsample_2d
    """,
    "oneflow.random": """
        CoinFlip bernoulli coin_flip generate_random_batch_permutation_indices shuffle
    """,
    "oneflow.data": """
        BlobConf ImageCodec ImageDecoderRandomCropResize ImagePreprocessor ImageResizePreprocessor NormByChannelPreprocessor
        OFRecordBytesDecoder OFRecordImageDecoder OFRecordImageDecoderRandomCrop
        OFRecordRawDecoder RawCodec coco_reader decode_ofrecord decode_random load_mnist
        image_decoder_random_crop_resize ofrecord_bytes_decoder ofrecord_image_decoder ofrecord_image_decoder_random_crop
        ofrecord_loader ofrecord_raw_decoder ofrecord_reader onerec_reader
    """,
    "oneflow.image": """
        CropMirrorNormalize Resize batch_align crop_mirror_normalize decode flip normalize
        random_crop resize target_resize
    """,
    "oneflow.keras": "activations",
    "oneflow.keras.activations": "gelu gelu_grad relu sigmoid tanh tanh_grad",
}

EXPORTED_NAMES = {module: frozenset(names.split()) for module, names in ONEFLOW_03_NAMES.items()}


def missing_name_hook(module_name):
    """A module-level __getattr__ for `module_name`: NotImplementedError for a name OneFlow 0.3
    exported there, AttributeError for any other name."""
    exported = EXPORTED_NAMES[module_name]

    def __getattr__(name):
        if name in exported:
            raise NotImplementedError(
                "%s.%s is part of OneFlow 0.3's API but is not implemented in this version"
                % (module_name, name))
        raise AttributeError("module %r has no attribute %r" % (module_name, name))

    return __getattr__
