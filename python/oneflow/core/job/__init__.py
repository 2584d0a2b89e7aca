"""oneflow.core.job: OneFlow 0.3's initializer_conf_pb2 (InitializerConf messages)."""
