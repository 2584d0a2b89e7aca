"""oneflow.image: OneFlow 0.3's image preprocessing ops for the data pipeline (resize, crop,
mirror, normalize), run on the host at each call (oneflow/framework/image_pipeline.py). Their
input is an image list from flow.data.OFRecordImageDecoder (or flow.image.decode), or a fixed
size batch from flow.image.Resize."""
import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import image_pipeline as _pipeline
from oneflow.framework.api_names import missing_name_hook as _missing_name_hook


def _name(name, prefix):
    from oneflow.framework import op_builder

    return op_builder.op_name(name, prefix)


def _channels(color_space, where):
    if not isinstance(color_space, str) or color_space.upper() not in ("RGB", "BGR", "GRAY"):
        raise ValueError("%s: color_space must be \"RGB\", \"BGR\" or \"GRAY\", got %r"
                         % (where, color_space))
    return 1 if color_space.upper() == "GRAY" else 3


def Resize(image, target_size=None, min_size=None, max_size=None, keep_aspect_ratio=False,
           resize_side="shorter", channels=3, dtype=None, interpolation_type="auto", name=None,
           color_space=None, interp_type=None, resize_shorter=0, resize_x=0, resize_y=0):
    """Resizes each image. keep_aspect_ratio=False: to target_size = (width, height); returns
    (images blob (N, height, width, channels) of dtype (uint8 by default), scale blob (N, 2) =
    (new / old width, new / old height), None). keep_aspect_ratio=True: the shorter (or longer,
    resize_side) side to target_size (an int), bounded by max_size (min_size); returns (image
    list, scale, new size blob (N, 2) int32 (width, height)). interpolation_type: "auto"
    (bilinear growing, area shrinking), "bilinear", "nearest_neighbor", "bicubic", "area". The
    deprecated color_space / interp_type / resize_shorter / resize_x, resize_y arguments are
    accepted as in OneFlow 0.3 and then only the images are returned."""
    where = "image.Resize"
    deprecated = False
    if color_space is not None:
        deprecated = True
        channels = _channels(color_space, where)
    if interp_type is not None:
        deprecated = True
        legacy = {"Linear": "bilinear", "NN": "nearest_neighbor", "Cubic": "bicubic"}
        if interp_type not in legacy:
            raise ValueError("%s: interp_type must be \"Linear\", \"NN\" or \"Cubic\", got %r"
                             % (where, interp_type))
        interpolation_type = legacy[interp_type]
    if resize_x > 0 and resize_y > 0:
        deprecated, target_size, keep_aspect_ratio = True, (resize_x, resize_y), False
    if resize_shorter > 0:
        deprecated, target_size, keep_aspect_ratio = True, resize_shorter, True
        resize_side = "shorter"
    name = _name(name, "ImageResize")
    if keep_aspect_ratio:
        if isinstance(target_size, bool) or not isinstance(target_size, (int, np.integer)) \
                or target_size < 1:
            raise ValueError("%s: target_size must be a positive int when keep_aspect_ratio is "
                             "True, got %r" % (where, target_size))
        if resize_side not in ("shorter", "longer"):
            raise ValueError("%s: resize_side must be \"shorter\" or \"longer\", got %r"
                             % (where, resize_side))
        min_size = _pipeline.check_int(0 if min_size is None else min_size, 0, where, "min_size")
        max_size = _pipeline.check_int(0 if max_size is None else max_size, 0, where, "max_size")
        # OneFlow 0.3's image_resize_keep_aspect_ratio refused these (0 is no bound).
        if min_size > 0 and min_size > target_size:
            raise ValueError("%s: min_size %d must be 0 (no bound) or <= target_size %d"
                             % (where, min_size, target_size))
        if max_size > 0 and max_size < target_size:
            raise ValueError("%s: max_size %d must be 0 (no bound) or >= target_size %d"
                             % (where, max_size, target_size))
        result = _pipeline.resize_keep_aspect(image, int(target_size), min_size, max_size,
                                              resize_side == "longer", interpolation_type, name,
                                              where)
        images, scale, new_size = result
    else:
        if not isinstance(target_size, (list, tuple)) or len(target_size) != 2 or not all(
                isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0
                for s in target_size):
            raise ValueError("%s: target_size must be (width, height), two positive ints, when "
                             "keep_aspect_ratio is False, got %r" % (where, target_size))
        channels = _pipeline.check_int(channels, 1, where, "channels")
        dtype = dtypes.uint8 if dtype is None else dtypes.check(dtype, where + " dtype")
        width, height = (int(s) for s in target_size)
        images, scale = _pipeline.resize_to_fixed(image, width, height, channels, dtype,
                                                  interpolation_type, name, where)
        new_size = None
    if deprecated:
        return images
    return images, scale, new_size


