"""flow.data.ofrecord_reader + OFRecordRawDecoder (and decode_ofrecord) on OFRecord files written
with oneflow.core.record.record_pb2, against the arrays the files were made from."""
import os
import re
import struct

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.core.record import record_pb2

pytestmark = pytest.mark.timeout(120)


def _record(image, label, weights):
    return record_pb2.OFRecord(feature={
        "images": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[image.tobytes()])),
        "labels": record_pb2.Feature(int32_list=record_pb2.Int32List(value=[label])),
        "weights": record_pb2.Feature(float_list=record_pb2.FloatList(value=weights)),
    })


@pytest.fixture
def dataset(tmp_path):
    """10 records in 3 parts (4, 4, 2), written as OneFlow does: int64 length + bytes."""
    rng = np.random.RandomState(0)
    images = rng.randint(0, 100, size=(10, 2, 3)).astype(np.uint8)
    labels = np.arange(10, dtype=np.int32)
    weights = rng.rand(10, 4).astype(np.float32)
    for part, rows in enumerate([range(0, 4), range(4, 8), range(8, 10)]):
        with open(tmp_path / ("part-%05d" % part), "wb") as f:
            for i in rows:
                data = _record(images[i], int(labels[i]), weights[i]).SerializeToString()
                f.write(struct.pack("<q", len(data)) + data)
    return str(tmp_path), images, labels, weights


def _job(path, batch_size, devices=1, **reader_args):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)

    @flow.global_function()
    def read() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            records = flow.data.ofrecord_reader(path, batch_size=batch_size, data_part_num=3,
                                                part_name_suffix_length=5, **reader_args)
            images = flow.data.OFRecordRawDecoder(records, "images", shape=(2, 3),
                                                  dtype=flow.float)
            labels = flow.data.OFRecordRawDecoder(records, "labels", shape=(1,),
                                                  dtype=flow.int32)
            weights = flow.data.ofrecord_raw_decoder(records, "weights", shape=(4,),
                                                     dtype=flow.double)
            # One output: labels in column 0, the image sum in column 1, weight sum in 2.
            image_sums = flow.math.reduce_sum(images, axis=[1, 2], keepdims=True)
            return flow.concat([flow.cast(labels, flow.double),
                                flow.cast(flow.reshape(image_sums, (batch_size, 1)), flow.double),
                                flow.math.reduce_sum(weights, axis=[1], keepdims=True)], axis=1)

    return read


@pytest.mark.parametrize("devices", [1, 2])
def test_batches_cycle_through_the_parts_in_order(dataset, devices):
    path, images, labels, weights = dataset
    read = _job(path, 4, devices)
    order = np.concatenate([np.arange(10), np.arange(10)])[:12]
    for step in range(3):
        rows = order[step * 4:(step + 1) * 4]
        out = read()
        np.testing.assert_array_equal(out[:, 0], labels[rows])
        np.testing.assert_array_equal(out[:, 1], images[rows].astype(np.float64).sum((1, 2)))
        np.testing.assert_allclose(out[:, 2], weights[rows].astype(np.float64).sum(1), rtol=1e-6)


def test_random_shuffle_draws_every_record_evenly(dataset):
    """A shuffle buffer of 3: after 100 draws each of the 10 records was drawn 10 times, give or
    take the 3 still in the buffer; the order is not the file order."""
    path, _, _, _ = dataset
    read = _job(path, 5, random_shuffle=True, shuffle_buffer_size=3, seed=7)
    seen = np.concatenate([read()[:, 0] for _ in range(20)]).astype(int)
    counts = np.bincount(seen, minlength=10)
    assert counts.sum() == 100 and counts.min() >= 7 and counts.max() <= 11, counts
    assert list(seen[:10]) != list(range(10))


def test_raw_decoder_reads_bytes_as_signed_int8(tmp_path):
    data = bytes([1, 200, 255])
    record = record_pb2.OFRecord(feature={
        "x": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[data]))})
    from oneflow.framework.ofrecord_reader import write_part

    write_part(str(tmp_path / "part-0"), [record])
    flow.clear_default_session()

    @flow.global_function()
    def read() -> tp.Numpy:
        records = flow.data.ofrecord_reader(str(tmp_path), batch_size=1)
        return flow.data.OFRecordRawDecoder(records, "x", shape=(4,), dtype=flow.int32)

    np.testing.assert_array_equal(read(), [[1, -56, -1, 0]])


