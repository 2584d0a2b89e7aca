"""flow.global_function and flow.FunctionConfig: declare a job, trace it, call it."""
import functools
import inspect
import sys
import threading
import typing

import numpy as np

from oneflow.framework import host_data, op_builder
from oneflow.framework import session as session_util
from oneflow.framework.blob import LazyBlob, hand_over, hand_over_parts
from oneflow.framework.function_config import FunctionConfig


function_config = FunctionConfig


class FunctionDesc:
    """A global function: its Python body, config and, once traced, its Job's inputs and
    outputs. flow.current_global_function_desc() gives the one being traced."""

    def __init__(self, func, job_type, config):
        self.func = func
        self.name = func.__name__
        self.job_type = job_type  # as declared; is_train also turns on when a
        # predict job calls optimizer.minimize (as OneFlow 0.3's minimize set the train conf)
        self.is_train = job_type == "train"
        self.config = config or FunctionConfig()
        self.traced = False
        self.trace_error = None
        self.signature = inspect.signature(func)
        self.arguments = []  # (parameter name, _Input or nested tuple of _Input)
        self.data_sources = []  # filled by trace (data readers fed at each call)
        self.host_values = {}  # lbn -> host_data.HostValue that fills it
        self.output_structure = None  # nested tuple/list/dict of _Result
        self.return_annotation = self.signature.return_annotation
        # Mirrored placeholders' shapes are upper bounds: a call with smaller per-device arrays
        # runs a job traced for those shapes (a specialization), sharing the variables and, for
        # train jobs, the training state (train step, loss scale) under the function's name.
        self.train_state_name = None
        self.base = None  # a specialization's function
        self.placeholder_overrides = {}  # argument label -> placeholder of a specialization
        # Labels of mirrored arguments whose devices get arrays of different shapes (a
        # specialization whose input op is dynamic: each device carries its own shape).
        self.per_device_shape_labels = set()
        self.specializations = {}  # ((label, shape), ...) -> FunctionDesc
        # Why the declared shapes did not trace, when calls then ran through specializations.
        self.declared_shape_error = None


    @property
    def origin(self):
        """The function the user defined: this one, or the one a specialization was traced
        from."""
        return self.base or self

    @property
    def user_name(self):
        """The name the user gave (a specialization's function's), for messages."""
        return self.origin.name

    def IsTrainable(self):  # noqa: N802 - OneFlow's name
        """Whether the job trains (type="train")."""
        return self.is_train


def current_global_function_desc():
    """The FunctionDesc of the global function being traced (IsTrainable(), name, config);
    only inside a global function's body."""
    session = session_util.default_session()
    if session.tracing_job is None:
        raise RuntimeError("flow.current_global_function_desc() is only available inside a "
                           "global function's body, while it is traced")
    return session.tracing_job


def global_function(type="predict", function_config=None):  # noqa: A002 - OneFlow's name
    """Decorator declaring a job function: traced once into a Job, then run by the runtime."""
    if callable(type) and not isinstance(type, str):  # used bare: @flow.global_function
        return global_function()(type)
    if isinstance(type, FunctionConfig):  # OneFlow's deprecated global_function(func_config)
        if function_config is not None:
            raise TypeError("global_function: got a FunctionConfig both as type and as "
                            "function_config")
        function_config = type
        # As then, the job trains when the config has the legacy train.* settings.
        type = "train" if function_config._legacy_train else "predict"  # noqa: A001
        sys.stderr.write("WARNING: flow.global_function(func_config) is deprecated; use "
                         "flow.global_function(type, func_config)\n")
    if type not in ("train", "predict"):
        raise ValueError('global_function type must be "train" or "predict", got %r' % (type,))
    if function_config is not None and not isinstance(function_config, FunctionConfig):
        raise TypeError("function_config must be a flow.FunctionConfig")

    def decorator(func):
        desc = FunctionDesc(func, type, function_config)
        _check_return_annotation(desc)
        session = session_util.default_session()
        session.register_function(desc)

        @functools.wraps(func)
        def job(*args, **kwargs):
            current = session_util.default_session()
            if current is not session:
                raise RuntimeError(
                    "global function %r belongs to a session that was cleared by "
                    "flow.clear_default_session(); define it again" % desc.name
                )
            return _call(session, desc, args, kwargs)

        job.__oneflow_function_desc__ = desc
        return job

    return decorator


