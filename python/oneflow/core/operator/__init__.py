"""oneflow.core.operator: OneFlow 0.3's op_conf_pb2 (its ActivationType enum)."""
