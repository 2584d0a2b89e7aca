"""flow.optimizer: SGD (with momentum), Adam, AdamW and the piecewise constant learning-rate
schedule. Updates follow OneFlow 0.3's formulas (see proto/job.proto)."""
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


def _number(value, what, low=None, below=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number, got %r" % (what, value))
    if low is not None and value < low:
        raise ValueError("%s must be >= %r, got %r" % (what, low, value))
    if below is not None and value >= below:
        raise ValueError("%s must be < %r, got %r" % (what, below, value))
    return float(value)


class Optimizer:
    """Common part: the schedule, unsupported options, and minimize(loss)."""

    kind = None

    def __init__(self, lr_scheduler, loss_scale_factor, grad_clipping, loss_scale_policy):
        if not isinstance(lr_scheduler, PiecewiseConstantScheduler):
            raise NotImplementedError(
                "only flow.optimizer.PiecewiseConstantScheduler is supported yet, got %s"
                % type(lr_scheduler).__name__
            )
        if grad_clipping is not None or loss_scale_policy is not None:
            raise NotImplementedError("gradient clipping and loss-scale policies arrive later")
        self.lr_scheduler = lr_scheduler
        self.loss_scale_factor = 0.0 if loss_scale_factor is None else _number(
            loss_scale_factor, "loss_scale_factor")

    def params(self):
        raise NotImplementedError

    def minimize(self, loss):
        session = op_builder.current_job()
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        for item in losses:
            if not isinstance(item, LazyBlob):
                raise TypeError("minimize: loss must be a blob, got %s" % type(item).__name__)
        session.cpp.set_train_conf(
            [item.lbn for item in losses], self.lr_scheduler.boundaries,
            self.lr_scheduler.values, self.kind, self.params(), self.loss_scale_factor,
        )


class SGD(Optimizer):
    """SGD; with momentum m > 0: v = m * v - lr * grad; model += v (OneFlow 0.3's form)."""

    kind = "sgd"

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, loss_scale_policy)
        self.momentum = _number(0.0 if momentum is None else momentum, "SGD: momentum", low=0)

    def params(self):
        return {"momentum": self.momentum}


class Adam(Optimizer):
    """Adam: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; model -= lr_t m / (sqrt(v) + eps),
    lr_t = lr, or lr sqrt(1 - b2^t) / (1 - b1^t) with do_bias_correction (OneFlow 0.3 defaults
    to False)."""

    kind = "adam"

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 do_bias_correction=False, loss_scale_factor=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, loss_scale_policy)
        self.beta1 = _number(beta1, "Adam: beta1", low=0, below=1)
        self.beta2 = _number(beta2, "Adam: beta2", low=0, below=1)
        self.epsilon = _number(epsilon, "Adam: epsilon", low=0)
        if not isinstance(do_bias_correction, bool):
            raise TypeError("Adam: do_bias_correction must be a bool, got %r" % (do_bias_correction,))
        self.do_bias_correction = do_bias_correction
        self.weight_decay = 0.0

    def params(self):
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                "weight_decay": self.weight_decay, "do_bias_correction": self.do_bias_correction}


class AdamW(Adam):
    """Adam with decoupled weight decay: model -= lr_t (update + weight_decay * model)."""

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 do_bias_correction=False, loss_scale_factor=None, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None):
        super().__init__(lr_scheduler, beta1, beta2, epsilon, do_bias_correction,
                         loss_scale_factor, grad_clipping, train_step_lbn, loss_scale_policy)
        if weight_decay_includes is not None or weight_decay_excludes is not None:
            raise NotImplementedError("AdamW: weight_decay_includes/excludes arrive later")
        self.weight_decay = 0.0 if weight_decay is None else _number(
            weight_decay, "AdamW: weight_decay", low=0)


def _not_yet(name):
    class _Optimizer:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("flow.optimizer.%s arrives in a later version; use SGD, Adam or AdamW" % name)

    _Optimizer.__name__ = name
    return _Optimizer


RMSProp = _not_yet("RMSProp")
LARS = _not_yet("LARS")
LazyAdam = _not_yet("LazyAdam")
LAMB = _not_yet("LAMB")
SGDW = _not_yet("SGDW")
