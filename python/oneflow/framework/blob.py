"""Blobs seen from Python.

LazyBlob: a logical blob of the job being traced (name, shape, dtype); its Python operators
emit ops. LocalBlob: a value that came back from a run (a numpy array with OneFlow's accessors).
"""
import numbers

import numpy as np



class _StaticShape:
    """OneFlow 0.3's blob attributes about dynamic shapes, for values whose shape is known."""

    @property
    def is_dynamic(self):
        return False

    @property
    def is_tensor_list(self):
        return False


class LazyBlob(_StaticShape):
    """Handle of a logical blob "<op name>/<argument>_<index>" in the job being traced: its
    logical shape and dtype, the placement of the op that produced it, how that op laid it out
    (`sbp`: "S(0)", "B" or "P") and, after `with_distribute`, the layout its consumer must use."""

    def __init__(self, lbn, shape, dtype, batch_axis=0, placement=None, sbp="B", hint=None,
                 mirrored=False, dynamic=False):
        self.logical_blob_name = lbn
        self._mirrored = mirrored
        # The shape is an upper bound; each run's shape depends on the data (argwhere and the
        # ops reading its result; whole on each of its devices).
        self._dynamic = dynamic
        self._shape = tuple(shape)
        self._dtype = dtype
        self._batch_axis = batch_axis if len(shape) > 0 else None
        self._placement = placement
        self._sbp = sbp
        self._hint = hint
        # For flow.argwhere's result (and flow.nonzero's): the (1,) int64 blob holding the number
        # of valid rows, counted along axis valid_axis (1 for nonzero); a returned result keeps
        # only those.
        self.valid_rows = None
        self.valid_axis = 0
        # The job function whose trace made the blob (a specialization's: the function it was
        # traced from); an op of another job may not read it (op_builder.check_blob).
        from oneflow.framework import session as session_util

        job = session_util.default_session().tracing_job
        self.job = None if job is None else job.origin

    @property
    def is_dynamic(self):
        """True when `shape` is an upper bound: the shape of each run depends on the data."""
        return self._dynamic or self.valid_rows is not None

    def without_valid_rows(self):
        """The same blob with all its rows (the allocated upper bound)."""
        return LazyBlob(self.logical_blob_name, self._shape, self._dtype, self._batch_axis,
                        self._placement, self._sbp, self._hint, self._mirrored, self._dynamic)

    def numpy(self, index=None):
        """A traced blob has no value: OneFlow 0.3's eager mode, where it had one, is not
        available (flow.enable_eager_execution only says so)."""
        raise NotImplementedError(
            "%s.numpy(): blob %r has no value while its global function is being traced; eager "
            "execution is not available in this version. Return the blob from the function and "
            "read the result, or pass it to flow.watch" % (type(self).__name__, self.lbn))

    numpy_list = ndarray = ndarray_list = numpy

    @property
    def lbn(self):
        return self.logical_blob_name

    @property
    def op_name(self):
        return self.logical_blob_name.rsplit("/", 1)[0]

    @property
    def unique_name(self):
        return self.logical_blob_name

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def batch_axis(self):
        return self._batch_axis

    @property
    def placement(self):
        """The flow.scope.placement of the op that produced the blob."""
        return self._placement

    @property
    def parallel_conf(self):
        return self._placement

    @property
    def sbp(self):
        return self._sbp

    @property
    def split_axis(self):
        """The axis the blob is split along over its devices, or None."""
        return int(self._sbp[2:-1]) if self._sbp.startswith("S(") else None

    @property
    def distribute(self):
        from oneflow import distribute

        return distribute.from_sbp(self._sbp)

    @property
    def is_mirrored(self):
        """True in the mirrored view: each device holds its own value of this shape."""
        return self._mirrored

    @property
    def distribute_hint(self):
        """The layout a consumer must use (from with_distribute), or None."""
        return self._hint

    def with_distribute(self, distribute):
        """The same blob, with a hint that its consumers read it laid out as `distribute`
        (flow.distribute.split(axis) / broadcast(); auto() removes the hint)."""
        from oneflow import distribute as distribute_util

        distribute_util.assert_is_valid_distribute(distribute, "with_distribute")
        if distribute.kind == "split" and distribute.axis >= len(self._shape):
            raise ValueError("with_distribute: cannot split axis %d of blob %r of shape %r"
                             % (distribute.axis, self.lbn, self._shape))
        return LazyBlob(self.logical_blob_name, self._shape, self._dtype, self._batch_axis,
                        self._placement, self._sbp, None if distribute.kind == "auto" else distribute,
                        self._mirrored, self._dynamic)

    def with_split_distribute(self, axis):
        from oneflow import distribute

        return self.with_distribute(distribute.split(axis))

    def with_broadcast_distribute(self):
        from oneflow import distribute

        return self.with_distribute(distribute.broadcast())

    def __repr__(self):
        return "LazyBlob(name=%r, shape=%r, dtype=%r%s%s)" % (
            self.lbn, self.shape, self.dtype, ", mirrored" if self._mirrored else "",
            ", dynamic" if self._dynamic else "")

    def __len__(self):
        return self._shape[0]

    def __bool__(self):
        """A traced blob has no value yet: `if blob > 0:` would always take one branch."""
        raise TypeError(
            "blob %r has no truth value while its global function is traced (its value exists "
            "only when the job runs): choose between values with flow.where or flow.math ops, "
            "and test for a missing blob with `is None`" % self.lbn)

    # numpy defers to the reflected operators (x.__radd__ for `array + x`), which say that
    # arrays are not operands, instead of making an object array of one blob per element.
    __array_ufunc__ = None

    # Operators map to flow.math ops, with scalars on either side.
    def __add__(self, other):
        from oneflow.ops import math_ops

        return math_ops.add(self, other)

    def __radd__(self, other):
        from oneflow.ops import math_ops

        return math_ops.add(other, self)

    def __sub__(self, other):
        from oneflow.ops import math_ops

        return math_ops.subtract(self, other)

    def __rsub__(self, other):
        from oneflow.ops import math_ops

        return math_ops.subtract(other, self)

    def __mul__(self, other):
        from oneflow.ops import math_ops

        return math_ops.multiply(self, other)

    def __rmul__(self, other):
        from oneflow.ops import math_ops

        return math_ops.multiply(other, self)

    def __truediv__(self, other):
        from oneflow.ops import math_ops

        return math_ops.divide(self, other)

    def __rtruediv__(self, other):
        from oneflow.ops import math_ops

        return math_ops.divide(other, self)

    def __div__(self, other):
        return self.__truediv__(other)

    def __neg__(self):
        from oneflow.ops import math_ops

        return math_ops.negative(self)

    def __pow__(self, other):
        from oneflow.ops import math_ops

        return math_ops.pow(self, other)

    def __rpow__(self, other):
        from oneflow.ops import math_ops

        return math_ops.pow(other, self)

    def __mod__(self, other):
        from oneflow.ops import math_ops

        return math_ops.mod(self, other)

    def __rmod__(self, other):
        from oneflow.ops import math_ops

        return math_ops.mod(other, self)

    def __floordiv__(self, other):
        from oneflow.ops import math_ops

        return math_ops.floordiv(self, other)

    def __rfloordiv__(self, other):
        from oneflow.ops import math_ops

        return math_ops.floordiv(other, self)

    # Comparisons emit int8 comparison ops, as in OneFlow 0.3. Against anything that is not a
    # blob or a number they return NotImplemented, so `blob == None` stays an identity test.
    # Blobs stay hashable by identity.
    __hash__ = object.__hash__

    def _compare(self, other, function_name):
        if not isinstance(other, LazyBlob) and not is_scalar(other):
            return NotImplemented
        from oneflow.ops import math_ops

        return getattr(math_ops, function_name)(self, other)

    def __eq__(self, other):
        return self._compare(other, "equal")

    def __ne__(self, other):
        return self._compare(other, "not_equal")

    def __lt__(self, other):
        return self._compare(other, "less")

    def __le__(self, other):
        return self._compare(other, "less_equal")

    def __gt__(self, other):
        return self._compare(other, "greater")

    def __ge__(self, other):
        return self._compare(other, "greater_equal")

    # `a & b` and `a | b` are the elementwise logical ops (int8, nonzero is true), as the
    # broadcast_logical_and of OneFlow 0.3's tests; both are symmetric, so the reflected forms
    # are the same op.
    def __and__(self, other):
        return self._compare(other, "logical_and")

    def __or__(self, other):
        return self._compare(other, "logical_or")

    __rand__ = __and__
    __ror__ = __or__

    def __pos__(self):
        return self


