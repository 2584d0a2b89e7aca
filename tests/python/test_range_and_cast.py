"""flow.range (OneFlow 0.3's signature) and float16 as a storage dtype: placeholders, flow.cast
both ways, numpy float16 results, and loud errors where float16 cannot compute."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_multi_device, run_op


def _run(make, x=None):
    flow.clear_default_session()
    x = np.zeros((2,), np.float32) if x is None else x

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=flow.float16 if x.dtype == np.float16
                                    else flow.float32)) -> tp.Numpy:
        return make(b)

    return job(x)


@pytest.mark.parametrize("args, kwargs, expected", [
    ((10,), dict(dtype=flow.int64), np.arange(10, dtype=np.int64)),
    ((1, 10, 3), dict(dtype=flow.int64), np.arange(1, 10, 3, dtype=np.int64)),
    ((5, -3, -2), dict(dtype=flow.int32), np.arange(5, -3, -2, dtype=np.int32)),
    ((0.5, 2.0, 0.25), dict(dtype=flow.float32), np.arange(0.5, 2.0, 0.25, dtype=np.float32)),
    ((1.0, 0.0, -0.1), dict(dtype=flow.float64), np.arange(1.0, 0.0, -0.1)),
], ids=str)
def test_range(args, kwargs, expected):
    out = _run(lambda b: flow.range(*args, **kwargs))
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_range_is_the_same_on_many_devices():
    inputs = [np.zeros((2,), np.float32)]
    fn = lambda b: flow.range(3, 40, 3, dtype=flow.int64)  # noqa: E731
    reference = run_op(fn, inputs, train=False)
    np.testing.assert_array_equal(reference[0], np.arange(3, 40, 3))
    runs = check_multi_device(fn, inputs, reference, train=False)
    assert any(run.forced for run in runs)


def test_range_errors():
    def body(b):
        with pytest.raises(ValueError, match="flow.range: dtype is required"):
            flow.range(10)
        with pytest.raises(ValueError, match="flow.range: delta must not be 0"):
            flow.range(0, 10, 0, dtype=flow.int64)
        with pytest.raises(ValueError, match=r"flow.range: \(start, limit, delta\) = \(5, 1, 1\) "
                                             "gives no element"):
            flow.range(5, 1, dtype=flow.int64)
        with pytest.raises(TypeError, match="flow.range: delta must be an int for dtype int32"):
            flow.range(0, 1, 0.5, dtype=flow.int32)
        return b

    _run(body)


def test_float16_placeholder_cast_and_return():
    x = np.array([[1.5, -2.25, 1000.0], [0.1, 65504.0, -0.0]], dtype=np.float16)
    out = _run(lambda b: flow.cast(flow.cast(b, flow.float32) * 2.0, flow.float16), x)
    assert out.dtype == np.float16
    with np.errstate(over="ignore"):  # 65504 * 2 is inf in float16, here as in numpy
        np.testing.assert_array_equal(out, (x.astype(np.float32) * 2).astype(np.float16))
    back = _run(lambda b: flow.cast(b, flow.float64), x)
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back, x.astype(np.float64))
    identity = _run(lambda b: b, x)
    assert identity.dtype == np.float16 and np.array_equal(identity, x)


@pytest.mark.parametrize("source", [np.float32, np.float64, np.int32, np.int8], ids=str)
def test_cast_to_float16_rounds_like_numpy(source):
    values = np.random.RandomState(0).uniform(-70000, 70000, size=(50,))
    values[:5] = [0.1, 1 / 3, 2049.0, 2051.0, 1e-5]
    values = values.astype(source) if np.dtype(source).kind == "f" else \
        np.random.RandomState(1).randint(-100, 100, size=(50,)).astype(source)
    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(values.shape, dtype=flow.float32 if source == np.float32
                                    else {np.float64: flow.float64, np.int32: flow.int32,
                                          np.int8: flow.int8}[source])) -> tp.Numpy:
        return flow.cast(b, flow.float16)

    out = job(values)
    # numpy rounds float64 -> float16 directly; we go through float32, which can differ only
    # at double-rounding ties, absent from these values.
    with np.errstate(over="ignore"):  # beyond 65504: inf
        np.testing.assert_array_equal(out, values.astype(np.float32).astype(np.float16))


def test_float16_compute_on_cpu():
    """float16 ops compute on the CPU in float32 and round once; ops without float16 refuse it
    loudly."""
    x = np.array([0.1, 1000.0, 3.3], np.float16)
    total = _run(lambda b: flow.math.reduce_sum(b), x)
    assert total.dtype == np.float16
    assert total == np.float16(x.astype(np.float32).sum())
    small = np.array([0.1, -2.5, 3.3], np.float16)
    np.testing.assert_array_equal(_run(lambda b: flow.math.exp(b), small),
                                  np.exp(small.astype(np.float32)).astype(np.float16))
    with pytest.raises(TypeError, match="float16"):
        _run(lambda b: flow.math.reduce_prod(b), x)
