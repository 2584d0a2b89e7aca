"""oneflow.core.common: OneFlow 0.3's data_type_pb2 (the DataType enum)."""
