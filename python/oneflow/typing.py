"""oneflow.typing: annotations of job function arguments and results.

    def job(x: tp.Numpy.Placeholder((64, 784), dtype=flow.float)) -> tp.Numpy: ...
    def job(x: ...) -> tp.Callback[tp.Numpy]: ...   # called as job(x)(callback)
    def job(xs: Tuple[tp.Numpy.Placeholder((2,)), tp.Numpy.Placeholder((3,))]): ...  # job(xs=(a, b))

Results may be a Tuple/List/Dict nesting of Numpy, ListNumpy and ListListNumpy, a Bundle of one
of those, a Callback of any of those, or None (the job returns nothing).
"""
from oneflow.framework import dtypes, shapes


class _Placeholder:
    def __init__(self, shape, dtype=dtypes.float32, batch_axis=0):
        shape = shapes.to_shape(shape, "Placeholder")
        if any(d <= 0 for d in shape):
            raise ValueError("Placeholder shape must have positive dimensions, got %r" % (shape,))
        self.shape = shape
        self.dtype = dtypes.check(dtype, "Placeholder dtype")
        if batch_axis is not None and not shapes.is_int(batch_axis):
            raise TypeError("Placeholder batch_axis must be an int or None, got %r" % (batch_axis,))
        if batch_axis is not None and not -len(shape) <= batch_axis < max(len(shape), 1):
            raise ValueError("Placeholder batch_axis %r is out of range for shape %r" % (batch_axis, shape))
        self.batch_axis = None if batch_axis is None else batch_axis % max(len(shape), 1)

    def __repr__(self):
        return "%s(%r, dtype=%r)" % (type(self).__qualname__, self.shape, self.dtype)


class Numpy:
    """Result as a numpy array; `Numpy.Placeholder(shape, dtype, batch_axis)` for arguments."""

    class Placeholder(_Placeholder):
        pass


class ListNumpy:
    """Mirrored (per-device) values; arrives with multi-device support."""

    class Placeholder(_Placeholder):
        pass


class ListListNumpy:
    class Placeholder(_Placeholder):
        pass


def FixedTensorDef(shape, dtype=dtypes.float32, batch_axis=0, name=None):  # noqa: N802
    """OneFlow's older spelling of an argument: `def job(x=flow.FixedTensorDef((2, 3)))` is
    `def job(x: tp.Numpy.Placeholder((2, 3)))` (`name` is accepted and unused)."""
    return Numpy.Placeholder(shape, dtype=dtype, batch_axis=batch_axis)


def MirroredTensorDef(shape, dtype=dtypes.float32, batch_axis=0, name=None):  # noqa: N802
    """The older spelling of tp.ListNumpy.Placeholder (one value per device)."""
    return ListNumpy.Placeholder(shape, dtype=dtype, batch_axis=batch_axis)


def MirroredTensorListDef(shape, dtype=dtypes.float32, batch_axis=0, name=None):  # noqa: N802
    """The older spelling of tp.ListListNumpy.Placeholder."""
    return ListListNumpy.Placeholder(shape, dtype=dtype, batch_axis=batch_axis)


class CallbackType:
    def __init__(self, inner):
        self.inner = inner

    def __repr__(self):
        return "Callback[%r]" % (self.inner,)


class Callback:
    """`-> tp.Callback[tp.Numpy]`: the call returns a function that takes the callback."""

    def __class_getitem__(cls, inner):
        return CallbackType(inner)


class BundleType:
    def __init__(self, inner):
        self.inner = inner

    def __repr__(self):
        return "Bundle[%r]" % (self.inner,)


class Bundle:
    """`-> tp.Bundle[tp.Numpy]`: the job may return one blob, or any nesting of tuples, lists
    and dicts of blobs; each blob comes back as T (Numpy, ListNumpy or ListListNumpy)."""

    def __class_getitem__(cls, inner):
        return BundleType(inner)

