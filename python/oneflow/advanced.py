"""oneflow.advanced: blobs placed one per device of the current placement, as OneFlow 0.3's
distribute_clone / distribute_split (one blob into a blob on each device) and
distribute_concat / distribute_add (a blob from each device into one blob over all of them).
Each result is an ordinary blob: the per-device ones are placed on their device alone, and the
compiler moves data between placements as for any op. Gradients flow through all four."""
from oneflow.framework import op_builder
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def _current_placement():
    session = op_builder.current_job()
    return session.scope.current_placement() or session.default_placement()


def _sub_name(name, index):
    return None if name is None else "%s_%d" % (name, index)


def _check_one_per_device(op, xs, placement):
    if not isinstance(xs, (list, tuple)):
        raise TypeError("%s: xs must be a list or tuple of blobs, got %r" % (op, xs))
    for index, x in enumerate(xs):
        op_builder.check_blob(x, op, "xs[%d]" % index)
    if len(xs) != placement.device_count():
        raise ValueError("%s: takes one blob per device of the current placement %r (%d), got %d"
                         % (op, placement, placement.device_count(), len(xs)))


def distribute_clone(x, name=None):
    """A copy of x on each device of the current placement (a tuple, in device order)."""
    from oneflow.ops import array_ops

    op_builder.check_blob(x, "distribute_clone", "x")
    outputs = []
    for index, device in enumerate(_current_placement().devices()):
        with device:
            outputs.append(array_ops.identity(x, name=_sub_name(name, index)))
    return tuple(outputs)


def distribute_split(x, axis=0, name=None):
    """x cut along `axis` into one part per device of the current placement, each on its device
    (a tuple, in device order); the first parts get one more row when the axis does not divide
    evenly, as OneFlow's balanced split."""
    from oneflow.framework import shapes
    from oneflow.ops import shape_ops

    op = "distribute_split"
    op_builder.check_blob(x, op, "x")
    rank = len(x.shape)
    if not shapes.is_int(axis) or not -rank <= axis < rank:
        raise ValueError("%s: axis %r is out of range for x of shape %s" % (op, axis, x.shape))
    axis %= rank
    devices = _current_placement().devices()
    length = x.shape[axis]
    if length < len(devices):
        raise ValueError("%s: axis %d of x %s has %d entries, fewer than the %d devices"
                         % (op, axis, x.shape, length, len(devices)))
    base, extra = divmod(length, len(devices))
    outputs, begin = [], 0
    for index, device in enumerate(devices):
        size = base + (1 if index < extra else 0)
        starts = [0] * rank
        sizes = list(x.shape)
        starts[axis], sizes[axis] = begin, size
        with device:
            outputs.append(shape_ops.slice(x, starts, sizes, name=_sub_name(name, index)))
        begin += size
    return tuple(outputs)


def distribute_concat(xs, axis=0, name=None):
    """One blob over the devices of the current placement: the blobs of xs (one per device, in
    device order) concatenated along `axis`."""
    from oneflow.ops import shape_ops

    placement = _current_placement()
    _check_one_per_device("distribute_concat", xs, placement)
    with placement:
        return shape_ops.concat(list(xs), axis=axis, name=name)


def distribute_add(xs, name=None):
    """One blob over the devices of the current placement: the sum of the blobs of xs (one per
    device)."""
    from oneflow.ops import math_ops

    placement = _current_placement()
    _check_one_per_device("distribute_add", xs, placement)
    with placement:
        return math_ops.add_n(list(xs), name=name)


__getattr__ = _missing_name_hook("oneflow.advanced")
