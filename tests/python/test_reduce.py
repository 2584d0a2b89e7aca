"""flow.math.reduce_sum / reduce_mean: axis None, int, list, negative; keepdims."""
import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], (1,), [0, 1, 2]]
REDUCTIONS = {
    "reduce_sum": (flow.math.reduce_sum, np.sum),
    "reduce_mean": (flow.math.reduce_mean, np.mean),
}


@DTYPES
@pytest.mark.parametrize("keepdims", [False, True], ids=["dropdims", "keepdims"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduce(name, axis, keepdims, dtype):
    flow_fn, numpy_fn = REDUCTIONS[name]
    numpy_axis = tuple(axis) if isinstance(axis, list) else axis
    out, _ = check_op(
        lambda x: flow_fn(x, axis=axis, keepdims=keepdims),
        lambda x: numpy_fn(x, axis=numpy_axis, keepdims=keepdims),
        [(2, 3, 4)], dtype, weight_output=True,
    )
    # check_op compares shapes with numpy's: a full reduction without keepdims gives a 0-d blob.
    reduced = range(3) if axis is None else [a % 3 for a in np.atleast_1d(axis)]
    assert out.size == 24 // np.prod([(2, 3, 4)[a] for a in reduced])


def test_reduce_sum_full_gradient_is_ones():
    _, gradients = check_op(flow.math.reduce_sum, np.sum, [(3, 2)])
    np.testing.assert_array_equal(gradients[0], np.ones((3, 2)))


def test_reduce_mean_full_gradient_is_one_over_count():
    _, gradients = check_op(flow.math.reduce_mean, np.mean, [(3, 2)])
    np.testing.assert_allclose(gradients[0], np.full((3, 2), 1 / 6), rtol=1e-12)


def test_reduce_axis_out_of_range():
    import oneflow.typing as tp

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.math.reduce_sum(x, axis=2)

    with pytest.raises(ValueError, match="axis 2"):
        job(np.zeros((2, 3), np.float32))


# --- The whole family: max, min, prod, any, all and the composites --------------------------

def _numpy_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _variance(x, axis=None, keepdims=False):
    return np.var(x, axis=axis, keepdims=keepdims)


def _logsumexp(x, axis=None, keepdims=False):
    peak = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _euclidean_norm(x, axis=None, keepdims=False):
    return np.sqrt(np.sum(np.square(x), axis=axis, keepdims=keepdims))


FAMILY = {
    "reduce_max": (flow.math.reduce_max, np.max),
    "reduce_min": (flow.math.reduce_min, np.min),
    "reduce_prod": (flow.math.reduce_prod, np.prod),
    "reduce_variance": (flow.math.reduce_variance, _variance),
    "reduce_std": (flow.math.reduce_std, np.std),
    "reduce_logsumexp": (flow.math.reduce_logsumexp, _logsumexp),
    "reduce_euclidean_norm": (flow.math.reduce_euclidean_norm, _euclidean_norm),
    "two_stage_reduce_max": (flow.math.two_stage_reduce_max, np.max),
    "two_stage_reduce_min": (flow.math.two_stage_reduce_min, np.min),
}
# (axis, keepdims); the composites get the multi-device pass on the first case (their parts,
# reduce_sum/max and the elementwise ops, get it on every case).
FAMILY_CASES = [(1, False), (None, False), ([0, 2], True), (-1, True)]
COMPOSITES = {"reduce_variance", "reduce_std", "reduce_logsumexp", "reduce_euclidean_norm"}


@pytest.mark.parametrize("axis, keepdims", FAMILY_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(FAMILY))
def test_reduce_family(name, axis, keepdims):
    flow_fn, numpy_fn = FAMILY[name]
    numpy_axis = _numpy_axis(axis)
    # Distinct values (no ties), so max/min are differentiable where finite differences look.
    values = np.random.RandomState(3).permutation(24).reshape(2, 3, 4) / 12.0 - 0.95
    check_op(lambda x: flow_fn(x, axis=axis, keepdims=keepdims),
             lambda x: numpy_fn(x, axis=numpy_axis, keepdims=keepdims),
             inputs=[values], weight_output=True,
             multi_device=name not in COMPOSITES or (axis, keepdims) == FAMILY_CASES[0])


@pytest.mark.parametrize("split_axis", [1, 2])
@pytest.mark.parametrize("name", ["two_stage_reduce_max", "two_stage_reduce_min"])
def test_two_stage_reduce_of_an_input_split_on_a_reduced_axis(name, split_axis):
    """OneFlow 0.3's test_two_stage_reduce: the input hinted split on a reduced axis over the
    devices, many ties; the gradient is shared equally among all the ties of an output."""
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    flow_fn, numpy_fn = FAMILY[name]
    x = np.random.RandomState(5).randint(0, 4, size=(2, 6, 4)).astype(np.float32)
    seen = {}

    @flow.global_function(type="train")
    def job(x_blob: tp.Numpy.Placeholder((2, 6, 4))) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            x_blob += flow.get_variable("v", shape=(1,), initializer=flow.zeros_initializer())
        with flow.scope.placement("cpu", "0:0-1"):
            out = flow_fn(x_blob.with_distribute(flow.distribute.split(split_axis)),
                          axis=[1, 2], keepdims=True)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                               momentum=0).minimize(out)
            flow.watch_diff(x_blob, lambda diff: seen.setdefault("dx", diff.numpy()))
            return out

    out = job(x)
    expected = numpy_fn(x, axis=(1, 2), keepdims=True)
    np.testing.assert_array_equal(out, expected)
    ties = x == expected
    np.testing.assert_allclose(seen["dx"], ties / ties.sum(axis=(1, 2), keepdims=True),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=str)
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min", "reduce_prod", "reduce_sum"])
def test_reduce_other_dtypes(name, dtype):
    flow_fn = getattr(flow.math, name)
    numpy_fn = {"reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod,
                "reduce_sum": np.sum}[name]
    x = np.random.RandomState(1).randint(-3, 4, size=(3, 4, 5)).astype(dtype)
    check_op(lambda b: flow_fn(b, axis=[0, 2]),
             lambda a: numpy_fn(a, axis=(0, 2)).astype(dtype), inputs=[x])


@pytest.mark.parametrize("axis", [None, 0, [1, 2], -1], ids=str)
@pytest.mark.parametrize("name", ["reduce_any", "reduce_all"])
def test_reduce_any_all(name, axis):
    flow_fn = getattr(flow.math, name)
    numpy_fn = {"reduce_any": np.any, "reduce_all": np.all}[name]
    x = (np.random.RandomState(2).rand(3, 4, 5) < 0.7).astype(np.float32)
    x[0] = 1.0  # some all-true rows
    x[2, 1] = 0.0  # and some all-false ones
    check_op(lambda b: flow_fn(b, axis=axis, keepdims=False),
             lambda a: numpy_fn(a, axis=_numpy_axis(axis)).astype(np.int8), inputs=[x])


def test_reduce_any_all_of_integers():
    x = np.array([[0, 0, 3], [0, 0, 0], [1, 2, 3]], dtype=np.int32)
    check_op(lambda b: flow.math.reduce_any(b, axis=1),
             lambda a: np.any(a, axis=1).astype(np.int8), inputs=[x])
    check_op(lambda b: flow.math.reduce_all(b, axis=1),
             lambda a: np.all(a, axis=1).astype(np.int8), inputs=[x])


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                  "reduce_prod", "reduce_logsumexp"])
def test_empty_axis_list_reduces_nothing(name):
    x = np.random.RandomState(0).uniform(-1, 1, size=(2, 3))
    check_op(lambda b: getattr(flow.math, name)(b, axis=[]), lambda a: a, inputs=[x])


