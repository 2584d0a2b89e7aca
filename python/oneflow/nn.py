"""oneflow.nn"""
from oneflow.ops.nn_ops import (  # noqa: F401
    bias_add, relu, softmax, sparse_softmax_cross_entropy_with_logits,
)