def is_scalar(value):
    return isinstance(value, numbers.Number) and not isinstance(value, bool) or isinstance(
        value, (np.integer, np.floating)
    )


class LocalBlob(_StaticShape, np.ndarray):
    """A result value: a numpy array that also answers OneFlow 0.3's LocalBlob methods. A result
    of the mirrored view is the devices' values concatenated along axis 0 (stacked when they are
    0-d); numpy(i) and numpy_list() give them one by one. Values whose shapes do not concatenate
    (a dynamic mirrored blob's) are only given one by one."""

    def numpy(self, index=None):
        if index is None:
            parts = getattr(self, "_parts", None)
            if parts is not None and not _joinable(parts):
                raise ValueError(
                    "this result holds one value per device, of shapes %s, which do not "
                    "concatenate along axis 0; take them with numpy_list() or numpy(device)"
                    % ", ".join(str(part.shape) for part in parts))
            return np.asarray(self)
        return self.numpy_list()[index]

    def numpy_list(self):
        parts = getattr(self, "_parts", None)
        return list(parts) if parts is not None else [np.asarray(self)]

    def numpy_lists(self):
        return [[part] for part in self.numpy_list()]

    # OneFlow 0.2's spellings of numpy() and numpy_list().
    ndarray = numpy
    ndarray_list = numpy_list

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """Reductions and arithmetic that end in 0-d give numpy scalars, as on the ndarray that
        OneFlow 0.3's LocalBlob handed out: `blob.mean()` is an np.float32 (hashable, printable
        as a number), not a 0-d LocalBlob."""
        if array.ndim == 0:
            return array[()]
        return np.ndarray.__array_wrap__(self, array, context)


