"""The image ops of OneFlow 0.3's data pipeline (flow.data.OFRecordImageDecoder, flow.image.*,
flow.random.CoinFlip), computed on the host at each call as host values (host_data.py).

OneFlow keeps a batch of images of different sizes in a TensorBuffer blob; here such a batch is
an ImageList: a host value whose value is a list of height x width x channels uint8 arrays. The
ops that make fixed-shape blobs from it (Resize to a fixed size, CropMirrorNormalize,
batch_align, tensor_buffer_to_tensor) feed the job an input blob each call. Decoding and
resizing run in C++ (oneflow/data/image_decoder.h, image_resize.h) without the GIL.
"""
import numpy as np

from oneflow.framework import dtypes, host_data


class BytesList:
    """A batch of byte strings (encoded images) on the host, from OFRecordBytesDecoder."""

    usage_hint = "a batch of byte strings is read by flow.image.decode, not by ops"

    def __init__(self, value, batch_size, placement):
        self.value, self.batch_size, self.placement = value, batch_size, placement

    @property
    def shape(self):
        return (self.batch_size,)


class ImageList:
    """A batch of images of varying size on the host (OneFlow's TensorBuffer of images)."""

    usage_hint = ("an image list (images of varying size) is read by the flow.image ops; "
                  "flow.image.Resize(target_size=(w, h)), flow.image.CropMirrorNormalize or "
                  "flow.tensor_buffer_to_tensor make a blob of it")

    def __init__(self, value, batch_size, placement, dtype=dtypes.uint8):
        self.value, self.batch_size, self.placement = value, batch_size, placement
        self.dtype = dtype  # uint8 pixels, or float32 after flow.image.normalize

    @property
    def shape(self):
        return (self.batch_size,)