resize = Resize


def target_resize(images, target_size, min_size=None, max_size=None, resize_side="shorter",
                  interpolation_type="auto", name=None):
    """Resize(keep_aspect_ratio=True) returning (image list, new size, scale)."""
    out, scale, new_size = Resize(images, target_size=target_size, min_size=min_size,
                                  max_size=max_size, keep_aspect_ratio=True,
                                  resize_side=resize_side, interpolation_type=interpolation_type,
                                  name=_name(name, "ImageTargetResize"))
    return out, new_size, scale


def CropMirrorNormalize(input_blob, mirror_blob=None, color_space="BGR", output_layout="NCHW",
                        crop_h=0, crop_w=0, crop_pos_y=0.5, crop_pos_x=0.5, mean=(0.0,),
                        std=(1.0,), output_dtype=dtypes.float32, name=None):
    """Crops a crop_h x crop_w window of each image at (crop_pos_y * (H - crop_h), crop_pos_x *
    (W - crop_w)) (no crop when 0: the images must then all have one size), mirrors it left to
    right where mirror_blob (flow.random.CoinFlip) is nonzero, and returns (pixel - mean) / std
    (per channel) as one (N, C, crop_h, crop_w) ("NCHW") or (N, crop_h, crop_w, C) ("NHWC") blob
    of output_dtype."""
    where = "image.CropMirrorNormalize"
    output_dtype = dtypes.check(output_dtype, where + " output_dtype")
    if output_dtype not in (dtypes.float32, dtypes.float16, dtypes.float64):
        raise TypeError("%s: output_dtype must be a floating dtype, got %s"
                        % (where, output_dtype.name))
    return _pipeline.crop_mirror_normalize(
        input_blob, mirror_blob, _channels(color_space, where), output_layout, crop_h, crop_w,
        crop_pos_y, crop_pos_x, mean, std, output_dtype, _name(name, "CropMirrorNormalize"), where)


crop_mirror_normalize = CropMirrorNormalize


def random_crop(input_blob, num_attempts=10, seed=None, random_area=None,
                random_aspect_ratio=None, name="ImageRandomCrop"):
    """A random crop of each image: a fraction in random_area (default [0.08, 1]) of it, with
    aspect ratio width / height in random_aspect_ratio (default [0.75, 1.333333])."""
    return _pipeline.random_crop(input_blob, num_attempts, seed, random_area,
                                 random_aspect_ratio, "image.random_crop")


def decode(images_bytes_buffer, dtype=dtypes.uint8, color_space="BGR", name=None):
    """Decodes each encoded (JPEG) image of a batch of byte strings
    (flow.data.OFRecordBytesDecoder) into an image list."""
    where = "image.decode"
    if dtypes.check(dtype, where + " dtype") != dtypes.uint8:
        raise NotImplementedError("%s: images decode to uint8, got dtype %s" % (where, dtype))
    return _pipeline.decode(images_bytes_buffer, color_space, where)


def flip(image, flip_code, name=None):
    """Flips each image: flip_code (an int, or a per-image blob such as flow.random.CoinFlip)
    bit 0x01 left to right, bit 0x10 upside down."""
    return _pipeline.flip(image, flip_code, "image.flip")


def normalize(image, std, mean, name=None):
    """Each image of an image list as float32 (pixel - mean) / std, per channel (one value or
    one per channel)."""
    return _pipeline.normalize(image, std, mean, "image.normalize")


def batch_align(images, shape, dtype, alignment, name=None):
    """The images zero-padded into one (N, H, W, C) blob of dtype; shape = (H, W, C) bounds them
    and H, W are rounded up to a multiple of alignment."""
    where = "image.batch_align"
    return _pipeline.batch_align(images, tuple(shape), dtypes.check(dtype, where + " dtype"),
                                 alignment, _name(name, "ImageBatchAlign"), where)


__getattr__ = _missing_name_hook("oneflow.image")