def test_empty_axis_list_of_the_other_reductions():
    x = np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 4.0]])
    check_op(lambda b: flow.math.reduce_any(b, axis=[]), lambda a: (a != 0).astype(np.int8),
             inputs=[x], check_backward=False)
    check_op(lambda b: flow.math.reduce_all(b, axis=[]), lambda a: (a != 0).astype(np.int8),
             inputs=[x], check_backward=False)
    for name in ["reduce_std", "reduce_variance"]:
        check_op(lambda b: getattr(flow.math, name)(b, axis=[]), np.zeros_like, inputs=[x],
                 differentiable=[], multi_device=False)
    check_op(lambda b: flow.math.reduce_euclidean_norm(b, axis=[]), np.abs, inputs=[x],
             check_backward=False, multi_device=False)


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_gradient_is_shared_among_ties(name):
    # OneFlow's rule (as TensorFlow's): dy / (number of elements equal to the result) each.
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, -1.0, 4.0]])
    x = x if name == "reduce_max" else -x
    numpy_fn = np.max if name == "reduce_max" else np.min
    _, gradients = check_op(lambda b: getattr(flow.math, name)(b, axis=1),
                            lambda a: numpy_fn(a, axis=1), inputs=[x], check_backward=False)
    expected = np.array([[0, 0.5, 0.5, 0], [0.25, 0.25, 0.25, 0.25], [0, 1, 0, 0]])
    np.testing.assert_allclose(gradients[0], expected, rtol=1e-12)


