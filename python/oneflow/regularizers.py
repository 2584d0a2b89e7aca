"""flow.regularizers: L1/L2 penalties on a variable (get_variable(regularizer=...), or a layer's
kernel_regularizer / bias_regularizer). As in OneFlow 0.3 the optimizer adds
l1 * sign(w) + l2 * w to the variable's gradient (note: l2 * w, not 2 * l2 * w)."""


class Regularizer:
    def __init__(self, l1=0.0, l2=0.0):
        for name, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError("flow.regularizers: %s must be a number, got %r" % (name, value))
            if value < 0:
                raise ValueError("flow.regularizers: %s must be >= 0, got %r" % (name, value))
        self.l1 = float(l1)
        self.l2 = float(l2)

    def __repr__(self):
        return "Regularizer(l1=%r, l2=%r)" % (self.l1, self.l2)


def l1_l2(l1=0.01, l2=0.01):
    return Regularizer(l1, l2)


def l1(l=0.01):  # noqa: E741 - OneFlow's parameter name
    return Regularizer(l1=l)


def l2(l=0.01):  # noqa: E741 - OneFlow's parameter name
    return Regularizer(l2=l)


l1_l2_regularizer = l1_l2
l1_regularizer = l1
l2_regularizer = l2


def check(regularizer, what):
    """The regularizer given to `what`, or None; TypeError for anything else."""
    if regularizer is not None and not isinstance(regularizer, Regularizer):
        raise TypeError("%s: regularizer must come from flow.regularizers (l1, l2, l1_l2), got %r"
                        % (what, regularizer))
    return regularizer
