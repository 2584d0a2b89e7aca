"""oneflow.keras: OneFlow 0.3 exported a few activations here."""
from oneflow.keras import activations  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

__getattr__ = _missing_name_hook("oneflow.keras")
