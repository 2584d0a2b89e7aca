"""flow.math.argmax / argmin / top_k, flow.sort / flow.argsort: against NumPy and PyTorch 1.13,
every axis, ties, NaN, the multi-device pass, and the error messages."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op as _check_op


def check_op(*args, **kwargs):
    """check_op for ops without gradient: no input is differentiable."""
    kwargs.setdefault("differentiable", [])
    return _check_op(*args, **kwargs)


DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64]


def _values(shape, dtype, seed=0):
    rng = np.random.RandomState(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.randint(-4, 5, size=shape).astype(dtype)  # many ties


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, -1], ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, axis, dtype):
    x = _values((3, 5, 4), dtype)
    numpy_fn = getattr(np, name)
    check_op(lambda b: getattr(flow.math, name)(b, axis=axis),
             lambda a: numpy_fn(a, axis=axis).astype(np.int32), inputs=[x])


def test_argmax_default_axis_ties_and_nan():
    x = np.array([[1, 3, 8, 7, 2], [1, 9, 4, 9, 2], [0, 0, 0, 0, 0],
                  [1, np.nan, 5, np.nan, 2]], dtype=np.float32)
    check_op(flow.math.argmax, lambda a: np.argmax(a, axis=-1).astype(np.int32), inputs=[x])
    check_op(flow.math.argmin, lambda a: np.argmin(a, axis=-1).astype(np.int32), inputs=[x])
    check_op(lambda b: flow.math.argmax(b, axis=0),
             lambda a: np.argmax(a, axis=0).astype(np.int32), inputs=[x], multi_device=False)
    check_op(lambda b: flow.math.argmin(b, axis=0),
             lambda a: np.argmin(a, axis=0).astype(np.int32), inputs=[x], multi_device=False)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_the_index_of_a_vector_has_shape_1_as_in_oneflow(name):
    # OneFlow 0.3's argmax keeps one axis when it drops the only one (its test_argmax compares
    # with a (1,) array).
    x = np.array([3, -1, 7, 7, 0], np.float32)
    out, _ = check_op(lambda b: getattr(flow.math, name)(b),
                      lambda a: np.array([getattr(np, name)(a)], np.int32), inputs=[x])
    assert out.shape == (1,)


def test_argmax_of_long_rows_matches_torch():
    x = np.random.RandomState(4).standard_normal((7, 3000)).astype(np.float32)
    out, _ = check_op(flow.math.argmax, lambda a: np.argmax(a, axis=1).astype(np.int32),
                      inputs=[x], multi_device=False)
    np.testing.assert_array_equal(out, torch.from_numpy(x).argmax(dim=1).numpy())


def _numpy_top_k(x, k, axis=-1):
    order = np.argsort(-x, axis=axis, kind="stable")  # largest first, ties in index order
    return np.take(order, np.arange(k), axis=axis).astype(np.int32)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k, axis", [(1, -1), (3, -1), (4, 1), (2, 0)], ids=str)
def test_top_k(k, axis, dtype):
    x = _values((3, 4, 6), dtype, seed=1)
    check_op(lambda b: flow.math.top_k(b, k=k, axis=axis), lambda a: _numpy_top_k(a, k, axis),
             inputs=[x])


def test_top_k_matches_torch_values_and_oneflow_example():
    x = np.random.RandomState(5).standard_normal((16, 1000)).astype(np.float32)
    out, _ = check_op(lambda b: flow.math.top_k(b, 5), lambda a: _numpy_top_k(a, 5),
                      inputs=[x], multi_device=False)
    values, indices = torch.from_numpy(x).topk(5, dim=1)
    np.testing.assert_array_equal(out, indices.numpy())
    example = np.array([1, 3, 8, 7, 2], dtype=np.float32)  # OneFlow's docstring: [2 3]
    check_op(lambda b: flow.math.top_k(b, 2), lambda a: np.array([2, 3], np.int32),
             inputs=[example], multi_device=False)


def _reference_top_k_rows(x, k):
    """Per row: NaN first, then larger first, ties by lower index (Python's stable sort)."""
    return np.array([sorted(range(len(row)), key=lambda i: (not np.isnan(row[i]), -row[i]))[:k]
                     for row in x], dtype=np.int32)


@pytest.mark.parametrize("k", [1, 5, 32, 33, 100])
def test_top_k_both_paths_with_ties_nan_and_infinities(k):
    # k <= 32 takes the one-pass selection, larger k partial_sort: both give the same order.
    rng = np.random.RandomState(k)
    x = rng.randint(-3, 4, size=(6, 300)).astype(np.float32)  # many ties
    x[1, [7, 150, 299]] = np.nan
    x[2, [0, 5]] = np.inf
    x[3, :] = -np.inf
    x[4, ::2] = np.nan
    x[5] = rng.standard_normal(300)
    check_op(lambda b: flow.math.top_k(b, k), lambda a: _reference_top_k_rows(a, k),
             inputs=[x], multi_device=False)
    ints = rng.randint(-2, 3, size=(4, 300)).astype(np.int32)
    check_op(lambda b: flow.math.top_k(b, k), lambda a: _numpy_top_k(a, k),
             inputs=[ints], multi_device=False)


def _numpy_argsort(x, axis, direction):
    key = x if direction == "ASCENDING" else -x
    return np.argsort(key, axis=axis, kind="stable").astype(np.int32)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
@pytest.mark.parametrize("axis", [-1, 0], ids=str)
def test_sort_and_argsort(axis, direction, dtype):
    x = _values((4, 3, 5), dtype, seed=2)
    check_op(lambda b: flow.argsort(b, axis=axis, direction=direction),
             lambda a: _numpy_argsort(a, axis, direction), inputs=[x])
    check_op(lambda b: flow.sort(b, axis=axis, direction=direction),
             lambda a: np.take_along_axis(a, _numpy_argsort(a, axis, direction), axis=axis),
             inputs=[x])


def test_sort_matches_torch_and_puts_nan_last():
    x = np.random.RandomState(6).standard_normal((5, 300)).astype(np.float32)
    out, _ = check_op(flow.sort, lambda a: np.sort(a, axis=-1), inputs=[x],
                      multi_device=False)
    np.testing.assert_array_equal(out, torch.sort(torch.from_numpy(x), dim=-1).values.numpy())
    with_nan = np.array([[3.0, np.nan, -1.0, 2.0]], dtype=np.float32)
    check_op(flow.sort, lambda a: np.sort(a, axis=-1), inputs=[with_nan],
             multi_device=False)


def _job_raising(shape, body, dtype=flow.float32):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape, dtype=dtype)) -> tp.Numpy:
        body(x)
        return x

    job(np.zeros(shape, flow.convert_oneflow_dtype_to_numpy_dtype(dtype)))


