"""Values at the edges that used to crash, wrap or hang: integer division of the lowest value by
-1, integer scalars and clip bounds beyond the dtype, flow.range beyond its dtype or int64,
NaN in combined_margin_loss, huge compute thread pools, JPEG headers claiming huge images,
float64 feeds beyond float32, NaN or negative learning rates, integer division by the scalar 0,
nested global functions, and bad optimizer / initializer / checkpoint / attribute arguments.
Each gives the numpy result or a clear error."""
import io

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import run_op


def _build(fn, *arrays):
    return run_op(fn, list(arrays), train=False)[0]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_floordiv_and_mod_of_the_lowest_value_by_minus_one_wrap_as_numpy(dtype):
    x = np.array([np.iinfo(dtype).min, -7, 7, 0], dtype)
    y = np.full(4, -1, dtype)
    with np.errstate(over="ignore"):
        expected_div, expected_mod = x // y, x % y
    np.testing.assert_array_equal(_build(flow.math.floordiv, x, y), expected_div)
    np.testing.assert_array_equal(_build(flow.math.mod, x, y), expected_mod)
    np.testing.assert_array_equal(_build(lambda a: flow.math.floordiv(a, -1), x), expected_div)


def test_integer_scalar_beyond_the_dtype_is_an_error():
    x = np.array([1, 2], np.int32)
    with pytest.raises(ValueError, match=r"scalar_add: the scalar 1099511627776 does not fit "
                                         r"int32's range"):
        _build(lambda a: a + 2 ** 40, x)
    with pytest.raises(ValueError, match="scalar_mul: the scalar .* does not fit int64's range"):
        _build(lambda a: a * 2 ** 70, x.astype(np.int64))
    np.testing.assert_array_equal(_build(lambda a: a + (2 ** 31 - 3), x), [2 ** 31 - 2, 2 ** 31 - 1])


def test_clip_by_value_of_integers_uses_the_integers_inside_the_bounds():
    x = np.array([1, -5, 127, -128], np.int8)
    np.testing.assert_array_equal(_build(lambda a: flow.clip_by_value(a, 0, 300), x),
                                  np.clip(x, 0, 127))
    x32 = np.array([0, 1, 3, -9], np.int32)
    np.testing.assert_array_equal(_build(lambda a: flow.clip(a, 0.5, 1.5), x32), [1, 1, 1, 1])
    np.testing.assert_array_equal(
        _build(lambda a: flow.clip_by_value(a, -2 ** 40, float("inf")), x32), x32)
    with pytest.raises(ValueError, match="clip_by_value: max_value is NaN"):
        _build(lambda a: flow.clip_by_value(a, 0, float("nan")), x32)


def test_range_beyond_its_dtype_is_an_error_and_huge_steps_work():
    with pytest.raises(ValueError, match=r"values from 0 to 299 do not fit int8's range"):
        _build(lambda a: flow.range(0, 300, 1, dtype=flow.int8), np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="too many"):
        _build(lambda a: flow.range(0.0, 1e30, 1.0, dtype=flow.float32), np.zeros(1, np.float32))
    out = _build(lambda a: flow.range(0, 5, 2 ** 63 - 1, dtype=flow.int64), np.zeros(1, np.float32))
    np.testing.assert_array_equal(out, [0])


def test_combined_margin_loss_keeps_nan_in_its_column():
    x = np.array([[0.3, np.nan, 0.2], [0.1, 0.2, np.inf]], np.float32)
    label = np.array([0, 1], np.int32)
    out = _build(lambda t, l: flow.combined_margin_loss(t, l, m2=0.5), x, label)
    expected = x.copy()
    expected[0, 0] = np.cos(np.arccos(0.3) + 0.5)
    expected[1, 1] = np.cos(np.arccos(0.2) + 0.5)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_huge_compute_thread_pool_is_refused():
    flow.clear_default_session()
    with pytest.raises(ValueError, match="compute_thread_pool_size: 100000 threads per device"):
        flow.config.compute_thread_pool_size(100000)
    flow.clear_default_session()


def test_jpeg_header_claiming_a_huge_image_is_refused():
    image = pytest.importorskip("PIL.Image")
    if not flow._oneflow_internal.image_decoding_available():
        pytest.skip("built without libjpeg")
    buffer = io.BytesIO()
    image.fromarray(np.zeros((8, 8, 3), np.uint8), "RGB").save(buffer, format="JPEG")
    data = bytearray(buffer.getvalue())
    sof = data.index(b"\xff\xc0")  # baseline frame header: length(2) precision(1) h(2) w(2)
    data[sof + 5:sof + 9] = (65500).to_bytes(2, "big") * 2
    with pytest.raises(ValueError, match="claims 65500 x 65500 pixels"):
        flow._oneflow_internal.decode_images([bytes(data)], "RGB", "test")


