"""oneflow.random"""
from oneflow.ops.random_ops import (  # noqa: F401
    bernoulli, generate_random_batch_permutation_indices, normal, shuffle, uniform,
)
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def CoinFlip(batch_size=1, seed=None, probability=0.5, name=None):
    """A (batch_size,) int8 blob of fresh coin flips (1 with `probability`) every call, drawn on
    the host with the data pipeline; flow.image.CropMirrorNormalize's mirror_blob."""
    from oneflow.framework import image_pipeline, op_builder

    session = op_builder.current_job()
    placement = session.scope.current_placement() or session.default_placement()
    return image_pipeline.coin_flip(batch_size, seed, probability, placement,
                                    op_builder.op_name(name, "CoinFlip"), "random.CoinFlip")


coin_flip = CoinFlip

__getattr__ = _missing_name_hook("oneflow.random")
