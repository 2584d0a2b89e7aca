"""flow.optimizer: optimizers, learning-rate schedules, warmup, gradient clipping and loss
scaling, with OneFlow 0.3's formulas (the update formulas are in oneflow/ops/model_update.cpp,
the schedules in oneflow/train/learning_rate_schedule.h).

An optimizer is declared once: a class here saying which update op it uses and with which
hyper-parameters (`_update`), and that update op's declaration in C++. The optimizer pass is
generic: it gives each trainable variable one update op, with the op's other mutable inputs as
optimizer-state variables "<variable>-<argument>".
"""
import collections.abc
import difflib
import math
import re
import sys

import numpy as np

from oneflow.framework import op_builder, shapes
from oneflow.framework.blob import LazyBlob


def _number(value, what, low=None, below=None, above=None, high=None):
    # Numpy's numbers too, as OneFlow 0.3 took them (np.float32(0.1) from a config file).
    if isinstance(value, (bool, np.bool_)) or \
            not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError("%s must be a number, got %r" % (what, value))
    if isinstance(value, np.integer):
        value = int(value)
    elif isinstance(value, np.floating):
        value = float(value)  # a longdouble beyond float's range becomes inf, refused below
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


def _float32(value):
    """`value` rounded to float32: inf beyond its range, 0 below its smallest subnormal."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.float32(value))


def _check_rate(rate, what, value):
    """ValueError when the learning rate `rate`, which `what` = `value` gives, is inf in float32
    (the learning_rate_schedule op outputs a float32 scalar)."""
    if math.isinf(_float32(rate)):
        raise ValueError("%s %r makes the learning rate %r, beyond float32's range (the learning "
                         "rate is a float32 scalar)" % (what, value, rate))


def _learning_rate(value, what):
    """A rate >= 0, as PyTorch's optimizers require (a negative rate climbs the loss), that
    float32 holds."""
    value = _number(value, what, low=0)
    _check_rate(value, what, value)
    return value


def _loss_scale(value, what):
    """A loss scale > 0 such that it and its reciprocal are non-zero finite float32 numbers (the
    gradients are multiplied by the scale, then by 1 / scale, in float32)."""
    value = _number(value, what, above=0)
    scale = _float32(value)
    if scale == 0 or math.isinf(scale) or _float32(1 / scale) == 0 or \
            math.isinf(_float32(1 / scale)):
        raise ValueError("%s %r is out of float32 range: it and its reciprocal must be non-zero "
                         "finite float32 numbers (about 2.9e-39 to 3.4e38)" % (what, value))
    return value


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


def _list(value):
    """A list or tuple (or a 1-D numpy array) as a list; None for anything else."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return value.tolist()
    if isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return None


class _Named:
    """Names arguments in messages: "<title>: <argument>", or for an object built from
    FunctionConfig.train.model_update_conf (_from_legacy) the field the argument came from."""

    _names = None  # argument -> name, set by _from_legacy

    @classmethod
    def _from_legacy(cls, names, *args, **kwargs):
        """cls(*args, **kwargs), its messages naming each argument by `names`."""
        instance = cls.__new__(cls)
        instance._names = names
        instance.__init__(*args, **kwargs)
        return instance

    def _title(self):
        return type(self).__name__

    def _what(self, argument):
        if self._names is not None:
            return self._names[argument]
        return "%s: %s" % (self._title(), argument)


# ---- warmup (flow.optimizer.warmup) ----

class WarmupConf(_Named):
    """While step < steps the warmup alone sets the learning rate (from the base rate)."""

    kind = None

    def _title(self):
        return "warmup." + self.kind

    def _attrs(self):
        return {"warmup": self.kind, "warmup_batches": self.steps,
                "warmup_multiplier": self.multiplier}


class constant(WarmupConf):  # noqa: N801 - OneFlow's name
    """lr = base_lr * multiplier while step < steps, with 0 < multiplier < 1."""

    kind = "constant"

    def __init__(self, steps, multiplier):
        self.steps = _int(steps, self._what("steps"), low=0)
        self.multiplier = _number(multiplier, self._what("multiplier"), above=0, below=1)


