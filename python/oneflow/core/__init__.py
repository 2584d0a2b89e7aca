"""oneflow.core: the protobuf messages OneFlow 0.3 scripts import (oneflow.core.record)."""
