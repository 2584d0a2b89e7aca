"""oneflow.distribute: SBP hints for how a blob is laid out over the devices of its placement.

    flow.distribute.split(axis)   each device holds a balanced slice along `axis`
    flow.distribute.broadcast()   each device holds the whole blob
    flow.distribute.auto()        no hint: the compiler's cost model decides

Used by `blob.with_distribute(...)`, `flow.get_variable(..., distribute=...)`,
`flow.layers.dense(..., model_distribute=...)` and `flow.parallel_cast(...)`. As in OneFlow, the
same object is returned for the same hint, so `d is flow.distribute.split(0)` works.
"""


class Distribute:
    def __init__(self, kind, axis=None):
        self.kind = kind
        self.axis = axis

    @property
    def sbp(self):
        """The SBP text the compiler takes ("S(0)", "B"), or None for auto."""
        if self.kind == "split":
            return "S(%d)" % self.axis
        return "B" if self.kind == "broadcast" else None

    def __repr__(self):
        return "S(%d)" % self.axis if self.kind == "split" else self.kind


class SplitDistribute(Distribute):
    def __init__(self, axis):
        super().__init__("split", axis)


class BroadcastDistribute(Distribute):
    def __init__(self):
        super().__init__("broadcast")


class AutoDistribute(Distribute):
    def __init__(self):
        super().__init__("auto")


_splits = {}
_broadcast = BroadcastDistribute()
_auto = AutoDistribute()


def split(axis):
    if isinstance(axis, bool) or not isinstance(axis, int) or axis < 0:
        raise ValueError("flow.distribute.split: axis must be a non-negative int, got %r" % (axis,))
    if axis not in _splits:
        _splits[axis] = SplitDistribute(axis)
    return _splits[axis]


def broadcast():
    return _broadcast


def auto():
    return _auto


def assert_is_valid_distribute(distribute, what="distribute"):
    """`what` names the argument in the error, e.g. "parallel_cast: distribute"."""
    if not isinstance(distribute, Distribute):
        raise TypeError("%s: expected a flow.distribute value (split(axis), broadcast() or "
                        "auto()), got %r" % (what, distribute))


def from_sbp(text):
    """The Distribute of an SBP text ("S(1)" -> split(1)); partial sums have none (None)."""
    if text.startswith("S("):
        return split(int(text[2:-1]))
    return broadcast() if text == "B" else None


def consistent_strategy():
    """OneFlow 0.3's older name of flow.scope.consistent_view()."""
    from oneflow.framework.scope import LogicalView

    return LogicalView("consistent")


def mirrored_strategy():
    """OneFlow 0.3's older name of flow.scope.mirrored_view()."""
    from oneflow.framework.scope import LogicalView

    return LogicalView("mirrored")
