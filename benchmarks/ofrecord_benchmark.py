"""Input pipeline cost: an MLP trained from an OFRecord dataset against the same MLP fed numpy
batches, and PyTorch 1.13 with a shuffling DataLoader over the same data.

Data: 6000 random 28x28 uint8 images with int32 labels, written as one OFRecord part file
(images as one bytes_list feature, labels as an int32_list) in a temporary directory. Model:
784-256-10, ReLU, sparse softmax cross entropy, SGD lr 0.01, batch 100, one compute thread.
Prints one JSON line:
    {"case": "mlp_784_256_10_b100", "ofrecord_ms_per_step": ..., "numpy_fed_ms_per_step": ...,
     "torch_dataloader_ms_per_step": ...}
Run: .venv/bin/python benchmarks/ofrecord_benchmark.py [--warmup 10] [--iterations 300]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json
import os
import tempfile

import numpy as np

import side_by_side

BATCH, RECORDS = 100, 6000


def write_dataset(directory):
    from oneflow.core.record import record_pb2
    from oneflow.framework.ofrecord_reader import write_part

    rng = np.random.RandomState(0)
    images = rng.randint(0, 128, size=(RECORDS, 784)).astype(np.uint8)
    labels = rng.randint(0, 10, size=RECORDS).astype(np.int32)
    records = [record_pb2.OFRecord(feature={
        "images": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[images[i].tobytes()])),
        "labels": record_pb2.Feature(int32_list=record_pb2.Int32List(value=[labels[i]])),
    }) for i in range(RECORDS)]
    write_part(os.path.join(directory, "part-0"), records)
    return images, labels


def mlp(flow, x, prefix):
    hidden = flow.layers.dense(x / 128.0, 256, activation=flow.nn.relu, name=prefix + "1")
    return flow.layers.dense(hidden, 10, name=prefix + "2")


def time_calls(step, warmup, iterations):
    return side_by_side.seconds_per_call(step, warmup, iterations) * 1e3


def oneflow_cases(directory, images, labels, warmup, iterations):
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)
    sgd = lambda: flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.01]))  # noqa

    @flow.global_function(type="train")
    def from_ofrecord() -> tp.Numpy:
        records = flow.data.ofrecord_reader(directory, batch_size=BATCH, random_shuffle=True)
        x = flow.data.OFRecordRawDecoder(records, "images", shape=(784,), dtype=flow.float)
        y = flow.data.OFRecordRawDecoder(records, "labels", shape=(), dtype=flow.int32)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, mlp(flow, x, "a"))
        sgd().minimize(loss)
        return loss

    @flow.global_function(type="train")
    def from_numpy(x: tp.Numpy.Placeholder((BATCH, 784)),
                   y: tp.Numpy.Placeholder((BATCH,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, mlp(flow, x, "b"))
        sgd().minimize(loss)
        return loss

    rng = np.random.RandomState(1)

    def numpy_step():
        rows = rng.randint(0, RECORDS, size=BATCH)
        from_numpy(images[rows].astype(np.float32), labels[rows])

    return (time_calls(from_ofrecord, warmup, iterations),
            time_calls(numpy_step, warmup, iterations))


def torch_case(images, labels, warmup, iterations):
    import torch

    torch.set_num_threads(1)
    data = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=True, drop_last=True)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = iter(loader)

    def step():
        nonlocal batches
        try:
            x, y = next(batches)
        except StopIteration:
            batches = iter(loader)
            x, y = next(batches)
        loss = torch.nn.functional.cross_entropy(model(x.float() / 128.0), y.long())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss.item()

    return time_calls(step, warmup, iterations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        images, labels = write_dataset(directory)
        ofrecord_ms, numpy_ms = oneflow_cases(directory, images, labels, args.warmup,
                                              args.iterations)
    torch_ms = torch_case(images, labels, args.warmup, args.iterations)
    print(json.dumps({"case": "mlp_784_256_10_b100", "ofrecord_ms_per_step": round(ofrecord_ms, 3),
                      "numpy_fed_ms_per_step": round(numpy_ms, 3),
                      "torch_dataloader_ms_per_step": round(torch_ms, 3)}))


if __name__ == "__main__":
    main()
