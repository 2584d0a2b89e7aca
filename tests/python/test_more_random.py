"""flow.random.generate_random_batch_permutation_indices, flow.random.shuffle and
flow.nn.random_mask_like: valid permutations and masks, seeded sequences reproducible across
sessions and device counts, new draws each iteration, shuffle's gradient (op_checker), the
mask equal to dropout's for the same seed, errors."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_multi_device, check_op, run_job, run_op


def _run_steps(fn, x, steps, devices=None):
    """fn(x) in a predict job run `steps` times in a fresh session; returns the outputs."""
    flow.clear_default_session()
    if devices is not None:
        flow.config.cpu_device_num(devices)

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder(x.shape, dtype=flow.float32, batch_axis=None)) -> tp.Numpy:
        return fn(a)

    outputs = [job(x) for _ in range(steps)]
    flow.clear_default_session()
    return outputs


def _permutation(x, seed):
    return lambda a: flow.random.generate_random_batch_permutation_indices(a, seed=seed)


def test_permutation_is_a_permutation_that_changes_each_iteration():
    x = np.zeros((50, 3), np.float32)
    outputs = _run_steps(_permutation(x, 3), x, steps=3)
    for out in outputs:
        assert out.dtype == np.int32 and out.shape == (50,)
        np.testing.assert_array_equal(np.sort(out), np.arange(50))
    assert not np.array_equal(outputs[0], outputs[1])
    assert not np.array_equal(outputs[1], outputs[2])
    assert not np.array_equal(outputs[0], np.arange(50))


def test_seeded_permutations_reproduce_across_sessions_and_device_counts():
    x = np.zeros((20, 4), np.float32)
    first = _run_steps(_permutation(x, 42), x, steps=2)
    again = _run_steps(_permutation(x, 42), x, steps=2)
    other = _run_steps(_permutation(x, 43), x, steps=1)
    on_three = _run_steps(_permutation(x, 42), x, steps=2, devices=3)
    for a, b, c in zip(first, again, on_three):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(first[0], other[0])


def test_permutations_are_uniform():
    """Position 0 of 4000 permutations of 4 rows takes each row about 1000 times."""
    x = np.zeros((4, 1), np.float32)
    firsts = [out[0] for out in _run_steps(_permutation(x, 5), x, steps=4000)]
    counts = np.bincount(firsts, minlength=4)
    assert np.all(np.abs(counts - 1000) < 120), counts  # ~4.4 sigma
    pairs = {tuple(out[:2]) for out in _run_steps(_permutation(x, 6), x, steps=300)}
    assert len(pairs) == 12  # every ordered pair of distinct rows shows up


def test_shuffle_gathers_rows_by_the_seeded_permutation_with_its_gradient():
    x = np.random.RandomState(0).uniform(-1, 1, size=(6, 3))
    permutation = run_op(_permutation(x, 17), [x], train=False)[0]
    out, gradients = check_op(lambda a: flow.random.shuffle(a, seed=17), lambda a: a[permutation],
                              inputs=[x], weight_output=True)
    assert not np.array_equal(out, x)
    np.testing.assert_array_equal(np.sort(out, axis=0), np.sort(x, axis=0))


def test_shuffle_oneflow_example_integers():
    x = np.array([[1, 1, 1], [2, 2, 2], [3, 3, 3]], np.int32)
    out = run_op(lambda a: flow.random.shuffle(a, seed=1), [x], train=False)[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.sort(out[:, 0]), [1, 2, 3])
    assert (out == out[:, :1]).all()  # whole rows move


def test_permutation_errors():
    with pytest.raises(ValueError, match="generate_random_batch_permutation_indices: x must "
                                         "have at least one axis"):
        run_op(_permutation(None, 1), [np.float32(1.0)], train=False)
    with pytest.raises(TypeError, match="generate_random_batch_permutation_indices: seed must be "
                                        "an int"):
        run_op(_permutation(None, 1.5), [np.zeros(3, np.float32)], train=False)


def _mask(rate, seed):
    return lambda a: flow.nn.random_mask_like(a, rate=rate, seed=seed)


def test_random_mask_like_statistics_dtype_and_iterations():
    x = np.zeros((500, 200), np.float32)
    first, second = _run_steps(_mask(0.3, 8), x, steps=2)
    assert first.dtype == np.int8 and first.shape == (500, 200)
    assert set(np.unique(first)) == {0, 1}
    assert abs(first.mean() - 0.7) < 0.005  # 1e5 draws: 3 sigma is 0.0043
    correlation = np.corrcoef(first.ravel()[:-1], first.ravel()[1:])[0, 1]
    assert abs(correlation) < 0.02
    assert not np.array_equal(first, second)
    zero_rate, = _run_steps(_mask(0.0, 8), x, steps=1)
    assert (zero_rate == 1).all()


def test_random_mask_like_seed_reproduces_and_matches_dropout():
    x = np.random.RandomState(1).uniform(1, 2, size=(9, 7)).astype(np.float32)
    masks = _run_steps(_mask(0.5, 21), x, steps=2)
    again = _run_steps(_mask(0.5, 21), x, steps=2)
    on_two = _run_steps(_mask(0.5, 21), x, steps=2, devices=2)
    other = _run_steps(_mask(0.5, 22), x, steps=1)
    for a, b, c in zip(masks, again, on_two):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(masks[0], other[0])
    # flow.nn.dropout with the same seed and rate drops the same elements.
    dropped = run_op(lambda a: flow.nn.dropout(a, rate=0.5, seed=21), [x.astype(np.float64)],
                     differentiable=[0])[0]
    np.testing.assert_array_equal(dropped != 0, masks[0] == 1)


def test_random_mask_like_every_signature_gives_the_single_device_mask():
    x = np.random.RandomState(2).uniform(size=(5, 6))
    fn = _mask(0.4, 13)
    single = run_job(fn, [x], train=False)
    runs = check_multi_device(fn, [x], (single.output, {}), train=False, device_counts=(2, 3))
    signatures = {tuple(sorted(run.signature.items())) for run in runs
                  if run.op_type == "random_mask_like"}
    assert len(signatures) >= 3  # split on each axis and broadcast


@pytest.mark.parametrize("rate", [-0.1, 1.0, "0.5"])
def test_random_mask_like_rate_must_be_in_zero_one(rate):
    with pytest.raises(ValueError, match=r"random_mask_like: rate must be a number in \[0, 1\)"):
        run_op(_mask(rate, 1), [np.zeros(3, np.float32)], train=False)


def test_random_mask_like_noise_shape_is_not_supported():
    with pytest.raises(NotImplementedError, match="random_mask_like: noise_shape"):
        run_op(lambda a: flow.nn.random_mask_like(a, 0.5, noise_shape=[3]),
               [np.zeros(3, np.float32)], train=False)
