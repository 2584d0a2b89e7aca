"""flow.nn.CTCLoss / flow.ctc_loss (ops ctc_loss and ctc_loss_grad): losses and gradients
against torch.nn.functional.ctc_loss for every reduction, both dtypes, blank first and last,
repeated labels, impossible alignments with and without zero_infinity; the float64 gradient
through log_softmax against finite differences with the shared checker (which also runs every
SBP signature on 2-4 devices); and the errors, at trace time and at run time. Also
flow.nn.ctc_greedy_decoder (op ctc_greedy_decoder) against a NumPy best-path decoder."""
import typing

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op

NEG_INF = -np.inf


def numpy_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0):
    """The (N,) CTC losses by the alpha recursion in log space, one loop per element; an
    empty input aligns only with an empty target."""
    _, batch, _ = log_probs.shape
    losses = np.zeros(batch, np.float64)
    for b in range(batch):
        length, labels = int(input_lengths[b]), list(targets[b, :int(target_lengths[b])])
        extended = [blank]
        for label in labels:
            extended += [label, blank]
        if length == 0:
            losses[b] = 0.0 if not labels else np.inf
            continue
        alpha = np.full(len(extended), NEG_INF)
        alpha[0] = log_probs[0, b, blank]
        if labels:
            alpha[1] = log_probs[0, b, labels[0]]
        for t in range(1, length):
            previous = alpha
            alpha = np.full(len(extended), NEG_INF)
            for s, label in enumerate(extended):
                terms = [previous[s]]
                if s > 0:
                    terms.append(previous[s - 1])
                if s > 1 and label != blank and label != extended[s - 2]:
                    terms.append(previous[s - 2])
                alpha[s] = np.logaddexp.reduce(terms) + log_probs[t, b, label]
        losses[b] = -np.logaddexp.reduce(alpha[-2:] if labels else alpha[-1:])
    return losses


def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def run_ctc(log_probs, targets, input_lengths, target_lengths, train=True, **kwargs):
    """flow.nn.CTCLoss in a train job of a fresh session; returns (loss, d loss / d log_probs
    as flow.watch_diff sees it, or None when not training)."""
    flow.clear_default_session()
    seen = {}

    def placeholder(array):
        return tp.Numpy.Placeholder(array.shape, dtype=flow.int64 if array.dtype == np.int64
                                    else flow.int32 if array.dtype == np.int32
                                    else flow.float64 if array.dtype == np.float64
                                    else flow.float32)

    @flow.global_function(type="train" if train else "predict")
    def ctc_job(x: placeholder(log_probs), t: placeholder(targets),
                i: placeholder(input_lengths), l: placeholder(target_lengths)) -> tp.Numpy:
        if train:
            zero = flow.get_variable("zero", shape=x.shape, dtype=x.dtype,
                                     initializer=flow.zeros_initializer())
            x = x + zero
            flow.watch_diff(x, lambda diff: seen.__setitem__("diff", np.array(diff)))
        loss = flow.nn.CTCLoss(x, t, i, l, **kwargs)
        if train:
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]),
                               momentum=0).minimize(loss)
        return loss

    loss = ctc_job(log_probs, targets, input_lengths, target_lengths)
    flow.clear_default_session()
    return loss, seen.get("diff")


def torch_ctc(log_probs, targets, input_lengths, target_lengths, **kwargs):
    x = torch.tensor(log_probs, requires_grad=True)
    loss = F.ctc_loss(x, torch.tensor(targets).long(), torch.tensor(input_lengths).long(),
                      torch.tensor(target_lengths).long(), **kwargs)
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


def random_case(seed, T, N, C, S, blank=0, dtype=np.float64, index_dtype=np.int32,
                min_input=None):
    """Random log_softmax inputs and targets avoiding `blank`, with random lengths (the input
    long enough for the target unless min_input says otherwise)."""
    rng = np.random.RandomState(seed)
    log_probs = log_softmax(rng.randn(T, N, C)).astype(dtype)
    labels = [c for c in range(C) if c != blank]
    targets = rng.choice(labels, size=(N, S)).astype(index_dtype)
    target_lengths = rng.randint(0, S + 1, size=N).astype(index_dtype)
    low = 1 if min_input is None else min_input
    input_lengths = rng.randint(low, T + 1, size=N).astype(index_dtype)
    if min_input is None:  # room for the target and a blank between repeats
        input_lengths = np.maximum(input_lengths, np.minimum(T, 2 * target_lengths + 1))
    return log_probs, targets, input_lengths.astype(index_dtype), target_lengths


