"""The enums of OneFlow's op_conf.proto that scripts use (`import
oneflow.core.operator.op_conf_pb2 as op_conf_util; op_conf_util.kNone`): ActivationType. The
op configuration messages themselves are not provided (jobs here are built through the Python
API)."""
from oneflow.core import enums

enums.define("oneflow/core/operator/op_conf.proto", {"ActivationType": [
    ("kNone", 0), ("kTanH", 1), ("kSigmoid", 2), ("kRelu", 3),
]}, globals())
