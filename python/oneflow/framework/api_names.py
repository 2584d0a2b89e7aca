"""The names OneFlow 0.3 (v0.3.4) exported, by module, so that a name this package does not
provide yet fails as NotImplementedError naming it, never as a bare AttributeError.

Each public module ends with `__getattr__ = missing_name_hook("oneflow.<module>")`; Python
calls it only for names the module lacks. Sources: OneFlow 0.3's `oneflow_export` names as listed
in the shared OneFlow 0.3 API reference (reference/oneflow-v0.3-api.md) and OneFlow 0.3's
python/oneflow/python/ops/*.py.
"""

ONEFLOW_03_NAMES = {
    "oneflow": """
        acc advanced amp_white_identity argsort argwhere assign batch_unsorted_segment_sum
        broadcast_like broadcast_to_compatible_with cast cast_to_current_logical_view cast_to_static_shape
        categorical_ordinal_encode checkpoint clamp clear_default_session clip
        clip_by_scalar clip_by_value combined_margin_loss concat config constant
        constant_initializer constant_like constant_pad2d constant_scalar
        convert_oneflow_dtype_to_numpy_dtype copy count_not_finite ctc_loss
        current_global_function_desc current_scope data deprecated detection diag
        dim0_dynamic_to_fixed dim_gather distribute distributed_partial_fc_sample double
        dynamic_reshape eager_execution_enabled elem_cnt empty enable_eager_execution env
        expand_dims experimental flatten float float16 float32 float64 function_config
        FunctionConfig gather gather_nd get_all_variables get_variable global_function
        glorot_normal_initializer glorot_uniform_initializer identity identity_n image
        image_batch_align image_decode image_flip image_normalize image_random_crop
        image_resize image_target_resize in_top_k int32 int64 int8 INVALID_BATCH_AXIS
        INVALID_SPLIT_AXIS kaiming_initializer keras layers linalg load_variables
        lod_to_dense losses masked_fill math matmul pack unpack multi_count_not_finite nn nonzero
        object_bbox_flip object_bbox_scale object_segmentation_polygon_flip
        object_segmentation_polygon_scale object_segmentation_polygon_to_mask one_hot onerec
        ones ones_initializer ones_like optimizer pad pad_grad parallel_cast pooling
        quantization random random_normal_initializer random_uniform_initializer range
        reflection_pad2d regularizers repeat replication_pad2d reshape reshape_like reverse
        same_padding scatter_nd scope sleep_identity slice slice_update slice_v2
        smooth_l1_loss sort squeeze stack summary sync_default_session sync_dynamic_resize
        system tensor_buffer_to_tensor tensor_buffer_to_tensor_list tensor_list_split
        tensor_list_to_tensor_buffer tensor_scatter_nd_add tensor_scatter_nd_update
        tensor_to_tensor_buffer train transpose truncated_normal
        truncated_normal_initializer typing uint8 unittest unsorted_batch_segment_sum
        unsorted_segment_sum unsorted_segment_sum_like variance_scaling_initializer watch
        watch_diff where xavier_normal_initializer xavier_uniform_initializer zeros
        zero_pad2d zeros_initializer zeros_like
    """,
    "oneflow.math": """
        abs acos acosh add add_n argmax asin asinh atan atan2 atanh
        broadcast_to_compatible_with ceil clip_by_value cos cosh divide equal erf erfc exp
        expm1 floor floordiv fused_scale_tril gelu gelu_grad greater greater_equal in_top_k
        invert_permutation is_non_decreasing is_strictly_increasing l2_normalize less
        less_equal lgamma log log1p log_sigmoid logical_and maximum minimum mod multiply
        negative not_equal polyval pow reciprocal reciprocal_no_nan reduce_all reduce_any
        reduce_euclidean_norm reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod
        reduce_std reduce_sum reduce_variance reduced_shape_elem_cnt relu rint round rsqrt
        sigmoid sigmoid_grad sigmoid_v2 sign sin sinh softplus sqrt square
        squared_difference subtract tan tanh tanh_v2 top_k tril two_stage_reduce_max
        two_stage_reduce_min unsorted_batch_segment_sum unsorted_segment_sum
        unsorted_segment_sum_like xdivy xlogy
    """,
    "oneflow.nn": """
        avg_pool1d avg_pool2d avg_pool3d batch_normalization BCELoss BCEWithLogitsLoss
        bias_add compat_conv2d conv1d conv2d conv2d_transpose conv2d_transpose_V2 conv3d
        ctc_beam_search_decoder ctc_greedy_decoder CTCLoss dropout elu
        fused_bias_add_dropout fused_bias_add_gelu fused_scale_tril
        fused_self_attention_query_mul_key_and_value GroupNorm hardsigmoid hardswish
        hardtanh InstanceNorm1d InstanceNorm2d InstanceNorm3d KLDivLoss L1Loss layer_norm
        leaky_relu logsoftmax MarginRankingLoss max_pool1d max_pool2d max_pool3d mish
        moments MSELoss PixelShuffle PixelShufflev2 random_mask_like relu relu6
        sigmoid_cross_entropy_with_logits softmax softmax_cross_entropy_with_logits
        softmax_grad sparse_cross_entropy sparse_softmax_cross_entropy_with_logits swish
        torch_conv2d_transpose tril TripletMarginLoss unfold1d unfold2d unfold3d
    """,
    "oneflow.layers": """
        affine_channel batch_normalization batch_normalization_add_relu
        batch_normalization_relu categorical_ordinal_encoder conv1d conv2d conv3d dense
        layer_norm layer_norm_grad layer_norm_param_grad prelu upsample_2d
    """,
    "oneflow.random": "bernoulli coin_flip CoinFlip generate_random_batch_permutation_indices shuffle",
    "oneflow.data": """
        BlobConf coco_reader decode_ofrecord decode_random image_decoder_random_crop_resize
        ImageCodec ImageDecoderRandomCropResize ImagePreprocessor ImageResizePreprocessor
        load_mnist NormByChannelPreprocessor ofrecord_bytes_decoder
        ofrecord_image_classification_reader ofrecord_image_decoder
        ofrecord_image_decoder_random_crop ofrecord_loader ofrecord_raw_decoder
        ofrecord_reader OFRecordBytesDecoder OFRecordImageDecoder
        OFRecordImageDecoderRandomCrop OFRecordRawDecoder onerec_decoder onerec_reader
        OneRecDecoder RawCodec
    """,
    "oneflow.image": """
        batch_align crop_mirror_normalize CropMirrorNormalize decode flip normalize
        random_crop Resize resize target_resize name_scope
    """,
    "oneflow.advanced": "distribute_add distribute_clone distribute_concat distribute_split",
    "oneflow.experimental": """
        enable_typing_check get_interface_blob_value indexed_slices_reduce_sum logical_slice
        logical_slice_assign name_scope
        set_interface_blob_value square_sum unique_with_counts
    """,
    "oneflow.linalg": "matmul",
    "oneflow.quantization": "fake_quantization min_max_observer moving_average_min_maxObserver",
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
