"""OneFlow 0.3's TensorBuffer made from a blob: flow.tensor_to_tensor_buffer(x, instance_dims)
holds one tensor of shape x.shape[-instance_dims:] per element of x.shape[:-instance_dims].
Those tensors all have one shape and dtype, so the buffer is x itself with the split between
buffer axes and instance axes; flow.tensor_buffer_to_tensor reshapes it back (a reshape op in
the job). Buffers of tensors of varying shape come from the data pipeline instead
(image_pipeline.ImageList)."""
import numpy as np


class TensorBuffer:
    """A buffer of x.shape[:-instance_dims] tensors, each x.shape[-instance_dims:]."""

    usage_hint = ("a tensor buffer (flow.tensor_to_tensor_buffer) is read back by "
                  "flow.tensor_buffer_to_tensor, not by ops")

    def __init__(self, blob, instance_dims):
        self.blob, self.instance_dims = blob, instance_dims

    @property
    def shape(self):
        return tuple(self.blob.shape[:len(self.blob.shape) - self.instance_dims])

    @property
    def instance_shape(self):
        return tuple(self.blob.shape[len(self.blob.shape) - self.instance_dims:])

    @property
    def instance_dtype(self):
        return self.blob.dtype


def from_tensor(x, instance_dims):
    where = "tensor_to_tensor_buffer"
    if not hasattr(x, "lbn"):
        raise TypeError("%s: x must be a blob, got %r" % (where, x))
    rank = len(x.shape)
    if (isinstance(instance_dims, bool) or not isinstance(instance_dims, (int, np.integer))
            or not 0 < instance_dims < rank):
        raise ValueError("%s: instance_dims must be an int in [1, %d) for x of shape %s (at "
                         "least one axis stays a buffer axis), got %r"
                         % (where, rank, tuple(x.shape), instance_dims))
    return TensorBuffer(x, int(instance_dims))


def to_tensor(buffer, dtype, instance_shape, name):
    import oneflow as flow

    where = "tensor_buffer_to_tensor"
    try:
        instance_shape = tuple(int(d) for d in instance_shape)
    except (TypeError, ValueError):
        raise TypeError("%s: instance_shape must be a list of ints, got %r"
                        % (where, instance_shape)) from None
    if int(np.prod(instance_shape)) != int(np.prod(buffer.instance_shape)) or any(
            d < 0 for d in instance_shape):
        raise ValueError("%s: the buffer's tensors have shape %s (%d elements); instance_shape "
                         "%s does not fit them" % (where, buffer.instance_shape,
                                                   int(np.prod(buffer.instance_shape)),
                                                   instance_shape))
    out = flow.reshape(buffer.blob, buffer.shape + instance_shape, name=name)
    if buffer.instance_dtype != dtype:
        out = flow.cast(out, dtype)
    return out