def test_errors():
    def body(x):
        with pytest.raises(ValueError, match=r"argmax: axis 2 is out of range.*\(2, 3\)"):
            flow.math.argmax(x, axis=2)
        with pytest.raises(ValueError, match=r"top_k: k = 0 must be at least 1"):
            flow.math.top_k(x, k=0)
        with pytest.raises(TypeError, match="top_k: k must be an int"):
            flow.math.top_k(x, k=1.5)
        empty = flow.constant(1.0, dtype=flow.float32, shape=(2, 0))
        with pytest.raises(ValueError, match=r"top_k: axis 1 of \(2, 0\) is empty, so it has no "
                                             r"top 1"):
            flow.math.top_k(empty, k=1)
        with pytest.raises(ValueError, match='sort: direction must be "ASCENDING" or'):
            flow.sort(x, direction="UP")
        with pytest.raises(ValueError, match=r"argsort: axis -3 is out of range"):
            flow.argsort(x, axis=-3)

    _job_raising((2, 3), body)


def test_uint8_is_rejected_by_name():
    def body(x):
        with pytest.raises(TypeError, match="argmax.*uint8"):
            flow.math.argmax(x)

    _job_raising((2, 3), body, flow.uint8)


def test_top_k_accepts_both_oneflow_signatures():
    """top_k(input, k, sorted) (OneFlow 0.3's math_ops) and top_k(input, axis, k, sorted) (its
    later test_top_k calls it so, positionally) give the same indices."""
    x = _values((4, 5, 6), "float32", seed=3)
    check_op(lambda b: flow.math.top_k(b, 1, 3, True), lambda a: _numpy_top_k(a, 3, 1),
             inputs=[x], multi_device=False)
    check_op(lambda b: flow.math.top_k(b, 0, 2), lambda a: _numpy_top_k(a, 2, 0),
             inputs=[x], multi_device=False)
    check_op(lambda b: flow.math.top_k(b, -1, 50, True, "TopK_named"),
             lambda a: _numpy_top_k(a, 6, -1), inputs=[x], multi_device=False)
    check_op(lambda b: flow.math.top_k(b, 2, True), lambda a: _numpy_top_k(a, 2, -1),
             inputs=[x], multi_device=False)


def test_top_k_beyond_the_axis_takes_all_of_it():
    """As OneFlow's top_k: k larger than the axis is the whole axis, sorted."""
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    out, _ = check_op(lambda b: flow.math.top_k(b, k=5), lambda a: _numpy_top_k(a, 3), inputs=[x])
    np.testing.assert_array_equal(out, [[0, 2, 1], [1, 2, 0]])
