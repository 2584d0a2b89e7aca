"""Time shapes: flow.repeat / flow.unpack make the ops after them run N times per iteration, and
flow.acc / flow.pack bring the pieces back to one. Forward against NumPy, float64 gradients
against finite differences (op_checker, with its multi-device pass), gradient accumulation over
micro-batches against one step on the whole batch (OneFlow's and PyTorch's rule: the gradients
of the micro-batches' losses are summed), several calls in flight, and the errors for counts
that do not match."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from op_checker import check_op


def predict_job(fn, shape=(8, 3)):
    flow.clear_default_session()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder(shape)) -> tp.Numpy:
        return fn(x)

    return job


@pytest.mark.parametrize("count", [1, 3])
def test_acc_of_repeat_is_count_times_the_input(count):
    # OneFlow 0.3's test_repeat_acc: acc(repeat(x, n), n) == n * x.
    check_op(lambda a: flow.acc(flow.repeat(a, count), count), lambda a: count * a,
             input_shapes=[(4, 5)])


def test_ops_between_repeat_and_acc_run_once_per_piece():
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4))
    check_op(lambda a: flow.acc(flow.math.tanh(flow.repeat(a, 4)) * 2.0, 4),
             lambda a: 4 * 2.0 * np.tanh(a), inputs=[x])


@pytest.mark.parametrize("count", [1, 2, 4])
def test_pack_of_unpack_is_the_input(count):
    # OneFlow 0.3's test_unpack_pack.
    check_op(lambda a: flow.pack(flow.unpack(a, count), count), lambda a: a,
             input_shapes=[(8, 3, 2)])


def test_each_piece_of_unpack_is_a_block_of_rows():
    # A reduction over axis 0 of each piece: one row per block of 2 rows.
    x = np.random.RandomState(1).uniform(-1, 1, (8, 3))

    def flow_fn(a):
        piece = flow.unpack(a, 4)
        return flow.pack(flow.math.reduce_sum(piece * piece, axis=0, keepdims=True), 4)

    check_op(flow_fn, lambda a: (a * a).reshape(4, 2, 3).sum(axis=1), inputs=[x])


def test_acc_of_unpack_sums_the_blocks():
    x = np.random.RandomState(2).uniform(-1, 1, (6, 5))
    check_op(lambda a: flow.acc(flow.unpack(a, 3), 3), lambda a: a.reshape(3, 2, 5).sum(axis=0),
             inputs=[x])


def test_a_blob_of_one_piece_is_repeated_for_a_section_that_reads_it():
    # c is made once per iteration; the section reads it once per piece.
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    job = predict_job(lambda a: flow.pack(flow.unpack(a, 4) + flow.math.reduce_sum(a), 4))
    np.testing.assert_allclose(job(x), x + x.sum(), rtol=1e-6)
    three = lambda: flow.constant(3.0, dtype=flow.float32, shape=(1, 3))  # noqa: E731
    job = predict_job(lambda a: flow.pack(flow.unpack(a, 2) * three(), 2))
    np.testing.assert_allclose(job(x), 3 * x, rtol=1e-6)


def test_nested_sections_multiply_their_counts():
    x = np.random.RandomState(3).uniform(-1, 1, (8, 2)).astype(np.float32)
    job = predict_job(lambda a: flow.pack(flow.acc(flow.repeat(flow.unpack(a, 2), 3), 3), 2),
                      shape=(8, 2))
    np.testing.assert_allclose(job(x), 3 * x, rtol=1e-6)


def test_calls_in_flight_keep_their_pieces_apart():
    inputs = [np.full((8, 3), i, np.float32) + np.arange(8, dtype=np.float32)[:, None]
              for i in range(6)]
    flow.clear_default_session()
    results = {}

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((8, 3))) -> tp.Callback[tp.Numpy]:
        return flow.pack(flow.unpack(x, 4) * 2.0, 4)

    for i, x in enumerate(inputs):
        job(x)(lambda out, i=i: results.__setitem__(i, out))
    flow.sync_default_session()
    for i, x in enumerate(inputs):
        np.testing.assert_array_equal(results[i], 2 * x)


def test_a_watch_inside_a_section_sees_every_piece():
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    seen = []
    flow.clear_default_session()

    @flow.global_function()
    def job(a: tp.Numpy.Placeholder((8, 3))) -> tp.Numpy:
        piece = flow.unpack(a, 4)
        flow.watch(piece, lambda blob: seen.append(blob.numpy().copy()))
        return flow.pack(piece, 4)

    for _ in range(2):
        np.testing.assert_array_equal(job(x), x)
    assert len(seen) == 8
    for k, piece in enumerate(seen):
        np.testing.assert_array_equal(piece, x[2 * (k % 4):2 * (k % 4) + 2])


def regression_weights(micro_batches, devices=1, steps=3):
    """Trains a linear model on a fixed batch of 8 rows with SGD + momentum, the batch cut into
    `micro_batches` pieces, on `devices` CPU devices (the compiler lays each blob out over
    them); returns (each step's per-piece losses, the final weights, the data)."""
    rng = np.random.RandomState(0)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    w0 = rng.standard_normal((5, 2)).astype(np.float32)
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    config = flow.FunctionConfig()
    config.default_placement_scope(flow.scope.placement("cpu", "0:0-%d" % (devices - 1)))
    config.default_logical_view(flow.scope.consistent_view())

    @flow.global_function(type="train", function_config=config)
    def train(a: tp.Numpy.Placeholder((8, 5)), b: tp.Numpy.Placeholder((8, 2))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(5, 2), initializer=flow.zeros_initializer())
        a, b = flow.unpack(a, micro_batches), flow.unpack(b, micro_batches)
        error = flow.matmul(a, w) - b
        loss = flow.math.reduce_sum(error * error)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]),
                           momentum=0.9).minimize(loss)
        return flow.pack(flow.reshape(loss, (1,)), micro_batches)

    flow.load_variables({"w": w0})
    losses = [train(x, y) for _ in range(steps)]
    return losses, flow.get_all_variables()["w"].numpy(), (x, y, w0)