def test_max_of_nan_is_nan():
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    out, _ = check_op(lambda b: flow.math.reduce_max(b, axis=1), lambda a: np.max(a, axis=1),
                      inputs=[x], check_backward=False, multi_device=False)
    assert np.isnan(out[0]) and out[1] == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_long_rows_with_nan_and_infinities_match_numpy(dtype):
    # Rows of 1000 (31 whole vector blocks of lanes and a tail of 8): NaN in the first lane, the
    # last lane of a block, mid-row and the tail; rows of infinities; one row of -inf only.
    import oneflow.typing as tp

    rng = np.random.RandomState(3)
    x = rng.standard_normal((9, 1000)).astype(dtype)
    for row, column in enumerate([0, 31, 500, 995]):
        x[row, column] = np.nan
    x[4, 10], x[4, 700] = np.inf, -np.inf
    x[5, :] = -np.inf
    x[6, 999] = np.inf
    x[7, 3] = -np.inf
    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=flow.float32 if dtype == np.float32
                                     else flow.float64)) -> tp.Numpy:
        return flow.concat([flow.reshape(flow.math.reduce_max(b, axis=1), (9, 1)),
                            flow.reshape(flow.math.reduce_min(b, axis=1), (9, 1)),
                            flow.reshape(flow.cast(flow.math.argmax(b, axis=1), b.dtype), (9, 1)),
                            flow.reshape(flow.cast(flow.math.argmin(b, axis=1), b.dtype), (9, 1))],
                           axis=1)

    out = job(x)
    np.testing.assert_array_equal(out[:, 0], np.max(x, axis=1))
    np.testing.assert_array_equal(out[:, 1], np.min(x, axis=1))
    np.testing.assert_array_equal(out[:, 2], np.argmax(x, axis=1))
    np.testing.assert_array_equal(out[:, 3], np.argmin(x, axis=1))


