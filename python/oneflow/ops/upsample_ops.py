"""flow.layers.upsample_2d (OneFlow 0.3's name, signature and defaults), op upsample
(oneflow/ops/upsample.cpp): nearest or bilinear (align_corners=False, half-pixel centres)
enlargement of the two spatial axes by integer factors."""
from oneflow.framework import op_builder, shapes


def _scales(size):
    """(height_scale, width_scale) from an int or a pair of ints, each >= 1."""
    if shapes.is_int(size):
        values = (int(size), int(size))
    elif (isinstance(size, (list, tuple)) and len(size) == 2
          and all(shapes.is_int(v) for v in size)):
        values = (int(size[0]), int(size[1]))
    else:
        raise ValueError("upsample_2d: size must be an int or a pair of ints, got %r" % (size,))
    if min(values) < 1:
        raise ValueError("upsample_2d: size must be at least 1 on both axes, got %r" % (size,))
    return values


def upsample_2d(x, size=(2, 2), data_format="NCHW", interpolation="nearest", name="Upsample2D"):
    """Upsamples (N, C, H, W) ("NCHW") or (N, H, W, C) ("NHWC") to H * size[0] by
    W * size[1]. interpolation: "nearest" (each pixel repeated) or "bilinear" (OneFlow 0.3's
    align_corners=False: output pixel centres mapped back to (o + 0.5) / scale - 0.5, as PyTorch's
    F.interpolate(..., mode="bilinear", align_corners=False)). The op is `name` (or a fresh
    "Upsample2D_<n>" for the default name, so that the layer may be used more than once)."""
    op_type = "upsample_2d"
    op_builder.check_blob(x, op_type, "x")
    height_scale, width_scale = _scales(size)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("%s: interpolation must be 'nearest' or 'bilinear', got %r"
                         % (op_type, interpolation))
    upper = data_format.upper() if isinstance(data_format, str) else None
    if upper not in ("NCHW", "NHWC"):
        raise ValueError("%s: data_format must be 'NCHW' or 'NHWC', got %r"
                         % (op_type, data_format))
    if len(x.shape) != 4:
        raise ValueError("%s: x must have rank 4, got shape %r" % (op_type, tuple(x.shape)))
    attrs = {
        "height_scale": float(height_scale),
        "width_scale": float(width_scale),
        "data_format": "channels_first" if upper == "NCHW" else "channels_last",
        "interpolation": interpolation,
    }
    op_name = None if name == "Upsample2D" else name
    return op_builder.add_single_output_op("upsample", op_name, "Upsample2D", {"x": x}, attrs,
                                           output="y")
