"""Data types: flow.float32 & co., their numpy equivalents and the C++ enum values."""
import numpy as np


class DType:
    """A oneflow data type. `value` is the C++ DataType enum (proto/data_type.proto)."""

    def __init__(self, name, value, numpy_dtype):
        self.name = name
        self.value = value
        self.numpy_dtype = np.dtype(numpy_dtype)

    def __repr__(self):
        return "oneflow." + self.name

    def __eq__(self, other):
        return isinstance(other, DType) and other.value == self.value

    def __hash__(self):
        return hash(self.value)


float32 = DType("float32", 1, np.float32)
float64 = DType("float64", 2, np.float64)
int8 = DType("int8", 3, np.int8)
int32 = DType("int32", 4, np.int32)
int64 = DType("int64", 5, np.int64)
uint8 = DType("uint8", 6, np.uint8)
float = float32  # noqa: A001 - OneFlow's public name
double = float64
char = int8


# float16: blobs can be fed, cast (flow.cast) and returned; ops with float16 kernels (on GPUs;
# on the CPU through float32 copies) take it, the others name it in their dtype errors.
float16 = DType("float16", 7, np.float16)
half = float16


def check_uniform_range(what, low, high, dtype):
    """Refuses uniform bounds [low, high) whose width overflows the floating `dtype`: every sample
    would be inf (numpy.random.uniform refuses such ranges too)."""
    largest = np.finfo(dtype.numpy_dtype).max.item()  # (this module's `float` is a DType)
    if not abs(high - low) <= largest:
        raise ValueError("%s: the range [%r, %r) is wider than %s's largest value %r, so every "
                         "sample would overflow" % (what, low, high, dtype.name, largest))


def is_floating(dtype):
    """True for float16, float32 and float64."""
    return dtype.numpy_dtype.kind == "f"


class _UnsupportedDType(DType):
    def __init__(self, name):
        super().__init__(name, -1, np.float32)


_BY_VALUE = {d.value: d for d in (float32, float64, int8, int32, int64, uint8, float16)}
_BY_NAME = {
    "float": float32, "float32": float32, "double": float64, "float64": float64, "int8": int8,
    "char": int8, "int32": int32, "int64": int64, "uint8": uint8, "float16": float16,
    "half": float16,
}
_BY_NUMPY = {d.numpy_dtype: d for d in (float32, float64, int8, int32, int64, uint8, float16)}


def from_value(value):
    return _BY_VALUE[value]


def check(dtype, what="dtype"):
    """Returns `dtype` as a supported DType or raises TypeError/NotImplementedError."""
    if isinstance(dtype, _UnsupportedDType):
        raise NotImplementedError("%s %s is not supported on CPU yet" % (what, dtype.name))
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if dtype is not None and not isinstance(dtype, str):
        try:
            return _BY_NUMPY[np.dtype(dtype)]  # numpy dtypes, e.g. np.float32
        except (TypeError, KeyError):
            pass
    raise TypeError("%s must be a oneflow dtype such as flow.float32, got %r" % (what, dtype))


def convert_oneflow_dtype_to_numpy_dtype(dtype):
    return check(dtype).numpy_dtype
