"""The one entry point through which every Python op wrapper adds an op to the traced job."""
from oneflow.framework import dtypes
from oneflow.framework.blob import LazyBlob
from oneflow.framework import session as session_util


def current_job():
    """The session and its job being traced; raises a clear error outside a job function."""
    session = session_util.default_session()
    if session.tracing_job is None:
        raise RuntimeError(
            "oneflow ops can only be created inside a function decorated with "
            "@flow.global_function, while it is being traced"
        )
    return session


def op_name(name, prefix):
    """The op's full name: the user's `name` in the current name space, or a fresh one."""
    scope = current_job().scope
    return scope.full_name(name) if name else scope.unique_name(prefix)


def check_blob(value, op_type, argument):
    if not isinstance(value, LazyBlob):
        raise TypeError(
            "%s: input '%s' must be a blob of the job being traced, got %s"
            % (op_type, argument, type(value).__name__)
        )
    return value


def add_op(op_type, name, inputs, attrs=None, placement=None, control_inputs=()):
    """Adds one op; returns {output argument: [LazyBlob, ...]}.

    `inputs` maps argument names to a blob or a list of blobs. The C++ side infers shapes and
    dtypes at once, so a user error raises here, naming the op, its inputs and the rule broken.
    """
    session = current_job()
    lbns = {}
    for argument, value in inputs.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        lbns[argument] = [check_blob(v, op_type, argument).lbn for v in values]
    placement = placement or session.scope.current_placement() or session.default_placement()
    outputs = session.cpp.add_op(
        op_type,
        name,
        lbns,
        attrs or {},
        placement.device_tag,
        placement.device_names,
        list(control_inputs),
    )
    return {
        argument: [LazyBlob(lbn, shape, dtypes.from_value(dtype)) for lbn, shape, dtype in blobs]
        for argument, blobs in outputs.items()
    }


def add_single_output_op(op_type, name, prefix, inputs, attrs=None, output="out"):
    """add_op for the common case of one output blob; returns that blob."""
    return add_op(op_type, op_name(name, prefix), inputs, attrs)[output][0]
