"""The mirrored view: each device of a placement holds its own value of a blob.

In the mirrored view (flow.scope.mirrored_view(), or FunctionConfig.default_logical_view(
flow.scope.mirrored_view())) every op runs independently on each device of its placement, on
that device's values, and a blob's shape is the shape of one device's value. Data enter through
`tp.ListNumpy.Placeholder` arguments (a list of one array per device) and leave through
`-> tp.ListNumpy` results (a list of one array per device).

Two ops convert between the views (ops/mirrored_cast.cpp): cast_to_mirrored gives each device
the whole of a broadcast blob, its rows of a split(0) blob, or its row of a stacked blob;
cast_from_mirrored makes the devices' values the addends of a partial-sum blob, the rows of a
split(0) blob, or the rows of a stacked blob. A consistent blob (a variable, say) read by an op
in the mirrored view is converted automatically; its gradient comes back as a partial sum, so
training in the mirrored view is data-parallel training with summed gradients.
"""
from oneflow.framework import op_builder


def _cast(op_type, blob, mode, placement):
    name = op_builder.op_name(None, "System-" + op_type)
    return op_builder.add_op(op_type, name, {"in": blob},
                             {"mode": mode, "parts": placement.device_count()},
                             placement=placement, mirrored=False)["out"][0]


def _same_devices(a, b):
    return a is not None and b is not None and a.device_names == b.device_names


def to_mirrored(blob, placement):
    """`blob` (consistent) as a mirrored blob on `placement`: each device gets its rows of a
    split(0) blob on the same devices, else the whole value."""
    split_here = blob.sbp == "S(0)" and _same_devices(blob.placement, placement)
    if split_here and blob.shape and blob.shape[0] % placement.device_count() == 0:
        return _cast("cast_to_mirrored", blob, "split", placement)
    return _cast("cast_to_mirrored", blob, "broadcast", placement)


def unstack(blob, placement):
    """A consistent blob of shape (devices, ...) split over `placement`: device i gets row i."""
    return _cast("cast_to_mirrored", blob, "unstack", placement)


def stack(blob):
    """A mirrored blob as one consistent blob of shape (devices, ...), row i from device i."""
    return _cast("cast_from_mirrored", blob, "stack", blob.placement)


def concat(blob):
    """A mirrored blob as one consistent blob, the devices' values concatenated along axis 0."""
    return _cast("cast_from_mirrored", blob, "concat", blob.placement)


def cast_to_current_logical_view(blob):
    """flow.cast_to_current_logical_view: `blob` as seen in the current view."""
    op_builder.check_blob(blob, "cast_to_current_logical_view", "x")
    session = op_builder.current_job()
    if session.scope.current_view() == "mirrored":
        if blob.is_mirrored:
            return blob
        placement = session.scope.current_placement() or blob.placement
        return to_mirrored(blob, placement)
    return concat(blob) if blob.is_mirrored else blob
