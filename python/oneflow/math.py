"""oneflow.math"""
from oneflow.ops.math_ops import (  # noqa: F401
    add, divide, multiply, negative, reduce_mean, reduce_sum, relu, sigmoid, square, subtract, tanh,
)
