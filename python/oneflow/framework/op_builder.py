"""The one entry point through which every Python op wrapper adds an op to the traced job."""
import contextlib

from oneflow.framework import dtypes
from oneflow.framework.blob import LazyBlob
from oneflow.framework import session as session_util


def current_job():
    """The session and its job being traced; raises a clear error outside a job function:
    NotImplementedError, which OneFlow 0.3 raised there (no variant of the op for "normal
    mode"), and which is a RuntimeError."""
    session = session_util.default_session()
    if session.tracing_job is None:
        raise NotImplementedError(
            "oneflow ops can only be created inside a function decorated with "
            "@flow.global_function, while it is being traced"
        )
    return session


def op_name(name, prefix):
    """The op's full name: the user's `name` in the current name space, or a fresh one."""
    scope = current_job().scope
    return scope.full_name(name) if name else scope.unique_name(prefix)


def layer_name(name, prefix):
    """`name`, or a fresh '<prefix>_<n>', without the name spaces: for layers that open a name
    space of it (or prefix their variables with it) inside the current ones."""
    if name:
        return name
    scope = current_job().scope
    return scope.unique_name(prefix)[len(scope.full_name("")):]


def check_blob(value, op_type, argument):
    if not isinstance(value, LazyBlob):
        hint = getattr(value, "usage_hint", None)
        raise TypeError(
            "%s: input '%s' must be a blob of the job being traced, got %s%s"
            % (op_type, argument, type(value).__name__, " (%s)" % hint if hint else ""))
    tracing = session_util.default_session().tracing_job
    if value.job is not None and tracing is not None and value.job is not tracing.origin:
        # Blobs are names inside their job: another job's would silently be this job's blob
        # of the same name.
        raise ValueError(
            "%s: input '%s' is blob '%s' of job %r, but job %r is being traced; a job can only "
            "read its own blobs (share values between jobs through variables)"
            % (op_type, argument, value.logical_blob_name, value.job.name, tracing.user_name))
    return value


@contextlib.contextmanager
def required_sbp(signatures):
    """Inside, the op named `name` (for each name -> signature in `signatures`) must take the
    layout `signature` when it is added (argument key -> "S(0)" / "B" / "P", e.g.
    {"a_0": "S(1)", "out_0": "P"}). For tests that run an op under each of its declared SBP
    signatures; op names are deterministic, so a first trace tells them."""
    session = current_job()
    previous = session.scope.required_sbp
    session.scope.required_sbp = dict(previous, **signatures)
    try:
        yield
    finally:
        session.scope.required_sbp = previous


def add_op(op_type, name, inputs, attrs=None, placement=None, control_inputs=(), mirrored=None):
    """Adds one op; returns {output argument: [LazyBlob, ...]}.

    `inputs` maps argument names to a blob or a list of blobs. The C++ side infers shapes and
    dtypes and chooses the op's SBP signature at once, so a user error raises here, naming the
    op, its inputs and the rule broken. A blob made by `with_distribute` requires its layout.
    mirrored: None for the current logical view (in the mirrored view, consistent inputs are
    converted to it first; an op whose inputs are all mirrored is mirrored in either view); False
    for ops that are always consistent (variables, interface ops).
    """
    from oneflow.framework import mirrored as mirrored_util

    session = current_job()
    placement = placement or session.scope.current_placement() or session.default_placement()
    in_consistent_view = mirrored is None and session.scope.current_view() == "consistent"
    blobs = [blob for value in inputs.values()
             for blob in (value if isinstance(value, (list, tuple)) else [value])
             if isinstance(blob, LazyBlob)]
    if in_consistent_view and blobs and all(blob.is_mirrored for blob in blobs):
        # As in OneFlow 0.3, an op whose inputs are all mirrored is mirrored, whatever the view.
        in_consistent_view = False
    if mirrored is None:
        mirrored = not in_consistent_view
    lbns = {}
    hints = dict(session.scope.required_sbp.get(name, {}))
    for argument, value in inputs.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        lbns[argument] = []
        for index, blob in enumerate(values):
            check_blob(blob, op_type, argument)
            if in_consistent_view and blob.is_mirrored:
                raise ValueError(
                    "%s: input '%s' (%s) is a mirrored blob (one value per device) and the op is "
                    "in the consistent view; convert it with flow.cast_to_current_logical_view"
                    "(blob) or create the op inside flow.scope.mirrored_view()"
                    % (op_type, argument, blob.lbn))
            if mirrored and not blob.is_mirrored:
                blob = mirrored_util.to_mirrored(blob, placement)
            lbns[argument].append(blob.lbn)
            if blob.distribute_hint is not None:
                hints.setdefault("%s_%d" % (argument, index), blob.distribute_hint.sbp)
    outputs = session.cpp.add_op(
        op_type,
        name,
        lbns,
        attrs or {},
        placement.device_tag,
        placement.device_names,
        list(control_inputs),
        hints,
        bool(mirrored),
    )
    batch_axis = _output_batch_axis(op_type, attrs or {}, blobs)
    return {
        argument: [
            LazyBlob(lbn, shape, dtypes.from_value(dtype),
                     batch_axis if batch_axis is not None and batch_axis < len(shape) else None,
                     placement=placement, sbp=sbp, mirrored=is_mirrored, dynamic=is_dynamic)
            for lbn, shape, dtype, sbp, is_mirrored, is_dynamic in blobs
        ]
        for argument, blobs in outputs.items()
    }


def _output_batch_axis(op_type, attrs, inputs):
    """blob.batch_axis of an op's outputs, by OneFlow 0.3's default rule: an input placeholder's
    own; none for ops without inputs (variables, constants, random data); else the first input's
    that has one. Ops that move or remove axes (transpose, reductions) adjust it after."""
    if op_type == "input":
        axis = attrs.get("batch_axis", 0)
        return axis if axis is not None and axis >= 0 else None
    for blob in inputs:
        if blob.batch_axis is not None:
            return blob.batch_axis
    return None


def add_single_output_op(op_type, name, prefix, inputs, attrs=None, output="out"):
    """add_op for the common case of one output blob; returns that blob."""
    return add_op(op_type, op_name(name, prefix), inputs, attrs)[output][0]
