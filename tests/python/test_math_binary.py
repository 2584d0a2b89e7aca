"""Binary math with numpy broadcasting: flow.math.pow / maximum / minimum / mod / floordiv,
the comparisons (int8 results, as OneFlow 0.3), logical_and / or / not, flow.where, add_n,
python scalars on either side, and the blob operators ** % // < <= > >= == != & |."""
import operator

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1))]
SHAPE_IDS = ["%s_%s" % shapes for shapes in SHAPES]


def _numpy_floordiv(x, y):
    return np.floor_divide(x, y)


# name -> (flow function, numpy reference, x domain, y domain).
ARITHMETIC = {
    "pow": (flow.math.pow, np.power, (0.5, 2.0), (-1.5, 1.5)),
    "maximum": (flow.math.maximum, np.maximum, (-1, 1), (-1, 1)),
    "minimum": (flow.math.minimum, np.minimum, (-1, 1), (-1, 1)),
    "mod": (flow.math.mod, np.mod, (-3, 3), (0.7, 1.9)),
    "mod_negative_divisor": (flow.math.mod, np.mod, (-3, 3), (-1.9, -0.7)),
    "floordiv": (flow.math.floordiv, _numpy_floordiv, (-3, 3), (0.7, 1.9)),
}


def _inputs(shapes, domains, dtype, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.uniform(low, high, size=shape).astype(dtype)
            for shape, (low, high) in zip(shapes, domains)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_arithmetic(name, shapes, dtype):
    flow_fn, numpy_fn, x_domain, y_domain = ARITHMETIC[name]
    inputs = _inputs(shapes, [x_domain, y_domain], dtype)
    out, _ = check_op(flow_fn, numpy_fn, inputs=inputs, multi_device=dtype == np.float64)
    assert out.shape == np.broadcast_shapes(*shapes)


@pytest.mark.parametrize("name", ["maximum", "minimum", "mod", "floordiv"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_arithmetic_integers(name, dtype):
    flow_fn, numpy_fn = ARITHMETIC[name][:2]
    x = np.array([[-7, -3, 0, 4, 9]], dtype)
    y = np.array([[2], [-3], [5]], dtype)
    check_op(flow_fn, numpy_fn, inputs=[x, y])


def test_integer_division_by_zero_gives_zero():
    x = np.array([5, -5, 0], np.int32)
    y = np.zeros(3, np.int32)
    check_op(flow.math.mod, lambda a, b: np.zeros_like(a), inputs=[x, y], multi_device=False)
    check_op(flow.math.floordiv, lambda a, b: np.zeros_like(a), inputs=[x, y], multi_device=False)


def test_maximum_minimum_route_gradient_to_the_chosen_input():
    x = np.array([[1.0, -2.0, 3.0, 0.5]])
    y = np.array([[0.0, 1.0, 5.0, -1.0]])
    _, gradients = check_op(flow.math.maximum, np.maximum, inputs=[x, y], multi_device=False)
    np.testing.assert_array_equal(gradients[0], [[1, 0, 0, 1]])
    np.testing.assert_array_equal(gradients[1], [[0, 1, 1, 0]])
    _, gradients = check_op(flow.math.minimum, np.minimum, inputs=[x, y], multi_device=False)
    np.testing.assert_array_equal(gradients[0], [[0, 1, 1, 0]])
    np.testing.assert_array_equal(gradients[1], [[1, 0, 0, 1]])


COMPARISONS = {
    "equal": (flow.math.equal, np.equal),
    "not_equal": (flow.math.not_equal, np.not_equal),
    "greater": (flow.math.greater, np.greater),
    "greater_equal": (flow.math.greater_equal, np.greater_equal),
    "less": (flow.math.less, np.less),
    "less_equal": (flow.math.less_equal, np.less_equal),
    "logical_and": (flow.math.logical_and, np.logical_and),
    "logical_or": (flow.math.logical_or, np.logical_or),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.int64])
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparison_gives_int8(name, dtype):
    flow_fn, numpy_fn = COMPARISONS[name]
    # Small integers so that ties occur; the second input broadcasts along axis 0.
    x = np.array([[0, 1, 2, -1], [2, 2, 0, 1], [-1, 0, 1, 2]], dtype)
    y = np.array([1, 2, 0, -1], dtype)
    # Not differentiable: the int8 output ends the gradient path.
    out, _ = check_op(flow_fn, lambda a, b: numpy_fn(a, b).astype(np.int8), inputs=[x, y],
                      check_backward=False, multi_device=dtype == np.float32)
    assert out.dtype == np.int8


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32])
def test_logical_not(dtype):
    x = np.array([[0, 1, -2], [3, 0, 0]], dtype)
    check_op(flow.math.logical_not, lambda a: np.logical_not(a).astype(np.int8), inputs=[x])


WHERE_SHAPES = [((3, 4), (3, 4), (3, 4)), ((3, 1), (3, 4), (4,)), ((4,), (2, 1, 4), (3, 1))]


@pytest.mark.parametrize("condition_dtype", [np.int8, np.int32])
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=lambda s: "_".join(map(str, s)))
def test_where(shapes, condition_dtype):
    rng = np.random.RandomState(1)
    condition = rng.randint(0, 2, size=shapes[0]).astype(condition_dtype)
    x = rng.uniform(-1, 1, size=shapes[1])
    y = rng.uniform(-1, 1, size=shapes[2])
    check_op(flow.where, lambda c, a, b: np.where(c != 0, a, b), inputs=[condition, x, y])


def test_where_with_scalar_and_float32():
    condition = np.array([[1, 0, 2]], np.int32)
    x = np.array([[1.5, 2.5, 3.5]], np.float32)
    check_op(lambda c, a: flow.where(c, a, 0.0), lambda c, a: np.where(c != 0, a, 0.0).astype(
        np.float32), inputs=[condition, x])


