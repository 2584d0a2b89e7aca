"""flow.optimizer: optimizers, learning-rate schedules, warmup, gradient clipping and loss
scaling, with OneFlow 0.3's formulas (the update formulas are in oneflow/ops/model_update.cpp,
the schedules in oneflow/train/learning_rate_schedule.h).

An optimizer is declared once: a class here saying which update op it uses and with which
hyper-parameters (`_update`), and that update op's declaration in C++. The optimizer pass is
generic: it gives each trainable variable one update op, with the op's other mutable inputs as
optimizer-state variables "<variable>-<argument>".
"""
import collections.abc
import math
import re
import sys

from oneflow.framework import op_builder, shapes
from oneflow.framework.blob import LazyBlob


def _number(value, what, low=None, below=None, above=None, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number, got %r" % (what, value))
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond float's range
        finite = False
    if not finite:  # NaN passes every comparison below
        raise ValueError("%s must be a finite number, got %r" % (what, value))
    if low is not None and value < low:
        raise ValueError("%s must be >= %r, got %r" % (what, low, value))
    if above is not None and value <= above:
        raise ValueError("%s must be > %r, got %r" % (what, above, value))
    if below is not None and value >= below:
        raise ValueError("%s must be < %r, got %r" % (what, below, value))
    if high is not None and value > high:
        raise ValueError("%s must be <= %r, got %r" % (what, high, value))
    return float(value)


def _learning_rate(value, what):
    """A rate >= 0, as PyTorch's optimizers require (a negative rate climbs the loss)."""
    return _number(value, what, low=0)


def _int(value, what, low=None):
    if not shapes.is_int(value):
        raise TypeError("%s must be an int, got %r" % (what, value))
    if low is not None and value < low:
        raise ValueError("%s must be >= %d, got %r" % (what, low, value))
    return int(value)


def _bool(value, what):
    if not isinstance(value, bool):
        raise TypeError("%s must be a bool, got %r" % (what, value))
    return value


# ---- warmup (flow.optimizer.warmup) ----

class WarmupConf:
    """While step < steps the warmup alone sets the learning rate (from the base rate)."""

    kind = None

    def _attrs(self):
        return {"warmup": self.kind, "warmup_batches": self.steps,
                "warmup_multiplier": self.multiplier}


class constant(WarmupConf):  # noqa: N801 - OneFlow's name
    """lr = base_lr * multiplier while step < steps, with 0 < multiplier < 1."""

    kind = "constant"

    def __init__(self, steps, multiplier):
        self.steps = _int(steps, "warmup.constant: steps", low=0)
        self.multiplier = _number(multiplier, "warmup.constant: multiplier", above=0, below=1)


class linear(WarmupConf):  # noqa: N801 - OneFlow's name
    """lr = base_lr * (m + (1 - m) * step / steps) while step < steps, m = start_multiplier."""

    kind = "linear"

    def __init__(self, steps, start_multiplier):
        self.steps = _int(steps, "warmup.linear: steps", low=0)
        self.multiplier = _number(start_multiplier, "warmup.linear: start_multiplier", low=0,
                                  below=1)


# ---- learning-rate schedules ----

class LrScheduler:
    """A schedule: the attributes of the job's learning_rate_schedule op."""

    decay = "none"

    def __init__(self, base_lr, warmup=None):
        self.base_lr = _learning_rate(base_lr, "%s: base_lr" % type(self).__name__)
        if warmup is not None and not isinstance(warmup, WarmupConf):
            raise TypeError("%s: warmup must be flow.optimizer.warmup.constant(...) or "
                            "linear(...), got %r" % (type(self).__name__, warmup))
        self.warmup = warmup

    def _decay_attrs(self):
        return {}

    def _attrs(self):
        attrs = {"base_lr": self.base_lr, "decay": self.decay}
        attrs.update(self._decay_attrs())
        if self.warmup is not None:
            attrs.update(self.warmup._attrs())
        return attrs

    def _lbn(self):
        return ""


def _boundaries(boundaries, what):
    if not isinstance(boundaries, collections.abc.Sequence) or isinstance(boundaries, str):
        raise TypeError("%s: boundaries must be a list of ints, got %r" % (what, boundaries))
    boundaries = [_int(b, "%s: boundaries" % what) for b in boundaries]
    if any(b <= a for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("%s: boundaries must be strictly increasing, got %r" % (what, boundaries))
    return boundaries


class PiecewiseConstantScheduler(LrScheduler):
    """lr = values[i] for the first i with step <= boundaries[i], else values[-1] (steps count
    from 0: boundaries [2], values [1.0, 0.1] give 1.0 at steps 0, 1, 2 and 0.1 after)."""

    decay = "piecewise_constant"

    def __init__(self, boundaries, values, warmup=None):
        what = "PiecewiseConstantScheduler"
        self.boundaries = _boundaries(boundaries, what)
        if not isinstance(values, collections.abc.Sequence) or isinstance(values, str):
            raise TypeError("%s: values must be a list of numbers, got %r" % (what, values))
        self.values = [_learning_rate(v, "%s: values" % what) for v in values]
        if len(self.values) != len(self.boundaries) + 1:
            raise ValueError(
                "%s: len(values) must be len(boundaries) + 1, got %d values and %d boundaries"
                % (what, len(self.values), len(self.boundaries)))
        super().__init__(self.values[0], warmup)

    def _decay_attrs(self):
        return {"boundaries": self.boundaries, "values": self.values}


class PiecewiseScalingScheduler(LrScheduler):
    """lr = base_lr * scales[i], scales = [1] + scale, i as in PiecewiseConstantScheduler; a
    single number `scale` is used at every boundary."""

    decay = "piecewise_scaling"

    def __init__(self, base_lr, boundaries, scale, warmup=None):
        super().__init__(base_lr, warmup)
        what = "PiecewiseScalingScheduler"
        self.boundaries = _boundaries(boundaries, what)
        if not isinstance(scale, collections.abc.Sequence):
            scale = [scale] * len(self.boundaries)
        scale = [_learning_rate(s, "%s: scale" % what) for s in scale]
        if len(scale) != len(self.boundaries):
            raise ValueError("%s: needs one scale per boundary, got %d scales and %d boundaries"
                             % (what, len(scale), len(self.boundaries)))
        self.scale = [1.0] + scale

    def _decay_attrs(self):
        return {"boundaries": self.boundaries, "values": self.scale}


class _StepsScheduler(LrScheduler):
    def __init__(self, base_lr, steps, warmup):
        super().__init__(base_lr, warmup)
        # As in OneFlow, steps <= 0 is an error only once the decay is used: at once without
        # warmup, else when training goes past the warmup (a run shorter than its warmup, as
        # OneFlow-Benchmark's defaults make for one epoch, trains).
        what = "%s: steps" % type(self).__name__
        self.steps = _int(steps, what, low=1 if warmup is None else None)


class CosineScheduler(_StepsScheduler):
    """lr = base_lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, steps) / steps)) + alpha)."""

    decay = "cosine"

    def __init__(self, base_lr, steps, alpha=0.0, warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.alpha = _number(alpha, "CosineScheduler: alpha")

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "alpha": self.alpha}


class LinearCosineScheduler(_StepsScheduler):
    """s = min(step, steps): lr = base_lr * ((alpha + (steps - s) / steps) *
    0.5 * (1 + cos(2 pi num_periods s / steps)) + beta)."""

    decay = "linear_cosine"

    def __init__(self, base_lr, steps, num_periods=0.5, alpha=0.0, beta=0.001, warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.num_periods = _number(num_periods, "LinearCosineScheduler: num_periods")
        self.alpha = _number(alpha, "LinearCosineScheduler: alpha")
        self.beta = _number(beta, "LinearCosineScheduler: beta")

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "num_periods": self.num_periods,
                "alpha": self.alpha, "beta": self.beta}


class PolynomialScheduler(_StepsScheduler):
    """lr = (base_lr - end_learning_rate) * (1 - s / d) ** power + end_learning_rate with
    s = min(step, steps), d = steps; with cycle s = step (1 at step 0) and
    d = steps * ceil(s / steps)."""

    decay = "polynomial"

    def __init__(self, base_lr, steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.end_learning_rate = _learning_rate(end_learning_rate,
                                                "PolynomialScheduler: end_learning_rate")
        self.power = _number(power, "PolynomialScheduler: power")
        if self.power < 0:
            raise ValueError("PolynomialScheduler: power must be >= 0 (a negative power makes "
                             "the rate infinite at the end of the decay), got %r" % (power,))
        self.cycle = _bool(cycle, "PolynomialScheduler: cycle")

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle}


class PolynomialSchduler(PolynomialScheduler):
    """OneFlow 0.3's misspelled, deprecated name of PolynomialScheduler."""

    def __init__(self, base_lr, steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 warmup=None):
        print("WARNING: oneflow.optimizer.PolynomialSchduler will be removed in the future, use "
              "oneflow.optimizer.PolynomialScheduler instead.", file=sys.stderr)
        super().__init__(base_lr, steps, end_learning_rate, power, cycle, warmup)


class _RateScheduler(_StepsScheduler):
    """p = step / steps (floored with staircase)."""

    # The bounds that keep the rate a finite number >= 0 at every step, as _number's keywords.
    decay_rate_bounds = {}

    def __init__(self, base_lr, steps, decay_rate, staircase=False, warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.decay_rate = _number(decay_rate, "%s: decay_rate" % type(self).__name__,
                                  **self.decay_rate_bounds)
        self.staircase = _bool(staircase, "%s: staircase" % type(self).__name__)

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase}


class ExponentialScheduler(_RateScheduler):
    """lr = base_lr * decay_rate ** p."""

    decay = "exponential"
    decay_rate_bounds = {"above": 0}  # a negative rate to a fractional power is NaN


class InverseTimeScheduler(_RateScheduler):
    """lr = base_lr / (1 + decay_rate * p)."""

    decay = "inverse_time"
    decay_rate_bounds = {"low": 0}  # a negative rate divides by zero, then turns negative


class NaturalExpScheduler(_RateScheduler):
    """lr = base_lr * exp(-decay_rate * p)."""

    decay = "natural_exp"


class CustomScheduler(LrScheduler):
    """The learning rate is a (1,) float32 blob the job computes (a blob or its name)."""

    def __init__(self, lbn):
        if isinstance(lbn, LazyBlob):
            lbn = lbn.logical_blob_name
        if not isinstance(lbn, str) or "/" not in lbn:
            raise TypeError("CustomScheduler: lbn must be a blob or a logical blob name "
                            "('op/out_0'), got %r" % (lbn,))
        self.lbn = lbn
        self.warmup = None

    def _attrs(self):
        return {}

    def _lbn(self):
        return self.lbn


# ---- gradient clipping and loss scaling ----

class ClipGradientConf:
    clip_norm = 0.0


class by_global_norm(ClipGradientConf):  # noqa: N801 - OneFlow's name
    """Every gradient of the optimizer's variables is multiplied by
    clip_norm / max(global_norm, clip_norm), global_norm the L2 norm of all of them together."""

    def __init__(self, clip_norm):
        self.clip_norm = _number(clip_norm, "grad_clipping.by_global_norm: clip_norm", above=0)


class LossScalePolicy:
    pass


class static_loss_scale(LossScalePolicy):  # noqa: N801 - OneFlow's name
    """The loss gradient is seeded with loss_scale_factor and the variable gradients divided by
    it: the same update, with less float16 underflow."""

    def __init__(self, loss_scale_factor):
        self.loss_scale_factor = _number(loss_scale_factor, "static_loss_scale: loss_scale_factor",
                                         above=0)


class dynamic_loss_scale(LossScalePolicy):  # noqa: N801 - OneFlow's name
    """The loss gradient is seeded with a scale kept in a variable. A step with a non-finite
    gradient is skipped (no variable changes) and the scale divided by `multiplier` (not below
    1); after `increment_period` good steps in a row it is multiplied by `multiplier`."""

    def __init__(self, initial_loss_scale=2 ** 30, increment_period=2000, multiplier=2.0):
        self.initial_loss_scale = _number(initial_loss_scale,
                                          "dynamic_loss_scale: initial_loss_scale", above=0)
        self.increment_period = _int(increment_period, "dynamic_loss_scale: increment_period",
                                     low=1)
        self.multiplier = _number(multiplier, "dynamic_loss_scale: multiplier", above=1)


# ---- optimizers ----

def _patterns(patterns, what):
    if patterns is None:
        return []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not all(isinstance(p, str) for p in patterns):
        raise TypeError("%s must be a string or a list of strings (regular expressions), got %r"
                        % (what, patterns))
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError("%s: %r is not a regular expression (%s)"
                             % (what, pattern, error)) from None
    return list(patterns)


def _variable_names(variables, optimizer):
    if isinstance(variables, str) or not isinstance(variables, (list, tuple)) or \
            not all(isinstance(v, str) for v in variables):
        raise TypeError("%s: variables must be a list of variable names (or a function giving "
                        "one), got %r" % (optimizer, variables))
    return list(variables)


def check_loss(loss, what):
    """TypeError unless `loss` is a blob. Integer losses train, as in OneFlow 0.3 (its int8
    test_masked_fill / test_tril cases): their gradients flow in their own dtype."""
    if not isinstance(loss, LazyBlob):
        raise TypeError("%s: loss must be a blob, got %s" % (what, type(loss).__name__))


class Optimizer:
    """What every optimizer has: a schedule, clipping, loss scaling, the variables it trains, and
    minimize(loss). Subclasses set `update_op` and return its hyper-parameters from _update()."""

    update_op = None

    def __init__(self, lr_scheduler, loss_scale_factor=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        name = type(self).__name__
        if not isinstance(lr_scheduler, LrScheduler):
            raise TypeError("%s: lr_scheduler must be a flow.optimizer scheduler (e.g. "
                            "PiecewiseConstantScheduler([], [0.1])), got %r" % (name, lr_scheduler))
        self.lr_scheduler = lr_scheduler
        if grad_clipping is not None and not isinstance(grad_clipping, ClipGradientConf):
            raise TypeError("%s: grad_clipping must be flow.optimizer.grad_clipping."
                            "by_global_norm(...), got %r" % (name, grad_clipping))
        self.grad_clipping = grad_clipping
        if train_step_lbn is not None:
            raise NotImplementedError("%s: train_step_lbn (a custom step counter) is not "
                                      "supported; the job's own counter is used" % name)
        if loss_scale_factor is not None and loss_scale_policy is not None:
            raise ValueError("%s: give loss_scale_factor or loss_scale_policy, not both" % name)
        if loss_scale_factor is not None:
            loss_scale_policy = static_loss_scale(loss_scale_factor)
        if loss_scale_policy is not None and not isinstance(loss_scale_policy, LossScalePolicy):
            raise TypeError("%s: loss_scale_policy must be flow.optimizer.loss_scale."
                            "static_loss_scale(...) or dynamic_loss_scale(...), got %r"
                            % (name, loss_scale_policy))
        self.loss_scale_policy = loss_scale_policy
        self._variables_fn = None
        if callable(variables):  # OneFlow 0.3: a function giving the names when minimize runs
            self._variables_fn, variables = variables, None
        elif variables is not None:
            variables = _variable_names(variables, name)
        self.variables = variables
        self.weight_decay = None
        self.weight_decay_includes = []
        self.weight_decay_excludes = []

    def Variables(self):  # noqa: N802 - OneFlow 0.3's name
        """The names of the variables this optimizer was given (a function giving them is
        called, inside the job being traced); [] when it trains every variable."""
        if self._variables_fn is not None:
            return _variable_names(self._variables_fn(), type(self).__name__)
        return list(self.variables or [])

    def _set_weight_decay(self, weight_decay, includes, excludes):
        name = type(self).__name__
        if weight_decay is not None:
            self.weight_decay = _number(weight_decay, "%s: weight_decay" % name, low=0)
        self.weight_decay_includes = _patterns(includes, "%s: weight_decay_includes" % name)
        self.weight_decay_excludes = _patterns(excludes, "%s: weight_decay_excludes" % name)
        if self.weight_decay_includes and self.weight_decay_excludes:
            raise ValueError("%s: give weight_decay_includes or weight_decay_excludes, not both"
                             % name)

    def _update(self):
        """The update op's hyper-parameters (attributes)."""
        return {}

    def _update_op(self):
        return self.update_op

    def _conf(self):
        if self._variables_fn is not None:  # called while minimize traces the job
            self.variables = _variable_names(self._variables_fn(), type(self).__name__)
        return {
            "update_op": self._update_op(),
            "update_attrs": self._update(),
            "learning_rate_attrs": self.lr_scheduler._attrs(),
            "learning_rate_lbn": self.lr_scheduler._lbn(),
            "weight_decay_rate": self.weight_decay or 0.0,
            "weight_decay_includes": self.weight_decay_includes,
            "weight_decay_excludes": self.weight_decay_excludes,
            "clip_norm": self.grad_clipping.clip_norm if self.grad_clipping else 0.0,
            "variables": self.variables or [],
        }

    def _confs(self):
        return [self._conf()]

    def minimize(self, loss):
        """Makes the job being traced train `loss` (a blob or a list of blobs) with this
        optimizer. As in OneFlow 0.3, whose minimize sets the job's whole train configuration,
        losses given to flow.losses.add_loss before are dropped (so add_loss(x) then
        minimize(x) trains x once) and losses added after are trained too."""
        session = op_builder.current_job()
        desc = session.tracing_job
        losses = list(loss) if isinstance(loss, (list, tuple)) else [loss]
        for item in losses:
            check_loss(item, "minimize")
        # A predict job that calls minimize trains from here on, as in OneFlow 0.3 (whose minimize
        # set the job's train conf): ops traced before it (dropout, batch norm) stay in
        # inference mode, as they were there.
        desc.is_train = True
        if desc.optimizer is not None:
            raise ValueError("optimizer.minimize() called twice in job %r; give several "
                             "optimizers to flow.optimizer.CombinedOptimizer" % desc.name)
        if len({item.lbn for item in losses}) != len(losses):
            raise ValueError("minimize: a loss is given twice in %r; give each loss once"
                             % [item.lbn for item in losses])
        desc.optimizer = self
        desc.losses[:] = losses

    def _set_train_conf(self, session, desc):
        losses = desc.losses
        policy = self.loss_scale_policy
        static = policy.loss_scale_factor if isinstance(policy, static_loss_scale) else 0.0
        dynamic = None
        if isinstance(policy, dynamic_loss_scale):
            dynamic = {"initial_loss_scale": policy.initial_loss_scale,
                       "increment_period": policy.increment_period,
                       "multiplier": policy.multiplier}
        session.cpp.set_train_conf([item.lbn for item in losses], self._confs(), static, dynamic,
                                   desc.config._indexed_slices_variables)


def finish_training(session, desc):
    """At the end of tracing a train job: gives the C++ job its losses and optimizers (from
    minimize, or from the legacy train.* settings when the job only called
    flow.losses.add_loss)."""
    if not desc.is_train:
        if desc.losses:
            raise ValueError("flow.losses.add_loss called in job %r, which is not a train job"
                             % desc.name)
        return
    optimizer = desc.optimizer
    if optimizer is None and desc.losses:
        optimizer = from_legacy_train_conf(desc.config._legacy_train, desc.name)
    if optimizer is not None:
        optimizer._set_train_conf(session, desc)


class SGD(Optimizer):
    """momentum 0: model -= lr * grad; else v = momentum * v - lr * grad; model += v."""

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.momentum = _number(0.0 if momentum is None else momentum, "SGD: momentum", low=0,
                                below=1)

    def _update_op(self):
        return "sgd_update" if self.momentum == 0 else "momentum_update"

    def _update(self):
        return {} if self.momentum == 0 else {"beta": self.momentum}


class SGDW(SGD):
    """SGD with decoupled weight decay wd: model -= lr * (grad + wd * model); with momentum
    v = momentum * v - lr * grad; model += v - lr * wd * model."""

    def __init__(self, lr_scheduler, loss_scale_factor=None, momentum=0.9, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, momentum, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self._set_weight_decay(weight_decay, weight_decay_includes, weight_decay_excludes)


class Adam(Optimizer):
    """m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; model -= lr_t m / (sqrt(v) + eps);
    lr_t = lr, or with do_bias_correction lr sqrt(1 - b2^t) / (1 - b1^t), t = 1, 2, ...
    (OneFlow 0.3 defaults to do_bias_correction=False)."""

    update_op = "adam_update"

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 do_bias_correction=False, loss_scale_factor=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        name = type(self).__name__
        self.beta1 = _number(beta1, "%s: beta1" % name, low=0, below=1)
        self.beta2 = _number(beta2, "%s: beta2" % name, low=0, below=1)
        self.epsilon = _number(epsilon, "%s: epsilon" % name, low=0)
        self.do_bias_correction = _bool(do_bias_correction, "%s: do_bias_correction" % name)

    def _update(self):
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                "do_bias_correction": self.do_bias_correction}


class AdamW(Adam):
    """Adam with decoupled weight decay: model -= lr_t (m / (sqrt(v) + eps) + wd * model)."""

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 do_bias_correction=False, loss_scale_factor=None, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, beta1, beta2, epsilon, do_bias_correction,
                         loss_scale_factor, grad_clipping, train_step_lbn, loss_scale_policy,
                         variables)
        self._set_weight_decay(weight_decay, weight_decay_includes, weight_decay_excludes)


class LazyAdam(Optimizer):
    """Adam (with bias correction) that updates only the elements whose gradient is non-zero;
    the others keep their value and their moments."""

    update_op = "lazy_adam_update"

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 loss_scale_factor=None, grad_clipping=None, train_step_lbn=None,
                 loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.beta1 = _number(beta1, "LazyAdam: beta1", low=0, below=1)
        self.beta2 = _number(beta2, "LazyAdam: beta2", low=0, below=1)
        self.epsilon = _number(epsilon, "LazyAdam: epsilon", low=0)

    def _update(self):
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}


class RMSProp(Optimizer):
    """ms = d ms + (1 - d) g^2; model -= lr g / sqrt(ms + eps); centered also keeps
    mg = d mg + (1 - d) g and divides by sqrt(ms - mg^2 + eps)."""

    def __init__(self, lr_scheduler, decay_rate=0.99, epsilon=1e-8, centered=False,
                 loss_scale_factor=None, grad_clipping=None, train_step_lbn=None,
                 loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.decay_rate = _number(decay_rate, "RMSProp: decay_rate", low=0, high=1)
        self.epsilon = _number(epsilon, "RMSProp: epsilon", low=0)
        self.centered = _bool(centered, "RMSProp: centered")

    def _update_op(self):
        return "centered_rmsprop_update" if self.centered else "rmsprop_update"

    def _update(self):
        return {"decay_rate": self.decay_rate, "epsilon": self.epsilon}


class Adagrad(Optimizer):
    """PyTorch's Adagrad: g += wd * model; sum += g^2;
    model -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum + initial_accumulator_value) + eps)."""

    update_op = "adagrad_update"

    def __init__(self, lr_scheduler, lr_decay=0.0, initial_accumulator_value=0.0, epsilon=1e-10,
                 weight_decay=None, loss_scale_factor=None, grad_clipping=None,
                 train_step_lbn=None, loss_scale_policy=None, variables=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.lr_decay = _number(lr_decay, "Adagrad: lr_decay", low=0)
        self.initial_accumulator_value = _number(
            initial_accumulator_value, "Adagrad: initial_accumulator_value", low=0)
        self.epsilon = _number(epsilon, "Adagrad: epsilon", low=0)
        self._set_weight_decay(weight_decay, None, None)

    def _update(self):
        return {"lr_decay": self.lr_decay,
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


class LAMB(Optimizer):
    """m, v as Adam; u = (m / (1 - b1^t)) / sqrt(v / (1 - b2^t) + eps);
    model -= lr * |model| / |u| * (u + wd * model) (ratio 1 when a norm is 0)."""

    update_op = "lamb_update"

    def __init__(self, lr_scheduler, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 loss_scale_factor=None, grad_clipping=None, train_step_lbn=None,
                 loss_scale_policy=None, variables=None, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.beta1 = _number(beta1, "LAMB: beta1", low=0, below=1)
        self.beta2 = _number(beta2, "LAMB: beta2", low=0, below=1)
        self.epsilon = _number(epsilon, "LAMB: epsilon", low=0)
        self._set_weight_decay(weight_decay, weight_decay_includes, weight_decay_excludes)

    def _update(self):
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}


class LARS(Optimizer):
    """local_lr = lr * lars_coefficient * rms(model) / (eps + rms(g) [+ wd * rms(model) after
    the first step]); momentum = beta * momentum - local_lr * (g + wd * model); model += momentum."""

    update_op = "lars_update"

    def __init__(self, lr_scheduler, momentum_beta=0.9, epsilon=1e-9, lars_coefficient=0.0001,
                 loss_scale_factor=None, grad_clipping=None, train_step_lbn=None,
                 loss_scale_policy=None, variables=None, weight_decay=None,
                 weight_decay_includes=None, weight_decay_excludes=None):
        super().__init__(lr_scheduler, loss_scale_factor, grad_clipping, train_step_lbn,
                         loss_scale_policy, variables)
        self.momentum_beta = _number(momentum_beta, "LARS: momentum_beta", low=0, below=1)
        self.epsilon = _number(epsilon, "LARS: epsilon", low=0)
        self.lars_coefficient = _number(lars_coefficient, "LARS: lars_coefficient", low=0)
        self._set_weight_decay(weight_decay, weight_decay_includes, weight_decay_excludes)

    def _update(self):
        return {"momentum_beta": self.momentum_beta, "epsilon": self.epsilon,
                "lars_coefficient": self.lars_coefficient}


class CombinedOptimizer(Optimizer):
    """Several optimizers in one job, each training the variables it names (one of them may
    name none: it trains the rest). Loss scaling belongs to the combination."""

    def __init__(self, optimizers, loss_scale_factor=None, train_step_lbn=None,
                 loss_scale_policy=None):
        if not isinstance(optimizers, (list, tuple)) or len(optimizers) < 2:
            raise ValueError("CombinedOptimizer: needs a list of at least 2 optimizers, got %r"
                             % (optimizers,))
        for optimizer in optimizers:
            if not isinstance(optimizer, Optimizer) or isinstance(optimizer, CombinedOptimizer):
                raise TypeError("CombinedOptimizer: %r is not an optimizer" % (optimizer,))
            if optimizer.loss_scale_policy is not None:
                raise ValueError("CombinedOptimizer: set loss scaling on the combination, not on "
                                 "its optimizers")
        super().__init__(optimizers[0].lr_scheduler, loss_scale_factor, None, train_step_lbn,
                         loss_scale_policy)
        self.optimizers = list(optimizers)

    def _confs(self):
        return [optimizer._conf() for optimizer in self.optimizers]


# ---- the legacy train.* settings (FunctionConfig.train.primary_lr / model_update_conf) ----

_LEGACY_OPTIMIZERS = {
    "naive_conf": lambda lr, c: SGD(lr, momentum=0),
    "momentum_conf": lambda lr, c: SGD(lr, momentum=c.get("beta", 0.9)),
    "adam_conf": lambda lr, c: Adam(lr, beta1=c.get("beta1", 0.9), beta2=c.get("beta2", 0.999),
                                    epsilon=c.get("epsilon", 1e-8),
                                    do_bias_correction=c.get("do_bias_correction", False)),
    "lazy_adam_conf": lambda lr, c: LazyAdam(lr, beta1=c.get("beta1", 0.9),
                                             beta2=c.get("beta2", 0.999),
                                             epsilon=c.get("epsilon", 1e-8)),
    "rmsprop_conf": lambda lr, c: RMSProp(lr, decay_rate=c.get("decay_rate", 0.99),
                                          epsilon=c.get("epsilon", 1e-8),
                                          centered=c.get("centered", False)),
    "lars_conf": lambda lr, c: LARS(lr, momentum_beta=c.get("momentum_beta", 0.9),
                                    epsilon=c.get("epsilon", 1e-9),
                                    lars_coefficient=c.get("lars_coefficient", 1e-4)),
    "lamb_conf": lambda lr, c: LAMB(lr, beta1=c.get("beta1", 0.9), beta2=c.get("beta2", 0.999),
                                    epsilon=c.get("epsilon", 1e-6)),
}

# OneFlow's LearningRateDecayConf fields -> the learning_rate_schedule op's attributes.
_LEGACY_DECAYS = {
    "exponential_conf": ("exponential", {"decay_batches": "decay_batches",
                                         "decay_rate": "decay_rate", "staircase": "staircase"}),
    "inverse_time_conf": ("inverse_time", {"decay_batches": "decay_batches",
                                           "decay_rate": "decay_rate", "staircase": "staircase"}),
    "natural_exp_conf": ("natural_exp", {"decay_batches": "decay_batches",
                                         "decay_rate": "decay_rate", "staircase": "staircase"}),
    "piecewise_constant_conf": ("piecewise_constant", {"boundaries": "boundaries",
                                                       "values": "values"}),
    "piecewise_scaling_conf": ("piecewise_scaling", {"boundaries": "boundaries",
                                                     "scales": "values"}),
    "polynomial_conf": ("polynomial", {"decay_batches": "decay_batches",
                                       "end_learning_rate": "end_learning_rate",
                                       "power": "power", "cycle": "cycle"}),
    "cosine_conf": ("cosine", {"decay_batches": "decay_batches", "alpha": "alpha"}),
    "linear_cosine_conf": ("linear_cosine", {"decay_batches": "decay_batches",
                                             "num_periods": "num_periods", "alpha": "alpha",
                                             "beta": "beta"}),
}


class _LegacyScheduler(LrScheduler):
    """A schedule given as OneFlow's LearningRateDecayConf / WarmupConf dicts."""

    def __init__(self, base_lr, decay_conf, warmup_conf):
        super().__init__(base_lr)
        self.decay_attrs = {}
        if decay_conf:
            kind, fields = _one_of(decay_conf, _LEGACY_DECAYS, "learning_rate_decay")
            self.decay = _LEGACY_DECAYS[kind][0]
            for name, value in fields.items():
                if name not in _LEGACY_DECAYS[kind][1]:
                    raise ValueError("train.model_update_conf: learning_rate_decay.%s has no "
                                     "field %r" % (kind, name))
                self.decay_attrs[_LEGACY_DECAYS[kind][1][name]] = value
        if warmup_conf:
            kind, fields = _one_of(warmup_conf, {"constant_conf": 0, "linear_conf": 0},
                                   "warmup_conf")
            steps = fields.get("warmup_batches", 0)
            self.warmup = (constant(steps, fields.get("multiplier", 0.0))
                           if kind == "constant_conf"
                           else linear(steps, fields.get("start_multiplier", 0.0)))

    def _decay_attrs(self):
        return self.decay_attrs


def _one_of(conf, known, what):
    if not isinstance(conf, dict) or len(conf) != 1 or next(iter(conf)) not in known:
        raise ValueError("train.model_update_conf: %s must be a dict with one of %s, got %r"
                         % (what, sorted(known), conf))
    kind, fields = next(iter(conf.items()))
    return kind, dict(fields or {})


def from_legacy_train_conf(settings, job_name):
    """The optimizer described by FunctionConfig.train.primary_lr / model_update_conf /
    loss_scale_factor (OneFlow's older way to train a job that calls flow.losses.add_loss)."""
    if "primary_lr" not in settings or "model_update_conf" not in settings:
        raise ValueError(
            "train job %r calls flow.losses.add_loss but has no optimizer: call "
            "flow.optimizer.<Optimizer>(...).minimize(loss) in the job, or set both "
            "function_config.train.primary_lr(...) and train.model_update_conf(...)" % job_name)
    conf = dict(settings["model_update_conf"])
    scheduler = _LegacyScheduler(settings["primary_lr"], conf.pop("learning_rate_decay", None),
                                 conf.pop("warmup_conf", None))
    clip = conf.pop("clip_conf", None)
    weight_decay = conf.pop("weight_decay_conf", None)
    kind, fields = _one_of(conf, _LEGACY_OPTIMIZERS, "the optimizer")
    optimizer = _LEGACY_OPTIMIZERS[kind](scheduler, fields)
    if clip:
        _, clip_fields = _one_of(clip, {"clip_by_global_norm": 0}, "clip_conf")
        optimizer.grad_clipping = by_global_norm(clip_fields.get("clip_norm", 1.0))
    if weight_decay:
        optimizer._set_weight_decay(
            weight_decay.get("weight_decay_rate", 0.0),
            (weight_decay.get("includes") or {}).get("pattern"),
            (weight_decay.get("excludes") or {}).get("pattern"))
    if "loss_scale_factor" in settings:
        optimizer.loss_scale_policy = static_loss_scale(settings["loss_scale_factor"])
    return optimizer
