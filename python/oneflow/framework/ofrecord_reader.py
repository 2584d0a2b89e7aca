"""Reading OFRecord files, OneFlow 0.3's dataset format.

A dataset is a directory of part files `<prefix><i>` (i = 0 .. data_part_num - 1, zero-padded to
part_name_suffix_length digits unless that is -1). A part file is a sequence of records, each an
8-byte little-endian length followed by that many bytes of a serialized OFRecord
(oneflow.core.record.record_pb2). The reader cycles through the parts forever (epochs), with an
optional shuffle buffer, and hands out batches of serialized records; decode_raw turns one
feature of each record of a batch into an array.

A batch may hold more records than the dataset (OneFlow 0.3 cycled the data across epochs). A
dataset of at most IN_MEMORY_BYTES is read once and then kept in memory, so such a batch costs no
file reading per epoch. A batch_size whose records alone would not fit in this machine's memory
is refused when the job is traced.
"""
import itertools
import os
import random
import struct

import numpy as np

from oneflow.framework import dtypes

_LENGTH = struct.Struct("<q")
IN_MEMORY_BYTES = 64 << 20  # part files up to this size in all are kept in memory once read


def check_bool(value, where, what):
    """`value` as a bool; a TypeError naming `what` unless it is a bool (or a numpy bool)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError("%s: %s must be a bool, got %r" % (where, what, value))
    return bool(value)


def part_paths(ofrecord_dir, data_part_num, part_name_prefix, part_name_suffix_length):
    """The part files of a dataset, checked to exist."""
    where = "data.ofrecord_reader"
    if not isinstance(ofrecord_dir, (str, os.PathLike)):
        raise TypeError("%s: ofrecord_dir must be a path, got %r" % (where, ofrecord_dir))
    if not isinstance(part_name_prefix, str):
        raise TypeError("%s: part_name_prefix must be a str, got %r" % (where, part_name_prefix))
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
        if not os.path.exists(path):
            present = sorted(os.listdir(ofrecord_dir))[:5]
            raise FileNotFoundError(
                "%s: part file %r of %d (data_part_num) is missing; the directory holds %s"
                % (where, path, data_part_num, present or "nothing"))
        if os.path.isdir(path):
            raise IsADirectoryError("%s: part file %r is a directory, not a regular file"
                                    % (where, path))
        if not os.path.isfile(path):  # a FIFO or a device: reading it could block forever
            raise OSError("%s: part file %r is not a regular file" % (where, path))
        paths.append(path)
    return paths


def _physical_memory_bytes():
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_batch_fits(paths, batch_size, where):
    """Refuses a batch_size whose batch could not be held in memory: a batch holds batch_size
    records (cycled when the dataset has fewer), each about as large as the dataset's first
    record on disk (its bytes and 8-byte length)."""
    memory = _physical_memory_bytes()
    if memory is None:
        return
    for path in paths:
        with open(path, "rb") as part:
            header = part.read(_LENGTH.size)
        if len(header) == _LENGTH.size:
            record_bytes = _LENGTH.size + max(0, _LENGTH.unpack(header)[0])
            break
    else:
        return  # no record: the reader reports an empty dataset when it runs
    if batch_size * record_bytes > memory:
        raise ValueError(
            "%s: batch_size %d needs about %.3g GiB for its records (%d bytes each, judging "
            "by the first record of %r), more than this machine's %.3g GiB of memory"
            % (where, batch_size, batch_size * record_bytes / 2.0 ** 30, record_bytes, path,
               memory / 2.0 ** 30))


def read_part(path):
    """The serialized records of one part file, read as they are needed (a dataset need not fit
    in memory), checking its framing."""
    with open(path, "rb") as part:
        size = os.fstat(part.fileno()).st_size
        offset = 0
        while True:
            header = part.read(_LENGTH.size)
            if not header:
                return
            if len(header) < _LENGTH.size:
                raise ValueError("OFRecord part %r: truncated length at byte %d" % (path, offset))
            (length,) = _LENGTH.unpack(header)
            # A corrupt length is checked against the file before anything is allocated.
            fits = 0 <= length <= size - offset - _LENGTH.size
            data = part.read(length) if fits else b""
            if not fits or len(data) != length:
                raise ValueError("OFRecord part %r: record at byte %d claims %d bytes, %d left"
                                 % (path, offset, length, len(data)))
            yield data
            offset += _LENGTH.size + length


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
    """Batches of serialized OFRecords from a dataset, forever. random_shuffle draws each record
    from a buffer of shuffle_buffer_size records (as OneFlow's reader does); shuffle_after_epoch
    visits the parts in a new order every epoch. A dataset of at most IN_MEMORY_BYTES is read
    once, then its epochs come from memory."""

    def __init__(self, paths, batch_size, random_shuffle, shuffle_buffer_size,
                 shuffle_after_epoch, seed=None):
        self._paths = list(paths)
        self._batch_size = batch_size
        self._shuffle = random_shuffle
        self._buffer_size = shuffle_buffer_size
        self._shuffle_parts = shuffle_after_epoch
        self._random = random.Random(seed)
        self._in_memory = sum(os.path.getsize(path) for path in self._paths) <= IN_MEMORY_BYTES
        self._parts = {}  # path -> its records, for a dataset kept in memory
        self._stream = self._records()
        self._buffer = []
        self._error = None  # a reading error, raised again by every later call

    def _part(self, path):
        """The records of one part file: streamed, or read once for a dataset kept in memory."""
        if not self._in_memory:
            return read_part(path)
        if path not in self._parts:
            self._parts[path] = list(read_part(path))
        return self._parts[path]

    def _records(self):
        epoch = 0
        while True:
            order = list(self._paths)
            if self._shuffle_parts and epoch > 0:
                self._random.shuffle(order)
            count = 0
            for path in order:
                records = self._part(path)
                if self._in_memory:
                    count += len(records)
                    yield from records
                    continue
                for record in records:
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
        """The next batch_size serialized records."""
        if self._error is not None:
            raise self._error
        try:
            if not self._shuffle:
                return list(itertools.islice(self._stream, self._batch_size))
            return [self._next_serialized() for _ in range(self._batch_size)]
        except (OSError, ValueError) as error:
            self._error = error
            raise


def decode_raw(records, blob_name, shape, dtype, dim1_varying_length, auto_zero_padding):
    """One feature of each serialized record as a (len(records),) + shape array of dtype, as
    OneFlow's ofrecord_raw_decoder reads it (parsed and converted in C++,
    oneflow/data/ofrecord_decoder.h): a bytes_list holds one byte string whose bytes are signed
    int8 values (a shorter one is zero-padded); a numeric list must have exactly prod(shape)
    values, or fewer (zero-padded) with auto_zero_padding or dim1_varying_length, and more are
    cut off with auto_zero_padding."""
    from oneflow import _oneflow_internal

    return _oneflow_internal.decode_raw_ofrecords(
        records, blob_name, list(shape), np.dtype(dtype.numpy_dtype), dim1_varying_length,
        auto_zero_padding)


def check_decoder_dtype(dtype, where):
    dtype = dtypes.check(dtype, where + " dtype")
    if dtype not in (dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int32, dtypes.int64,
                     dtypes.uint8):
        raise TypeError("%s: dtype must be float32, float64, int8, int32, int64 or uint8, got %s"
                        % (where, dtype.name))
    return dtype