class linear(WarmupConf):  # noqa: N801 - OneFlow's name
    """lr = base_lr * (m + (1 - m) * step / steps) while step < steps, m = start_multiplier."""

    kind = "linear"

    def __init__(self, steps, start_multiplier):
        self.steps = _int(steps, self._what("steps"), low=0)
        self.multiplier = _number(start_multiplier, self._what("start_multiplier"), low=0,
                                  below=1)


# ---- learning-rate schedules ----

class LrScheduler(_Named):
    """A schedule: the attributes of the job's learning_rate_schedule op."""

    decay = "none"

    def __init__(self, base_lr, warmup=None):
        self.base_lr = _learning_rate(base_lr, self._what("base_lr"))
        if warmup is not None and not isinstance(warmup, WarmupConf):
            raise TypeError("%s must be flow.optimizer.warmup.constant(...) or linear(...), "
                            "got %r" % (self._what("warmup"), warmup))
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
    """`what` names the boundaries ("PiecewiseConstantScheduler: boundaries")."""
    items = _list(boundaries)
    if items is None:
        raise TypeError("%s must be a list of ints, got %r" % (what, boundaries))
    items = [_int(b, what) for b in items]
    if any(b <= a for a, b in zip(items, items[1:])):
        raise ValueError("%s must be strictly increasing, got %r" % (what, items))
    return items


class PiecewiseConstantScheduler(LrScheduler):
    """lr = values[i] for the first i with step <= boundaries[i], else values[-1] (steps count
    from 0: boundaries [2], values [1.0, 0.1] give 1.0 at steps 0, 1, 2 and 0.1 after)."""

    decay = "piecewise_constant"

    def __init__(self, boundaries, values, warmup=None):
        self.boundaries = _boundaries(boundaries, self._what("boundaries"))
        items = _list(values)
        if items is None:
            raise TypeError("%s must be a list of numbers, got %r" % (self._what("values"), values))
        self.values = [_learning_rate(v, self._what("values")) for v in items]
        if len(self.values) != len(self.boundaries) + 1:
            raise ValueError(
                "%s must have one entry more than boundaries (len(values) must be "
                "len(boundaries) + 1), got %d values and %d boundaries"
                % (self._what("values"), len(self.values), len(self.boundaries)))
        super().__init__(self.values[0], warmup)

    def _decay_attrs(self):
        return {"boundaries": self.boundaries, "values": self.values}


class PiecewiseScalingScheduler(LrScheduler):
    """lr = base_lr * scales[i], scales = [1] + scale, i as in PiecewiseConstantScheduler; a
    single number `scale` is used at every boundary."""

    decay = "piecewise_scaling"

    def __init__(self, base_lr, boundaries, scale, warmup=None):
        super().__init__(base_lr, warmup)
        self.boundaries = _boundaries(boundaries, self._what("boundaries"))
        items = _list(scale)
        if items is None:
            items = [scale] * len(self.boundaries)
        items = [_learning_rate(s, self._what("scale")) for s in items]
        if len(items) != len(self.boundaries):
            raise ValueError("%s must have one scale per boundary, got %d scales and %d "
                             "boundaries" % (self._what("scale"), len(items), len(self.boundaries)))
        for s in items:
            _check_rate(self.base_lr * s, self._what("scale"), s)
        self.scale = [1.0] + items

    def _decay_attrs(self):
        return {"boundaries": self.boundaries, "values": self.scale}


class _StepsScheduler(LrScheduler):
    def __init__(self, base_lr, steps, warmup):
        super().__init__(base_lr, warmup)
        # As in OneFlow, steps <= 0 is an error only once the decay is used: at once without
        # warmup, else when training goes past the warmup (a run shorter than its warmup, as
        # OneFlow-Benchmark's defaults make for one epoch, trains).
        self.steps = _int(steps, self._what("steps"), low=1 if warmup is None else None)


class CosineScheduler(_StepsScheduler):
    """lr = base_lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, steps) / steps)) + alpha)."""

    decay = "cosine"

    def __init__(self, base_lr, steps, alpha=0.0, warmup=None):
        super().__init__(base_lr, steps, warmup)
        # alpha < 0 makes the rate negative near the end; alpha > 1 makes it grow to base * alpha.
        self.alpha = _number(alpha, self._what("alpha"), low=0)
        _check_rate(self.base_lr * max(1.0, self.alpha), self._what("alpha"), self.alpha)

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "alpha": self.alpha}


