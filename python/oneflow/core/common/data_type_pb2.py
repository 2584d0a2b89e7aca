"""OneFlow's DataType enum (oneflow/core/common/data_type.proto): `import
oneflow.core.common.data_type_pb2 as data_type_util; data_type_util.kFloat`."""
from oneflow.core import enums

enums.define("oneflow/core/common/data_type.proto", {"DataType": [
    ("kInvalidDataType", 0), ("kChar", 1), ("kFloat", 2), ("kDouble", 3), ("kInt8", 4),
    ("kInt32", 5), ("kInt64", 6), ("kUInt8", 7), ("kOFRecord", 8), ("kFloat16", 9),
    ("kTensorBuffer", 10),
]}, globals())