def test_bad_initializer_scheduler_and_layer_arguments():
    with pytest.raises(ValueError, match="variance_scaling_initializer: scale must be a positive"):
        flow.variance_scaling_initializer(scale=-1.0)
    with pytest.raises(ValueError, match="PolynomialScheduler: power must be >= 0"):
        flow.optimizer.PolynomialScheduler(0.1, 100, power=-1.0)
    with pytest.raises(TypeError, match="dense: activation must be a callable"):
        _build(lambda a: flow.layers.dense(a, 4, activation="relu"), np.zeros((2, 3), np.float32))


def test_checkpoint_get_of_a_folder_that_is_not_a_checkpoint(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="is not a checkpoint"):
        flow.checkpoint.get(str(tmp_path))


def test_optimizer_variables_may_be_a_function_as_in_oneflow_03():
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        a = flow.get_variable("a", shape=(2,), initializer=flow.ones_initializer())
        b = flow.get_variable("b", shape=(2,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_sum(a * x + b * x)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]),
                           variables=lambda: ["a"]).minimize(loss)
        return loss

    job(np.ones(2, np.float32))
    values = flow.get_all_variables()
    np.testing.assert_allclose(values["a"].numpy(), [0.5, 0.5])
    np.testing.assert_allclose(values["b"].numpy(), [1.0, 1.0])


def test_constant_like_and_pad_values_beyond_an_integer_dtype():
    x = np.array([1, 2], np.int32)
    with pytest.raises(ValueError, match=r"constant_like: value 1099511627776 is out of range"):
        _build(lambda a: flow.constant_like(a, 2 ** 40, dtype=flow.int32), x)
    with pytest.raises(ValueError, match=r"flow.constant: value nan is not a finite number"):
        _build(lambda a: flow.constant(float("nan"), dtype=flow.int32, shape=(2,)), x)
    with pytest.raises(ValueError, match=r"pad: value -129.5 is out of range \[-128, 127\]"):
        _build(lambda a: flow.pad(a, [(1, 0)], constant_value=-129.5),
               np.array([1, 2], np.int8))


def test_integer_fill_values_truncate_toward_zero():
    """A float fill value for an integer blob is truncated toward zero, as OneFlow 0.3 (and
    int() in Python) converts it: pad, constant, constant_like, masked_fill."""
    x = np.array([1, 2], np.int32)
    np.testing.assert_array_equal(
        _build(lambda a: flow.pad(a, [(1, 1)], constant_value=-1.5), x), [-1, 1, 2, -1])
    np.testing.assert_array_equal(
        _build(lambda a: flow.constant(2.9, dtype=flow.int32, shape=(2,)), x), [2, 2])
    np.testing.assert_array_equal(_build(lambda a: flow.constant_like(a, -2.5), x), [-2, -2])
    np.testing.assert_array_equal(
        _build(lambda a, m: flow.masked_fill(a, m, -5.5), x, np.array([1, 0], np.int8)), [-5, 2])


def test_user_variable_named_like_an_optimizer_state_is_refused():
    flow.clear_default_session()

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
        clash = flow.get_variable("w-momentum", shape=(2,), trainable=False,
                                  initializer=flow.constant_initializer(5.0))
        loss = flow.math.reduce_sum(w * x + clash)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0.9).minimize(loss)
        return loss

    with pytest.raises(ValueError, match="'w-momentum' has the name of the optimizer's momentum "
                                         "state of variable 'w'"):
        job(np.ones(2, np.float32))


