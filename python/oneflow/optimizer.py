"""oneflow.optimizer"""
from oneflow.ops.optimizer import (  # noqa: F401
    LAMB, LARS, SGD, SGDW, Adam, AdamW, LazyAdam, PiecewiseConstantScheduler, RMSProp,
)
