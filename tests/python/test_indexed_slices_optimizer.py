"""FunctionConfig.indexed_slices_optimizer_conf: sparse updates of gathered rows.

References: NumPy formulas of OneFlow 0.3's indexed-slices updates (the rows a gather used are
updated with the summed gradient of their lookups; the other rows and their state are not
touched) and PyTorch's sparse Embedding + SparseAdam for Adam."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp

pytestmark = pytest.mark.timeout(120)

ROWS, DIM = 10, 3


def _train(optimizer, ids, iters, sparse=True, devices=1, mul=2.0, split_ids=False):
    """Trains loss = mean(gather(table * mul, ids[step % len(ids)])); returns the table before
    the first step and after each."""
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    config = flow.FunctionConfig()
    if sparse:
        config.indexed_slices_optimizer_conf(dict(include_op_names=dict(op_name=["embeddings"])))

    @flow.global_function(type="train", function_config=config)
    def step(sparse_ids: tp.Numpy.Placeholder(ids[0].shape, dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            table = flow.get_variable(
                "embeddings", shape=(ROWS, DIM),
                initializer=flow.random_uniform_initializer(minval=0, maxval=10))
            if split_ids:
                sparse_ids = flow.parallel_cast(sparse_ids, distribute=flow.distribute.split(0))
            embedding = flow.gather(params=table * mul, indices=sparse_ids)
            loss = flow.math.reduce_mean(embedding)
            optimizer().minimize(loss)
            return table

    # Call i returns the table after i updates; update i uses ids[i % len(ids)].
    return [step(ids[i % len(ids)]).copy() for i in range(iters + 1)]


def _row_gradients(ids, step, mul=2.0):
    """Summed gradient of each row looked up at `step`, for loss = mean(gather(table * mul,
    ids[step % len(ids)]))."""
    batch = ids[step % len(ids)]
    per_lookup = mul / (batch.size * DIM)
    grads = {}
    for row in batch.flatten():
        grads[int(row)] = grads.get(int(row), 0.0) + per_lookup
    return grads


def _lr(value):
    return flow.optimizer.PiecewiseConstantScheduler([], [value])


@pytest.fixture
def ids():
    # Two batches of lookups, alternating: rows 0..5 only (6..9 never looked up), with repeats;
    # row 2 only in the second and row 4 only in the first, so a dense update (momentum and
    # Adam's moments carrying on, weight decay everywhere) would differ.
    return [np.array([[0, 1, 1], [5, 4, 0]], dtype=np.int32),
            np.array([[3, 2, 2], [5, 3, 0]], dtype=np.int32)]


def test_sgd_momentum_updates_only_gathered_rows(ids):
    lr, beta, iters = 0.5, 0.9, 4
    tables = _train(lambda: flow.optimizer.SGD(_lr(lr), momentum=beta), ids, iters)
    param, momentum = tables[0].astype(np.float64), np.zeros((ROWS, DIM))
    for step in range(iters):
        for row, g in _row_gradients(ids, step).items():
            momentum[row] = beta * momentum[row] - lr * g
            param[row] += momentum[row]
    np.testing.assert_allclose(tables[-1], param, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(tables[-1][6:], tables[0][6:])


def test_sgdw_decays_only_gathered_rows(ids):
    lr, beta, wd, iters = 0.1, 0.5, 0.3, 3
    tables = _train(lambda: flow.optimizer.SGDW(_lr(lr), momentum=beta, weight_decay=wd),
                    ids, iters)
    param, momentum = tables[0].astype(np.float64), np.zeros((ROWS, DIM))
    for step in range(iters):
        for row, g in _row_gradients(ids, step).items():
            momentum[row] = beta * momentum[row] - lr * g
            param[row] = param[row] + momentum[row] - lr * wd * param[row]
    np.testing.assert_allclose(tables[-1], param, rtol=1e-5, atol=1e-5)
    # Dense SGDW would have decayed the unused rows too.
    np.testing.assert_array_equal(tables[-1][6:], tables[0][6:])


def test_adam_matches_torch_sparse_adam(ids):
    lr, iters = 0.05, 5
    tables = _train(lambda: flow.optimizer.Adam(_lr(lr), beta1=0.9, beta2=0.99, epsilon=1e-6,
                                                do_bias_correction=True), ids, iters)
    embedding = torch.nn.Embedding(ROWS, DIM, sparse=True)
    with torch.no_grad():
        embedding.weight.copy_(torch.from_numpy(tables[0].astype(np.float64)))
    embedding = embedding.double()
    adam = torch.optim.SparseAdam(embedding.parameters(), lr=lr, betas=(0.9, 0.99), eps=1e-6)
    for step in range(iters):
        adam.zero_grad()
        # table * mul then gather == gather then * mul.
        batch = torch.from_numpy(ids[step % len(ids)].astype(np.int64))
        (embedding(batch) * 2.0).mean().backward()
        adam.step()
    np.testing.assert_allclose(tables[-1], embedding.weight.detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_array_equal(tables[-1][6:], tables[0][6:])


def test_adamw_decays_only_gathered_rows(ids):
    lr, wd, iters, b1, b2, eps = 0.05, 0.2, 3, 0.9, 0.999, 1e-8
    tables = _train(lambda: flow.optimizer.AdamW(_lr(lr), beta1=b1, beta2=b2, epsilon=eps,
                                                 do_bias_correction=True, weight_decay=wd),
                    ids, iters)
    param = tables[0].astype(np.float64)
    m, v = np.zeros((ROWS, DIM)), np.zeros((ROWS, DIM))
    for t in range(1, iters + 1):
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for row, g in _row_gradients(ids, t - 1).items():
            m[row] = b1 * m[row] + (1 - b1) * g
            v[row] = b2 * v[row] + (1 - b2) * g * g
            param[row] -= lr_t * (m[row] / (np.sqrt(v[row]) + eps) + wd * param[row])
    np.testing.assert_allclose(tables[-1], param, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(tables[-1][6:], tables[0][6:])


def test_without_the_setting_updates_are_dense(ids):
    lr, wd = 0.1, 0.3
    tables = _train(lambda: flow.optimizer.SGDW(_lr(lr), weight_decay=wd), ids, 1, sparse=False)
    expected = tables[0].astype(np.float64) * (1 - lr * wd)
    for row, g in _row_gradients(ids, 0).items():
        expected[row] -= lr * g
    np.testing.assert_allclose(tables[-1], expected, rtol=1e-5, atol=1e-5)


def test_two_devices_match_one_device(ids):
    optimizer = lambda: flow.optimizer.SGD(_lr(0.5), momentum=0.9)  # noqa: E731
    one = _train(optimizer, ids, 3)
    two = _train(optimizer, ids, 3, devices=2, split_ids=True)
    expected = one[-1] - one[0]
    np.testing.assert_allclose(two[-1] - two[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(two[-1][6:], two[0][6:])


def test_variable_not_gathered_updates_densely():
    flow.clear_default_session()
    config = flow.FunctionConfig()
    config.indexed_slices_optimizer_conf({"include_op_names": {"op_name": ["w"]}})

    @flow.global_function(type="train", function_config=config)
    def step(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3, 2), initializer=flow.constant_initializer(1.0))
        flow.optimizer.SGDW(_lr(0.1), weight_decay=0.5).minimize(
            flow.math.reduce_sum(flow.matmul(x, w)))
        return w

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before, after = step(x).copy(), step(x)
    expected = before * (1 - 0.1 * 0.5) - 0.1 * np.repeat(x.sum(0, keepdims=True).T, 2, 1)
    np.testing.assert_allclose(after, expected, rtol=1e-5)


@pytest.mark.parametrize("conf, error", [
    ("embeddings", TypeError),
    ({"include_op_name": {"op_name": ["e"]}}, ValueError),
    ({"include_op_names": ["e"]}, ValueError),
    ({"include_op_names": {"op_name": [1]}}, TypeError),
])
def test_bad_conf_is_rejected(conf, error):
    with pytest.raises(error, match="indexed_slices_optimizer_conf"):
        flow.FunctionConfig().indexed_slices_optimizer_conf(conf)