# ---- return annotations (OneFlow 0.3's typing_util rules) ----

def _leaf_kinds():
    """Result annotation -> how a returned blob is handed back (see blob.hand_over)."""
    from oneflow import typing as oft

    return {oft.Numpy: "numpy", oft.ListNumpy: "list", oft.ListListNumpy: "list_list"}


def _annotation_name(annotation):
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("oneflow.typing.", "")


def _check_structure_annotation(annotation, desc):
    """Numpy, ListNumpy, ListListNumpy, or a Tuple/List/Dict nesting of them."""
    if annotation in _leaf_kinds():
        return
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and args and Ellipsis not in args[:1]:
        items = args[:1] if len(args) == 2 and args[1] is Ellipsis else args
        for item in items:
            _check_structure_annotation(item, desc)
        return
    if origin is list and len(args) == 1:
        _check_structure_annotation(args[0], desc)
        return
    if origin is dict and len(args) == 2:
        _check_structure_annotation(args[1], desc)
        return
    raise TypeError(
        "job %r: unsupported return annotation %s; use oneflow.typing.Numpy (or ListNumpy, "
        "ListListNumpy), a Tuple/List/Dict of those, oneflow.typing.Bundle[T], "
        "oneflow.typing.Callback[...] of those, None, or no annotation"
        % (desc.name, _annotation_name(annotation)))


def _check_bundle_annotation(annotation, desc):
    if annotation.inner not in _leaf_kinds():
        raise TypeError("job %r: T in oneflow.typing.Bundle[T] must be Numpy, ListNumpy or "
                        "ListListNumpy, got %s" % (desc.name, _annotation_name(annotation.inner)))


def _check_return_annotation(desc):
    """Checks the return annotation when the job is declared (a wrong one fails early)."""
    from oneflow import typing as oft

    annotation = desc.return_annotation
    if annotation is inspect.Signature.empty or annotation is None:
        return
    if isinstance(annotation, oft.CallbackType):
        annotation = annotation.inner
    if isinstance(annotation, oft.BundleType):
        _check_bundle_annotation(annotation, desc)
        return
    _check_structure_annotation(annotation, desc)


class _Result:
    """One returned blob: its return op, how it is handed back (blob.hand_over kind), and for a
    blob of the mirrored view, the device count (its per-device values come back stacked).
    `rows_op_name`: for a blob with data-dependent rows (argwhere), the return op of their
    count (per device in the mirrored view); only those rows are handed back."""

    def __init__(self, op_name, kind, parts, rows_op_name=None, rows_axis=0, per_device=False):
        self.op_name, self.kind, self.parts = op_name, kind, parts
        self.rows_op_name, self.rows_axis = rows_op_name, rows_axis
        self.per_device = per_device  # each device's value came back on its own

    def convert(self, outputs):
        if self.per_device:
            value = [outputs["%s/%d" % (self.op_name, i)] for i in range(self.parts)]
        else:
            value = outputs[self.op_name]
        if self.rows_op_name is not None:
            rows = np.asarray(outputs[self.rows_op_name]).reshape(-1)

            def valid(part, count):
                return part[(slice(None),) * self.rows_axis + (slice(0, count),)]

            if self.parts:
                return hand_over_parts([valid(value[i], rows[i]) for i in range(self.parts)],
                                       self.kind)
            value = valid(value, rows[0])
        return hand_over(value, self.kind, self.parts)


def _describe(value):
    if isinstance(value, LazyBlob):
        return "a blob"
    if isinstance(value, (tuple, list)):
        return "a %s of %d items" % (type(value).__name__, len(value))
    return "a %s" % type(value).__name__