def check_int(value, low, where, what):
    """`value` as an int >= low; a ValueError naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError("%s: %s must be an int >= %d, got %r" % (where, what, low, value))
    return int(value)


def _internal():
    from oneflow import _oneflow_internal

    return _oneflow_internal


def bytes_feature(blob_name, where):
    def compute(records):
        return _internal().ofrecord_bytes_features(records, blob_name, where)

    return compute


def check_images(images, where, argument="image", any_dtype=False):
    """`images` as a host value yielding a list (or a batch array) of HWC images, with its batch
    size and placement: an ImageList, or a blob fed from the host with shape (N, H, W, C).
    Unless any_dtype, the images must be uint8 pixels."""
    if isinstance(images, ImageList):
        if not any_dtype and images.dtype != dtypes.uint8:
            raise TypeError("%s: %s holds %s images; this op reads uint8 pixels (normalize "
                            "last)" % (where, argument, images.dtype.name))
        return images.value, images.batch_size, images.placement
    value = host_data.value_of(images)
    if value is not None and len(images.shape) == 4:
        return value, images.shape[0], images.placement
    if value is None and hasattr(images, "lbn"):
        raise NotImplementedError(
            "%s: %s %s is computed by the job; the image ops read images from the data "
            "pipeline (flow.data.OFRecordImageDecoder, flow.image.Resize), on the host"
            % (where, argument, images.lbn))
    raise TypeError("%s: %s must be an image list (flow.data.OFRecordImageDecoder) or a "
                    "(N, H, W, C) batch from flow.image.Resize, got %r" % (where, argument, images))


def _host_flags(blob, batch_size, where, argument):
    """A per-image int host value (a CoinFlip blob) or a Python int used for every image."""
    if isinstance(blob, (int, np.integer)) and not isinstance(blob, bool):
        flag = int(blob)
        return host_data.HostValue(where, lambda: np.full((batch_size,), flag, np.int64))
    value = host_data.value_of(blob)
    if value is None:
        raise NotImplementedError(
            "%s: %s must be an int or a blob of the data pipeline (flow.random.CoinFlip), got %r"
            % (where, argument, blob))
    if tuple(blob.shape) != (batch_size,):
        raise ValueError("%s: %s has shape %s; the images need one value each, (%d,)"
                         % (where, argument, tuple(blob.shape), batch_size))
    return value


def _check_encoded(encoded, color_space, where):
    if not isinstance(encoded, BytesList):
        raise TypeError("%s: input must be what flow.data.OFRecordBytesDecoder returned, got %r"
                        % (where, encoded))
    if not isinstance(color_space, str):
        raise TypeError("%s: color_space must be \"RGB\", \"BGR\" or \"GRAY\", got %r"
                        % (where, color_space))
    if not _internal().image_decoding_available():
        raise NotImplementedError("%s: this build of oneflow has no JPEG decoder (install "
                                  "libjpeg62-turbo-dev and rebuild)" % where)
    _internal().decode_images([], color_space, where)  # checks color_space now


def decode(encoded, color_space, where):
    _check_encoded(encoded, color_space, where)

    def compute(values):
        return _internal().decode_images(values, color_space, where)

    value = host_data.HostValue(where, compute, [encoded.value])
    return ImageList(value, encoded.batch_size, encoded.placement)


def _fraction_range(values, default, where, name, upper=None):
    values = default if values is None else values
    try:
        low, high = (float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError("%s: %s must be two numbers [min, max], got %r" % (where, name, values))
    if not (0 < low <= high) or (upper is not None and high > upper):
        raise ValueError("%s: %s must satisfy 0 < min <= max%s, got %r"
                         % (where, name, "" if upper is None else " <= %g" % upper, values))
    return low, high


class _CropRule:
    """The random crop window rule's checked arguments and its random source (one seed per
    image per call, so a seeded pipeline repeats)."""

    def __init__(self, num_attempts, seed, random_area, random_aspect_ratio, where):
        self.attempts = check_int(num_attempts, 1, where, "num_attempts")
        self.area = _fraction_range(random_area, (0.08, 1.0), where, "random_area", upper=1.0)
        self.ratio = _fraction_range(random_aspect_ratio, (0.75, 1.333333), where,
                                     "random_aspect_ratio")
        self._rng = np.random.default_rng(seed)

    def seeds(self, count):
        return self._rng.integers(0, 2 ** 63, size=count, dtype=np.uint64).tolist()


def decode_random_crop(encoded, color_space, num_attempts, seed, random_area,
                       random_aspect_ratio, where):
    """decode, keeping (and decoding) only a random crop window of each image."""
    _check_encoded(encoded, color_space, where)
    rule = _CropRule(num_attempts, seed, random_area, random_aspect_ratio, where)

    def compute(values):
        return _internal().decode_images_random_crop(values, color_space, where, rule.area,
                                                     rule.ratio, rule.attempts,
                                                     rule.seeds(len(values)))

    value = host_data.HostValue(where, compute, [encoded.value])
    return ImageList(value, encoded.batch_size, encoded.placement)


def random_crop_windows(sizes, area, ratio, attempts, seeds):
    """(y, x, h, w) of a random crop of each (height, width) in sizes: a fraction in `area` of
    the image with aspect ratio w / h drawn log-uniformly in `ratio`; after `attempts` misses,
    the whole image with its aspect ratio clamped into `ratio` (centered). In C++
    (oneflow/data/random_crop.cpp), shared with the decoders."""
    return _internal().random_crop_windows(sizes, area, ratio, attempts, seeds)


def random_crop(images, num_attempts, seed, random_area, random_aspect_ratio, where):
    value, batch_size, placement = check_images(images, where)
    rule = _CropRule(num_attempts, seed, random_area, random_aspect_ratio, where)

    def compute(batch):
        sizes = [image.shape[:2] for image in batch]
        windows = random_crop_windows(sizes, rule.area, rule.ratio, rule.attempts,
                                      rule.seeds(len(batch)))
        return [image[y:y + h, x:x + w] for image, (y, x, h, w) in zip(batch, windows)]

    return ImageList(host_data.HostValue(where, compute, [value]), batch_size, placement)


def _resize(batch, sizes, interpolation_type, where):
    return _internal().resize_images(list(batch), sizes, interpolation_type, where)


def _check_interpolation(interpolation_type, where):
    choices = ("auto", "bilinear", "nearest_neighbor", "nn", "bicubic", "area")
    if interpolation_type not in choices:
        raise ValueError("%s: interpolation_type must be one of %s, got %r"
                         % (where, ", ".join(choices[:1] + choices[2:]), interpolation_type))


def _check_channels(batch, channels, where):
    for index, image in enumerate(batch):
        if image.ndim != 3 or image.shape[2] != channels:
            raise ValueError("%s: image %d has shape %s; expected height x width x %d"
                             % (where, index, image.shape, channels))


def resize_to_fixed(images, width, height, channels, dtype, interpolation_type, name, where):
    """(batch blob (N, height, width, channels) of dtype, scale blob (N, 2) float32)."""
    value, batch_size, placement = check_images(images, where)
    _check_interpolation(interpolation_type, where)

    def compute(batch):
        _check_channels(batch, channels, where)
        resized = _resize(batch, [(width, height)] * len(batch), interpolation_type, where)
        scale = np.array([[width / image.shape[1], height / image.shape[0]] for image in batch],
                         np.float32).reshape(-1, 2)
        out = np.stack(resized) if resized else np.zeros((0, height, width, channels), np.uint8)
        return out.astype(dtype.numpy_dtype, copy=False), scale

    both = host_data.HostValue(where, compute, [value])
    resized = host_data.HostValue(where, lambda pair: pair[0], [both])
    scale = host_data.HostValue(where + " scale", lambda pair: pair[1], [both])
    return (host_data.feed(resized, (batch_size, height, width, channels), dtype, placement, name),
            host_data.feed(scale, (batch_size, 2), dtypes.float32, placement, name + "-scale"))


def keep_aspect_size(height, width, target_size, min_size, max_size, resize_longer):
    """(new height, new width) of an image resized so its longer (or shorter) side is
    target_size, keeping its aspect ratio, then bounded by min_size / max_size when > 0."""
    shorter, longer = min(height, width), max(height, width)
    if resize_longer:
        scale = target_size / longer
        if min_size > 0 and shorter * scale < min_size:
            scale = min_size / shorter
    else:
        scale = target_size / shorter
        if max_size > 0 and longer * scale > max_size:
            scale = max_size / longer
    return max(1, int(round(height * scale))), max(1, int(round(width * scale)))


def resize_keep_aspect(images, target_size, min_size, max_size, resize_longer,
                       interpolation_type, name, where):
    """(image list, scale blob (N, 2) float32, new size blob (N, 2) int32 as (width, height))."""
    value, batch_size, placement = check_images(images, where)
    _check_interpolation(interpolation_type, where)

    def compute(batch):
        sizes = [keep_aspect_size(image.shape[0], image.shape[1], target_size, min_size,
                                  max_size, resize_longer)[::-1] for image in batch]
        resized = _resize(batch, sizes, interpolation_type, where)
        scale = np.array([[w / image.shape[1], h / image.shape[0]]
                          for (w, h), image in zip(sizes, batch)], np.float32).reshape(-1, 2)
        return resized, scale, np.array(sizes, np.int32).reshape(-1, 2)

    triple = host_data.HostValue(where, compute, [value])
    resized = host_data.HostValue(where, lambda t: t[0], [triple])
    scale = host_data.HostValue(where + " scale", lambda t: t[1], [triple])
    new_size = host_data.HostValue(where + " size", lambda t: t[2], [triple])
    return (ImageList(resized, batch_size, placement),
            host_data.feed(scale, (batch_size, 2), dtypes.float32, placement, name + "-scale"),
            host_data.feed(new_size, (batch_size, 2), dtypes.int32, placement, name + "-size"))


def _per_channel(values, channels, where, name):
    try:
        with np.errstate(over="ignore"):  # a float32 overflow is reported by check_mean_std
            array = np.asarray(values, dtype=np.float32).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError("%s: %s must be a list of numbers, got %r" % (where, name, values))
    if array.size not in (1, channels):
        raise ValueError("%s: %s has %d values; give 1 or one per channel (%d)"
                         % (where, name, array.size, channels))
    check_mean_std(values, where, name)
    return np.broadcast_to(array, (channels,)).copy()


def check_mean_std(values, where, name):
    """Normalizing takes float32 (pixel - mean) / std: a ValueError naming `name` unless every
    value is finite in float32, and for "std" also nonzero with a finite float32 reciprocal."""
    with np.errstate(over="ignore", divide="ignore"):
        array = np.asarray(values, dtype=np.float32).reshape(-1)
        inverse = np.float32(1.0) / array
    shown = np.asarray(values).reshape(-1).tolist()
    if not np.all(np.isfinite(array)):
        raise ValueError("%s: %s must be finite (in float32), got %s" % (where, name, shown))
    if name == "std" and not np.all(np.isfinite(inverse)):
        raise ValueError("%s: std must not be 0 (nor so small that 1 / std overflows float32), "
                         "got %s" % (where, shown))


def crop_mirror_normalize(images, mirror_blob, channels, output_layout, crop_h, crop_w,
                          crop_pos_y, crop_pos_x, mean, std, dtype, name, where):
    value, batch_size, placement = check_images(images, where, "input_blob")
    if output_layout not in ("NCHW", "NHWC"):
        raise ValueError("%s: output_layout must be \"NCHW\" or \"NHWC\", got %r"
                         % (where, output_layout))
    crop_h = check_int(crop_h, 0, where, "crop_h")  # 0: no crop
    crop_w = check_int(crop_w, 0, where, "crop_w")
    for what, pos in (("crop_pos_y", crop_pos_y), ("crop_pos_x", crop_pos_x)):
        if not isinstance(pos, (int, float)) or not 0.0 <= pos <= 1.0:
            raise ValueError("%s: %s must be in [0, 1], got %r" % (where, what, pos))
    mean = _per_channel(mean, channels, where, "mean")
    std = _per_channel(std, channels, where, "std")  # finite and nonzero
    if isinstance(images, ImageList):
        if crop_h == 0 or crop_w == 0:
            raise ValueError("%s: images of varying size need crop_h and crop_w (> 0); or resize "
                             "them to a fixed size first (flow.image.Resize(target_size=(w, h)))"
                             % where)
        out_h, out_w = crop_h, crop_w
    else:
        if images.shape[3] != channels:
            raise ValueError("%s: input_blob has %d channels, color_space needs %d"
                             % (where, images.shape[3], channels))
        out_h, out_w = crop_h or images.shape[1], crop_w or images.shape[2]
        if out_h > images.shape[1] or out_w > images.shape[2]:
            raise ValueError("%s: a %dx%d crop does not fit the %dx%d images"
                             % (where, out_h, out_w, images.shape[1], images.shape[2]))
    inputs = [value]
    if mirror_blob is not None:
        inputs.append(_host_flags(mirror_blob, batch_size, where, "mirror_blob"))
    inv_std = (1.0 / std).astype(np.float32).tolist()
    mean = mean.tolist()
    channels_first = output_layout == "NCHW"
    shape = (batch_size, channels, out_h, out_w) if channels_first else \
        (batch_size, out_h, out_w, channels)

    def compute(batch, mirror=None):  # the binding checks each image's channels and size
        out = np.empty(shape, np.float32)
        flags = [] if mirror is None else [bool(m) for m in mirror]
        _internal().crop_mirror_normalize(list(batch), out, flags, float(crop_pos_y),
                                          float(crop_pos_x), mean, inv_std, channels_first, where)
        return out.astype(dtype.numpy_dtype, copy=False)

    return host_data.feed(host_data.HostValue(where, compute, inputs), shape, dtype, placement,
                          name)


def flip(images, flip_code, where):
    """Each image flipped: flip_code bit 0x01 horizontally, bit 0x10 vertically."""
    value, batch_size, placement = check_images(images, where, any_dtype=True)
    codes = _host_flags(flip_code, batch_size, where, "flip_code")

    def compute(batch, code):
        out = []
        for image, c in zip(batch, code):
            if int(c) & 0x01:
                image = image[:, ::-1]
            if int(c) & 0x10:
                image = image[::-1]
            out.append(image)
        return out

    return ImageList(host_data.HostValue(where, compute, [value, codes]), batch_size, placement,
                     getattr(images, "dtype", dtypes.uint8))


def batch_align(images, shape, dtype, alignment, name, where):
    """The images zero-padded (at the bottom and right) into one (N, H, W, C) blob, H and W
    being shape's rounded up to a multiple of alignment."""
    value, batch_size, placement = check_images(images, where, any_dtype=True)
    if len(shape) != 3:
        raise ValueError("%s: shape must be (height, width, channels), got %r" % (where, shape))
    alignment = check_int(alignment, 1, where, "alignment")
    height, width, channels = (int(d) for d in shape)
    out_h = -(-height // alignment) * alignment
    out_w = -(-width // alignment) * alignment

    def compute(batch):
        out = np.zeros((len(batch), out_h, out_w, channels), dtype.numpy_dtype)
        for i, image in enumerate(batch):
            h, w = image.shape[:2]
            if h > height or w > width or image.shape[2] != channels:
                raise ValueError("%s: image %d has shape %s; it must fit in %s"
                                 % (where, i, image.shape, (height, width, channels)))
            out[i, :h, :w] = image
        return out

    return host_data.feed(host_data.HostValue(where, compute, [value]),
                          (batch_size, out_h, out_w, channels), dtype, placement, name)


def to_tensor(images, dtype, instance_shape, name, where):
    """The images, each of instance_shape, stacked into one (N,) + instance_shape blob."""
    value, batch_size, placement = check_images(images, where, "x", any_dtype=True)
    instance_shape = tuple(int(d) for d in instance_shape)

    def compute(batch):
        for i, image in enumerate(batch):
            if image.size != int(np.prod(instance_shape)):
                raise ValueError("%s: element %d has shape %s, not instance_shape %s"
                                 % (where, i, image.shape, instance_shape))
        return np.stack([np.reshape(image, instance_shape) for image in batch]).astype(
            dtype.numpy_dtype, copy=False)

    return host_data.feed(host_data.HostValue(where, compute, [value]),
                          (batch_size,) + instance_shape, dtype, placement, name)


def normalize(images, std, mean, where):
    """Each image as float32 (pixel - mean) / std, per channel."""
    value, batch_size, placement = check_images(images, where)

    per_channel = {}  # channel count -> (mean, std) arrays, made once

    def compute(batch):
        out = []
        for image in batch:
            channels = image.shape[2]
            if channels not in per_channel:
                per_channel[channels] = (_per_channel(mean, channels, where, "mean"),
                                         _per_channel(std, channels, where, "std"))
            m, s = per_channel[channels]
            out.append((image.astype(np.float32) - m) / s)
        return out

    try:
        np.asarray(std, dtype=np.float64)
        np.asarray(mean, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("%s: std and mean must be numbers or lists of numbers, got %r and %r"
                         % (where, std, mean)) from None
    check_mean_std(mean, where, "mean")
    check_mean_std(std, where, "std")
    return ImageList(host_data.HostValue(where, compute, [value]), batch_size, placement,
                     dtypes.float32)


def coin_flip(batch_size, seed, probability, placement, name, where):
    batch_size = check_int(batch_size, 1, where, "batch_size")
    if not isinstance(probability, (int, float)) or not 0.0 <= probability <= 1.0:
        raise ValueError("%s: probability must be in [0, 1], got %r" % (where, probability))
    rng = np.random.default_rng(seed)

    def compute():
        return (rng.random(int(batch_size)) < probability).astype(np.int8)

    return host_data.feed(host_data.HostValue(where, compute), (int(batch_size),), dtypes.int8,
                          placement, name)