@pytest.mark.parametrize("length", [5, 16, 37, 64, 128])
def test_short_rows_with_nan_and_infinities_match_numpy(length):
    # Float rows of up to 128 are reduced 8 at a time (17 rows: two groups and one row alone):
    # NaN in a vector part and in a tail, each in a different row of a group, infinities, rows
    # of -inf and +inf only, and a NaN next to an inf.
    import oneflow.typing as tp

    rng = np.random.RandomState(length)
    x = rng.standard_normal((17, length)).astype(np.float32)
    x[1, 0] = np.nan
    x[6, length - 1] = np.nan
    x[10, length // 2] = np.nan
    x[3, length // 3], x[3, length - 1] = np.inf, -np.inf
    x[4, :] = -np.inf
    x[12, :] = np.inf
    x[13, 0], x[13, length - 1] = np.inf, np.nan
    x[16, length - 1] = np.nan
    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape)) -> tp.Numpy:
        return flow.stack([flow.math.reduce_max(b, axis=1), flow.math.reduce_min(b, axis=1),
                           flow.math.reduce_sum(b, axis=1)], axis=1)

    out = job(x)
    np.testing.assert_array_equal(out[:, 0], np.max(x, axis=1))
    np.testing.assert_array_equal(out[:, 1], np.min(x, axis=1))
    # Sums: within a few float32 roundings of the sum of magnitudes (rows cancel).
    with np.errstate(invalid="ignore"):  # inf - inf in the references
        exact = x.astype(np.float64).sum(axis=1)
        bound = 4 * np.finfo(np.float32).eps * np.abs(x.astype(np.float64)).sum(axis=1)
    finite = np.isfinite(exact)
    np.testing.assert_array_equal(out[~finite, 2], exact[~finite])
    assert np.all(np.abs(out[finite, 2] - exact[finite]) <= bound[finite])


ROW_LENGTHS = list(range(1, 70)) + [95, 96, 97, 127, 128, 129, 255, 256, 257, 300]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64],
                         ids=["float32", "float64", "int32", "int64"])
def test_rows_of_every_short_length_match_numpy(dtype):
    # Last-axis sum, max and min of 21 rows of every length up to 69 and around the lane, short
    # row and block sizes (32 lanes, float rows of up to 128 summed 8 rows at a time, float
    # blocks of 256): the lanes' vector merge, the 8-row fold, the tails and their sums.
    from typing import Tuple

    import oneflow.typing as tp

    rng = np.random.RandomState(11)
    if np.issubdtype(dtype, np.integer):
        x = rng.randint(-1000, 1000, size=(21, max(ROW_LENGTHS))).astype(dtype)
    else:
        x = rng.standard_normal((21, max(ROW_LENGTHS))).astype(dtype)
    flow_type = {np.float32: flow.float32, np.float64: flow.float64, np.int32: flow.int32,
                 np.int64: flow.int64}[dtype]
    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=flow_type)
            ) -> Tuple[(tp.Numpy,) * (3 * len(ROW_LENGTHS))]:
        outs = []
        for length in ROW_LENGTHS:
            row = flow.slice_v2(b, [(None, None, None), (0, length, 1)])
            outs += [flow.math.reduce_sum(row, axis=1), flow.math.reduce_max(row, axis=1),
                     flow.math.reduce_min(row, axis=1)]
        return tuple(outs)

    outs = job(x)
    for index, length in enumerate(ROW_LENGTHS):
        rows = x[:, :length]
        total, largest, smallest = outs[3 * index: 3 * index + 3]
        if np.issubdtype(dtype, np.integer):
            np.testing.assert_array_equal(total, rows.sum(axis=1, dtype=dtype),
                                          "sum of %d" % length)
        else:
            np.testing.assert_allclose(total, rows.astype(np.float64).sum(axis=1),
                                       rtol=1e-6, atol=1e-5, err_msg="sum of %d" % length)
        np.testing.assert_array_equal(largest, rows.max(axis=1), "max of %d" % length)
        np.testing.assert_array_equal(smallest, rows.min(axis=1), "min of %d" % length)


def test_prod_gradient_with_zeros_is_exact():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 4.0]])
    _, gradients = check_op(lambda b: flow.math.reduce_prod(b, axis=1),
                            lambda a: np.prod(a, axis=1), inputs=[x], check_backward=False)
    expected = np.array([[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [-8.0, 6.0, -3.0]])
    np.testing.assert_allclose(gradients[0], expected, rtol=1e-12)


def test_logsumexp_of_large_values_does_not_overflow():
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]])
    check_op(lambda b: flow.math.reduce_logsumexp(b, axis=1), lambda a: _logsumexp(a, axis=1),
             inputs=[x], check_backward=False)


