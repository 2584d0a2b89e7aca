"""OneFlow 0.3's permutation helpers (`oneflow.python.ops.transpose_util`), imported by its
test_top_k and test_sort-style tests to move an axis last and back."""


def is_perm(perm):
    """Whether perm is a permutation of 0 .. len(perm) - 1."""
    return sorted(perm) == list(range(len(perm)))


def get_perm_when_transpose_axis_to_last_dim(num_axes, axis):
    """The permutation that moves `axis` (negative counts from the end) to the last place and
    keeps the other axes in order."""
    axis = axis + num_axes if axis < 0 else axis
    if not 0 <= axis < num_axes:
        raise ValueError("axis %d is out of range for %d axes" % (axis, num_axes))
    return tuple(a for a in range(num_axes) if a != axis) + (axis,)


def get_inversed_perm(perm):
    """The permutation that undoes `perm`."""
    if not is_perm(perm):
        raise ValueError("%r is not a permutation" % (perm,))
    inverse = [0] * len(perm)
    for position, axis in enumerate(perm):
        inverse[axis] = position
    return tuple(inverse)
