"""flow.get_variable: a persistent blob owned by the session, shared by name across jobs."""
import numbers
import zlib

import numpy as np

from oneflow.framework import dtypes, shapes
from oneflow.framework import op_builder
from oneflow.ops import initializers


def get_variable(
    name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, trainable=True,
    model_name=None, random_seed=None, distribute=None, reuse=True,
):
    session = op_builder.current_job()
    if not isinstance(name, str) or not name:
        raise ValueError("get_variable: name must be a non-empty string, got %r" % (name,))
    if shape is None:
        raise ValueError("get_variable %r: shape is required" % name)
    shape = shapes.to_shape(shape, "get_variable %r" % name)
    dtype = dtypes.check(dtype, "get_variable %r dtype" % name)
    for argument, value in (("trainable", trainable), ("reuse", reuse)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError("get_variable %r: %s must be True or False, got %r (a non-bool would "
                            "be taken by its truth value: bool('no') is True)"
                            % (name, argument, value))
    if random_seed is not None and (isinstance(random_seed, (bool, np.bool_))
                                    or not isinstance(random_seed, numbers.Integral)):
        raise TypeError("get_variable %r: random_seed must be an int or None, got %r"
                        % (name, random_seed))
    if random_seed is not None and not -2 ** 63 <= int(random_seed) < 2 ** 63:
        raise ValueError("get_variable %r: random_seed must fit in 64 bits (-2**63 <= seed < "
                         "2**63), got %r" % (name, random_seed))
    full_name = session.scope.full_name(name)
    _check_saveable_name(full_name)
    known = session.variables.get(full_name)
    if known is not None and known != (shape, dtype):
        raise ValueError(
            "get_variable %r: a variable of this name already exists with shape %r and dtype %s; "
            "requested shape %r and dtype %s" % (full_name, known[0], known[1].name, shape, dtype.name)
        )
    if session.cpp.has_op(full_name):
        if not reuse:
            raise ValueError("get_variable %r: variable already exists and reuse=False" % full_name)
        from oneflow.framework.blob import LazyBlob

        lbn, out_shape, out_dtype, sbp, _, _ = session.cpp.op_outputs(full_name)["out"][0]
        blob = LazyBlob(lbn, out_shape, dtypes.from_value(out_dtype),
                        placement=session.variable_placements.get(full_name), sbp=sbp)
        return _gathered_if_sharded(session, full_name, blob)
    if initializer is None:  # the job's FunctionConfig.default_initializer_conf, else zeros
        initializer = (session.tracing_job.config._default_initializer
                       or initializers.constant_initializer(0.0))
    initializer = initializers.as_initializer(initializer, "get_variable %r" % full_name)
    initializers.check_for_dtype(initializer, dtype, "get_variable %r" % full_name)
    seed = initializer.seed if initializer.seed is not None else random_seed
    if seed is None:
        seed = zlib.crc32(full_name.encode("utf-8"))
    split_axis = -1
    if distribute is not None:
        from oneflow import distribute as distribute_util

        distribute_util.assert_is_valid_distribute(
            distribute, "get_variable %r: distribute" % full_name)
        if distribute.kind == "split":
            if distribute.axis >= len(shape):
                raise ValueError("get_variable %r: cannot split axis %d of shape %r"
                                 % (full_name, distribute.axis, shape))
            split_axis = distribute.axis
    # Stored split(0) by optimizer_placement_optimization_mode, here or in an earlier job of the
    # session (jobs sharing a variable must lay it out alike).
    if split_axis < 0 and (full_name in session.sharded_variables or
                           _shards_optimizer_state(session, shape, trainable)):
        split_axis = 0
        session.sharded_variables.add(full_name)
    from oneflow import regularizers

    regularizer = regularizers.check(regularizer, "get_variable %r" % full_name)
    attrs = {
        "shape": shape,
        "dtype": dtype.value,
        "initializer": initializer.kind,
        "initializer_args": initializer.args,
        "seed": int(seed),
        "trainable": bool(trainable),  # checked above: a bool or numpy bool
        "split_axis": split_axis,
        "l1": regularizer.l1 if regularizer else 0.0,
        "l2": regularizer.l2 if regularizer else 0.0,
    }
    # A variable is consistent in either view; ops of the mirrored view convert it when they read it.
    blob = op_builder.add_op("variable", full_name, {}, attrs, mirrored=False)["out"][0]
    session.variables[full_name] = (shape, dtype)
    session.variable_placements[full_name] = blob.placement
    blob = _gathered_if_sharded(session, full_name, blob)
    session.tracing_job.variable_blobs[full_name] = blob
    return blob


def _check_saveable_name(full_name):
    """A variable is saved in the checkpoint folder <name>/ beside the file snapshot_done, and
    its blob is named <name>/out ('/' separates an op name from its blob name, as in OneFlow
    0.3's logical blob names), so names that no folder can have are refused up front."""
    from oneflow import checkpoint

    if "/" in full_name:
        raise ValueError("get_variable: name %r must not contain '/': '/' separates an op name "
                         "from its blob name (%r would read as blob 'out' of op %r), and a "
                         "checkpoint keeps each variable in a folder named after it"
                         % (full_name, full_name + "/out", full_name.split("/")[0]))
    if "\0" in full_name:
        raise ValueError("get_variable: name %r must not contain a NUL character: a checkpoint "
                         "keeps each variable in a folder named after it" % full_name)
    if full_name in (".", ".."):
        raise ValueError("get_variable: name %r cannot name a variable: a checkpoint keeps each "
                         "variable in a folder named after it, and %r is no folder name"
                         % (full_name, full_name))
    if full_name == checkpoint.DONE_FILE:
        raise ValueError("get_variable: name %r is reserved: a checkpoint keeps each variable in "
                         "a folder named after it, beside the file %r that marks a finished save"
                         % (full_name, checkpoint.DONE_FILE))


def _shards_optimizer_state(session, shape, trainable):
    """optimizer_placement_optimization_mode("distributed_split"): a trainable variable of a
    train job over several devices is stored split along axis 0 (when that axis is long enough)."""
    from oneflow.framework import scope as scope_util

    desc = session.tracing_job
    if not trainable or not desc.is_train or desc.config._optimizer_placement != "distributed_split":
        return False
    placement = session.scope.current_placement() or session.default_placement()
    devices = placement.device_count() if isinstance(placement, scope_util.Placement) else 1
    return devices > 1 and len(shape) > 0 and shape[0] >= devices


def _gathered_if_sharded(session, full_name, blob):
    """A sharded variable is read whole: its readers must take it broadcast (an all-gather,
    no copy op). Its gradient, laid out like the variable for the update, is then
    reduce-scattered, so each device updates its own slice."""
    if full_name not in session.sharded_variables:
        return blob
    from oneflow import distribute

    return blob.with_distribute(distribute.broadcast())


def _written_variable(ref, value, op):
    """The variable blob (without a layout hint: a sharded variable is read broadcast, but is
    written in its stored layout) and placement that `op` writes `value` into."""
    from oneflow.framework.blob import LazyBlob

    session = op_builder.current_job()
    op_builder.check_blob(ref, op, "ref")
    op_builder.check_blob(value, op, "value")
    if not session.cpp.has_op(ref.op_name) or session.cpp.op_type(ref.op_name) != "variable":
        raise ValueError("%s: ref must be a variable (a blob of flow.get_variable), got %s"
                         % (op, ref.lbn))
    if value.is_mirrored:
        raise ValueError("%s: value %s is a mirrored blob (one value per device); convert it "
                         "with flow.cast_to_current_logical_view first" % (op, value.lbn))
    lbn, shape, blob_dtype, sbp, _, _ = session.cpp.op_outputs(ref.op_name)["out"][0]
    placement = session.variable_placements.get(ref.op_name) or ref.placement
    variable = LazyBlob(lbn, shape, dtypes.from_value(blob_dtype), placement=placement, sbp=sbp)
    return variable, placement


def assign(ref, value, dtype=None, name=None):
    """flow.assign(ref, value): inside a job, writes `value` into the variable `ref` (a blob of
    flow.get_variable). Readers of `ref` in the same call see its old value; later calls see the
    new one; several assignments of one variable in a job happen in the order they were made.
    Returns None, like OneFlow's; `dtype` is accepted for OneFlow's signature and unused
    (value must have ref's dtype and shape)."""
    variable, placement = _written_variable(ref, value, "assign")
    op_builder.add_op("assign", op_builder.op_name(name, "Assign"),
                      {"ref": variable, "value": value}, placement=placement, mirrored=False)


def logical_slice_assign(x, value, slice_tup_list, name=None):
    """Writes `value` into the slice slice_tup_list of the variable x, however x is split over
    devices (OneFlow 0.3's flow.experimental.logical_slice_assign): one (start, stop, step)
    tuple per leading axis, None or negative bounds resolved like Python slices, steps
    positive. Like flow.assign: readers of x in the same call see its old value, later calls
    the new one, several assignments in the order made. Returns None."""
    from oneflow.ops import shape_ops

    op = "logical_slice_assign"
    variable, placement = _written_variable(x, value, op)
    shape_ops._positive_steps(slice_tup_list, op)
    attrs = shape_ops._slice_attrs(x.shape, slice_tup_list, op)
    sliced = tuple(len(range(*bounds))
                   for bounds in zip(attrs["start"], attrs["stop"], attrs["step"]))
    if tuple(value.shape) != sliced:
        raise ValueError("%s: value has shape %r but the slice %r of x %r has shape %r"
                         % (op, tuple(value.shape), slice_tup_list, tuple(x.shape), sliced))
    if value.dtype != x.dtype:
        raise TypeError("%s: value is %s but x is %s" % (op, value.dtype.name, x.dtype.name))
    op_builder.add_op(op, op_builder.op_name(name, "LogicalSliceAssign"),
                      {"ref": variable, "value": value}, attrs, placement=placement,
                      mirrored=False)
