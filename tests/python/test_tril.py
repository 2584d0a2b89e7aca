"""flow.math.tril and flow.math.fused_scale_tril against NumPy: diagonals above, on and below
the main one, fill values, scale, batches of matrices, integer dtypes; float64 gradients against
finite differences and every declared SBP signature on 2-4 devices, the row and column splits
included (check_op); the errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


def numpy_tril(x, diagonal=0, fill_value=0, scale=1):
    rows, columns = x.shape[-2:]
    keep = np.tril(np.ones((rows, columns), dtype=bool), diagonal)
    return np.where(keep, x * np.asarray(scale, x.dtype), np.asarray(fill_value, x.dtype)).astype(
        x.dtype)


@pytest.mark.parametrize("shape, diagonal, fill_value", [
    ((4, 5), 0, 0),
    ((5, 4), 1, 0),
    ((2, 3, 4), -1, 2.5),
    ((2, 2, 3, 6), 3, -1.0),
])
def test_tril_float64(shape, diagonal, fill_value):
    out, gradients = check_op(lambda x: flow.math.tril(x, diagonal, fill_value),
                              lambda x: numpy_tril(x, diagonal, fill_value), [shape],
                              flow.float64, weight_output=True)
    mask = np.tril(np.ones(shape[-2:], dtype=bool), diagonal)
    assert np.all(out[..., ~mask] == fill_value)
    assert np.all(gradients[0][..., ~mask] == 0)


@pytest.mark.parametrize("shape, diagonal, fill_value, scale", [
    ((4, 4), 0, 0, 0.5),
    ((3, 4, 5), -2, -3.0, 2),
])
def test_fused_scale_tril_float64(shape, diagonal, fill_value, scale):
    check_op(lambda x: flow.math.fused_scale_tril(x, diagonal, fill_value, scale),
             lambda x: numpy_tril(x, diagonal, fill_value, scale), [shape], flow.float64,
             weight_output=True)


def test_tril_float32_with_minus_infinity_fill():
    """The attention-mask use: -inf above the diagonal, scaled scores below."""
    out, _ = check_op(lambda x: flow.math.fused_scale_tril(x, 0, float("-inf"), 0.125),
                      lambda x: numpy_tril(x, 0, -np.inf, 0.125), [(2, 6, 6)], flow.float32,
                      check_backward=False)
    assert np.isneginf(out[0, 0, 1]) and np.isfinite(out[0, 5, 5])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_tril_integers(dtype):
    x = np.arange(1, 31, dtype=dtype).reshape(2, 3, 5)
    out, _ = check_op(lambda b: flow.math.tril(b, 1, 7), lambda a: numpy_tril(a, 1, 7),
                      inputs=[x])
    assert out.dtype == dtype and out[0, 0, 2] == 7 and out[0, 0, 1] == 2
    fill = 0 if dtype == np.uint8 else -1
    check_op(lambda b: flow.math.fused_scale_tril(b, 0, fill, 3),
             lambda a: numpy_tril(a, 0, fill, 3), inputs=[x], multi_device=False)


@pytest.mark.parametrize("diagonal", [10 ** 12, -10 ** 12, 4, -3])
def test_tril_far_diagonals(diagonal):
    """Diagonals past the matrix keep everything or nothing (no overflow for huge ones)."""
    out, _ = check_op(lambda x: flow.math.tril(x, diagonal), lambda x: numpy_tril(x, diagonal),
                      [(3, 4)], flow.float32, multi_device=False)
    if diagonal > 0:
        assert np.all(out != 0)
    else:
        assert np.all(out == 0)


def _tril_error(shape, dtype=flow.float32, **kwargs):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape, dtype=dtype)) -> tp.Numpy:
        return flow.math.fused_scale_tril(x, **kwargs)

    job(np.zeros(shape, flow.convert_oneflow_dtype_to_numpy_dtype(dtype)))


@pytest.mark.parametrize("shape, dtype, kwargs, error, message", [
    ((4,), flow.float32, {}, ValueError,
     r"fused_scale_tril: x must have rank >= 2 .* got shape \(4,\)"),
    ((2, 2), flow.float32, dict(diagonal=0.5), TypeError,
     r"fused_scale_tril: diagonal must be an int"),
    ((2, 2), flow.float32, dict(fill_value="x"), TypeError,
     r"fused_scale_tril: fill_value must be a real number"),
    ((2, 2), flow.int32, dict(fill_value=1.5), ValueError,
     r"fused_scale_tril: fill_value must be an integer that int32 holds"),
    ((2, 2), flow.int32, dict(scale=2 ** 40), ValueError,
     r"fused_scale_tril: scale must be an integer that int32 holds"),
    ((2, 2), flow.int64, dict(fill_value=float("inf")), ValueError,
     r"fused_scale_tril: fill_value must be an integer"),
    ((2, 2), flow.int8, dict(fill_value=-200), ValueError,
     r"fused_scale_tril: fill_value must be an integer that int8 holds .* got -200"),
    ((2, 2), flow.uint8, dict(fill_value=-1), ValueError,
     r"fused_scale_tril: fill_value must be an integer that uint8 holds"),
])
def test_tril_errors(shape, dtype, kwargs, error, message):
    with pytest.raises(error, match=message):
        _tril_error(shape, dtype, **kwargs)