class LinearCosineScheduler(_StepsScheduler):
    """s = min(step, steps): lr = base_lr * ((alpha + (steps - s) / steps) *
    0.5 * (1 + cos(2 pi num_periods s / steps)) + beta)."""

    decay = "linear_cosine"

    def __init__(self, base_lr, steps, num_periods=0.5, alpha=0.0, beta=0.001, warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.num_periods = _number(num_periods, self._what("num_periods"))
        # With alpha, beta >= 0 the rate is >= 0; its largest, at step 0, is base (1 + a + b).
        self.alpha = _number(alpha, self._what("alpha"), low=0)
        self.beta = _number(beta, self._what("beta"), low=0)
        _check_rate(self.base_lr * (1 + self.alpha + self.beta), self._what("alpha"), self.alpha)

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
                                                self._what("end_learning_rate"))
        self.power = _number(power, self._what("power"))
        if self.power < 0:
            raise ValueError("%s must be >= 0 (a negative power makes the rate infinite at the "
                             "end of the decay), got %r" % (self._what("power"), power))
        self.cycle = _bool(cycle, self._what("cycle"))

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

    # The bounds that keep the rate a number >= 0 at every step, as _number's keywords.
    decay_rate_bounds = {}

    def __init__(self, base_lr, steps, decay_rate, staircase=False, warmup=None):
        super().__init__(base_lr, steps, warmup)
        self.decay_rate = _number(decay_rate, self._what("decay_rate"), **self.decay_rate_bounds)
        self.staircase = _bool(staircase, self._what("staircase"))

    def _decay_attrs(self):
        return {"decay_batches": self.steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase}


class ExponentialScheduler(_RateScheduler):
    """lr = base_lr * decay_rate ** p. A rate > 1 (legal, as in OneFlow 0.3) grows the rate
    without bound: when it leaves float32's range depends on how long the job trains."""

    decay = "exponential"
    decay_rate_bounds = {"above": 0}  # a negative rate to a fractional power is NaN


class InverseTimeScheduler(_RateScheduler):
    """lr = base_lr / (1 + decay_rate * p)."""

    decay = "inverse_time"
    decay_rate_bounds = {"low": 0}  # a negative rate divides by zero, then turns negative


class NaturalExpScheduler(_RateScheduler):
    """lr = base_lr * exp(-decay_rate * p)."""

    decay = "natural_exp"
    decay_rate_bounds = {"low": 0}  # a negative rate is a growth: exp overflows, then NaN


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
        self.loss_scale_factor = _loss_scale(loss_scale_factor,
                                             "static_loss_scale: loss_scale_factor")


class dynamic_loss_scale(LossScalePolicy):  # noqa: N801 - OneFlow's name
    """The loss gradient is seeded with a scale kept in a variable. A step with a non-finite
    gradient is skipped (no variable changes) and the scale divided by `multiplier` (not below
    1); after `increment_period` good steps in a row it is multiplied by `multiplier`."""

    def __init__(self, initial_loss_scale=2 ** 30, increment_period=2000, multiplier=2.0):
        self.initial_loss_scale = _loss_scale(initial_loss_scale,
                                              "dynamic_loss_scale: initial_loss_scale")
        self.increment_period = _int(increment_period, "dynamic_loss_scale: increment_period",
                                     low=1)
        self.multiplier = _number(multiplier, "dynamic_loss_scale: multiplier", above=1)
        if math.isinf(_float32(self.multiplier)):  # the scale would become inf, then stay there
            raise ValueError("dynamic_loss_scale: multiplier %r is out of float32 range"
                             % (multiplier,))


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

def _legacy_optimizer(make, *fields):
    """An entry of _LEGACY_OPTIMIZERS: the conf's fields and make(lr_scheduler, fields)."""
    return fields, make


