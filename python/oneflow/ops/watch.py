"""flow.watch / flow.watch_diff: hand a blob (or its gradient) to a Python handler each run."""
import inspect

from oneflow.framework import op_builder


def _wants_numpy(handler):
    from oneflow import typing as oft

    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0].annotation in (oft.Numpy, oft.ListNumpy)


def watch(blob, handler):
    op_builder.check_blob(blob, "watch", "blob")
    if not callable(handler):
        raise TypeError("flow.watch: handler must be callable")
    session = op_builder.current_job()
    handler_id = session.add_watch_handler(handler, _wants_numpy(handler))
    # The handler gets the whole blob, from the first device of the blob's placement.
    placement = blob.placement.first_device() if blob.placement is not None else None
    op_builder.add_op(
        "watch", op_builder.op_name(None, "Watch"), {"in": blob}, {"handler_id": handler_id},
        placement=placement,
    )


def watch_diff(blob, handler):
    op_builder.check_blob(blob, "watch_diff", "blob")
    if not callable(handler):
        raise TypeError("flow.watch_diff: handler must be callable")
    session = op_builder.current_job()
    handler_id = session.add_watch_handler(handler, _wants_numpy(handler))
    session.cpp.add_diff_watch(blob.lbn, handler_id)
