"""Validation of shape arguments: a sequence of Python or numpy ints (floats, bools and strings are
rejected, never truncated)."""
import numbers

import numpy as np


def is_int(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def to_shape(value, what, allow_unknown=False):
    """`value` as a tuple of ints. `allow_unknown` accepts -1 (reshape checks how many)."""
    if is_int(value):
        value = (value,)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError("%s: shape must be a sequence of ints, got %r" % (what, value))
    dims = tuple(value)
    if not all(is_int(d) for d in dims):
        raise TypeError("%s: shape must be a sequence of ints, got %r" % (what, value))
    dims = tuple(int(d) for d in dims)
    for d in dims:
        if d < 0 and not (allow_unknown and d == -1):
            raise ValueError("%s: dimensions must be %s, got %r"
                             % (what, "positive or -1" if allow_unknown else "non-negative", dims))
    return dims