def test_minimize_arguments():
    flow.clear_default_session()

    @flow.global_function(type="train")
    def twice(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_sum(w * x)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(
            [loss, loss])
        return loss

    with pytest.raises(ValueError, match="minimize: a loss is given twice"):
        twice(np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"weight_decay_excludes: '\[unclosed' is not a regular"):
        flow.optimizer.AdamW(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                             weight_decay=0.1, weight_decay_excludes=["[unclosed"])


def test_corrupt_checkpoint_meta_and_ofrecord_length(tmp_path):
    from oneflow.framework import ofrecord_reader

    variable = tmp_path / "ckpt" / "w"
    variable.mkdir(parents=True)
    (variable / "meta").write_bytes(b"\xff\xfe\x00garbage")
    (variable / "out").write_bytes(b"\0" * 8)
    (tmp_path / "ckpt" / "snapshot_done").write_text("")
    with pytest.raises(ValueError, match="cannot read checkpoint file"):
        flow.checkpoint.get(str(tmp_path / "ckpt"))["w"].numpy()
    part = tmp_path / "part-0"
    part.write_bytes((2 ** 62).to_bytes(8, "little") + b"abc")
    with pytest.raises(ValueError, match=r"claims 4611686018427387904 bytes"):
        list(ofrecord_reader.read_part(str(part)))


def test_float64_values_beyond_a_float32_placeholder_are_an_error():
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
        return x * 2

    big = np.finfo(np.float32).max
    # The float32 maximum, and values that round to it, convert; inf and NaN stay themselves.
    np.testing.assert_array_equal(job(np.array([float(big), np.inf, 1.0])), [np.inf, np.inf, 2])
    assert np.isnan(job(np.array([np.nan, 0.0, 0.0]))[0])
    with pytest.raises(ValueError, match=r"argument 'x'.* 1 finite values beyond float32's range "
                                         r"\(the first, 1e\+39, would become inf\)"):
        job(np.array([1.0, 1e39, -2.0]))
    with pytest.raises(ValueError, match=r"2 finite values beyond float32's range"):
        job(np.array([-1e300, 1e39, np.inf]))


@pytest.mark.parametrize("make, message", [
    (lambda: flow.optimizer.PiecewiseConstantScheduler([10], [0.1, float("nan")]),
     "values must be a finite number, got nan"),
    (lambda: flow.optimizer.PiecewiseConstantScheduler([], [-0.1]), "values must be >= 0"),
    (lambda: flow.optimizer.CosineScheduler(float("inf"), 10), "base_lr must be a finite"),
    (lambda: flow.optimizer.CosineScheduler(10 ** 400, 10), "base_lr must be a finite"),
    (lambda: flow.optimizer.ExponentialScheduler(0.1, 10, -0.5), "decay_rate must be > 0"),
    (lambda: flow.optimizer.InverseTimeScheduler(0.1, 10, -0.5), "decay_rate must be >= 0"),
    (lambda: flow.optimizer.PiecewiseScalingScheduler(0.1, [5], -1.0), "scale must be >= 0"),
    (lambda: flow.optimizer.PolynomialScheduler(0.1, 10, end_learning_rate=-1.0),
     "end_learning_rate must be >= 0"),
    (lambda: flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                                 beta1=float("nan")), "beta1 must be a finite number"),
], ids=["nan value", "negative value", "inf base", "huge int base", "exponential",
        "inverse time", "scaling", "polynomial end", "adam beta"])
def test_learning_rates_that_would_be_nan_or_negative_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_learning_rate_rules_accept_the_usual_schedules():
    flow.optimizer.ExponentialScheduler(0.1, 10, 0.96)
    flow.optimizer.NaturalExpScheduler(0.1, 10, 0.5)
    flow.optimizer.InverseTimeScheduler(0.1, 10, 0.0)
    flow.optimizer.PiecewiseConstantScheduler([5], [0.1, 0.0])


