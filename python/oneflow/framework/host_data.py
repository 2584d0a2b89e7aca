"""Values computed on the host at each call of a job: data readers and what decodes their
records (OFRecord features, images, coin flips).

A HostValue is a node of a small graph traced with the job: it computes its value from the
values of its inputs, once per call (a reader hands out one batch per call, shared by all its
decoders). `feed` turns a fixed-shape HostValue into a blob of the job: an input op that each
call fills with the value (function._inputs evaluates desc.data_sources). Host values that are
not fixed-shape (a batch of images of different sizes) stay on the host and are only read by
other host values (oneflow/framework/image_pipeline.py).
"""
import numpy as np


class HostValue:
    """compute(*values of inputs) -> this call's value; `what` names it in errors."""

    def __init__(self, what, compute, inputs=()):
        self.what, self._compute, self._inputs = what, compute, tuple(inputs)

    def evaluate(self, memo):
        """This call's value; memo (a dict kept for one call) holds the values computed so far."""
        key = id(self)
        if key not in memo:
            memo[key] = self._compute(*(value.evaluate(memo) for value in self._inputs))
        return memo[key]


def feed(value, shape, dtype, placement, name):
    """A blob of the job traced now, filled at each call with `value` (an array of `shape`, the
    batch along axis 0, and `dtype`), split over `placement`'s devices along the batch."""
    from oneflow.framework import mirrored, op_builder

    session = op_builder.current_job()
    shape = tuple(int(d) for d in shape)
    attrs = {"shape": shape, "dtype": dtype.value, "batch_axis": 0}
    blob = op_builder.add_op("input", name, {}, attrs, placement=placement,
                             mirrored=False)["out"][0]
    session.tracing_job.data_sources.append((name, value, shape, dtype))
    session.tracing_job.host_values[blob.lbn] = value
    if session.scope.current_view() == "mirrored":
        blob = mirrored.to_mirrored(blob, placement)
        session.tracing_job.host_values[blob.lbn] = value
    return blob


def value_of(blob):
    """The HostValue that fills `blob` (a blob made by `feed`), or None."""
    from oneflow.framework import op_builder

    return op_builder.current_job().tracing_job.host_values.get(getattr(blob, "lbn", None))


def fill_inputs(data_sources, inputs):
    """Evaluates this call's host values into `inputs` (input op name -> array)."""
    memo = {}
    for op_name, value, shape, dtype in data_sources:
        array = np.ascontiguousarray(value.evaluate(memo), dtype=dtype.numpy_dtype)
        if array.shape != shape:
            raise ValueError("%s (input %r) produced shape %s this call; the job was built for %s"
                             % (value.what, op_name, array.shape, shape))
        inputs[op_name] = array
