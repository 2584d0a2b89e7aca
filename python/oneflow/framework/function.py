"""flow.global_function and flow.FunctionConfig: declare a job, trace it, call it."""
import functools
import inspect
import typing

import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import op_builder
from oneflow.framework import session as session_util
from oneflow.framework.blob import LazyBlob, hand_over


class FunctionConfig:
    """Per-function options. Unknown OneFlow options are accepted and ignored, so scripts that
    tune fusion or memory flags keep running; the ones that change semantics are honoured."""

    def __init__(self):
        self._data_type = dtypes.float32
        self._placement = None
        self._logical_view = "consistent"
        self._optimizer_placement = "non_distributed"
        self._other = {}

    def default_data_type(self, dtype=None):
        if dtype is None:
            return self._data_type
        self._data_type = dtypes.check(dtype, "default_data_type")

    def data_type(self):
        return self._data_type

    def default_logical_view(self, view):
        self._logical_view = getattr(view, "name", "consistent")

    def default_placement_scope(self, placement):
        self._placement = placement

    def default_distribute_strategy(self, strategy):
        self.default_logical_view(strategy)

    def optimizer_placement_optimization_mode(self, mode):
        """"distributed_split" (ZeRO-style): a trainable variable of a train job that would be
        broadcast over several devices is stored split along axis 0 instead; its readers get it
        whole through an all-gather, its gradient is reduce-scattered, and each device updates
        (and keeps the optimizer state of) its own slice only. Same numbers, less update work and
        memory per device. "non_distributed" (the default): replicated variables."""
        if mode not in ("distributed_split", "non_distributed"):
            raise ValueError("optimizer_placement_optimization_mode must be 'distributed_split' "
                             "or 'non_distributed', got %r" % (mode,))
        self._optimizer_placement = mode

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def setter(*args, **kwargs):
            self._other[name] = (args, kwargs)

        return setter


function_config = FunctionConfig


class FunctionDesc:
    def __init__(self, func, job_type, config):
        self.func = func
        self.name = func.__name__
        self.is_train = job_type == "train"
        self.config = config or FunctionConfig()
        self.traced = False
        self.trace_error = None
        self.signature = inspect.signature(func)
        # (parameter name, input op name, Placeholder, devices for a per-device one or None)
        self.placeholders = []
        self.output_structure = None  # nested tuple/list/dict of _Result
        self.return_annotation = self.signature.return_annotation


def global_function(type="predict", function_config=None):  # noqa: A002 - OneFlow's name
    """Decorator declaring a job function: traced once into a Job, then run by the runtime."""
    if callable(type) and not isinstance(type, str):  # used bare: @flow.global_function
        return global_function()(type)
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


def _check_result_annotation(annotation, desc):
    from oneflow import typing as oft

    if annotation in (oft.Numpy, oft.ListNumpy, oft.ListListNumpy):
        return
    origin = typing.get_origin(annotation)
    if origin in (tuple, list):
        for item in typing.get_args(annotation):
            if item is not Ellipsis:
                _check_result_annotation(item, desc)
        return
    if origin is dict:
        _check_result_annotation(typing.get_args(annotation)[1], desc)
        return
    raise TypeError(
        "job %r: unsupported return annotation %r; use oneflow.typing.Numpy (or ListNumpy, "
        "ListListNumpy), oneflow.typing.Callback[...] of those, a Tuple/List/Dict of those, or "
        "none"
        % (desc.name, annotation))


def _check_return_annotation(desc):
    from oneflow import typing as oft

    annotation = desc.return_annotation
    if annotation is inspect.Signature.empty or annotation is None:
        desc.return_annotation = inspect.Signature.empty
        return
    if isinstance(annotation, oft.CallbackType):
        _check_result_annotation(annotation.inner, desc)
        return
    _check_result_annotation(annotation, desc)


def _leaf_kind(annotation):
    """How a returned blob is handed back under `annotation`: "numpy" (one array), "list" (one
    array per device), "list_list" (a one-tensor list per device) or "local" (a LocalBlob)."""
    from oneflow import typing as oft

    return {oft.Numpy: "numpy", oft.ListNumpy: "list", oft.ListListNumpy: "list_list"}.get(
        annotation, "local")


def _item_annotations(annotation, count):
    """The annotation of each of `count` items of a returned tuple or list."""
    if isinstance(annotation, (tuple, list)):  # a literal (tp.Numpy, tp.Numpy)
        return list(annotation) if len(annotation) == count else [None] * count
    args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
    if typing.get_origin(annotation) is tuple and len(args) == count:
        return args
    return [args[0] if args else annotation] * count


class _Result:
    """One returned blob: its return op, how it is handed back (_leaf_kind), and for a blob of
    the mirrored view, the device count (its per-device values come back stacked)."""

    def __init__(self, op_name, kind, parts):
        self.op_name, self.kind, self.parts = op_name, kind, parts

    def convert(self, outputs):
        return hand_over(outputs[self.op_name], self.kind, self.parts)


