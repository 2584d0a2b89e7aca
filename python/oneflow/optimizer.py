"""oneflow.optimizer: optimizers, learning-rate schedules, warmup, gradient clipping and loss
scaling (python/oneflow/ops/optimizer.py)."""
import types

from oneflow.ops import optimizer as _impl
from oneflow.ops.optimizer import (  # noqa: F401
    LAMB, LARS, SGD, SGDW, Adagrad, Adam, AdamW, CombinedOptimizer, CosineScheduler,
    CustomScheduler, ExponentialScheduler, InverseTimeScheduler, LazyAdam, LinearCosineScheduler,
    LrScheduler, NaturalExpScheduler, Optimizer, PiecewiseConstantScheduler,
    PiecewiseScalingScheduler, PolynomialSchduler, PolynomialScheduler, RMSProp,
)

warmup = types.SimpleNamespace(constant=_impl.constant, linear=_impl.linear)
grad_clipping = types.SimpleNamespace(by_global_norm=_impl.by_global_norm)
loss_scale = types.SimpleNamespace(static_loss_scale=_impl.static_loss_scale,
                                   dynamic_loss_scale=_impl.dynamic_loss_scale)