@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_of_infinite_rows_matches_torch(keepdims):
    import torch

    x = np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0],
                  [-np.inf, 3.0, 1.0]], np.float32)
    got = _run_single(lambda b: flow.math.reduce_logsumexp(b, axis=1, keepdims=keepdims), x)
    expected = torch.logsumexp(torch.from_numpy(x), 1, keepdim=keepdims).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda e: flow.math.reduce_mean(e, axis=1), lambda e: flow.math.reduce_variance(e, axis=1),
    lambda e: flow.math.reduce_std(e, axis=1), lambda e: flow.nn.moments(e, [1])[0],
])
def test_mean_over_no_elements_is_nan(fn):
    # numpy's and PyTorch's 0 / 0 (an empty axis is made in the job; placeholders refuse one).
    out = _run_single(lambda b: fn(flow.constant(1.0, dtype=flow.float32, shape=(2, 0)) + b),
                      np.zeros((2, 1), np.float32))
    assert out.shape == (2,) and np.isnan(out).all()


# --- Precision: float32 sums of millions of elements ----------------------------------------

def _run_single(fn, x):
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function()
    def job(b: tp.Numpy.Placeholder(x.shape, dtype=flow.float32)) -> tp.Numpy:
        return fn(b)

    return job(x)


def test_float32_sum_of_4m_mixed_magnitudes_matches_float64():
    rng = np.random.RandomState(7)
    n = 1 << 22
    x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n) + 0.5).astype(np.float32)
    expected = np.sum(x.astype(np.float64))
    for shape, axis in [((n,), None), ((2048, 2048), [0, 1]), ((4, n // 4), 1)]:
        out = _run_single(lambda b: flow.math.reduce_sum(b, axis=axis), x.reshape(shape))
        total = np.sum(out.astype(np.float64))
        assert abs(total - expected) <= 1e-6 * abs(expected), (shape, total, expected)
    columns = _run_single(lambda b: flow.math.reduce_sum(b, axis=0), x.reshape(4096, 1024))
    expected_columns = x.reshape(4096, 1024).astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(columns, expected_columns, rtol=1e-6,
                               atol=1e-6 * np.abs(x.reshape(4096, 1024)).sum(axis=0).max())
    mean = _run_single(lambda b: flow.math.reduce_mean(b), x)
    assert abs(mean.item() - expected / n) <= 1e-6 * abs(expected / n)


# --- Errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["reduce_max", "reduce_prod", "reduce_any", "reduce_std",
                                  "reduce_logsumexp"])
def test_reduce_family_axis_errors(name):
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        with pytest.raises(ValueError, match=r"%s: axis -3 is out of range.*\(2, 3\)" % name):
            getattr(flow.math, name)(x, axis=[0, -3])
        with pytest.raises(ValueError, match="%s: axis .* names an axis twice" % name):
            getattr(flow.math, name)(x, axis=[1, -1])
        with pytest.raises(TypeError, match="%s: axis must be None, an int or a list" % name):
            getattr(flow.math, name)(x, axis="1")
        return x

    job(np.zeros((2, 3), np.float32))


def test_reduce_dtype_errors():
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3), dtype=flow.int32)) -> tp.Numpy:
        with pytest.raises(TypeError, match=r"reduce_mean: needs a floating blob "
                                            r"\(float16, float32 or float64\), got int32"):
            flow.math.reduce_mean(x)
        with pytest.raises(TypeError, match="reduce_std: needs a floating blob"):
            flow.math.reduce_std(x, axis=0)
        return x

    job(np.zeros((2, 3), np.int32))
