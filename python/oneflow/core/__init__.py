"""oneflow.core: the protobuf messages and enums OneFlow 0.3 scripts import (oneflow.core.record,
oneflow.core.common.data_type_pb2, oneflow.core.operator.op_conf_pb2)."""
