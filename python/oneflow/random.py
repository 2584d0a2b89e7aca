"""oneflow.random"""
from oneflow.ops.random_ops import (  # noqa: F401
    bernoulli, generate_random_batch_permutation_indices, normal, shuffle, uniform,
)
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.random")
