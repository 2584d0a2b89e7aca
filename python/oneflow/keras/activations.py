"""oneflow.keras.activations: the activations OneFlow 0.3 exported under this path."""
from oneflow.ops.math_ops import gelu, sigmoid, tanh  # noqa: F401
from oneflow.ops.extra_nn_ops import gelu_grad, tanh_grad  # noqa: F401
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def relu(x, alpha=0.0, max_value=None, threshold=0.0, name=None):
    """Keras' signature; as in OneFlow 0.3 only the plain relu (the defaults) is supported."""
    if alpha != 0.0 or max_value is not None or threshold != 0.0:
        raise NotImplementedError(
            "flow.keras.activations.relu: alpha, max_value and threshold other than their "
            "defaults are not supported (got alpha=%r, max_value=%r, threshold=%r)"
            % (alpha, max_value, threshold))
    from oneflow.ops import math_ops

    return math_ops.relu(x, name)


__getattr__ = _missing_name_hook("oneflow.keras.activations")
