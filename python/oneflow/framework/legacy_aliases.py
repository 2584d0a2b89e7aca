"""Names that OneFlow 0.3-era scripts use and that their Python and NumPy had, but the Python 3.11
and NumPy 1.24 here no longer have: `collections.Sized` and the other ABC aliases (removed in
Python 3.10; OneFlow's test_pool reads `collections.Sized`) and NumPy's scalar aliases `np.float`,
`np.int`, `np.bool`, `np.object`, `np.str`, `np.complex`, `np.long`, `np.unicode` (removed in
NumPy 1.24; 2020 test files build dtype lists from them). `import oneflow` restores each one that
is missing, with its old meaning, so those scripts run unchanged; nothing that exists is
replaced."""
import builtins
import collections
import collections.abc

import numpy as np

_COLLECTIONS_ABCS = ("Callable", "Container", "Hashable", "Iterable", "Iterator", "Mapping",
                     "MutableMapping", "MutableSequence", "MutableSet", "Sequence", "Set",
                     "Sized")

# NumPy < 1.24: np.float was Python's float, np.long Python 2's long (int), np.unicode str.
_NUMPY_SCALARS = {"float": builtins.float, "int": builtins.int, "bool": builtins.bool,
                  "object": builtins.object, "str": builtins.str, "complex": builtins.complex,
                  "long": builtins.int, "unicode": builtins.str}


def restore():
    for name in _COLLECTIONS_ABCS:
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))
    for name, value in _NUMPY_SCALARS.items():
        if name not in np.__dict__:
            setattr(np, name, value)
