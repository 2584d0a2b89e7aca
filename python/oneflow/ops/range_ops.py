"""flow.range (OneFlow 0.3: `range(start, limit=None, delta=1, dtype=None, name="range")`):
start, start + delta, ... below limit (above it for a negative delta) as a 1-D blob. With one
number it is the limit and start is 0. dtype is required, as in OneFlow 0.3; integer dtypes
need integer arguments (exact), float dtypes take any numbers. Op: oneflow/ops/range.cpp."""
import math
import numbers

import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import op_builder


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - OneFlow's name
    if dtype is None:
        raise ValueError("flow.range: dtype is required (e.g. dtype=flow.int64)")
    dtype = dtypes.check(dtype, "flow.range dtype")
    if limit is None:
        start, limit = 0, start
    values = {"start": start, "limit": limit, "delta": delta}
    for what, value in values.items():
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError("flow.range: %s must be a number, got %r" % (what, value))
    integral = dtype not in (dtypes.float32, dtypes.float64)
    if integral:
        for what, value in values.items():
            if not isinstance(value, numbers.Integral):
                raise TypeError("flow.range: %s must be an int for dtype %s, got %r"
                                % (what, dtype.name, value))
    if delta == 0:
        raise ValueError("flow.range: delta must not be 0")
    if integral:
        count = max(0, -(-(limit - start) // delta))  # exact, Python ints
    else:
        span = (limit - start) / delta
        count = 0 if not span > 0 else math.ceil(span) if math.isfinite(span) else math.inf
    if count == 0:
        raise ValueError("flow.range: (start, limit, delta) = (%r, %r, %r) gives no element"
                         % (start, limit, delta))
    if not count < 2 ** 40:
        raise ValueError("flow.range: (start, limit, delta) = (%r, %r, %r) gives %s elements, "
                         "too many" % (start, limit, delta, count))
    if integral:
        limits = np.iinfo(dtype.numpy_dtype)
        last = start + (count - 1) * delta
        if not (limits.min <= start <= limits.max and limits.min <= last <= limits.max):
            raise ValueError("flow.range: the values from %d to %d do not fit %s's range "
                             "[%d, %d]" % (start, last, dtype.name, limits.min, limits.max))
    attrs = {"dtype": dtype.value}
    if integral:
        attrs.update(integer_start=int(start), integer_limit=int(limit), integer_delta=int(delta))
    else:
        attrs.update(start=float(start), limit=float(limit), delta=float(delta))
    return op_builder.add_single_output_op("range", None if name == "range" else name, "Range",
                                           {}, attrs)