class _ReturnBuilder:
    """Checks what the job function returned against its return annotation (as OneFlow 0.3 did
    at trace time) and adds one return op per returned blob; builds the _Result structure."""

    def __init__(self, session, desc):
        self.session, self.desc, self.count = session, desc, 0

    def mismatch(self, where, value, annotation, expected):
        return TypeError(
            "job %r: the returned value does not match its return annotation %s: %s is %s, "
            "expected %s" % (self.desc.name, _annotation_name(self.desc.return_annotation),
                             where, _describe(value), expected))

    def blob(self, value, kind):
        from oneflow.framework import mirrored

        rows, rows_axis = value.valid_rows, value.valid_axis
        if rows is not None:
            value = value.without_valid_rows()
        name = "Return_%d" % self.count
        self.count += 1
        parts = None
        # A dynamic mirrored blob's devices may hold different shapes: each returns its own.
        per_device = value.is_mirrored and value.is_dynamic
        if value.is_mirrored:
            parts = value.placement.device_count()
            if not per_device:
                value = mirrored.stack(value)
        # On the producer's devices: each writes its part of the result.
        op_builder.add_op("return", name, {"in": value},
                          placement=value.placement or self.session.default_placement(),
                          mirrored=per_device)
        rows_name = None
        if rows is not None:
            rows_name = self.blob(rows, "numpy").op_name
        return _Result(name, kind, parts, rows_name, rows_axis, per_device)

    def unannotated(self, value, where):
        """No annotation: blobs come back as LocalBlobs, in any nesting of tuple/list/dict."""
        if value is None:
            return None
        if isinstance(value, LazyBlob):
            return self.blob(value, "local")
        if isinstance(value, (tuple, list)):
            return type(value)(self.unannotated(v, "%s[%d]" % (where, i))
                               for i, v in enumerate(value))
        if isinstance(value, dict):
            return {k: self.unannotated(v, "%s[%r]" % (where, k)) for k, v in value.items()}
        raise TypeError("job %r returned %s at %s; a job function returns blobs (or a tuple, "
                        "list or dict of blobs)" % (self.desc.name, _describe(value), where))

    def structure(self, value, annotation, where):
        """Numpy/ListNumpy/ListListNumpy, or Tuple/List/Dict of those (exact container types)."""
        kind = _leaf_kinds().get(annotation)
        if kind is not None:
            if not isinstance(value, LazyBlob):
                raise self.mismatch(where, value, annotation,
                                    "a blob (%s)" % _annotation_name(annotation))
            return self.blob(value, kind)
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:  # Tuple[T, ...]: any length
                if type(value) is not tuple:
                    raise self.mismatch(where, value, annotation, "a tuple")
                args = (args[0],) * len(value)
            if type(value) is not tuple or len(value) != len(args):
                raise self.mismatch(where, value, annotation, "a tuple of %d items" % len(args))
            return tuple(self.structure(v, a, "%s[%d]" % (where, i))
                         for i, (v, a) in enumerate(zip(value, args)))
        if origin is list:
            if type(value) is not list:
                raise self.mismatch(where, value, annotation, "a list")
            return [self.structure(v, args[0], "%s[%d]" % (where, i))
                    for i, v in enumerate(value)]
        # Dict[K, V] (the only other form _check_structure_annotation lets through)
        if type(value) is not dict:
            raise self.mismatch(where, value, annotation, "a dict")
        for key in value:
            if isinstance(args[0], type) and type(key) is not args[0]:
                raise self.mismatch("the key %r of %s" % (key, where), key, annotation,
                                    "a key of type %s" % args[0].__name__)
        return {k: self.structure(v, args[1], "%s[%r]" % (where, k)) for k, v in value.items()}

    def bundle(self, value, annotation, where):
        """Bundle[T]: a blob, or any nesting of tuples, lists and dicts of blobs."""
        if isinstance(value, LazyBlob):
            return self.structure(value, annotation.inner, where)
        if isinstance(value, (tuple, list)):
            return type(value)(self.bundle(v, annotation, "%s[%d]" % (where, i))
                               for i, v in enumerate(value))
        if type(value) is dict:
            return {k: self.bundle(v, annotation, "%s[%r]" % (where, k))
                    for k, v in value.items()}
        raise self.mismatch(where, value, annotation,
                            "a blob or a tuple, list or dict of blobs")

    def build(self, value):
        from oneflow import typing as oft

        annotation = self.desc.return_annotation
        if annotation is inspect.Signature.empty:
            return self.unannotated(value, "result")
        if annotation is None:
            if value is not None:
                raise self.mismatch("result", value, annotation, "None")
            return None
        if isinstance(annotation, oft.CallbackType):
            annotation = annotation.inner
        if isinstance(annotation, oft.BundleType):
            return self.bundle(value, annotation, "result")
        return self.structure(value, annotation, "result")


# ---- arguments ----