def as_local_blob(array, parts=None):
    blob = np.asarray(array).view(LocalBlob)
    if parts is not None:
        blob._parts = parts
    return blob


def _joinable(parts):
    return len({part.shape[1:] for part in parts}) == 1 and parts[0].ndim > 0 or all(
        part.ndim == 0 for part in parts)


def join_parts(parts):
    """The devices' values as one array: concatenated along axis 0 (stacked when 0-d)."""
    if not _joinable(parts):
        raise ValueError(
            "the result holds one value per device, of shapes %s, which do not concatenate "
            "along axis 0; annotate it with oneflow.typing.ListNumpy to get them one by one"
            % ", ".join(str(part.shape) for part in parts))
    if parts[0].ndim == 0:
        return np.stack(parts)
    return np.concatenate(parts, axis=0)


def hand_over(value, kind, parts=None):
    """A value as Python receives it (a result, a watched blob): kind "numpy" (one array),
    "list" (one array per device), "list_list" (a one-tensor list per device) or "local" (a
    LocalBlob). `parts`: the device count of a mirrored blob, whose values arrive stacked."""
    if parts:
        return hand_over_parts([value[i] for i in range(parts)], kind)
    if kind == "numpy":
        return value
    if kind in ("list", "list_list"):
        return [value] if kind == "list" else [[value]]
    return as_local_blob(value, None)


def hand_over_parts(values, kind):
    """hand_over for the per-device values of a mirrored blob (their shapes may differ)."""
    if kind == "numpy":
        return join_parts(values)
    if kind in ("list", "list_list"):
        return values if kind == "list" else [[v] for v in values]
    if not _joinable(values):  # numpy() then says why; numpy_list() gives them
        return as_local_blob(np.empty((0,), values[0].dtype), values)
    return as_local_blob(join_parts(values), values)
