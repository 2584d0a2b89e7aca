"""NCCL collective boxing knobs: accepted, no effect in a CPU-only build."""


def _ignored(*args, **kwargs):
    pass


enable_fusion = _ignored
num_callback_threads = _ignored
nccl_num_streams = _ignored
nccl_fusion_threshold_mb = _ignored
nccl_fusion_all_reduce = _ignored
nccl_fusion_all_reduce_use_buffer = _ignored
nccl_fusion_reduce_scatter = _ignored
nccl_fusion_all_gather = _ignored
nccl_fusion_reduce = _ignored
nccl_fusion_broadcast = _ignored
nccl_fusion_max_ops = _ignored
nccl_enable_all_to_all = _ignored
nccl_enable_mixed_fusion = _ignored