class _Input:
    """One input op: fed from one array of the call (a leaf of a Tuple argument or a whole
    argument). `parts`: the device count of a ListNumpy/ListListNumpy one, else None."""

    def __init__(self, op_name, placeholder, parts, per_device_shapes=False):
        self.op_name, self.placeholder, self.parts = op_name, placeholder, parts
        self.per_device_shapes = per_device_shapes  # fed by _per_device_shaped_inputs


def _add_input(session, desc, label, op_name, annotation):
    """The input op(s) of one argument, or of one item of a Tuple argument (recursively);
    returns (the blob or tuple of blobs the job function receives, the _Input structure)."""
    from oneflow import typing as oft
    from oneflow.framework import mirrored

    if typing.get_origin(annotation) is tuple:
        items = typing.get_args(annotation)
        if not items or Ellipsis in items:
            raise TypeError("job %r, argument %r: a Tuple argument lists one placeholder per "
                            "item, e.g. Tuple[tp.Numpy.Placeholder((2,)), "
                            "tp.Numpy.Placeholder((3,))]; got %s"
                            % (desc.name, label, _annotation_name(annotation)))
        pairs = [_add_input(session, desc, "%s[%d]" % (label, i), "%s_%d" % (op_name, i), item)
                 for i, item in enumerate(items)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    annotation = desc.placeholder_overrides.get(label, annotation)
    if not isinstance(annotation, (oft.Numpy.Placeholder, oft.ListNumpy.Placeholder,
                                   oft.ListListNumpy.Placeholder)):
        raise TypeError(
            "job %r: argument %r must be annotated with oneflow.typing.Numpy.Placeholder("
            "shape, dtype), e.g. `x: tp.Numpy.Placeholder((64, 784), dtype=flow.float)` (or "
            "ListNumpy.Placeholder for one value per device, or a typing.Tuple of "
            "placeholders); got %s" % (desc.name, label, _annotation_name(annotation))
        )
    placeholder = annotation
    placement = desc.config._placement or session.default_placement()
    per_device = not isinstance(placeholder, oft.Numpy.Placeholder)
    parts = placement.device_count() if per_device else None
    if per_device and label in desc.per_device_shape_labels:
        # One dynamic mirrored input op: each device copies its own array, of its own shape.
        attrs = {"shape": placeholder.shape, "dtype": placeholder.dtype.value, "batch_axis": 0,
                 "dynamic": True}
        blob = op_builder.add_op("input", op_name, {}, attrs, placement=placement,
                                 mirrored=True)["out"][0]
        return blob, _Input(op_name, placeholder, parts, per_device_shapes=True)
    attrs = {
        "shape": ((parts,) + tuple(placeholder.shape)) if per_device else placeholder.shape,
        "dtype": placeholder.dtype.value,
        "batch_axis": 0 if per_device else (
            -1 if placeholder.batch_axis is None else placeholder.batch_axis),
    }
    out = op_builder.add_op("input", op_name, {}, attrs, placement=placement,
                            mirrored=False)["out"][0]
    # One value per device: the call's list is stacked; device i takes row i.
    blob = mirrored.unstack(out, placement) if per_device else out
    return blob, _Input(op_name, placeholder, parts)


def trace(session, desc):
    """Builds desc's Job: input ops for placeholders, the user's ops, return ops."""
    from oneflow.ops import optimizer

    config = desc.config
    session.scope.views = [config._logical_view]
    desc.optimizer, desc.losses = None, []  # set by minimize and flow.losses.add_loss
    # (input op name, host_data.HostValue, shape, dtype): inputs fed from data readers at each
    # call (flow.data.ofrecord_reader and its decoders; framework/host_data.py).
    desc.data_sources = []
    desc.host_values = {}
    blobs = []
    desc.arguments = []
    desc.variable_blobs = {}  # name -> blob of each get_variable of this job, in order
    from oneflow.typing import _Placeholder as oft_placeholder

    for parameter in desc.signature.parameters.values():
        if parameter.kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                  inspect.Parameter.POSITIONAL_OR_KEYWORD):
            raise TypeError(
                "job %r: parameter %r is %s; a global function takes one placeholder per "
                "ordinary parameter (no *args, **kwargs or keyword-only parameters)"
                % (desc.name, parameter.name, parameter.kind.description))
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty and isinstance(parameter.default,
                                                                oft_placeholder):
            annotation = parameter.default  # the older `x=flow.FixedTensorDef(shape)` spelling
        blob, structure = _add_input(session, desc, parameter.name, "Input_" + parameter.name,
                                     annotation)
        blobs.append(blob)
        desc.arguments.append((parameter.name, structure))
    placement = config._placement
    if placement is not None:
        session.scope.push_placement(placement)
    try:
        result = desc.func(*blobs)
    finally:
        if placement is not None:
            session.scope.pop_placement()
    desc.output_structure = _ReturnBuilder(session, desc).build(result)
    optimizer.finish_training(session, desc)