def test_integer_floordiv_and_mod_by_the_scalar_zero_raise():
    x = np.array([1, 2], np.int32)
    with pytest.raises(ZeroDivisionError, match=r"flow.math.floordiv: integer division of .* "
                                                r"\(int32\) by the scalar 0"):
        _build(lambda a: a // 0, x)
    with pytest.raises(ZeroDivisionError, match="flow.math.mod"):
        _build(lambda a: flow.math.mod(a, 0), x)
    # float blobs follow IEEE (inf, nan), as numpy does
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(_build(lambda a: a // 0.0, x.astype(np.float32)),
                                      x.astype(np.float32) // 0.0)


def test_reverse_of_an_axis_named_twice_is_an_error():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(ValueError, match=r"reverse: axis \[1, -1\] names axis 1 twice"):
        _build(lambda a: flow.reverse(a, [1, -1]), x)
    np.testing.assert_array_equal(_build(lambda a: flow.reverse(a, [0, -1]), x), x[::-1, ::-1])


def test_unclear_arguments_get_messages_naming_the_op():
    with pytest.raises(TypeError, match=r"placement devices must be a string like '0:0'.*got 0"):
        flow.scope.placement("cpu", 0)
    with pytest.raises(TypeError, match="enable_debug_mode: value must be a bool"):
        flow.config.enable_debug_mode("no")
    with pytest.raises(TypeError, match=r"op 'mm' \(matmul\): attribute 'alpha' expects a number, "
                                        r"got '2'"):
        _build(lambda a: flow.matmul(a, a, alpha="2", name="mm"), np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match=r"layers.conv2d: kernel_size must be >= 1 on every "
                                         r"spatial axis, got 0"):
        _build(lambda a: flow.layers.conv2d(a, 2, kernel_size=0),
               np.zeros((1, 1, 4, 4), np.float32))


def test_checkpoint_save_where_a_file_blocks_the_folder_names_the_call(tmp_path):
    flow.clear_default_session()

    @flow.global_function()
    def job() -> tp.Numpy:
        return flow.get_variable("w", shape=(2,), initializer=flow.ones_initializer())

    job()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match="flow.checkpoint.save: cannot write checkpoint .*File "
                                      "exists"):
        flow.checkpoint.save(str(tmp_path / "file" / "ckpt"))


def test_a_global_function_called_while_another_is_traced_is_an_error():
    flow.clear_default_session()

    @flow.global_function()
    def inner(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x + 1

    @flow.global_function()
    def outer(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return inner(x)

    with pytest.raises(RuntimeError, match="global function 'inner' was called inside global "
                                           "function 'outer' while it is traced"):
        outer(np.zeros(2, np.float32))
    np.testing.assert_array_equal(inner(np.zeros(2, np.float32)), [1, 1])


def _variable_job(initializer, dtype=flow.float32):
    flow.clear_default_session()

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder((1,), dtype=dtype)) -> tp.Numpy:
        return a + flow.get_variable("v", shape=(2,), dtype=dtype, initializer=initializer)

    return job(np.zeros(1, dtype.numpy_dtype))


def test_ranges_and_values_the_dtype_cannot_hold_are_refused():
    with pytest.raises(ValueError, match=r"random.uniform: the range \[-3e\+38, 3e\+38\) is wider "
                                         r"than float32's largest value"):
        _build(lambda a: a + flow.random.uniform((4,), -3e38, 3e38), np.zeros(1, np.float32))
    with pytest.raises(ValueError, match=r"get_variable 'v': random_uniform_initializer: the "
                                         r"range \[-1.7e\+308, 1.7e\+308\) is wider than "
                                         r"float64's"):
        _variable_job(flow.random_uniform_initializer(-1.7e308, 1.7e308), flow.float64)
    with pytest.raises(ValueError, match=r"constant_initializer\(9007199254740993\) for its int64 "
                                         r"value: the value is not exactly representable"):
        _variable_job(flow.constant_initializer(2 ** 53 + 1), flow.int64)
    np.testing.assert_array_equal(_variable_job(flow.constant_initializer(2 ** 53), flow.int64),
                                  [2 ** 53] * 2)
    for make in (flow.random_normal_initializer, flow.truncated_normal_initializer):
        with pytest.raises(ValueError, match="stddev must be finite, got nan"):
            make(0.0, float("nan"))
        with pytest.raises(TypeError, match="stddev must be a real number, got '1'"):
            make(0.0, "1")
    with pytest.raises(ValueError, match=r"seed 1208925819614629174706176 does not fit int64"):
        flow.random_normal_initializer(0, 1, seed=2 ** 80)
    with pytest.raises(ValueError, match=r"reshape: cannot reshape \(2, 3\) \(6 elements\) into "
                                         r"\(4294967296, 4294967296, 6\): its dimensions "
                                         r"multiply to more than 2\^63 elements"):
        _build(lambda a: flow.reshape(a, (2 ** 32, 2 ** 32, 6)), np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"split: num_or_size_splits must be an int or a list of "
                                        r"ints, got 2.0"):
        _build(lambda a: flow.split(a, 2.0)[0], np.zeros(4, np.float32))
    with pytest.raises(TypeError, match=r"layers.conv2d: activation must be a callable such as "
                                        r"flow.nn.relu, or None, got 'relu'"):
        _build(lambda a: flow.layers.conv2d(a, 1, 1, activation="relu"),
               np.zeros((1, 1, 2, 2), np.float32))


def test_an_integer_clip_passes_the_gradient_inside_its_bounds():
    # Integer gradients flow through casts, as in OneFlow 0.3: dy where 0 <= x <= 1, else 0.
    x = np.array([-1.0, 0.0, 1.0, 3.0], np.float32)
    _, gradients = run_op(
        lambda a: flow.cast(flow.clip_by_value(flow.cast(a, flow.int32), 0, 1), flow.float32),
        [x], differentiable=[0], weight=np.ones(4, np.float32))
    np.testing.assert_array_equal(gradients[0], [0.0, 1.0, 1.0, 0.0])


def test_composite_ops_name_themselves_in_their_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"masked_fill: x \(2, 3\) and mask \(4,\) do not "
                                         r"broadcast together"):
        _build(lambda a: flow.masked_fill(a, flow.constant(1, shape=(4,), dtype=flow.int8), 0.0),
               x)
    with pytest.raises(TypeError, match=r"stack: input 1 is float64 but input 0 is float32"):
        _build(lambda a: flow.stack([a, flow.cast(a, flow.float64)]), x)