@pytest.mark.parametrize("count", [1, 2, 3])
def test_add_n(count):
    functions = {1: (lambda a: flow.math.add_n([a]), lambda a: a),
                 2: (lambda a, b: flow.math.add_n([a, b]), lambda a, b: a + b),
                 3: (lambda a, b, c: flow.math.add_n([a, b, c]), lambda a, b, c: a + b + c)}
    flow_fn, numpy_fn = functions[count]
    check_op(flow_fn, numpy_fn, [(3, 4)] * count, flow.float64)


SCALAR_CASES = {
    "x**2": (lambda x: x ** 2, (0.5, 2)),
    "x**-0.5": (lambda x: x ** -0.5, (0.5, 2)),
    "2**x": (lambda x: 2 ** x, (-1, 1)),
    "pow(x,3)": (None, (-1, 1)),
    "x%0.75": (lambda x: x % 0.75, (-2, 2)),
    "5%x": (lambda x: 5 % x, (0.7, 1.9)),
    "x//0.5": (lambda x: x // 0.5, (-2, 2)),
    "maximum(x,0.2)": (None, (-1, 1)),
}


def _scalar_function(case):
    if case == "pow(x,3)":
        return lambda x: flow.math.pow(x, 3), lambda x: np.power(x, 3)
    if case == "maximum(x,0.2)":
        return lambda x: flow.math.maximum(x, 0.2), lambda x: np.maximum(x, 0.2)
    function = SCALAR_CASES[case][0]
    return function, function


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_scalar_operand(case, dtype):
    flow_fn, numpy_fn = _scalar_function(case)
    low, high = SCALAR_CASES[case][1]
    check_op(flow_fn, numpy_fn, [(2, 3)], dtype, low=low, high=high,
             multi_device=dtype == flow.float64)


COMPARISON_OPERATORS = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne,
}


@pytest.mark.parametrize("symbol", sorted(COMPARISON_OPERATORS))
def test_comparison_operators(symbol):
    python_operator = COMPARISON_OPERATORS[symbol]
    x = np.array([[0.0, 1.0, 2.0], [2.0, -1.0, 1.0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    check_op(python_operator, lambda a, b: python_operator(a, b).astype(np.int8), inputs=[x, y],
             multi_device=False)
    check_op(lambda a: python_operator(a, 1.0),
             lambda a: python_operator(a, 1.0).astype(np.int8), inputs=[x], multi_device=False)
    check_op(lambda a: python_operator(1.0, a),
             lambda a: python_operator(1.0, a).astype(np.int8), inputs=[x], multi_device=False)


@pytest.mark.parametrize("symbol", ["&", "|"])
def test_logical_operators(symbol):
    # Elementwise logical and / or (nonzero is true) in int8, also with a scalar on either side.
    python_operator = operator.and_ if symbol == "&" else operator.or_
    numpy_op = np.logical_and if symbol == "&" else np.logical_or
    x = np.array([[0.0, 1.0, 2.5], [0.0, -1.0, 0.0]], np.float32)
    y = np.array([[1.0], [0.0]], np.float32)
    check_op(python_operator, lambda a, b: numpy_op(a, b).astype(np.int8), inputs=[x, y],
             multi_device=False)
    check_op(lambda a: python_operator(a, 0.0), lambda a: numpy_op(a, 0.0).astype(np.int8),
             inputs=[x], multi_device=False)
    check_op(lambda a: python_operator(1.0, a), lambda a: numpy_op(1.0, a).astype(np.int8),
             inputs=[x], multi_device=False)


def test_blob_stays_hashable_and_compares_to_none_by_identity():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        assert (x == None) is False  # noqa: E711 - the operator under test
        assert x != "text"
        assert {x: 1}[x] == 1
        return x

    job(np.zeros(2, np.float32))


def _run(function, *arrays):
    flow.clear_default_session()
    placeholders = [tp.Numpy.Placeholder(a.shape, dtype=flow.int32 if a.dtype == np.int32
                                         else flow.float32) for a in arrays]

    def body(*blobs):
        return function(*blobs)

    names = ["a%d" % i for i in range(len(arrays))]
    namespace = {"body": body}
    exec("def job(%s):\n    return body(%s)\n" % (", ".join(names), ", ".join(names)), namespace)
    job = namespace["job"]
    job.__annotations__ = dict(zip(names, placeholders), **{"return": tp.Numpy})
    return flow.global_function()(job)(*arrays)


def test_pow_of_non_broadcastable_shapes_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"broadcast_pow.*\(3, 4\).*\(5,\)|broadcast_pow.*3, 4.*5"):
        _run(flow.math.pow, np.ones((3, 4), np.float32), np.ones((5,), np.float32))


def test_pow_of_integers_is_a_type_error():
    with pytest.raises(TypeError, match=r"broadcast_pow.*int32"):
        _run(flow.math.pow, np.ones((3,), np.int32), np.ones((3,), np.int32))


def test_comparison_of_mixed_dtypes_is_a_type_error():
    with pytest.raises(TypeError, match=r"broadcast_less.*float32.*int32"):
        _run(flow.math.less, np.ones((3,), np.float32), np.ones((3,), np.int32))


def test_where_condition_must_be_integer():
    with pytest.raises(TypeError, match=r"where.*condition.*float32"):
        _run(flow.where, np.ones((3,), np.float32), np.ones((3,), np.float32),
             np.ones((3,), np.float32))


def test_where_with_only_x_is_refused():
    with pytest.raises(ValueError, match="both x and y, or neither"):
        _run(lambda c: flow.where(c, y=c), np.ones((3,), np.int32))