def _converted(desc, parameter_name, placeholder, array, expected_dtype):
    """An array of another dtype converted to the placeholder's, as OneFlow 0.3 did (its
    pybind11 copy cast any array), for conversions of numpy's same kind: ints and bools to
    floats, float64 to float32 (rounded), ints to ints whose values fit. Floats to ints, which
    would truncate, out-of-range ints and finite values that would become inf raise."""
    if not np.can_cast(array.dtype, expected_dtype, casting="same_kind"):
        raise TypeError(
            "job %r, argument %r: expected dtype %s, got %s, which does not convert to it "
            "without loss (pass an array of dtype %s)"
            % (desc.user_name, parameter_name, placeholder.dtype.name, array.dtype, expected_dtype))
    if expected_dtype.kind in "iu" and array.dtype.kind in "iu" and array.size:
        limits = np.iinfo(expected_dtype)
        if array.min() < limits.min or array.max() > limits.max:
            raise ValueError(
                "job %r, argument %r: expected dtype %s, got %s with values in [%d, %d], "
                "outside %s's range [%d, %d]"
                % (desc.user_name, parameter_name, placeholder.dtype.name, array.dtype, array.min(),
                   array.max(), placeholder.dtype.name, limits.min, limits.max))
    with np.errstate(over="ignore"):  # reported below, by name
        converted = array.astype(expected_dtype)
    if expected_dtype.kind == "f":  # float64 (or a large int) to float32 or float16
        overflowed = np.isinf(converted) & np.isfinite(array)
        if overflowed.any():
            raise ValueError(
                "job %r, argument %r: expected dtype %s, got %s with %d finite values beyond "
                "%s's range (the first, %r, would become inf)"
                % (desc.user_name, parameter_name, placeholder.dtype.name, array.dtype,
                   int(overflowed.sum()), placeholder.dtype.name, array[overflowed][0].item()))
    return converted


