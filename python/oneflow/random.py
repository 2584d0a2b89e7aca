"""oneflow.random"""
from oneflow.ops.random_ops import bernoulli, normal, uniform  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.random")
