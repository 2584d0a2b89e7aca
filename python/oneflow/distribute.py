"""oneflow.distribute: SBP hints. Recorded now; they take effect with multi-device support."""


class Distribute:
    def __init__(self, kind, axis=None):
        self.kind = kind
        self.axis = axis

    def __repr__(self):
        return "S(%d)" % self.axis if self.kind == "split" else self.kind


def split(axis):
    if not isinstance(axis, int) or axis < 0:
        raise ValueError("flow.distribute.split: axis must be a non-negative int, got %r" % (axis,))
    return Distribute("split", axis)


def broadcast():
    return Distribute("broadcast")


def auto():
    return Distribute("auto")


def assert_is_valid_distribute(distribute):
    if not isinstance(distribute, Distribute):
        raise TypeError("expected a flow.distribute value, got %r" % (distribute,))