def numpy_regression(x, y, w0, steps=3, lr=0.01, momentum=0.9):
    w, velocity, losses = w0.astype(np.float64), np.zeros_like(w0, np.float64), []
    for _ in range(steps):
        error = x @ w - y
        losses.append(error.reshape(4, 2, 2))
        grad = 2 * x.T @ error
        velocity = momentum * velocity - lr * grad
        w = w + velocity
    return losses, w


@pytest.mark.parametrize("micro_batches", [1, 2, 4])
def test_gradient_accumulation_over_micro_batches_matches_the_whole_batch(micro_batches):
    losses, w, (x, y, w0) = regression_weights(micro_batches)
    expected_errors, expected_w = numpy_regression(x, y, w0)
    np.testing.assert_allclose(w, expected_w, rtol=1e-5, atol=1e-6)
    for step, loss in enumerate(losses):
        per_row = (expected_errors[step].reshape(8, 2) ** 2).sum(axis=1)
        np.testing.assert_allclose(loss, per_row.reshape(micro_batches, -1).sum(axis=1),
                                   rtol=1e-5)


def test_gradient_accumulation_on_two_devices_matches_one():
    _, one, _ = regression_weights(4, devices=1)
    _, two, _ = regression_weights(4, devices=2)
    np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-6)


def test_counts_that_do_not_match_are_value_errors():
    x = np.zeros((8, 3), np.float32)
    with pytest.raises(ValueError, match=r"the job's result 'Unpack_0/out_0' has 4 pieces per "
                                         r"iteration .*return flow.pack or flow.acc"):
        predict_job(lambda a: flow.unpack(a, 4))(x)
    with pytest.raises(ValueError, match=r"acc \(op 'Acc_0'\): its input has 1 piece\(s\) per "
                                         r"iteration, not a multiple of 3"):
        predict_job(lambda a: flow.acc(a, 3))(x)
    with pytest.raises(ValueError, match=r"acc \(op 'Acc_0'\): its input has 4 piece\(s\)"):
        predict_job(lambda a: flow.acc(flow.unpack(a, 4), 3))(x)
    with pytest.raises(ValueError, match=r"unpack: dim 0 of input \(8, 3\) must be divisible by "
                                         r"unpack_num 3"):
        predict_job(lambda a: flow.unpack(a, 3))(x)
    for op in (flow.repeat, flow.acc, flow.unpack, flow.pack):
        with pytest.raises(ValueError, match=r"must be a positive int, got 0"):
            predict_job(lambda a: op(a, 0))(x)
    flow.clear_default_session()