def assert_matches_torch(case, rtol, atol, **kwargs):
    loss, diff = run_ctc(*case, **kwargs)
    expected_loss, expected_diff = torch_ctc(*case, **kwargs)
    assert loss.dtype == case[0].dtype and diff.dtype == case[0].dtype
    np.testing.assert_allclose(loss, expected_loss, rtol=rtol, atol=atol, err_msg="loss")
    np.testing.assert_allclose(diff, expected_diff, rtol=rtol, atol=atol, err_msg="gradient")
    return loss, diff


TOLERANCE = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("T, N, C, S, seed", [(6, 3, 5, 3, 0), (12, 5, 4, 5, 1), (1, 2, 3, 1, 2),
                                             (20, 4, 8, 6, 3)])
def test_matches_torch(T, N, C, S, seed, reduction, dtype):
    case = random_case(seed, T, N, C, S, dtype=dtype)
    assert_matches_torch(case, reduction=reduction, **TOLERANCE[dtype])


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_blank_last_and_int64_indices(reduction):
    case = random_case(4, 10, 4, 6, 4, blank=5, index_dtype=np.int64)
    assert_matches_torch(case, blank=5, reduction=reduction, **TOLERANCE[np.float64])
    # The same losses with blank at index 0 and the classes rotated by one.
    log_probs, targets, input_lengths, target_lengths = case
    rotated = (np.roll(log_probs, 1, axis=2), targets + 1, input_lengths, target_lengths)
    np.testing.assert_allclose(run_ctc(*rotated, reduction=reduction)[0],
                               run_ctc(*case, blank=5, reduction=reduction)[0], rtol=1e-12)


