"""Reading OFRecord files, OneFlow 0.3's dataset format.

A dataset is a directory of part files `<prefix><i>` (i = 0 .. data_part_num - 1, zero-padded to
part_name_suffix_length digits unless that is -1). A part file is a sequence of records, each an
8-byte little-endian length followed by that many bytes of a serialized OFRecord
(oneflow.core.record.record_pb2). The reader cycles through the parts forever (epochs), with an
optional shuffle buffer, and hands out batches of parsed records; the decoders (RawDecoder)
turn one feature of each record of a batch into an array.
"""
import itertools
import os
import random
import struct

import numpy as np

from oneflow.framework import dtypes

_LENGTH = struct.Struct("<q")


def part_paths(ofrecord_dir, data_part_num, part_name_prefix, part_name_suffix_length):
    """The part files of a dataset, checked to exist."""
    where = "data.ofrecord_reader"
    if not isinstance(ofrecord_dir, (str, os.PathLike)):
        raise TypeError("%s: ofrecord_dir must be a path, got %r" % (where, ofrecord_dir))
    for name, value, low in (("data_part_num", data_part_num, 1),
                             ("part_name_suffix_length", part_name_suffix_length, -1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError("%s: %s must be an int >= %d, got %r" % (where, name, low, value))
    if not os.path.isdir(ofrecord_dir):
        raise FileNotFoundError("%s: %r is not a directory" % (where, str(ofrecord_dir)))
    paths = []
    for index in range(data_part_num):
        suffix = str(index) if part_name_suffix_length == -1 else str(index).zfill(
            part_name_suffix_length)
        path = os.path.join(ofrecord_dir, part_name_prefix + suffix)
        if not os.path.isfile(path):
            present = sorted(os.listdir(ofrecord_dir))[:5]
            raise FileNotFoundError(
                "%s: part file %r of %d (data_part_num) is missing; the directory holds %s"
                % (where, path, data_part_num, present or "nothing"))
        paths.append(path)
    return paths


def read_part(path):
    """The serialized records of one part file, checking its framing."""
    with open(path, "rb") as part:
        data = part.read()
    records, offset = [], 0
    while offset < len(data):
        if offset + _LENGTH.size > len(data):
            raise ValueError("OFRecord part %r: truncated length at byte %d" % (path, offset))
        (length,) = _LENGTH.unpack_from(data, offset)
        offset += _LENGTH.size
        if length < 0 or offset + length > len(data):
            raise ValueError("OFRecord part %r: record at byte %d claims %d bytes, %d left"
                             % (path, offset - _LENGTH.size, length, len(data) - offset))
        records.append(data[offset:offset + length])
        offset += length
    return records


def write_part(path, records):
    """Writes serialized OFRecords (bytes, or messages) as one part file, atomically."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as part:
        for record in records:
            data = record if isinstance(record, bytes) else record.SerializeToString()
            part.write(_LENGTH.pack(len(data)))
            part.write(data)
    os.replace(tmp, path)


class OFRecordReader:
    """Batches of parsed OFRecords from a dataset, forever. random_shuffle draws each record from
    a buffer of shuffle_buffer_size records (as OneFlow's reader does); shuffle_after_epoch
    visits the parts in a new order every epoch."""

    def __init__(self, paths, batch_size, random_shuffle, shuffle_buffer_size,
                 shuffle_after_epoch, seed=None):
        from oneflow.core.record import record_pb2

        self._record_type = record_pb2.OFRecord
        self._paths = list(paths)
        self._batch_size = batch_size
        self._shuffle = random_shuffle
        self._buffer_size = shuffle_buffer_size
        self._shuffle_parts = shuffle_after_epoch
        self._random = random.Random(seed)
        self._stream = self._records()
        self._buffer = []
        self._cache = {}  # path -> serialized records (parts are read once)

    def _part(self, path):
        if path not in self._cache:
            self._cache[path] = read_part(path)
        return self._cache[path]

    def _records(self):
        epoch = 0
        while True:
            order = list(self._paths)
            if self._shuffle_parts and epoch > 0:
                self._random.shuffle(order)
            count = 0
            for path in order:
                for record in self._part(path):
                    count += 1
                    yield record
            if count == 0:
                raise ValueError("data.ofrecord_reader: the part files %s hold no records"
                                 % self._paths)
            epoch += 1

    def _next_serialized(self):
        if not self._shuffle:
            return next(self._stream)
        while len(self._buffer) < self._buffer_size:
            self._buffer.append(next(self._stream))
        index = self._random.randrange(len(self._buffer))
        self._buffer[index], self._buffer[-1] = self._buffer[-1], self._buffer[index]
        return self._buffer.pop()

    def next_batch(self):
        records = []
        for _ in range(self._batch_size):
            record = self._record_type()
            record.ParseFromString(self._next_serialized())
            records.append(record)
        return records


_LIST_DTYPES = {"float_list": np.float32, "double_list": np.float64, "int32_list": np.int32,
                "int64_list": np.int64}
_LIST_KINDS = tuple(_LIST_DTYPES)


def _feature_values(feature, blob_name, row, decoder_name):
    """(kind, values) of one record's feature: the byte string of a bytes_list, or the
    repeated numeric container."""
    kind = feature.WhichOneof("kind")
    if kind == "bytes_list":
        values = feature.bytes_list.value
        if len(values) != 1:
            raise ValueError("%s: feature %r of record %d is a bytes_list of %d strings; the raw "
                             "decoder reads exactly one" % (decoder_name, blob_name, row,
                                                            len(values)))
        return kind, values[0]
    if kind in _LIST_KINDS:
        return kind, getattr(feature, kind).value
    raise ValueError("%s: feature %r of record %d is empty (no list is set)"
                     % (decoder_name, blob_name, row))


def decode_raw(records, blob_name, shape, dtype, dim1_varying_length, auto_zero_padding,
               decoder_name):
    """One feature of each record as a (len(records),) + shape array of dtype, as OneFlow's
    ofrecord_raw_decoder reads it: a bytes_list holds one byte string whose bytes are signed
    int8 values (shorter strings are zero-padded); a numeric list must have exactly
    prod(shape) values, or fewer (zero-padded) with auto_zero_padding or dim1_varying_length,
    and more are cut off with auto_zero_padding."""
    count = int(np.prod(shape, dtype=np.int64))
    kinds, values = set(), []
    for row, record in enumerate(records):
        if blob_name not in record.feature:
            raise KeyError("%s: record %d of the batch has no feature %r; it has %s"
                           % (decoder_name, row, blob_name, sorted(record.feature)))
        kind, value = _feature_values(record.feature[blob_name], blob_name, row, decoder_name)
        kinds.add(kind)
        values.append(value)
    out_shape = (len(records),) + tuple(shape)
    exact = all(len(value) == count for value in values)
    # Fast paths: every record holds exactly `count` values of one kind.
    if exact and kinds == {"bytes_list"}:
        data = np.frombuffer(b"".join(values), dtype=np.int8)
        return data.astype(dtype.numpy_dtype).reshape(out_shape)
    if exact and len(kinds) == 1:
        data = np.fromiter(itertools.chain.from_iterable(values),
                           dtype=_LIST_DTYPES[kinds.pop()], count=len(values) * count)
        return data.astype(dtype.numpy_dtype, copy=False).reshape(out_shape)
    out = np.zeros((len(records), count), dtype=dtype.numpy_dtype)
    for row, value in enumerate(values):
        if isinstance(value, bytes):
            data = np.frombuffer(value, dtype=np.int8)[:count]
        else:
            data = np.asarray(value)
            if len(data) > count and auto_zero_padding:
                data = data[:count]
            elif len(data) != count and not (len(data) < count and (
                    auto_zero_padding or dim1_varying_length)):
                raise ValueError(
                    "%s: feature %r of record %d has %d values, shape %s needs %d (pass "
                    "auto_zero_padding=True to pad or cut)"
                    % (decoder_name, blob_name, row, len(data), tuple(shape), count))
        out[row, :len(data)] = data.astype(out.dtype, copy=False)
    return out.reshape(out_shape)


def check_decoder_dtype(dtype, where):
    dtype = dtypes.check(dtype, where + " dtype")
    if dtype not in (dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int32, dtypes.int64,
                     dtypes.uint8):
        raise TypeError("%s: dtype must be float32, float64, int8, int32, int64 or uint8, got %s"
                        % (where, dtype.name))
    return dtype
