"""The unary math family and the activations: flow.math.abs ... tan, flow.math.gelu,
flow.nn.leaky_relu / elu / hardsigmoid / hardswish / hardtanh / relu6 / mish / swish and
flow.keras.activations. Forward against NumPy (PyTorch 1.13 where NumPy has no reference:
erf, erfc, lgamma, gelu), backward against finite differences in float64, on domains where the
function is smooth, through check_op (which also runs the multi-device pass)."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


def _torch(function):
    """A numpy -> numpy reference from a PyTorch function, computed in the input's dtype."""
    return lambda x: function(torch.from_numpy(np.asarray(x))).numpy()


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _gelu_tail_exact(x):
    """x * Phi(x) as 0.5 x erfc(-x / sqrt 2): exact also where Phi(x) is tiny (torch's gelu
    computes 1 + erf and gives 0 there)."""
    return 0.5 * x * torch.erfc(torch.from_numpy(-x / np.sqrt(2.0))).numpy()


# name -> (flow function, numpy reference, (low, high) domain of the random inputs).
UNARY = {
    "abs": (flow.math.abs, np.abs, (-2, 2)),
    "acos": (flow.math.acos, np.arccos, (-0.9, 0.9)),
    "acosh": (flow.math.acosh, np.arccosh, (1.2, 3)),
    "asin": (flow.math.asin, np.arcsin, (-0.9, 0.9)),
    "asinh": (flow.math.asinh, np.arcsinh, (-2, 2)),
    "atan": (flow.math.atan, np.arctan, (-2, 2)),
    "atanh": (flow.math.atanh, np.arctanh, (-0.9, 0.9)),
    "ceil": (flow.math.ceil, np.ceil, (-3, 3)),
    "cos": (flow.math.cos, np.cos, (-3, 3)),
    "cosh": (flow.math.cosh, np.cosh, (-2, 2)),
    "erf": (flow.math.erf, _torch(torch.erf), (-2.5, 2.5)),
    "erfc": (flow.math.erfc, _torch(torch.erfc), (-2.5, 2.5)),
    "exp": (flow.math.exp, np.exp, (-3, 3)),
    "expm1": (flow.math.expm1, np.expm1, (-2, 2)),
    "floor": (flow.math.floor, np.floor, (-3, 3)),
    "lgamma": (flow.math.lgamma, _torch(torch.lgamma), (0.2, 5)),
    "log": (flow.math.log, np.log, (0.1, 5)),
    "log1p": (flow.math.log1p, np.log1p, (-0.5, 3)),
    "log_sigmoid": (flow.math.log_sigmoid, lambda x: -_softplus(-x), (-4, 4)),
    "negative": (flow.math.negative, np.negative, (-2, 2)),
    "reciprocal": (flow.math.reciprocal, np.reciprocal, (0.5, 3)),
    "reciprocal_no_nan": (flow.math.reciprocal_no_nan, np.reciprocal, (0.5, 3)),
    "rint": (flow.math.rint, np.rint, (-3, 3)),
    "round": (flow.math.round, np.round, (-3, 3)),
    "rsqrt": (flow.math.rsqrt, lambda x: 1.0 / np.sqrt(x), (0.2, 4)),
    "sigmoid": (flow.math.sigmoid, _sigmoid, (-4, 4)),
    "sigmoid_v2": (flow.math.sigmoid_v2, _sigmoid, (-4, 4)),
    "sign": (flow.math.sign, np.sign, (-2, 2)),
    "sin": (flow.math.sin, np.sin, (-3, 3)),
    "sinh": (flow.math.sinh, np.sinh, (-2, 2)),
    "softplus": (flow.math.softplus, _softplus, (-4, 4)),
    "sqrt": (flow.math.sqrt, np.sqrt, (0.2, 4)),
    "square": (flow.math.square, np.square, (-2, 2)),
    "tan": (flow.math.tan, np.tan, (-1.2, 1.2)),
    "tanh": (flow.math.tanh, np.tanh, (-3, 3)),
    "tanh_v2": (flow.math.tanh_v2, np.tanh, (-3, 3)),
    "relu": (flow.math.relu, lambda x: np.maximum(x, 0), (-2, 2)),
    "gelu": (flow.math.gelu, _torch(torch.nn.functional.gelu), (-4, 4)),
    "leaky_relu": (flow.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), (-2, 2)),
    "leaky_relu_alpha": (lambda x: flow.nn.leaky_relu(x, alpha=0.5),
                         lambda x: np.where(x > 0, x, 0.5 * x), (-2, 2)),
    "elu": (flow.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), (-3, 3)),
    "elu_alpha": (lambda x: flow.nn.elu(x, alpha=0.7),
                  lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), (-3, 3)),
    "hardsigmoid": (flow.nn.hardsigmoid, _torch(torch.nn.functional.hardsigmoid), (-5, 5)),
    "hardswish": (flow.nn.hardswish, _torch(torch.nn.functional.hardswish), (-5, 5)),
    "hardtanh": (flow.nn.hardtanh, lambda x: np.clip(x, -1, 1), (-2, 2)),
    "hardtanh_bounds": (lambda x: flow.nn.hardtanh(x, min_val=-0.5, max_val=1.5),
                        lambda x: np.clip(x, -0.5, 1.5), (-2, 2)),
    "relu6": (flow.nn.relu6, lambda x: np.clip(x, 0, 6), (-3, 9)),
    "mish": (flow.nn.mish, lambda x: x * np.tanh(_softplus(x)), (-3, 3)),
    "swish": (flow.nn.swish, lambda x: x * _sigmoid(x), (-3, 3)),
    "swish_beta": (lambda x: flow.nn.swish(x, beta=2.0), lambda x: x * _sigmoid(2 * x), (-3, 3)),
    "keras_relu": (flow.keras.activations.relu, lambda x: np.maximum(x, 0), (-2, 2)),
    "keras_sigmoid": (flow.keras.activations.sigmoid, _sigmoid, (-3, 3)),
    "keras_tanh": (flow.keras.activations.tanh, np.tanh, (-3, 3)),
    "keras_gelu": (flow.keras.activations.gelu, _torch(torch.nn.functional.gelu), (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64(name):
    flow_fn, numpy_fn, (low, high) = UNARY[name]
    check_op(flow_fn, numpy_fn, [(3, 4)], flow.float64, low=low, high=high)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32(name):
    # The multi-device pass of float64 covers the same SBP signatures.
    flow_fn, numpy_fn, (low, high) = UNARY[name]
    check_op(flow_fn, numpy_fn, [(5, 7)], flow.float32, low=low, high=high, multi_device=False)


@pytest.mark.parametrize("name", ["exp", "gelu", "abs", "hardtanh", "lgamma"])
def test_unary_3d(name):
    flow_fn, numpy_fn, (low, high) = UNARY[name]
    check_op(flow_fn, numpy_fn, [(2, 3, 2)], flow.float64, low=low, high=high)


def _float64_reference(function):
    """function evaluated in float64 and rounded to float32: the exact float32 answer."""
    return lambda x: np.asarray(function(x.astype(np.float64))).astype(np.float32)


def test_float32_large_blob_uses_the_vector_loops():
    # 100k elements: split over compute threads, through the vectorized loops and their tails.
    # Within 1e-5 relative of the float64 result. Beyond |x| ~ 9 float32 erfc loses digits to
    # the rounding of x * x in its exponent (docs/kernels.md).
    x = np.linspace(-9, 9, 100003).astype(np.float32)
    for flow_fn, reference in [(flow.math.exp, np.exp),
                               (flow.math.gelu, _gelu_tail_exact),
                               (flow.math.erf, _torch(torch.erf)),
                               (flow.math.erfc, _torch(torch.erfc)),
                               (flow.math.sigmoid_v2, _sigmoid),
                               (flow.math.log_sigmoid, lambda v: -_softplus(-v)),
                               (flow.math.softplus, _softplus)]:
        check_op(flow_fn, _float64_reference(reference), inputs=[x], check_backward=False,
                 multi_device=False, forward_tolerance=dict(rtol=1e-5, atol=1e-37))
    positive = np.linspace(1e-3, 1e3, 100003).astype(np.float32)
    check_op(flow.math.log, _float64_reference(np.log), inputs=[positive], check_backward=False,
             multi_device=False, forward_tolerance=dict(rtol=1e-6, atol=1e-37))


def test_exp_and_log_special_values():
    x = np.array([0.0, 1.0, -200.0, 100.0, np.inf, -np.inf, np.nan], np.float32)
    with np.errstate(over="ignore"):
        check_op(flow.math.exp, np.exp, inputs=[x], check_backward=False, multi_device=False)
    y = np.array([0.0, 1.0, -1.0, 1e-40, 3e38, np.inf, np.nan], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        check_op(flow.math.log, np.log, inputs=[y], check_backward=False, multi_device=False)


def test_zero_gradient_ops():
    # OneFlow 0.3 declares ceil, floor, rint, round and sign with a zero gradient.
    x = np.array([[-1.7, -0.2, 0.3, 2.6]])
    for flow_fn, numpy_fn in ((flow.math.ceil, np.ceil), (flow.math.floor, np.floor),
                              (flow.math.rint, np.rint), (flow.math.round, np.round),
                              (flow.math.sign, np.sign)):
        _, gradients = check_op(flow_fn, numpy_fn, inputs=[x], check_backward=False,
                                multi_device=False)
        np.testing.assert_array_equal(gradients[0], np.zeros_like(x))


def test_round_is_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    out, _ = check_op(flow.math.round, np.round, inputs=[x], check_backward=False,
                      multi_device=False)
    np.testing.assert_array_equal(out, [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0])


def test_reciprocal_no_nan_at_zero():
    x = np.array([0.0, 2.0, -4.0])
    out, gradients = check_op(flow.math.reciprocal_no_nan,
                              lambda v: np.where(v == 0, 0.0, 1.0 / np.where(v == 0, 1.0, v)),
                              inputs=[x], check_backward=False, multi_device=False)
    np.testing.assert_array_equal(out, [0.0, 0.5, -0.25])
    np.testing.assert_array_equal(gradients[0], [0.0, -0.25, -1.0 / 16])


@pytest.mark.parametrize("name, flow_fn, numpy_fn", [
    ("abs", flow.math.abs, np.abs), ("sign", flow.math.sign, np.sign),
    ("negative", flow.math.negative, np.negative)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_inputs(name, flow_fn, numpy_fn, dtype):
    x = np.array([[-3, 0, 5], [7, -1, 2]], dtype)
    check_op(flow_fn, numpy_fn, inputs=[x])


def _job_error(function, x):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(x.shape, dtype=flow.int32 if x.dtype == np.int32
                                    else flow.float32)) -> tp.Numpy:
        return function(x)

    return job(x)


def test_integer_input_to_float_only_op_names_op_and_dtypes():
    with pytest.raises(TypeError, match=r"exp.*int32.*float32"):
        _job_error(flow.math.exp, np.zeros((2, 3), np.int32))


def test_hardtanh_bounds_must_be_ordered():
    with pytest.raises(ValueError, match=r"hardtanh: min_val must be less than max_val, got "
                                         r"min_val=2 and max_val=1"):
        _job_error(lambda x: flow.nn.hardtanh(x, min_val=2.0, max_val=1.0),
                   np.zeros((2,), np.float32))


def test_non_numeric_alpha_is_a_type_error():
    with pytest.raises(TypeError, match="leaky_relu: alpha must be a real number"):
        _job_error(lambda x: flow.nn.leaky_relu(x, alpha="0.1"), np.zeros((2,), np.float32))


def test_keras_relu_rejects_unsupported_arguments():
    with pytest.raises(NotImplementedError, match="max_value"):
        _job_error(lambda x: flow.keras.activations.relu(x, max_value=6.0),
                   np.zeros((2,), np.float32))
