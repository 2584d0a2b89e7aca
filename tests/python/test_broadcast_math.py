"""flow.math.add / subtract / multiply / divide with numpy broadcasting, and the blob operators
`+ - * /` with scalars on either side."""
import operator

import numpy as np
import pytest

import oneflow as flow
from op_checker import check_op

DTYPES = pytest.mark.parametrize("dtype", [flow.float32, flow.float64], ids=["float32", "float64"])

FUNCTIONS = {
    "add": (flow.math.add, np.add),
    "subtract": (flow.math.subtract, np.subtract),
    "multiply": (flow.math.multiply, np.multiply),
    "divide": (flow.math.divide, np.divide),
}
SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (3, 1)),
    ((4,), (3, 4)),
]


@DTYPES
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "%s_%s" % s)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_broadcast_binary(name, shapes, dtype):
    flow_fn, numpy_fn = FUNCTIONS[name]
    # Divisors in [0.5, 2): far from 0; numerators share the range (sign does not matter).
    low, high = (0.5, 2.0) if name == "divide" else (-1.0, 1.0)
    out, _ = check_op(flow_fn, numpy_fn, list(shapes), dtype, low=low, high=high)
    assert out.shape == np.broadcast_shapes(*shapes)


@DTYPES
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_blob_operators(name, dtype):
    python_operator = {"add": operator.add, "subtract": operator.sub,
                       "multiply": operator.mul, "divide": operator.truediv}[name]
    check_op(lambda x, y: python_operator(x, y), python_operator, [(3, 1), (4,)], dtype,
             low=0.5, high=2.0)


SCALAR_CASES = {
    "x+2": (lambda x: x + 2, None),
    "2+x": (lambda x: 2 + x, None),
    "x-3": (lambda x: x - 3, None),
    "2-x": (lambda x: 2 - x, None),
    "3*x": (lambda x: 3 * x, None),
    "x*-1.5": (lambda x: x * -1.5, None),
    "x/4": (lambda x: x / 4, None),
    "1/x": (lambda x: 1 / x, (0.5, 2.0)),
    "-x": (lambda x: -x, None),
    "x+=1": (None, None),
}


def _in_place_add(x):
    x += 1
    return x


@DTYPES
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_scalar_operand(case, dtype):
    function, positive_range = SCALAR_CASES[case]
    function = function or _in_place_add
    low, high = positive_range or (-1.0, 1.0)
    # The same Python lambda applied to a numpy array is the reference.
    check_op(function, function, [(2, 3)], dtype, low=low, high=high)


def test_scalar_operand_keeps_dtype():
    out, _ = check_op(lambda x: 1 / x, lambda x: 1 / x, [(3,)], flow.float64, low=0.5, high=2.0)
    assert out.dtype == np.float64


def test_operand_type_error():
    import oneflow.typing as tp

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x + "one"

    with pytest.raises(TypeError, match="str"):
        job(np.zeros(2, np.float32))