def test_repeated_labels_need_a_blank_between():
    # "1 1" needs 3 steps (1, blank, 1); "1 2" fits in 2; in 2 steps "1 1" is impossible.
    log_probs = log_softmax(np.random.RandomState(5).randn(3, 2, 3))
    targets = np.array([[1, 1], [1, 2]], np.int32)
    lengths = np.array([2, 2], np.int32)
    for input_lengths, finite in (([3, 3], [True, True]), ([2, 2], [False, True])):
        input_lengths = np.array(input_lengths, np.int32)
        loss, _ = run_ctc(log_probs, targets, input_lengths, lengths, reduction="none")
        assert list(np.isfinite(loss)) == finite
        np.testing.assert_allclose(
            loss, numpy_ctc_loss(log_probs, targets, input_lengths, lengths), rtol=1e-12)
        case = (log_probs, targets, input_lengths, lengths)
        np.testing.assert_allclose(loss, torch_ctc(*case, reduction="none")[0], rtol=1e-12)
    # With all three steps, "1 1" has exactly one alignment: 1, blank, 1.
    loss, _ = run_ctc(log_probs[:, :1], targets[:1], np.array([3], np.int32), lengths[:1],
                      reduction="none")
    np.testing.assert_allclose(
        loss[0], -(log_probs[0, 0, 1] + log_probs[1, 0, 0] + log_probs[2, 0, 1]), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(zero_infinity, reduction, dtype):
    # Element 1 has 2 steps for 3 labels: no alignment. Element 2 needs 5 steps for "2 2 2".
    log_probs, _, _, _ = random_case(6, 5, 3, 4, 3, dtype=dtype)
    targets = np.array([[1, 2, 3], [1, 2, 3], [2, 2, 2]], np.int32)
    input_lengths = np.array([5, 2, 4], np.int32)
    target_lengths = np.array([2, 3, 3], np.int32)
    case = (log_probs, targets, input_lengths, target_lengths)
    loss, diff = run_ctc(*case, reduction=reduction, zero_infinity=zero_infinity)
    expected_loss, expected_diff = torch_ctc(*case, reduction=reduction,
                                             zero_infinity=zero_infinity)
    np.testing.assert_allclose(loss, expected_loss, equal_nan=True, **TOLERANCE[dtype])
    np.testing.assert_allclose(diff, expected_diff, equal_nan=True, **TOLERANCE[dtype])
    if zero_infinity:
        assert np.all(np.isfinite(loss))
        assert np.all(diff[:, 1:] == 0)
        assert np.any(diff[:, 0] != 0)
    else:
        assert np.all(np.isnan(diff[:2, 1:])) and np.all(diff[2:, 1] == 0)
        if reduction == "none":
            assert np.isfinite(loss[0]) and np.all(np.isinf(loss[1:]))
        else:
            assert np.isinf(loss)


def test_empty_inputs_and_targets():
    # PyTorch reads uninitialised memory for an input length of 0; here an empty input
    # aligns with an empty target (loss 0) and with nothing else (inf).
    log_probs, _, _, _ = random_case(7, 4, 4, 3, 2)
    targets = np.array([[1, 2], [1, 2], [2, 1], [1, 1]], np.int32)
    input_lengths = np.array([0, 0, 4, 3], np.int32)
    target_lengths = np.array([0, 1, 0, 0], np.int32)
    case = (log_probs, targets, input_lengths, target_lengths)
    loss, diff = run_ctc(*case, reduction="none")
    np.testing.assert_allclose(loss, numpy_ctc_loss(*case), rtol=1e-12)
    assert loss[0] == 0 and np.isinf(loss[1])
    np.testing.assert_allclose(loss[2:], torch_ctc(*case, reduction="none")[0][2:], rtol=1e-12)
    assert np.all(diff[:, :2] == 0)
    np.testing.assert_allclose(diff[:, 2:], torch_ctc(*case, reduction="none")[1][:, 2:],
                               rtol=1e-10, atol=1e-12)


def test_defaults_and_ctc_loss_alias():
    case = random_case(8, 7, 3, 4, 3)
    loss, _ = run_ctc(*case)  # reduction="mean", blank=0
    np.testing.assert_allclose(loss, torch_ctc(*case)[0], rtol=1e-12)
    assert flow.ctc_loss is flow.nn.CTCLoss
    loss, _ = run_ctc(*case, train=False, reduction="sum")
    np.testing.assert_allclose(loss, torch_ctc(*case, reduction="sum")[0], rtol=1e-12)


def _ctc_of_logits(reduction):
    def flow_fn(logits, targets, input_lengths, target_lengths):
        return flow.nn.CTCLoss(flow.nn.logsoftmax(logits), targets, input_lengths,
                               target_lengths, reduction=reduction)

    def numpy_fn(logits, targets, input_lengths, target_lengths):
        losses = numpy_ctc_loss(log_softmax(logits), targets, input_lengths, target_lengths)
        if reduction == "mean":
            return np.mean(losses / np.maximum(target_lengths, 1))
        return losses if reduction == "none" else np.sum(losses)

    return flow_fn, numpy_fn


@pytest.mark.parametrize("reduction, N", [("none", 4), ("none", 3), ("mean", 4)])
def test_finite_differences_and_sbp(reduction, N):
    # The exact gradient of log_softmax then CTC (ctc_loss_grad's extra exp(log_probs) term
    # cancels in log_softmax's backward), on 1 device and under every SBP signature on 2-4.
    rng = np.random.RandomState(9)
    T, C, S = 5, 4, 2
    logits = rng.randn(T, N, C)
    targets = rng.randint(1, C, size=(N, S)).astype(np.int32)
    target_lengths = np.array([2, 1, 0, 2][:N], np.int32)
    input_lengths = np.array([5, 3, 4, 4][:N], np.int32)
    flow_fn, numpy_fn = _ctc_of_logits(reduction)
    check_op(flow_fn, numpy_fn, inputs=[logits, targets, input_lengths, target_lengths],
             differentiable=[0], weight_output=True)


def test_float32_forward_with_checker():
    rng = np.random.RandomState(10)
    logits = rng.randn(4, 4, 3).astype(np.float32)
    targets = np.array([[1, 2], [2, 2], [1, 1], [2, 1]], np.int32)
    lengths = np.array([2, 1, 1, 2], np.int32)
    inputs = [logits, targets, np.array([4, 4, 3, 4], np.int32), lengths]
    flow_fn, numpy_fn = _ctc_of_logits("none")
    check_op(flow_fn, lambda *a: numpy_fn(*a).astype(np.float32), inputs=inputs,
             differentiable=[0], forward_tolerance=dict(rtol=1e-5, atol=1e-5))


def _trace_ctc(shapes_and_dtypes, **kwargs):
    """Traces and runs a job adding CTCLoss to placeholders of these shapes and dtypes."""
    annotations = [tp.Numpy.Placeholder(shape, dtype=dtype) for shape, dtype in shapes_and_dtypes]

    @flow.global_function()
    def bad_job(x: annotations[0], t: annotations[1], i: annotations[2],
                l: annotations[3]) -> tp.Numpy:
        return flow.nn.CTCLoss(x, t, i, l, **kwargs)

    bad_job(*[np.zeros(shape, flow.convert_oneflow_dtype_to_numpy_dtype(dtype))
              for shape, dtype in shapes_and_dtypes])  # traced at the first call


GOOD = [((5, 2, 3), flow.float32), ((2, 4), flow.int32), ((2,), flow.int32), ((2,), flow.int64)]


def _with(index, shape_and_dtype):
    spec = list(GOOD)
    spec[index] = shape_and_dtype
    return spec


@pytest.mark.parametrize("spec, kwargs, error, pattern", [
    (_with(0, ((5, 6), flow.float32)), {}, ValueError,
     r"ctc_loss: log_probs must be 3-D \(T, N, C\).*got \(5, 6\)"),
    (_with(0, ((5, 2, 3), flow.int32)), {}, TypeError, r"ctc_loss: log_probs"),
    (_with(1, ((3, 4), flow.int32)), {}, ValueError,
     r"ctc_loss: targets must be 2-D \(N, S\) with N = 2.*\(5, 2, 3\), got \(3, 4\)"),
    (_with(1, ((2, 4), flow.float32)), {}, TypeError, r"ctc_loss: targets"),
    (_with(2, ((3,), flow.int32)), {}, ValueError,
     r"ctc_loss: input_lengths must have shape \(2,\).*got \(3,\)"),
    (_with(3, ((2, 1), flow.int32)), {}, ValueError,
     r"ctc_loss: target_lengths must have shape \(2,\).*got \(2, 1\)"),
    (_with(2, ((2,), flow.float32)), {}, TypeError, r"ctc_loss: input_lengths"),
    (GOOD, dict(blank=3), ValueError, r"ctc_loss: blank 3 is out of range \[0, 3\)"),
    (GOOD, dict(blank=-1), ValueError, r"ctc_loss: blank -1 is out of range"),
    (GOOD, dict(blank=1.0), TypeError, r"CTCLoss: blank must be an int"),
    (GOOD, dict(reduction="average"), ValueError, r"CTCLoss: reduction must be one of"),
    (GOOD, dict(zero_infinity=1), TypeError, r"CTCLoss: zero_infinity must be a bool"),
])
def test_trace_time_errors(spec, kwargs, error, pattern):
    flow.clear_default_session()
    with pytest.raises(error, match=pattern):
        _trace_ctc(spec, **kwargs)
    flow.clear_default_session()


@pytest.mark.parametrize("index, values, pattern", [
    (2, [5, 6], r"input_lengths\[1\] = 6 is out of range \[0, 5\]"),
    (2, [-1, 5], r"input_lengths\[0\] = -1 is out of range"),
    (3, [2, 5], r"target_lengths\[1\] = 5 is out of range \[0, 4\]"),
    (3, [-2, 1], r"target_lengths\[0\] = -2 is out of range"),
    (1, [[1, 3, 1, 1], [1, 1, 1, 1]], r"targets\[0, 1\] = 3 is out of range \[0, 3\)"),
])
@pytest.mark.parametrize("train", [False, True])
def test_invalid_values_raise_at_run_time(index, values, pattern, train):
    rng = np.random.RandomState(11)
    case = [log_softmax(rng.randn(5, 2, 3)).astype(np.float32),
            np.ones((2, 4), np.int32), np.array([5, 5], np.int32), np.array([2, 2], np.int64)]
    bad = list(case)
    bad[index] = np.array(values, case[index].dtype)
    with pytest.raises(ValueError, match=r"ctc_loss \(op 'CTCLoss_0'\): " + pattern):
        run_ctc(*bad, train=train, reduction="none")
    flow.clear_default_session()
    np.testing.assert_allclose(run_ctc(*case, train=train, reduction="none")[0],
                               numpy_ctc_loss(*case), rtol=1e-5)


def test_run_time_error_names_the_logical_element_when_split():
    # On 2 devices the batch is split; element 3 is the second one on device 1.
    flow.clear_default_session()
    flow.config.cpu_device_num(2)
    rng = np.random.RandomState(12)
    log_probs = log_softmax(rng.randn(5, 4, 3)).astype(np.float32)

    @flow.global_function()
    def split_job(x: tp.Numpy.Placeholder((5, 4, 3)),
                  t: tp.Numpy.Placeholder((4, 2), dtype=flow.int32),
                  i: tp.Numpy.Placeholder((4,), dtype=flow.int32),
                  l: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
        x = flow.parallel_cast(x, distribute=flow.distribute.split(1))
        return flow.nn.CTCLoss(x, t, i, l, reduction="none")

    targets = np.ones((4, 2), np.int32)
    with pytest.raises(ValueError, match=r"input_lengths\[3\] = 9 is out of range"):
        split_job(log_probs, targets, np.array([5, 5, 5, 9], np.int32),
                  np.array([1, 1, 1, 1], np.int32))
    flow.clear_default_session()


def numpy_greedy_decode(log_probs, input_lengths, merge_repeated):
    """Best path per element: argmax per step, repeats merged, the last class (blank) dropped."""
    steps, batch, classes = log_probs.shape
    decoded = np.zeros((batch, steps), np.int64)
    neg_sum = np.zeros((batch, 1), log_probs.dtype)
    for b in range(batch):
        best = log_probs[:int(input_lengths[b]), b].argmax(axis=1)
        neg_sum[b, 0] = -log_probs[np.arange(len(best)), b, best].sum()
        kept = [c for t, c in enumerate(best)
                if c != classes - 1 and not (merge_repeated and t > 0 and best[t - 1] == c)]
        decoded[b, :len(kept)] = kept
    return decoded, neg_sum


def _greedy_job(shape, length_dtype, merge_repeated, devices=1, dtype=flow.float32):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)

    @flow.global_function()
    def decode(log_probs: tp.Numpy.Placeholder(shape, dtype=dtype),
               lengths: tp.Numpy.Placeholder((shape[1],), dtype=length_dtype)
               ) -> typing.Tuple[tp.Numpy, tp.Numpy]:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            return flow.nn.ctc_greedy_decoder(
                log_probs.with_distribute(flow.distribute.split(1)),
                lengths.with_distribute(flow.distribute.split(0)), merge_repeated=merge_repeated)

    return decode


def test_ctc_greedy_decoder_oneflow_example():
    log_probs = np.array([
        [[-1.54, -1.20, -1.95, -1.65, -1.81], [-1.84, -1.74, -1.58, -1.55, -1.12]],
        [[-1.68, -1.48, -1.89, -1.30, -2.07], [-1.13, -1.45, -1.24, -1.61, -1.66]],
        [[-1.56, -1.40, -2.83, -1.67, -1.48], [-1.20, -2.01, -2.05, -1.95, -1.24]],
        [[-2.09, -1.76, -1.36, -1.67, -1.45], [-1.85, -1.48, -1.34, -2.16, -1.55]],
    ], np.float32)
    decoded, neg_sum_logits = _greedy_job(log_probs.shape, flow.int64, True)(
        log_probs, np.array([4, 4], np.int64))
    np.testing.assert_array_equal(decoded, [[1, 3, 1, 2], [0, 2, 0, 0]])
    np.testing.assert_allclose(neg_sum_logits, [[5.26], [4.79]], rtol=1e-6)


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("devices", [1, 3])
def test_ctc_greedy_decoder_matches_numpy(merge_repeated, devices):
    rng = np.random.RandomState(4)
    steps, batch, classes = 12, 5, 4  # few classes: many repeats and blanks
    log_probs = np.log(rng.dirichlet(np.ones(classes), size=(steps, batch))).astype(np.float64)
    lengths = np.array([12, 0, 7, 1, 10], np.int32)
    decode = _greedy_job(log_probs.shape, flow.int32, merge_repeated, devices, flow.float64)
    decoded, neg_sum = decode(log_probs, lengths)
    expected_decoded, expected_neg_sum = numpy_greedy_decode(log_probs, lengths, merge_repeated)
    np.testing.assert_array_equal(decoded, expected_decoded)
    np.testing.assert_allclose(neg_sum, expected_neg_sum, rtol=1e-12)


def test_ctc_greedy_decoder_errors():
    decode = _greedy_job((3, 2, 4), flow.int32, True, devices=2)
    with pytest.raises(ValueError, match=r"ctc_greedy_decoder \(op '.*'\): input_lengths\[1\] "
                                         r"= 4 is out of range \[0, 3\]"):
        decode(np.zeros((3, 2, 4), np.float32), np.array([3, 4], np.int32))
    flow.clear_default_session()

    @flow.global_function()
    def bad(log_probs: tp.Numpy.Placeholder((3, 2, 4)),
            lengths: tp.Numpy.Placeholder((3,), dtype=flow.int32)) -> tp.Numpy:
        return flow.nn.ctc_greedy_decoder(log_probs, lengths)[0]

    with pytest.raises(ValueError, match=r"input_lengths must have shape \(2,\)"):
        bad(np.zeros((3, 2, 4), np.float32), np.zeros(3, np.int32))

