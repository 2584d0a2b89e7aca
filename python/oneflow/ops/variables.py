"""flow.get_variable: a persistent blob owned by the session, shared by name across jobs."""
import zlib

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
    full_name = session.scope.full_name(name)
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

        lbn, out_shape, out_dtype, sbp, _ = session.cpp.op_outputs(full_name)["out"][0]
        return LazyBlob(lbn, out_shape, dtypes.from_value(out_dtype),
                        placement=session.variable_placements.get(full_name), sbp=sbp)
    if initializer is None:
        initializer = initializers.constant_initializer(0.0)
    if not isinstance(initializer, initializers.InitializerConf):
        raise TypeError("get_variable %r: initializer must come from flow.*_initializer" % full_name)
    seed = initializer.seed if initializer.seed is not None else random_seed
    if seed is None:
        seed = zlib.crc32(full_name.encode("utf-8"))
    split_axis = -1
    if distribute is not None:
        from oneflow import distribute as distribute_util

        distribute_util.assert_is_valid_distribute(distribute)
        if distribute.kind == "split":
            if distribute.axis >= len(shape):
                raise ValueError("get_variable %r: cannot split axis %d of shape %r"
                                 % (full_name, distribute.axis, shape))
            split_axis = distribute.axis
    attrs = {
        "shape": shape,
        "dtype": dtype.value,
        "initializer": initializer.kind,
        "initializer_args": initializer.args,
        "seed": int(seed),
        "trainable": bool(trainable),
        "split_axis": split_axis,
    }
    # A variable is consistent in either view; ops of the mirrored view convert it when they read it.
    blob = op_builder.add_op("variable", full_name, {}, attrs, mirrored=False)["out"][0]
    session.variables[full_name] = (shape, dtype)
    session.variable_placements[full_name] = blob.placement
    return blob
