"""oneflow.data: OneFlow 0.3's dataset helper `load_mnist` (and the IDX reader behind it), its
synthetic data source `decode_random`, and its OFRecord reader with the raw, bytes and image
decoders (see docs/data.md).

`load_mnist` returns MNIST as whole batches of numpy arrays, as OneFlow 0.3 did: it reads
`mnist.npz` (keys x_train, y_train, x_test, y_test; uint8 images N x 28 x 28) from `out_dir`,
downloading it from `url` when it is missing, and checks its sha256 against `hash_check` (pass
None to skip the check). Where the file is missing and cannot be downloaded (a machine without
network), it falls back to Fashion-MNIST, which has the same shapes and splits, from Debian's
dataset-fashion-mnist package (or the directory `ONEFLOW_FASHION_MNIST_DIR` names), and says so
once on stderr; set `ONEFLOW_MNIST_NPZ` to use an mnist.npz elsewhere.
"""
import gzip
import hashlib
import os
import sys
import urllib.request

import numpy as np

from oneflow.framework.api_names import missing_name_hook as _missing_name_hook

MNIST_URL = "https://oneflow-public.oss-cn-beijing.aliyuncs.com/datasets/mnist.npz"
MNIST_SHA256 = "63d4344077849053dc3036b247fa012b2b381de53fd055a66b539dffd76cf08e"
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
_DOWNLOAD_TIMEOUT_S = 30


