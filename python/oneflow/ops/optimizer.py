"""flow.optimizer: SGD (with momentum) and the piecewise constant learning-rate schedule."""
from oneflow.framework import op_builder, shapes
from oneflow.framework.blob import LazyBlob


class PiecewiseConstantScheduler:
    def __init__(self, boundaries, values, warmup=None):
        if not all(shapes.is_int(b) for b in boundaries):
            raise TypeError("PiecewiseConstantScheduler: boundaries must be ints, got %r" % (boundaries,))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise TypeError("PiecewiseConstantScheduler: values must be numbers, got %r" % (values,))
        boundaries = [int(b) for b in boundaries]
        values = [float(v) for v in values]
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                "PiecewiseConstantScheduler: len(values) must be len(boundaries) + 1, got %d "
                "values and %d boundaries" % (len(values), len(boundaries))
            )
        if warmup is not None:
            raise NotImplementedError("learning-rate warmup arrives in a later version")
        self.boundaries = boundaries
        self.values = values


class SGD:
    """SGD; with momentum m > 0: v = m * v - lr * grad; model += v (OneFlow 0.3's form)."""

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None):
        if not isinstance(lr_scheduler, PiecewiseConstantScheduler):
            raise NotImplementedError(
                "only flow.optimizer.PiecewiseConstantScheduler is supported yet, got %s"
                % type(lr_scheduler).__name__
            )
        if grad_clipping is not None or loss_scale_policy is not None:
            raise NotImplementedError("gradient clipping and loss-scale policies arrive later")
        if momentum is None:
            momentum = 0.0
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
            raise TypeError("SGD: momentum must be a number, got %r" % (momentum,))
        if momentum < 0:
            raise ValueError("SGD: momentum must be >= 0, got %r" % (momentum,))
        self.lr_scheduler = lr_scheduler
        self.momentum = float(momentum)
        self.loss_scale_factor = float(loss_scale_factor or 0.0)

    def minimize(self, loss):
        session = op_builder.current_job()
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        for item in losses:
            if not isinstance(item, LazyBlob):
                raise TypeError("minimize: loss must be a blob, got %s" % type(item).__name__)
        session.cpp.set_train_conf(
            [item.lbn for item in losses], self.lr_scheduler.boundaries,
            self.lr_scheduler.values, self.momentum, self.loss_scale_factor,
        )


def _not_yet(name):
    class _Optimizer:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("flow.optimizer.%s arrives in a later version; use SGD" % name)

    _Optimizer.__name__ = name
    return _Optimizer


Adam = _not_yet("Adam")
AdamW = _not_yet("AdamW")
RMSProp = _not_yet("RMSProp")
LARS = _not_yet("LARS")
LazyAdam = _not_yet("LazyAdam")
LAMB = _not_yet("LAMB")
SGDW = _not_yet("SGDW")