def _add_placeholder(session, desc, parameter):
    """The input op of one argument; returns the blob the job function receives."""
    from oneflow import typing as oft
    from oneflow.framework import mirrored

    placeholder = parameter.annotation
    if not isinstance(placeholder, (oft.Numpy.Placeholder, oft.ListNumpy.Placeholder,
                                    oft.ListListNumpy.Placeholder)):
        raise TypeError(
            "job %r: argument %r must be annotated with oneflow.typing.Numpy.Placeholder("
            "shape, dtype), e.g. `x: tp.Numpy.Placeholder((64, 784), dtype=flow.float)` (or "
            "ListNumpy.Placeholder for one value per device)" % (desc.name, parameter.name)
        )
    op_name = "Input_" + parameter.name
    placement = desc.config._placement or session.default_placement()
    per_device = not isinstance(placeholder, oft.Numpy.Placeholder)
    parts = placement.device_count() if per_device else None
    attrs = {
        "shape": ((parts,) + tuple(placeholder.shape)) if per_device else placeholder.shape,
        "dtype": placeholder.dtype.value,
        "batch_axis": 0 if per_device else (
            -1 if placeholder.batch_axis is None else placeholder.batch_axis),
    }
    out = op_builder.add_op("input", op_name, {}, attrs, placement=placement,
                            mirrored=False)["out"][0]
    desc.placeholders.append((parameter.name, op_name, placeholder, parts))
    # One value per device: the call's list is stacked; device i takes row i.
    return mirrored.unstack(out, placement) if per_device else out


def trace(session, desc):
    """Builds desc's Job: input ops for placeholders, the user's ops, return ops."""
    from oneflow import typing as oft
    from oneflow.framework import mirrored

    config = desc.config
    session.scope.views = [config._logical_view]
    blobs = [_add_placeholder(session, desc, parameter)
             for parameter in desc.signature.parameters.values()]
    placement = config._placement
    if placement is not None:
        session.scope.push_placement(placement)
    try:
        result = desc.func(*blobs)
    finally:
        if placement is not None:
            session.scope.pop_placement()
    counter = [0]

    def add_returns(value, annotation):
        if value is None:
            return None
        if isinstance(value, LazyBlob):
            name = "Return_%d" % counter[0]
            counter[0] += 1
            parts = None
            if value.is_mirrored:
                parts = value.placement.device_count()
                value = mirrored.stack(value)
            # On the producer's devices: each writes its part of the result.
            op_builder.add_op("return", name, {"in": value},
                              placement=value.placement or session.default_placement(),
                              mirrored=False)
            return _Result(name, _leaf_kind(annotation), parts)
        if isinstance(value, (tuple, list)):
            items = _item_annotations(annotation, len(value))
            return type(value)(add_returns(v, a) for v, a in zip(value, items))
        if isinstance(value, dict):
            args = typing.get_args(annotation)
            item = args[1] if typing.get_origin(annotation) is dict and len(args) == 2 else annotation
            return {k: add_returns(v, item) for k, v in value.items()}
        raise TypeError(
            "job %r returned %s; a job function returns blobs (or a tuple, list or dict of "
            "blobs)" % (desc.name, type(value).__name__)
        )

    annotation = desc.return_annotation
    if isinstance(annotation, oft.CallbackType):
        annotation = annotation.inner
    desc.output_structure = add_returns(result, annotation)


def _checked_array(desc, parameter_name, placeholder, value):
    array = np.asarray(value)
    expected_dtype = placeholder.dtype.numpy_dtype
    if array.dtype != expected_dtype:
        raise TypeError(
            "job %r, argument %r: expected dtype %s, got %s"
            % (desc.name, parameter_name, placeholder.dtype.name, array.dtype)
        )
    if tuple(array.shape) != tuple(placeholder.shape):
        raise ValueError(
            "job %r, argument %r: expected shape %s, got %s"
            % (desc.name, parameter_name, tuple(placeholder.shape), tuple(array.shape))
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
                         % (desc.name, parameter_name, what, type(value).__name__
                            if not isinstance(value, (list, tuple)) else "%d items" % len(value)))
    if isinstance(placeholder, oft.ListListNumpy.Placeholder):
        for device_list in value:
            if not isinstance(device_list, (list, tuple)) or len(device_list) != 1:
                raise NotImplementedError(
                    "job %r, argument %r: tensor lists of more than one tensor per device are "
                    "not supported; give %s" % (desc.name, parameter_name, what))
        value = [device_list[0] for device_list in value]
    return np.stack([_checked_array(desc, parameter_name, placeholder, v) for v in value])


def _inputs(desc, args, kwargs):
    bound = desc.signature.bind(*args, **kwargs)
    inputs = {}
    for parameter_name, op_name, placeholder, parts in desc.placeholders:
        value = bound.arguments[parameter_name]
        if parts is None:
            array = _checked_array(desc, parameter_name, placeholder, value)
        else:
            array = _per_device_values(desc, parameter_name, placeholder, parts, value)
        inputs[op_name] = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
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
    """Calls callback(result) on the runtime thread when the call finishes; its error (or the
    callback's) is raised by the next call or sync."""
    session.settle(instance, "callback")

    def on_finish():
        with session_util.running_callback():
            try:
                instance.wait()
                callback(_structure_results(desc.output_structure, instance.outputs()))
            except Exception as error:
                session.pending_errors.append(error)

    instance.on_finish(on_finish)


def _call(session, desc, args, kwargs):
    from oneflow import typing as oft

    session_util.check_not_in_callback("calling global function %r" % desc.name)
    annotation = desc.return_annotation
    with session.lock:
        session.ensure_compiled(desc)
        inputs = _inputs(desc, args, kwargs)
        # Known after tracing: a job returning nothing completes at its call.
        blocking = not isinstance(annotation, oft.CallbackType) and (
            annotation is not inspect.Signature.empty or desc.output_structure is None)
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
    if annotation is inspect.Signature.empty:
        return _Future(session, desc, instance)
    return _structure_results(desc.output_structure, instance.outputs())