def batch_norm_accumulation(micro_batches, steps=2, devices=1, device_tag="cpu"):
    """Trains a batch normalization's gamma and beta with SGD on a fixed batch of 8 cut into
    `micro_batches` pieces, on `devices` devices of `device_tag`; returns each step's per-piece
    losses and the variables."""
    rng = np.random.RandomState(5)
    x = (rng.standard_normal((8, 3, 2, 2)) * 2 + 1).astype(np.float32)
    c = rng.standard_normal((8, 3, 2, 2)).astype(np.float32)
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    config = flow.FunctionConfig()
    config.default_placement_scope(flow.scope.placement(device_tag, "0:0-%d" % (devices - 1)))

    @flow.global_function(type="train", function_config=config)
    def train(a: tp.Numpy.Placeholder(x.shape), b: tp.Numpy.Placeholder(c.shape)) -> tp.Numpy:
        a, b = flow.unpack(a, micro_batches), flow.unpack(b, micro_batches)
        out = flow.layers.batch_normalization(a, axis=1, momentum=0.9, epsilon=1e-5, name="bn")
        loss = flow.math.reduce_sum(out * b)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                           momentum=0).minimize(loss)
        return flow.pack(flow.reshape(loss, (1,)), micro_batches)

    losses = [train(x, c) for _ in range(steps)]
    variables = {name: blob.numpy() for name, blob in flow.get_all_variables().items()}
    flow.clear_default_session()
    return losses, variables, (x, c)


def torch_batch_norm_accumulation(x, c, micro_batches, steps=2):
    """The same in PyTorch: each micro-batch is normalized by its own statistics and updates
    the running ones; the gradients of the micro-batches' losses add up before the step."""
    bn = torch.nn.BatchNorm2d(3, momentum=0.1, eps=1e-5).double()
    optimizer = torch.optim.SGD(bn.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        step_losses = []
        for a, b in zip(np.split(x, micro_batches), np.split(c, micro_batches)):
            loss = (bn(torch.tensor(a, dtype=torch.float64)) * torch.tensor(b)).sum()
            loss.backward()
            step_losses.append(loss.item())
        optimizer.step()
        losses.append(step_losses)
    return losses, bn


@pytest.mark.parametrize("micro_batches,devices", [(2, 1), (4, 1), (2, 2)])
def test_batch_norm_in_a_section_updates_its_moving_statistics_once_per_micro_batch(
        micro_batches, devices, op_device):
    if flow.sysconfig.gpus_in_use() < devices and op_device == "gpu":
        pytest.skip("needs %d GPUs" % devices)
    losses, variables, (x, c) = batch_norm_accumulation(micro_batches, devices=devices,
                                                        device_tag=op_device)
    if devices > 1:  # the consistent view: the same logical job as on one device
        _, one, _ = batch_norm_accumulation(micro_batches)
        for name in ("bn-gamma", "bn-beta", "bn-moving_mean", "bn-moving_variance"):
            np.testing.assert_allclose(variables[name], one[name], rtol=1e-5, atol=1e-6)
        return
    expected_losses, bn = torch_batch_norm_accumulation(x, c, micro_batches)
    for step in range(2):
        np.testing.assert_allclose(losses[step], expected_losses[step], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(variables["bn-gamma"], bn.weight.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(variables["bn-beta"], bn.bias.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(variables["bn-moving_mean"], bn.running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(variables["bn-moving_variance"], bn.running_var.numpy(),
                               rtol=1e-5, atol=1e-6)
