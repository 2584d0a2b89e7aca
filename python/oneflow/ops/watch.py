"""flow.watch / flow.watch_diff: hand a blob (or its gradient) to a Python handler each run."""
import inspect

from oneflow.framework import op_builder


def _handler_kind(handler):
    """How the handler wants the value: "numpy" (tp.Numpy), "list" (tp.ListNumpy: one array per
    device) or "local" (unannotated: a LocalBlob)."""
    from oneflow import typing as oft

    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return "local"
    annotation = parameters[0].annotation if parameters else None
    return {oft.Numpy: "numpy", oft.ListNumpy: "list"}.get(annotation, "local")


def _parts(blob):
    """Devices of a mirrored blob (its values arrive stacked), else None."""
    return blob.placement.device_count() if blob.is_mirrored else None


def _per_device(blob):
    """Whether each device reports its value on its own: a dynamic mirrored blob's devices may
    hold different shapes, which do not stack."""
    return blob.is_mirrored and blob.is_dynamic


def watch(blob, handler):
    """Calls handler(value) with the blob's value at each run of the job (the whole blob; for a
    mirrored blob, each device's value: a list with tp.ListNumpy, concatenated with tp.Numpy)."""
    from oneflow.framework import mirrored

    op_builder.check_blob(blob, "watch", "blob")
    if not callable(handler):
        raise TypeError("flow.watch: handler must be callable")
    session = op_builder.current_job()
    handler_id = session.add_watch_handler(handler, _handler_kind(handler), _parts(blob),
                                           _per_device(blob))
    if _per_device(blob):  # a mirrored watch op: device i reports to handler_id + i
        op_builder.add_op("watch", op_builder.op_name(None, "Watch"), {"in": blob},
                          {"handler_id": handler_id}, placement=blob.placement, mirrored=True)
        return
    watched = mirrored.stack(blob) if blob.is_mirrored else blob
    # The handler gets the whole blob, from the first device of the blob's placement.
    placement = watched.placement.first_device() if watched.placement is not None else None
    op_builder.add_op(
        "watch", op_builder.op_name(None, "Watch"), {"in": watched}, {"handler_id": handler_id},
        placement=placement, mirrored=False,
    )


def watch_diff(blob, handler):
    """Calls handler(gradient) with the gradient of `blob` at each run of the train job (the
    unscaled one); a mirrored blob's gradient comes per device, as for flow.watch."""
    op_builder.check_blob(blob, "watch_diff", "blob")
    if not callable(handler):
        raise TypeError("flow.watch_diff: handler must be callable")
    session = op_builder.current_job()
    handler_id = session.add_watch_handler(handler, _handler_kind(handler), _parts(blob),
                                           _per_device(blob))
    session.cpp.add_diff_watch(blob.lbn, handler_id)