# OneFlow's optimizer confs (their fields and OneFlow's defaults) -> the optimizer.
_LEGACY_OPTIMIZERS = {
    "naive_conf": _legacy_optimizer(lambda lr, c: SGD(lr, momentum=0)),
    "momentum_conf": _legacy_optimizer(lambda lr, c: SGD(lr, momentum=c.get("beta", 0.9)),
                                       "beta"),
    "adam_conf": _legacy_optimizer(
        lambda lr, c: Adam(lr, beta1=c.get("beta1", 0.9), beta2=c.get("beta2", 0.999),
                           epsilon=c.get("epsilon", 1e-8),
                           do_bias_correction=c.get("do_bias_correction", False)),
        "beta1", "beta2", "epsilon", "do_bias_correction"),
    "lazy_adam_conf": _legacy_optimizer(
        lambda lr, c: LazyAdam(lr, beta1=c.get("beta1", 0.9), beta2=c.get("beta2", 0.999),
                               epsilon=c.get("epsilon", 1e-8)),
        "beta1", "beta2", "epsilon"),
    "rmsprop_conf": _legacy_optimizer(
        lambda lr, c: RMSProp(lr, decay_rate=c.get("decay_rate", 0.99),
                              epsilon=c.get("epsilon", 1e-8), centered=c.get("centered", False)),
        "decay_rate", "epsilon", "centered"),
    "lars_conf": _legacy_optimizer(
        lambda lr, c: LARS(lr, momentum_beta=c.get("momentum_beta", 0.9),
                           epsilon=c.get("epsilon", 1e-9),
                           lars_coefficient=c.get("lars_coefficient", 1e-4)),
        "momentum_beta", "epsilon", "lars_coefficient"),
    "lamb_conf": _legacy_optimizer(
        lambda lr, c: LAMB(lr, beta1=c.get("beta1", 0.9), beta2=c.get("beta2", 0.999),
                           epsilon=c.get("epsilon", 1e-6)),
        "beta1", "beta2", "epsilon"),
}

_RATE_FIELDS = {"decay_batches": "steps", "decay_rate": "decay_rate", "staircase": "staircase"}
_STEPS = ("decay_batches",)

# OneFlow's LearningRateDecayConf / WarmupConf: for each kind the scheduler or warmup that checks
# and computes it, its fields (-> that class's arguments) and the fields OneFlow requires. A
# field left out gets the class's default, which is OneFlow's (a list field: []).
_LEGACY_DECAYS = {
    "exponential_conf": (ExponentialScheduler, _RATE_FIELDS, _STEPS + ("decay_rate",)),
    "inverse_time_conf": (InverseTimeScheduler, _RATE_FIELDS, _STEPS + ("decay_rate",)),
    "natural_exp_conf": (NaturalExpScheduler, _RATE_FIELDS, _STEPS + ("decay_rate",)),
    "piecewise_constant_conf": (PiecewiseConstantScheduler, {"boundaries": "boundaries",
                                                             "values": "values"}, ()),
    "piecewise_scaling_conf": (PiecewiseScalingScheduler, {"boundaries": "boundaries",
                                                           "scales": "scale"}, ()),
    "polynomial_conf": (PolynomialScheduler, {"decay_batches": "steps",
                                              "end_learning_rate": "end_learning_rate",
                                              "power": "power", "cycle": "cycle"}, _STEPS),
    "cosine_conf": (CosineScheduler, {"decay_batches": "steps", "alpha": "alpha"}, _STEPS),
    "linear_cosine_conf": (LinearCosineScheduler, {"decay_batches": "steps",
                                                   "num_periods": "num_periods",
                                                   "alpha": "alpha", "beta": "beta"}, _STEPS),
}
_LEGACY_WARMUPS = {
    "constant_conf": (constant, {"warmup_batches": "steps", "multiplier": "multiplier"},
                      ("warmup_batches", "multiplier")),
    "linear_conf": (linear, {"warmup_batches": "steps", "start_multiplier": "start_multiplier"},
                    ("warmup_batches", "start_multiplier")),
}

_LEGACY = "train.model_update_conf"


