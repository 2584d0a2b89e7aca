"""oneflow.layers"""
from oneflow.ops.layers import dense  # noqa: F401
