"""oneflow.linalg: OneFlow 0.3's other name of flow.matmul."""
from oneflow.ops.array_ops import matmul  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.linalg")