def test_decode_ofrecord_trains_a_model(dataset):
    """The older API (BlobConf + RawCodec) feeding a train job: the loss falls."""
    path, _, _, _ = dataset
    flow.clear_default_session()

    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        images, labels = flow.data.decode_ofrecord(
            path, [flow.data.BlobConf("images", (6,), flow.float, flow.data.RawCodec()),
                   flow.data.BlobConf("labels", (), flow.int32, flow.data.RawCodec())],
            batch_size=5, data_part_num=3, part_name_suffix_length=5)
        logits = flow.layers.dense(images / 100.0, 10, name="fc")
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5])).minimize(loss)
        return loss

    losses = [train().mean() for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("call, error, words", [
    (lambda p: flow.data.ofrecord_reader(p + "/nope"), FileNotFoundError, ["not a directory"]),
    (lambda p: flow.data.ofrecord_reader(p, data_part_num=4, part_name_suffix_length=5),
     FileNotFoundError, ["part-00003", "missing"]),
    (lambda p: flow.data.ofrecord_reader(p, batch_size=0), ValueError, ["batch_size"]),
    (lambda p: flow.data.OFRecordRawDecoder("records", "x", (1,), flow.float), TypeError,
     ["ofrecord_reader"]),
])
def test_bad_reader_arguments(dataset, call, error, words):
    path = dataset[0]
    flow.clear_default_session()

    @flow.global_function()
    def read():
        call(path)

    with pytest.raises(error) as info:
        read()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("feature, shape, words", [
    ("missing", (1,), ["no feature 'missing'", "images"]),
    ("weights", (3,), ["4 values", "needs 3"]),
])
def test_bad_features_raise_at_the_call(dataset, feature, shape, words):
    path = dataset[0]
    flow.clear_default_session()

    @flow.global_function()
    def read() -> tp.Numpy:
        records = flow.data.ofrecord_reader(path, batch_size=2, data_part_num=3,
                                            part_name_suffix_length=5)
        return flow.data.OFRecordRawDecoder(records, feature, shape=shape, dtype=flow.float)

    with pytest.raises((KeyError, ValueError)) as info:
        read()
    for word in words:
        assert word in str(info.value)


def test_truncated_part_file_is_reported(tmp_path):
    with open(tmp_path / "part-0", "wb") as f:
        f.write(struct.pack("<q", 100) + b"short")
    flow.clear_default_session()

    @flow.global_function()
    def read() -> tp.Numpy:
        records = flow.data.ofrecord_reader(str(tmp_path), batch_size=1)
        return flow.data.OFRecordRawDecoder(records, "x", shape=(1,), dtype=flow.float)

    for _ in range(2):  # the same error again, not a StopIteration
        with pytest.raises(ValueError, match="claims 100 bytes"):
            read()


def test_feature_key_that_is_not_utf8_keeps_the_error_message():
    """Keys that are not UTF-8 appear escaped in the message (the message once came out
    empty: Python could not decode it)."""
    from oneflow.framework import ofrecord_reader

    record = record_pb2.OFRecord()
    record.feature["ab"].int32_list.value.extend([1, 2])
    data = record.SerializeToString()
    np.testing.assert_array_equal(
        ofrecord_reader.decode_raw([data], "ab", (2,), flow.int32, False, False), [[1, 2]])
    with pytest.raises(ValueError, match=r"record 0 of the batch has no feature 'ab'; it has "
                                         r"\[\\xff\\xfe\]"):
        ofrecord_reader.decode_raw([data.replace(b"ab", b"\xff\xfe")], "ab", (2,), flow.int32,
                                   False, False)


def _small_dataset(path, values=((1.0, 2.0, 3.0), (4.0, 5.0, 6.0), (7.0, 8.0, 9.0),
                                 (10.0, 11.0, 12.0))):
    """One part file of float records (feature "x"), written here with struct."""
    with open(os.path.join(str(path), "part-0"), "wb") as f:
        for row in values:
            data = record_pb2.OFRecord(feature={"x": record_pb2.Feature(
                float_list=record_pb2.FloatList(value=row))}).SerializeToString()
            f.write(struct.pack("<q", len(data)) + data)
    return np.array(values, np.float32)


def _x_job(path, batch_size, **reader_args):
    flow.clear_default_session()

    @flow.global_function()
    def read() -> tp.Numpy:
        records = flow.data.ofrecord_reader(str(path), batch_size=batch_size, **reader_args)
        return flow.data.OFRecordRawDecoder(records, "x", shape=(3,), dtype=flow.float32)

    return read


@pytest.mark.timeout(60)
@pytest.mark.parametrize("random_shuffle", [False, True])
def test_batch_far_larger_than_the_dataset_cycles_quickly(tmp_path, random_shuffle):
    """A batch of 2,000,003 records from a 4-record dataset cycles it (as OneFlow 0.3 did) in
    seconds: a small dataset is read once, not once per epoch. Each record appears as often as
    np.resize (unshuffled: in file order) says."""
    rows = _small_dataset(tmp_path)
    size = 2000003
    read = _x_job(tmp_path, size, random_shuffle=random_shuffle, seed=1)
    for start in (0, size % 4):  # the second batch goes on where the first stopped
        out = read()
        expected = np.resize(np.roll(rows, -start, axis=0), (size, 3))
        if random_shuffle:
            counts = np.bincount(out[:, 0].astype(np.int64) // 3, minlength=4)
            assert abs(counts - size / 4).max() <= 1024 + 1  # the buffer holds 1024
            assert not np.array_equal(out[:100], expected[:100])
        else:
            np.testing.assert_array_equal(out, expected)


def test_batch_that_cannot_fit_in_memory_is_refused(tmp_path):
    _small_dataset(tmp_path)
    read = _x_job(tmp_path, 10 ** 13)
    with pytest.raises(ValueError, match=r"data.ofrecord_reader: batch_size 10000000000000 needs "
                                         r"about .* GiB for its records .* more than this "
                                         r"machine's .* GiB of memory"):
        read()


def test_shuffle_flags_must_be_bools(tmp_path):
    rows = _small_dataset(tmp_path)
    for flag in ("random_shuffle", "shuffle_after_epoch"):
        for value in ("no", 1, None):
            with pytest.raises(TypeError, match="data.ofrecord_reader: %s must be a bool, got %r"
                               % (flag, value)):
                _x_job(tmp_path, 4, **{flag: value})()
        # numpy bools are bools
        assert _x_job(tmp_path, 8, **{flag: np.bool_(False)})().shape == (8, 3)
    np.testing.assert_array_equal(_x_job(tmp_path, 4, random_shuffle=np.bool_(False))(), rows)
    with pytest.raises(TypeError, match="data.ofrecord_loader: shuffle must be a bool, got 'no'"):
        flow.data.ofrecord_loader(str(tmp_path), shuffle="no")
    with pytest.raises(TypeError, match="data.decode_ofrecord: shuffle must be a bool, got 1"):
        flow.data.decode_ofrecord(str(tmp_path), [], shuffle=1)
    with pytest.raises(TypeError, match="data.RawCodec: auto_zero_padding must be a bool"):
        flow.data.RawCodec(auto_zero_padding="yes")


@pytest.mark.parametrize("flag", ["dim1_varying_length", "auto_zero_padding"])
def test_raw_decoder_flags_must_be_bools(tmp_path, flag):
    _small_dataset(tmp_path)
    flow.clear_default_session()

    @flow.global_function()
    def read() -> tp.Numpy:
        records = flow.data.ofrecord_reader(str(tmp_path), batch_size=2)
        return flow.data.OFRecordRawDecoder(records, "x", shape=(3,), dtype=flow.float32,
                                            **{flag: "False"})

    with pytest.raises(TypeError, match="data.OFRecordRawDecoder: %s must be a bool, got 'False'"
                       % flag):
        read()


@pytest.mark.parametrize("prefix", [None, 5, b"part-"])
def test_part_name_prefix_must_be_a_str(tmp_path, prefix):
    _small_dataset(tmp_path)
    with pytest.raises(TypeError, match="data.ofrecord_reader: part_name_prefix must be a str, "
                                        "got %s" % re.escape(repr(prefix))):
        _x_job(tmp_path, 1, part_name_prefix=prefix)()
    rows = _small_dataset(tmp_path)
    np.testing.assert_array_equal(_x_job(tmp_path, 2, part_name_prefix="part-")(), rows[:2])


def test_part_file_that_is_not_a_regular_file(tmp_path):
    os.makedirs(str(tmp_path / "part-0"))
    with pytest.raises(IsADirectoryError, match=r"part file '.*part-0' is a directory, not a "
                                                r"regular file"):
        _x_job(tmp_path, 1)()
    os.rmdir(str(tmp_path / "part-0"))
    os.mkfifo(str(tmp_path / "part-0"))  # reading it would block
    with pytest.raises(OSError, match=r"part file '.*part-0' is not a regular file"):
        _x_job(tmp_path, 1)()