def _as_array(desc, parameter_name, value):
    """np.asarray(value), or an error naming the argument when numpy cannot make one (a ragged
    nested list, say)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as error:
        raise ValueError("job %r, argument %r: %s is not an array: %s"
                         % (desc.user_name, parameter_name, _describe(value), error)) from None


def _checked_array(desc, parameter_name, placeholder, value):
    array = _as_array(desc, parameter_name, value)
    expected_dtype = np.dtype(placeholder.dtype.numpy_dtype)
    if array.dtype != expected_dtype:
        array = _converted(desc, parameter_name, placeholder, array, expected_dtype)
    if tuple(array.shape) != tuple(placeholder.shape):
        raise ValueError(
            "job %r, argument %r: expected shape %s, got %s"
            % (desc.user_name, parameter_name, tuple(placeholder.shape), tuple(array.shape))
        )
    return array


def _per_device_values(desc, parameter_name, placeholder, parts, value):
    """The list (one array per device) given for a ListNumpy / ListListNumpy placeholder."""
    from oneflow import typing as oft

    what = "a list of %d arrays, one per device" % parts
    if isinstance(placeholder, oft.ListListNumpy.Placeholder):
        what = "a list of %d lists (one per device) of one array each" % parts
    if not isinstance(value, (list, tuple)) or len(value) != parts:
        raise ValueError("job %r, argument %r: expected %s, got %s"
                         % (desc.user_name, parameter_name, what, type(value).__name__
                            if not isinstance(value, (list, tuple)) else "%d items" % len(value)))
    if isinstance(placeholder, oft.ListListNumpy.Placeholder):
        for device_list in value:
            if not isinstance(device_list, (list, tuple)) or len(device_list) != 1:
                raise NotImplementedError(
                    "job %r, argument %r: tensor lists of more than one tensor per device are "
                    "not supported; give %s" % (desc.user_name, parameter_name, what))
        value = [device_list[0] for device_list in value]
    bound = _declared_shape(desc, parameter_name, placeholder)
    value = [_as_array(desc, parameter_name, v) for v in value]
    shapes = [v.shape for v in value]
    if any(shape != tuple(placeholder.shape) for shape in shapes):
        raise _per_device_shape_error(desc, parameter_name, bound, shapes)
    return np.stack([_checked_array(desc, parameter_name, placeholder, v) for v in value])


def _per_device_shape_error(desc, parameter_name, bound, shapes):
    return ValueError(
        "job %r, argument %r: expected per-device arrays of rank %d with at most %d elements "
        "(the ListNumpy placeholder's %s), got shapes %s"
        % (desc.user_name, parameter_name, len(bound), int(np.prod(bound)), tuple(bound),
           ", ".join(str(tuple(shape)) for shape in shapes)))


def _declared_shape(desc, label, placeholder):
    """The shape the function declared for a mirrored placeholder (a specialization's is
    smaller)."""
    base = desc.base or desc
    for leaf_label, leaf in _leaves(base):
        if leaf_label == label:
            return tuple(leaf.placeholder.shape)
    return tuple(placeholder.shape)


def _leaves(desc):
    """(label, _Input) of every input of a traced function, Tuple items included."""
    def walk(label, structure):
        if isinstance(structure, tuple):
            for i, item in enumerate(structure):
                yield from walk("%s[%d]" % (label, i), item)
        else:
            yield label, structure
    for parameter_name, structure in desc.arguments:
        yield from walk(parameter_name, structure)


_PER_DEVICE = "per-device"  # _dynamic_shapes' value for arrays of different shapes


def _fits_bound(shape, declared):
    """OneFlow 0.3's rule for a mirrored array: the placeholder's rank, no more elements."""
    return len(shape) == len(declared) and all(s >= 0 for s in shape) \
        and np.prod(shape) <= np.prod(declared)


def _dynamic_shapes(desc, args, kwargs):
    """label -> per-device shape for each mirrored argument of this call given arrays smaller
    than its placeholder (same rank, no more elements, one shape on every device), or
    _PER_DEVICE for one given arrays of different shapes (each within that bound); {} when every
    array has the declared shape or the call is malformed (the usual checks then say how)."""
    try:
        bound = desc.signature.bind(*args, **kwargs).arguments
    except TypeError:
        return {}
    shapes = {}

    def walk(label, structure, value):
        if isinstance(structure, tuple):
            if isinstance(value, (tuple, list)) and len(value) == len(structure):
                for i, (item, item_value) in enumerate(zip(structure, value)):
                    walk("%s[%d]" % (label, i), item, item_value)
            return
        if structure.parts is None or not isinstance(value, (list, tuple)) or \
                len(value) != structure.parts:
            return  # _per_device_values says what is wrong
        if any(isinstance(item, (list, tuple)) and len(item) != 1 for item in value):
            return  # tensor lists of several tensors: _per_device_values says they are refused
        arrays = [item[0] if isinstance(item, (list, tuple)) and len(item) == 1 else item
                  for item in value]
        try:
            found = {tuple(np.shape(array)) for array in arrays}
        except (ValueError, TypeError):
            return  # not arrays: _per_device_values says so
        declared = tuple(structure.placeholder.shape)
        if not all(_fits_bound(shape, declared) for shape in found):
            return
        if len(found) > 1 or any(0 in shape for shape in found):
            shapes[label] = _PER_DEVICE  # an empty array: only a dynamic blob may be empty
        elif found != {declared}:
            shapes[label] = found.pop()

    for parameter_name, structure in desc.arguments:
        walk(parameter_name, structure, bound.get(parameter_name))
    return shapes


def _compiled_for_call(session, desc, args, kwargs):
    """The compiled function that runs this call: desc, or its specialization for the call's
    smaller mirrored arrays. When desc's declared (upper-bound) shapes do not trace (e.g. two
    ListNumpy bounds that disagree, as OneFlow 0.3's test_in_top_k declares them), calls with
    arrays that do still run through their specialization; other calls raise that error."""
    if desc.declared_shape_error is None:
        try:
            session.ensure_compiled(desc)
        except Exception as error:  # noqa: BLE001 - re-raised below unless a specialization fits
            if not _dynamic_shapes(desc, args, kwargs):
                raise
            desc.declared_shape_error = error
    shapes = _dynamic_shapes(desc, args, kwargs)
    if shapes:
        # OneFlow 0.3's reading: the arguments are dynamic blobs of the declared (upper-bound)
        # shapes. A job whose dynamic form does not compile (a consistent op reading them,
        # bounds that do not trace together, several machines) is traced for the call's
        # shapes instead.
        dynamic = {label: _PER_DEVICE for label in shapes}
        if dynamic == shapes:
            return _specialization(session, desc, shapes)
        try:
            return _specialization(session, desc, dynamic)
        except Exception:  # noqa: BLE001 - the static specialization below raises its own
            return _specialization(session, desc, shapes)
    if desc.declared_shape_error is not None:
        raise desc.declared_shape_error
    return desc


def _specialization(session, desc, shapes):
    """The job traced from desc's function for mirrored arguments of `shapes` (made and
    compiled on first use; the runtime restarts once for it)."""
    key = tuple(sorted(shapes.items()))
    spec = desc.specializations.get(key)
    if spec is None:
        spec = FunctionDesc(desc.func, desc.job_type, desc.config)
        spec.name = "%s-shape%d" % (desc.name, len(desc.specializations) + 1)
        spec.base = desc
        spec.train_state_name = desc.name
        leaves = dict(_leaves(desc))
        for label, shape in shapes.items():
            if shape == _PER_DEVICE:
                spec.per_device_shape_labels.add(label)
                continue
            placeholder = leaves[label].placeholder
            spec.placeholder_overrides[label] = type(placeholder)(
                shape, dtype=placeholder.dtype, batch_axis=placeholder.batch_axis)
        session.register_function(spec)
        desc.specializations[key] = spec
    session.ensure_compiled(spec)
    return spec


def _argument_inputs(desc, label, structure, value, inputs, copy):
    """Fills inputs[op name] from the value given for one argument (or one Tuple item)."""
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise ValueError("job %r, argument %r: expected a tuple of %d values (it is "
                             "annotated with a Tuple of placeholders), got %s"
                             % (desc.user_name, label, len(structure), _describe(value)))
        for i, (item, item_value) in enumerate(zip(structure, value)):
            _argument_inputs(desc, "%s[%d]" % (label, i), item, item_value, inputs, copy)
        return
    if structure.per_device_shapes:
        _per_device_shaped_inputs(desc, label, structure, value, inputs)
        return
    if structure.parts is None:
        array = _checked_array(desc, label, structure.placeholder, value)
    else:  # np.stack made a new array
        array, copy = _per_device_values(desc, label, structure.placeholder, structure.parts,
                                         value), False
    # The runtime reads the array when the job runs, not at the call: a call that returns
    # before that must not see later changes of the caller's buffer, so it gets a copy.
    if copy:
        array = np.array(array, order="C", copy=True)
    inputs[structure.op_name] = np.require(array, requirements="C")  # keeps 0-d arrays 0-d


def _per_device_shaped_inputs(desc, label, structure, value, inputs):
    """The two values of a dynamic mirrored input op (oneflow/kernels/cpu/interface.cpp): row i
    of inputs[op] holds device i's elements first, row i of inputs[op + "/shapes"] its shape."""
    placeholder = structure.placeholder
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(item, (list, tuple)) and len(item) == 1 for item in value):
        value = [item[0] for item in value]  # ListListNumpy: one array per device
    bound = tuple(placeholder.shape)
    if len(value) != structure.parts or not all(_fits_bound(np.shape(v), bound) for v in value):
        # _dynamic_shapes chose this job for fitting arrays: a caller changed them since.
        raise _per_device_shape_error(desc, label, bound, [np.shape(v) for v in value])
    dtype = np.dtype(placeholder.dtype.numpy_dtype)
    elements = np.zeros((structure.parts, int(np.prod(bound))), dtype=dtype)
    shapes = np.zeros((structure.parts, len(bound)), dtype=np.int64)
    for device, array in enumerate(value):
        array = np.asarray(array)
        if array.dtype != dtype:
            array = _converted(desc, label, placeholder, array, dtype)
        elements[device, :array.size] = array.reshape(-1)
        shapes[device] = array.shape
    inputs[structure.op_name] = elements
    inputs[structure.op_name + "/shapes"] = shapes