class _LegacyScheduler(LrScheduler):
    """A schedule given as OneFlow's LearningRateDecayConf / WarmupConf dicts: checked by the
    matching flow.optimizer scheduler and warmup, with messages naming the dicts' fields."""

    def __init__(self, base_lr, decay_conf, warmup_conf):
        super().__init__(base_lr)
        self.decay_attrs = {}
        if _given(warmup_conf):
            self.warmup = self._legacy("warmup_conf", warmup_conf, _LEGACY_WARMUPS, [])
        if _given(decay_conf):
            # base_lr is named only by the schedules that take it (not piecewise_constant's).
            schedule = self._legacy("learning_rate_decay", decay_conf, _LEGACY_DECAYS,
                                    [self.base_lr], warmup=self.warmup)
            self.decay = schedule.decay
            self.decay_attrs = schedule._decay_attrs()

    @staticmethod
    def _legacy(what, conf, known, args, **kwargs):
        """The scheduler or warmup `conf` ({kind: fields}, a kind of `known`) describes."""
        kind, fields = _one_of(conf, known, what)
        cls, arguments, required = known[kind]
        path = "%s.%s" % (what, kind)
        fields = _fields(fields, path, arguments)
        for field in required:
            if field not in fields:
                raise ValueError("%s: %s needs the field %r, got %r"
                                 % (_LEGACY, path, field, fields))
        names = {"base_lr": "train.primary_lr", "warmup": "%s: warmup_conf" % _LEGACY}
        for field, argument in arguments.items():
            names[argument] = "%s: %s.%s" % (_LEGACY, path, field)
        for argument in ("boundaries", "values", "scale"):  # OneFlow's repeated fields
            if argument in arguments.values():
                kwargs[argument] = []
        kwargs.update({arguments[field]: value for field, value in fields.items()})
        if cls is PiecewiseConstantScheduler:  # its values are the rates: no base rate
            args = []
        return cls._from_legacy(names, *args, **kwargs)

    def _decay_attrs(self):
        return self.decay_attrs


def _given(conf):
    """Whether a part of the conf is there: as in OneFlow, None and {} say it is not."""
    return conf is not None and not (isinstance(conf, dict) and not conf)


def _one_of(conf, known, what):
    """The single (kind, fields) of `conf`, a dict with one key of `known`."""
    if not isinstance(conf, dict):
        raise TypeError("%s: %s must be a dict with one of %s, got %r"
                        % (_LEGACY, what, sorted(known), conf))
    if len(conf) != 1 or next(iter(conf)) not in known:
        raise ValueError("%s: %s must be a dict with one of %s, got %r"
                         % (_LEGACY, what, sorted(known), conf))
    return next(iter(conf.items()))


def _fields(fields, what, known):
    """`fields` (None for none) as a dict, each of its names one of `known`."""
    if fields is None:
        return {}
    if not isinstance(fields, dict):
        raise TypeError("%s: %s must be a dict of fields, got %r" % (_LEGACY, what, fields))
    for name in fields:
        if name not in known:
            close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
            hint = "; did you mean %s?" % " or ".join(repr(c) for c in close) if close else ""
            raise ValueError("%s: %s has no field %r (its fields: %s)%s"
                             % (_LEGACY, what, name, ", ".join(known) or "none", hint))
    return dict(fields)


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
    known, make = _LEGACY_OPTIMIZERS[kind]
    optimizer = make(scheduler, _fields(fields, kind, known))
    if _given(clip):
        _, clip_fields = _one_of(clip, {"clip_by_global_norm": 0}, "clip_conf")
        clip_fields = _fields(clip_fields, "clip_conf.clip_by_global_norm", ["clip_norm"])
        optimizer.grad_clipping = by_global_norm(clip_fields.get("clip_norm", 1.0))
    if _given(weight_decay):
        weight_decay = _fields(weight_decay, "weight_decay_conf",
                               ["weight_decay_rate", "includes", "excludes"])
        patterns = {}
        for key in ("includes", "excludes"):
            what = "weight_decay_conf.%s" % key
            patterns[key] = _fields(weight_decay.get(key), what, ["pattern"]).get("pattern")
        optimizer._set_weight_decay(weight_decay.get("weight_decay_rate", 0.0),
                                    patterns["includes"], patterns["excludes"])
    if "loss_scale_factor" in settings:
        factor = _loss_scale(settings["loss_scale_factor"], "train.loss_scale_factor")
        optimizer.loss_scale_policy = static_loss_scale(factor)
    return optimizer