def read_idx(path):
    """The array in an IDX file (optionally gzipped): big-endian magic 0, 0, type 0x08 (unsigned
    bytes), number of dimensions; then the dimensions and the values."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[:2] != b"\x00\x00" or data[2] != 0x08:
        raise ValueError("%s is not an IDX file of unsigned bytes" % path)
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if array.size != int(np.prod(shape)):
        raise ValueError("%s: expected %d values for shape %s, found %d"
                         % (path, int(np.prod(shape)), shape, array.size))
    return array.reshape(shape)


def read_idx_split(data_dir, split):
    """(images uint8 N x H x W, labels uint8 N) of an MNIST-layout directory's "train" or "test"
    split: files train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-..."""
    if split not in ("train", "test"):
        raise ValueError("read_idx_split: split must be 'train' or 'test', got %r" % (split,))
    prefix = "train" if split == "train" else "t10k"
    arrays = []
    for kind, rank in (("images", 3), ("labels", 1)):
        names = ["%s-%s-idx%d-ubyte%s" % (prefix, kind, rank, ext) for ext in (".gz", "")]
        paths = [os.path.join(data_dir, name) for name in names]
        found = [path for path in paths if os.path.exists(path)]
        if not found:
            raise FileNotFoundError("no %s or %s in %s" % (names[0], names[1], data_dir))
        arrays.append(read_idx(found[0]))
    return arrays[0], arrays[1]


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url, path):
    """Downloads to a temporary file renamed into place, so a failed download leaves nothing."""
    partial = path + ".part"
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response, \
                open(partial, "wb") as out:
            while True:
                chunk = response.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _read_npz(path):
    with np.load(path, allow_pickle=False) as f:
        missing = [key for key in ("x_train", "y_train", "x_test", "y_test") if key not in f]
        if missing:
            raise ValueError("load_mnist: %s lacks the arrays %s" % (path, ", ".join(missing)))
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


_fallback_noted = False


def _mnist_arrays(url, hash_check, out_dir):
    """((x_train, y_train), (x_test, y_test)) as uint8 arrays, from the first source that works:
    ONEFLOW_MNIST_NPZ, out_dir/mnist.npz, a download into out_dir, Fashion-MNIST."""
    global _fallback_noted
    path = os.environ.get("ONEFLOW_MNIST_NPZ") or os.path.join(out_dir, "mnist.npz")
    why = None
    if not os.path.isfile(path):
        try:
            os.makedirs(out_dir, exist_ok=True)
            _download(url, path)
        except (OSError, ValueError) as error:  # URLError is an OSError
            why = "%s is missing and downloading %s failed (%s)" % (path, url, error)
    if why is None:
        if hash_check and _sha256(path) != hash_check:
            raise ValueError("load_mnist: sha256 verification of %s failed (expected %s); remove "
                             "it and try again, or pass hash_check=None" % (path, hash_check))
        return _read_npz(path)
    fashion_dir = os.environ.get("ONEFLOW_FASHION_MNIST_DIR", FASHION_MNIST_DIR)
    try:
        arrays = read_idx_split(fashion_dir, "train"), read_idx_split(fashion_dir, "test")
    except (OSError, ValueError) as error:
        raise RuntimeError(
            "load_mnist: %s, and the Fashion-MNIST stand-in is unavailable (%s). Put mnist.npz "
            "in %r, set ONEFLOW_MNIST_NPZ, or install Debian's dataset-fashion-mnist"
            % (why, error, out_dir)) from None
    if not _fallback_noted:
        _fallback_noted = True
        sys.stderr.write("oneflow: load_mnist: %s; using Fashion-MNIST from %s instead (same "
                         "shapes and splits)\n" % (why, fashion_dir))
    return arrays


def load_mnist(train_batch_size=100, test_batch_size=100, data_format="NCHW", url=MNIST_URL,
               hash_check=MNIST_SHA256, out_dir="."):
    """MNIST in whole batches: ((train_images, train_labels), (test_images, test_labels)).

    Images are float32 (pixel - 128) / 255 shaped (batches, batch_size, 1, 28, 28) for "NCHW" or
    (batches, batch_size, 28, 28, 1) for "NHWC"; labels int32 (batches, batch_size). Each batch
    size must divide its split (60,000 training, 10,000 test images).
    """
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("load_mnist: data_format must be 'NCHW' or 'NHWC', got %r" % (data_format,))
    for what, size in (("train_batch_size", train_batch_size),
                       ("test_batch_size", test_batch_size)):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
            raise ValueError("load_mnist: %s must be a positive int, got %r" % (what, size))
    (x_train, y_train), (x_test, y_test) = _mnist_arrays(url, hash_check, out_dir)

    def batches(x, y, batch_size, split):
        if len(x) != len(y) or x.ndim != 3:
            raise ValueError("load_mnist: the %s split has images %s and labels %s; expected "
                             "N x H x W images and N labels" % (split, x.shape, y.shape))
        if len(x) % batch_size:
            raise ValueError("load_mnist: %s batch size %d does not divide the %d %s images"
                             % (split, batch_size, len(x), split))
        x = (x.astype(np.float32) - 128.0) / 255.0
        if data_format == "NCHW":
            images = x.reshape((-1, batch_size, 1) + x.shape[1:])
        else:
            images = x.reshape((-1, batch_size) + x.shape[1:] + (1,))
        return images, y.astype(np.int32).reshape((-1, batch_size))

    return (batches(x_train, y_train, train_batch_size, "training"),
            batches(x_test, y_test, test_batch_size, "test"))


def decode_random(shape, dtype, batch_size=1, initializer=None, tick=None, distribute=None,
                  name=None):
    """A (batch_size,) + shape blob of fresh synthetic data every iteration, drawn as
    `initializer` says (default: random_uniform_initializer(), uniform in [0, 1)); OneFlow 0.3's
    data source for benchmarks without a dataset. Constant initializers give constant data;
    integer dtypes take the floor of the uniform samples. `tick` and `distribute` are accepted
    for compatibility (the blob is placed and split like any source op in the scope)."""
    from oneflow.framework import dtypes, shapes
    from oneflow.ops import array_ops, initializers, random_ops

    if dtype is None:
        raise TypeError("data.decode_random: dtype is required")
    dtype = dtypes.check(dtype, "data.decode_random dtype")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError("data.decode_random: batch_size must be a positive int, got %r"
                         % (batch_size,))
    full_shape = (int(batch_size),) + tuple(shapes.to_shape(shape, "data.decode_random"))
    if initializer is None:
        initializer = initializers.random_uniform_initializer()
    if not isinstance(initializer, initializers.InitializerConf):
        raise TypeError("data.decode_random: initializer must be a flow.*_initializer(), got %r"
                        % (initializer,))
    floating = dtype in (dtypes.float32, dtypes.float64)
    sample_dtype = dtype if floating else dtypes.float32
    if initializer.kind == "constant":
        return array_ops.constant(initializer.args[0], dtype=dtype, shape=full_shape, name=name)
    if initializer.kind == "random_uniform":
        low, high = initializer.args
        samples = random_ops.uniform(full_shape, low, high, dtype=sample_dtype,
                                     seed=initializer.seed, name=name)
        if floating:
            return samples
        from oneflow.ops import math_ops

        return array_ops.cast(math_ops.floor(samples), dtype)
    if initializer.kind == "random_normal":
        if not floating:
            raise TypeError("data.decode_random: random_normal_initializer needs a floating "
                            "dtype, got %s" % dtype.name)
        mean, stddev = initializer.args
        return random_ops.normal(full_shape, mean, stddev, dtype=dtype, seed=initializer.seed,
                                 name=name)
    raise NotImplementedError("data.decode_random: initializer %s is not supported (constant, "
                              "random_uniform and random_normal are)" % initializer.kind)


class OFRecordBlob:
    """What data.ofrecord_reader returns inside a job: a batch of OFRecords, read by the
    decoders (OFRecordRawDecoder, OFRecordImageDecoder, ...). Holds no device data itself:
    `records` is the host value (framework/host_data.py) giving each call's serialized records."""

    usage_hint = ("a batch of OFRecords is read by the flow.data decoders (OFRecordRawDecoder, "
                  "OFRecordImageDecoder, ...), not by ops")

    def __init__(self, records, batch_size, placement, name):
        self.records, self.batch_size, self.placement, self.name = \
            records, batch_size, placement, name

    @property
    def shape(self):
        return (self.batch_size,)

    def __repr__(self):
        return "OFRecordBlob(%r, batch_size=%d)" % (self.name, self.batch_size)