def _inputs(desc, args, kwargs, copy):
    """Input op name -> array for one call; `copy`: the call may return before the job has
    read its inputs (an asynchronous call)."""
    unknown = sorted(set(kwargs) - set(desc.signature.parameters))
    if unknown:
        raise TypeError("job %r: got an unexpected keyword argument %r (its parameters: %s)"
                        % (desc.user_name, unknown[0], ", ".join(desc.signature.parameters)))
    try:
        bound = desc.signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError("job %r: %s" % (desc.user_name, error)) from None
    inputs = {}
    for parameter_name, structure in desc.arguments:
        if parameter_name not in bound.arguments:  # its default is a placeholder, not a value
            raise TypeError("job %r: missing a value for argument %r" % (desc.user_name,
                                                                         parameter_name))
        _argument_inputs(desc, parameter_name, structure, bound.arguments[parameter_name],
                         inputs, copy)
    host_data.fill_inputs(desc.data_sources, inputs)
    return inputs


def _structure_results(structure, outputs):
    if structure is None:
        return None
    if isinstance(structure, _Result):
        return structure.convert(outputs)
    if isinstance(structure, (tuple, list)):
        return type(structure)(_structure_results(s, outputs) for s in structure)
    return {k: _structure_results(v, outputs) for k, v in structure.items()}


class _Future:
    """Result of a call whose return is not annotated: .get() blocks and gives LocalBlobs."""

    def __init__(self, session, desc, instance):
        self._session, self._desc, self._instance = session, desc, instance

    def get(self):
        session_util.check_not_in_callback("future.get()")
        self._session.settle(self._instance)
        self._instance.wait()
        return _structure_results(self._desc.output_structure, self._instance.outputs())

    def async_get(self, callback):
        _register_callback(self._session, self._desc, self._instance, callback)


def _register_callback(session, desc, instance, callback):
    """Calls callback(result) on the runtime thread when the call finishes (at once, on this
    thread, if it already has); its error (or the callback's) is raised by the next call or
    sync. KeyboardInterrupt and SystemExit: raised here when the callback runs here, else see
    Session.report_callback_interrupt."""
    if not callable(callback):
        raise TypeError("job %r: the callback for its result must be callable (a function of "
                        "the result), got %r" % (desc.name, callback))
    session.settle(instance, "callback")
    caller = threading.get_ident()
    interrupted = []

    def on_finish():
        with session_util.running_callback():
            try:
                instance.wait()
                callback(_structure_results(desc.output_structure, instance.outputs()))
            except Exception as error:
                session.report_error(error)
            except BaseException as interrupt:  # KeyboardInterrupt, SystemExit
                if threading.get_ident() == caller:
                    interrupted.append(interrupt)
                else:
                    session.report_callback_interrupt(
                        interrupt, "a callback of job %r" % desc.name)

    instance.on_finish(on_finish)
    if interrupted:
        raise interrupted[0]


def _call(session, desc, args, kwargs):
    from oneflow import typing as oft

    session_util.check_not_in_callback("calling global function %r" % desc.name)
    annotation = desc.return_annotation
    with session.lock:
        if session.tracing_job is not None:  # this thread holds the lock: it is the tracer
            raise RuntimeError(
                "global function %r was called inside global function %r while it is traced; "
                "global functions do not nest (make the inner one a plain Python function)"
                % (desc.name, session.tracing_job.name))
        desc = _compiled_for_call(session, desc, args, kwargs)
        # Known after tracing: a job returning nothing completes at its call.
        blocking = not isinstance(annotation, oft.CallbackType) and (
            annotation is not inspect.Signature.empty or desc.output_structure is None)
        inputs = _inputs(desc, args, kwargs, copy=not blocking)
        instance = session.launch(desc, inputs, "caller" if blocking else "future")
    if isinstance(annotation, oft.CallbackType):

        def register(callback):
            _register_callback(session, desc, instance, callback)

        return register
    if not blocking:
        return _Future(session, desc, instance)
    # Blocking call; a job that returns nothing also completes here, so a failed watch callback
    # in it is raised by this very call.
    try:
        instance.wait()
    finally:
        session.settle(instance)
    if annotation is None:
        return None
    if annotation is inspect.Signature.empty:
        return _Future(session, desc, instance)
    return _structure_results(desc.output_structure, instance.outputs())