def _positive_int(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError("%s must be a positive int, got %r" % (where, value))
    return int(value)


def ofrecord_reader(ofrecord_dir, batch_size=1, data_part_num=1, part_name_prefix="part-",
                    part_name_suffix_length=-1, random_shuffle=False, shuffle_buffer_size=1024,
                    shuffle_after_epoch=False, name=None, seed=None):
    """Batches of OFRecords from the part files <ofrecord_dir>/<part_name_prefix><i>, i <
    data_part_num (zero-padded to part_name_suffix_length digits unless -1), cycling through
    them forever; each call of the job takes the next batch_size records. Decode features with
    flow.data.OFRecordRawDecoder and images with flow.data.OFRecordImageDecoder. Call inside a
    global function."""
    from oneflow.framework import host_data, op_builder
    from oneflow.framework import ofrecord_reader as reader_util

    where = "data.ofrecord_reader"
    session = op_builder.current_job()
    batch_size = _positive_int(batch_size, where + ": batch_size")
    shuffle_buffer_size = _positive_int(shuffle_buffer_size, where + ": shuffle_buffer_size")
    random_shuffle = reader_util.check_bool(random_shuffle, where, "random_shuffle")
    shuffle_after_epoch = reader_util.check_bool(shuffle_after_epoch, where,
                                                 "shuffle_after_epoch")
    paths = reader_util.part_paths(ofrecord_dir, data_part_num, part_name_prefix,
                                   part_name_suffix_length)
    reader_util.check_batch_fits(paths, batch_size, where)
    reader = reader_util.OFRecordReader(paths, batch_size, random_shuffle, shuffle_buffer_size,
                                        shuffle_after_epoch, seed)
    placement = session.scope.current_placement() or session.default_placement()
    name = op_builder.op_name(name, "OFRecordReader")
    records = host_data.HostValue("data.ofrecord_reader %r" % name, reader.next_batch)
    return OFRecordBlob(records, batch_size, placement, name)


def _check_records(input_blob, where):
    if not isinstance(input_blob, OFRecordBlob):
        raise TypeError("%s: input_blob must be what flow.data.ofrecord_reader returned, got %r"
                        % (where, input_blob))


def _check_feature_name(blob_name, where):
    if not isinstance(blob_name, str) or not blob_name:
        raise TypeError("%s: blob_name must be a feature name (str), got %r" % (where, blob_name))


def OFRecordRawDecoder(input_blob, blob_name, shape, dtype, dim1_varying_length=False,
                       auto_zero_padding=False, name=None):
    """Feature `blob_name` of each record of `input_blob` (from ofrecord_reader) as a
    (batch_size,) + shape blob of dtype, split over the reader's devices along the batch. A
    bytes_list feature is one byte string read as signed int8 values (as OneFlow does; use
    dtype=flow.uint8 and cast to keep 0..255); numeric lists must hold prod(shape) values, or
    fewer with auto_zero_padding / dim1_varying_length (zero-padded)."""
    from oneflow.framework import host_data, op_builder, shapes
    from oneflow.framework import ofrecord_reader as reader_util

    where = "data.OFRecordRawDecoder"
    _check_records(input_blob, where)
    _check_feature_name(blob_name, where)
    shape = tuple(shapes.to_shape(shape, where))
    dtype = reader_util.check_decoder_dtype(dtype, where)
    dim1_varying_length = reader_util.check_bool(dim1_varying_length, where,
                                                 "dim1_varying_length")
    auto_zero_padding = reader_util.check_bool(auto_zero_padding, where, "auto_zero_padding")
    op_name = op_builder.op_name(name, "OFRecordRawDecoder")

    def decode(records):
        return reader_util.decode_raw(records, blob_name, shape, dtype, dim1_varying_length,
                                      auto_zero_padding)

    value = host_data.HostValue("%s %r" % (where, op_name), decode, [input_blob.records])
    return host_data.feed(value, (input_blob.batch_size,) + shape, dtype, input_blob.placement,
                          op_name)


def OFRecordBytesDecoder(input_blob, blob_name, name=None):
    """The byte string of bytes_list feature `blob_name` of each record (an encoded image, say),
    for flow.image.decode."""
    from oneflow.framework import host_data, image_pipeline, op_builder

    where = "data.OFRecordBytesDecoder"
    _check_records(input_blob, where)
    _check_feature_name(blob_name, where)
    op_name = op_builder.op_name(name, "OFRecordBytesDecoder")
    value = host_data.HostValue("%s %r" % (where, op_name),
                                image_pipeline.bytes_feature(blob_name, where),
                                [input_blob.records])
    return image_pipeline.BytesList(value, input_blob.batch_size, input_blob.placement)


def OFRecordImageDecoder(input_blob, blob_name, color_space="BGR", name=None):
    """Decodes the JPEG in bytes_list feature `blob_name` of each record: an image list (each
    image height x width x channels uint8, in color_space "BGR", "RGB" or "GRAY") for the
    flow.image ops (Resize, CropMirrorNormalize, ...)."""
    from oneflow.framework import image_pipeline, op_builder

    where = "data.OFRecordImageDecoder"
    _check_records(input_blob, where)
    _check_feature_name(blob_name, where)
    op_name = op_builder.op_name(name, "OFRecordImageDecoder")
    encoded = OFRecordBytesDecoder(input_blob, blob_name, name=op_name + "-bytes")
    return image_pipeline.decode(encoded, color_space, "%s %r" % (where, op_name))


def OFRecordImageDecoderRandomCrop(input_blob, blob_name, color_space="BGR", num_attempts=10,
                                   seed=None, random_area=(0.08, 1.0),
                                   random_aspect_ratio=(0.75, 1.333333),
                                   name="OFRecordImageDecoderRandomCrop"):
    """OFRecordImageDecoder keeping a random crop of each image covering a fraction in
    random_area of it with an aspect ratio (width / height) in random_aspect_ratio (drawn
    log-uniformly; up to num_attempts draws, else the whole image with its aspect ratio clamped
    into the range), as ImageNet training pipelines do before resizing. Only the crop is
    decoded."""
    from oneflow.framework import image_pipeline, op_builder

    where = "data.OFRecordImageDecoderRandomCrop"
    _check_records(input_blob, where)
    _check_feature_name(blob_name, where)
    op_name = op_builder.op_name(name, "OFRecordImageDecoderRandomCrop")
    encoded = OFRecordBytesDecoder(input_blob, blob_name, name=op_name + "-bytes")
    return image_pipeline.decode_random_crop(encoded, color_space, num_attempts, seed,
                                             random_area, random_aspect_ratio,
                                             "%s %r" % (where, op_name))


def ImageDecoderRandomCropResize(input_blob, target_width, target_height, num_attempts=None,
                                 seed=None, random_area=None, random_aspect_ratio=None,
                                 num_workers=None, warmup_size=None, max_num_pixels=None,
                                 name=None):
    """Decodes each encoded JPEG of `input_blob` (OFRecordBytesDecoder) in RGB, crops it at
    random (as OFRecordImageDecoderRandomCrop) and resizes the crop to target_width x
    target_height: one (N, target_height, target_width, 3) uint8 blob. OneFlow's fused GPU
    decoder; num_workers, warmup_size and max_num_pixels tune its GPU decoding and are
    accepted for compatibility."""
    from oneflow.framework import dtypes, image_pipeline, op_builder

    where = "data.ImageDecoderRandomCropResize"
    for what, size in (("target_width", target_width), ("target_height", target_height)):
        _positive_int(size, "%s: %s" % (where, what))
    name = op_builder.op_name(name, "ImageDecoderRandomCropResize")
    images = image_pipeline.decode_random_crop(input_blob, "RGB",
                                               10 if num_attempts is None else num_attempts,
                                               seed, random_area, random_aspect_ratio, where)
    return image_pipeline.resize_to_fixed(images, int(target_width), int(target_height), 3,
                                          dtypes.uint8, "auto", name, where)[0]


image_decoder_random_crop_resize = ImageDecoderRandomCropResize
ofrecord_bytes_decoder = OFRecordBytesDecoder
ofrecord_image_decoder = OFRecordImageDecoder
ofrecord_image_decoder_random_crop = OFRecordImageDecoderRandomCrop
ofrecord_raw_decoder = OFRecordRawDecoder


def ofrecord_loader(ofrecord_dir, batch_size=1, data_part_num=1, part_name_prefix="part-",
                    part_name_suffix_length=-1, shuffle=False, shuffle_buffer_size=1024,
                    name=None):
    """OneFlow's deprecated name of ofrecord_reader (`shuffle` is its random_shuffle)."""
    from oneflow.framework import ofrecord_reader as reader_util

    reader_util.check_bool(shuffle, "data.ofrecord_loader", "shuffle")
    return ofrecord_reader(ofrecord_dir, batch_size, data_part_num, part_name_prefix,
                           part_name_suffix_length, random_shuffle=shuffle,
                           shuffle_buffer_size=shuffle_buffer_size, name=name)


def ofrecord_image_classification_reader(ofrecord_dir, image_feature_name, label_feature_name,
                                         batch_size=1, data_part_num=1,
                                         part_name_prefix="part-", part_name_suffix_length=-1,
                                         random_shuffle=False, shuffle_buffer_size=1024,
                                         shuffle_after_epoch=False, color_space="BGR",
                                         decode_buffer_size_per_thread=32,
                                         num_decode_threads_per_machine=None, name=None):
    """(images, labels) of an image classification dataset: each record's JPEG in
    image_feature_name decoded in color_space (an image list, as OFRecordImageDecoder gives,
    for flow.image.Resize / CropMirrorNormalize) and its class in label_feature_name as a
    (batch_size,) int32 blob. The reader arguments are ofrecord_reader's; the decode buffer and
    thread counts tune OneFlow's decoder threads and are accepted for compatibility."""
    from oneflow.framework import dtypes, op_builder

    name = op_builder.op_name(name, "OFRecordImageClassificationReader")
    records = ofrecord_reader(ofrecord_dir, batch_size, data_part_num, part_name_prefix,
                              part_name_suffix_length, random_shuffle, shuffle_buffer_size,
                              shuffle_after_epoch, name=name)
    images = OFRecordImageDecoder(records, image_feature_name, color_space,
                                  name=name + "-image")
    labels = OFRecordRawDecoder(records, label_feature_name, (), dtypes.int32,
                                name=name + "-label")
    return images, labels


# OneFlow's older reader, decode_ofrecord, describes each feature with a BlobConf: raw values
# (RawCodec) or a JPEG (ImageCodec, with its image preprocessors) then normalized by channel.

class RawCodec:
    """decode_ofrecord's codec for raw features (see OFRecordRawDecoder)."""

    def __init__(self, auto_zero_padding=False):
        from oneflow.framework import ofrecord_reader as reader_util

        self.auto_zero_padding = reader_util.check_bool(auto_zero_padding, "data.RawCodec",
                                                        "auto_zero_padding")


class ImagePreprocessor:
    """An ImageCodec step: "bgr2rgb" (decode in RGB instead of BGR) or "mirror" (mirror each
    image left to right with probability 1/2)."""

    def __init__(self, preprocessor):
        if not isinstance(preprocessor, str) or preprocessor.lower() not in ("bgr2rgb", "mirror"):
            raise ValueError('data.ImagePreprocessor: preprocessor must be "bgr2rgb" or '
                             '"mirror", got %r' % (preprocessor,))
        self.preprocessor = preprocessor.lower()


class ImageResizePreprocessor:
    """An ImageCodec step: resize each image to width x height."""

    def __init__(self, width, height):
        self.width = _positive_int(width, "data.ImageResizePreprocessor: width")
        self.height = _positive_int(height, "data.ImageResizePreprocessor: height")


class ImageCodec:
    """decode_ofrecord's codec for a JPEG feature: decoded in BGR, then the image_preprocessors
    (ImagePreprocessor, ImageResizePreprocessor) apply."""

    def __init__(self, image_preprocessors=None):
        steps = list(image_preprocessors) if isinstance(image_preprocessors,
                                                        (list, tuple)) else []
        for step in steps:
            if not isinstance(step, (ImagePreprocessor, ImageResizePreprocessor)):
                raise TypeError("data.ImageCodec: image_preprocessors must be "
                                "ImagePreprocessor or ImageResizePreprocessor, got %r" % (step,))
        self.image_preprocessors = steps

    def _has(self, preprocessor):
        return any(isinstance(step, ImagePreprocessor) and step.preprocessor == preprocessor
                   for step in self.image_preprocessors)

    def color_space(self):
        return "RGB" if self._has("bgr2rgb") else "BGR"

    def do_mirror(self):
        return self._has("mirror")

    def do_resize(self):
        """(True, width, height) of the first ImageResizePreprocessor, else (False, -1, -1)."""
        sizes = [(True, step.width, step.height) for step in self.image_preprocessors
                 if isinstance(step, ImageResizePreprocessor)]
        return sizes[0] if sizes else (False, -1, -1)


class NormByChannelPreprocessor:
    """A BlobConf preprocessor: (pixel - mean) / std per channel, laid out "channels_last"
    (NHWC) or "channels_first" (NCHW)."""

    def __init__(self, mean_values, std_values=(1.0, 1.0, 1.0), data_format="channels_last"):
        for what, values in (("mean_values", mean_values), ("std_values", std_values)):
            if not isinstance(values, (list, tuple)):
                raise TypeError("data.NormByChannelPreprocessor: %s must be a list or tuple, "
                                "got %r" % (what, values))
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError('data.NormByChannelPreprocessor: data_format must be '
                             '"channels_last" or "channels_first", got %r' % (data_format,))
        self.mean_values, self.std_values = list(mean_values), list(std_values)
        self.data_format = data_format

    def output_layout(self):
        return "NHWC" if self.data_format == "channels_last" else "NCHW"


class BlobConf:
    """One feature decode_ofrecord decodes: its name, per-record shape, dtype and codec, and for
    images the NormByChannelPreprocessors applied after decoding."""

    def __init__(self, name, shape, dtype, codec, preprocessors=None):
        if not isinstance(name, str) or not name:
            raise TypeError("data.BlobConf: name must be a feature name (str), got %r" % (name,))
        if not isinstance(shape, (list, tuple)):
            raise TypeError("data.BlobConf(%r): shape must be a list or tuple, got %r"
                            % (name, shape))
        if not isinstance(codec, (RawCodec, ImageCodec)):
            raise TypeError("data.BlobConf(%r): codec must be a RawCodec or an ImageCodec, got "
                            "%r" % (name, codec))
        preprocessors = list(preprocessors) if isinstance(preprocessors, (list, tuple)) else []
        for step in preprocessors:
            if not isinstance(step, NormByChannelPreprocessor):
                raise TypeError("data.BlobConf(%r): preprocessors must be "
                                "NormByChannelPreprocessor, got %r" % (name, step))
        self.name, self.shape, self.dtype, self.codec = name, tuple(shape), dtype, codec
        self.preprocessors = preprocessors

    def decode_blob(self, input_blob, batch_size):
        """This feature of the records `input_blob` (from ofrecord_reader). An image is resized
        to the ImageResizePreprocessor's width x height, else to (shape[0], shape[1]) as OneFlow
        does, then normalized by each preprocessor (uint8 pixels when there is none)."""
        from oneflow import image, random

        if isinstance(self.codec, RawCodec):
            return OFRecordRawDecoder(input_blob, self.name, self.shape, self.dtype,
                                      auto_zero_padding=self.codec.auto_zero_padding)
        color_space = self.codec.color_space()
        images = OFRecordImageDecoder(input_blob, self.name, color_space)
        mirror = random.CoinFlip(batch_size) if self.codec.do_mirror() else None
        resize, width, height = self.codec.do_resize()
        if not resize:
            if len(self.shape) < 2:
                raise ValueError("data.BlobConf(%r): an image without ImageResizePreprocessor "
                                 "needs a shape of at least 2 axes, got %r"
                                 % (self.name, self.shape))
            width, height = self.shape[0], self.shape[1]
        images, _, _ = image.Resize(images, target_size=(width, height))
        for step in self.preprocessors:
            images = image.CropMirrorNormalize(images, mirror_blob=mirror,
                                               color_space=color_space,
                                               output_layout=step.output_layout(),
                                               mean=step.mean_values, std=step.std_values,
                                               output_dtype=self.dtype)
        return images


def decode_ofrecord(ofrecord_dir, blobs, batch_size=1, data_part_num=1,
                    part_name_prefix="part-", part_name_suffix_length=-1, shuffle=False,
                    buffer_size=1024, name=None, seed=None):
    """OneFlow's older reader: one blob per BlobConf in `blobs`, all from the same records."""
    from oneflow.framework import ofrecord_reader as reader_util

    reader_util.check_bool(shuffle, "data.decode_ofrecord", "shuffle")
    records = ofrecord_reader(ofrecord_dir, batch_size, data_part_num, part_name_prefix,
                              part_name_suffix_length, random_shuffle=shuffle,
                              shuffle_buffer_size=buffer_size, name=name, seed=seed)
    return tuple(conf.decode_blob(records, batch_size) for conf in blobs)


__getattr__ = _missing_name_hook("oneflow.data")
