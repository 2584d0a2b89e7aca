"""flow.user_op_builder: OneFlow 0.3's way to add any registered op by type, inputs, outputs and
attributes, for ops without a Python wrapper:

    out = (flow.user_op_builder("my_relu").Op("relu").Input("x", [x]).Output("y")
           .Build().InferAndTryRun().SoleOutputBlob())

The op goes through the same entry point as every wrapper (op_builder.add_op): it is checked
and inferred at once, so an unknown op type, argument or attribute raises there, naming it.
Attribute types come from the op's registration; OneFlow's attr_type_name is accepted and not
needed.
"""
import numbers
import random

from oneflow.framework import dtypes, op_builder


class UserOpConfBuilder:
    def __init__(self, op_name, view=None):
        if not isinstance(op_name, str) or not op_name:
            raise TypeError("user_op_builder: op_name must be a non-empty str, got %r" % (op_name,))
        self._name = op_name
        self._view = view  # None: the current logical view; False: consistent
        self._op_type = None
        self._inputs = {}
        self._outputs = []  # (argument, count) in the order given
        self._attrs = {}

    def Op(self, op_type_name):
        if not isinstance(op_type_name, str) or not op_type_name:
            raise TypeError("user_op_builder(%r).Op: the op type must be a non-empty str, got %r"
                            % (self._name, op_type_name))
        self._op_type = op_type_name
        return self

    def Input(self, input_name, input_blob_list):
        if not isinstance(input_blob_list, (list, tuple)) or not input_blob_list:
            raise TypeError("user_op_builder(%r).Input(%r): expected a non-empty list of blobs, "
                            "got %r" % (self._name, input_name, input_blob_list))
        self._inputs[input_name] = list(input_blob_list)
        return self

    def Output(self, output_name, num=1):
        if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 1:
            raise ValueError("user_op_builder(%r).Output(%r): num must be a positive int, got %r"
                             % (self._name, output_name, num))
        self._outputs.append((output_name, int(num)))
        return self

    def Attr(self, attr_name, attr_value, attr_type_name=None):
        if isinstance(attr_value, dtypes.DType):
            attr_value = attr_value.value
        elif isinstance(attr_value, (list, tuple)):
            attr_value = [v.value if isinstance(v, dtypes.DType) else v for v in attr_value]
        self._attrs[attr_name] = attr_value
        return self

    def SetRandomSeed(self, seed=None):
        self._attrs["seed"] = random.getrandbits(63) if seed is None else int(seed)
        return self

    def CheckAndComplete(self):
        return self

    def Build(self):
        if self._op_type is None:
            raise ValueError("user_op_builder(%r): call .Op(op_type) before .Build()"
                             % self._name)
        return UserOp(self)


class UserOp:
    """A built op; InferAndTryRun() adds it to the job being traced."""

    def __init__(self, builder):
        self._builder = builder
        self._outputs = None

    def InferAndTryRun(self):
        b = self._builder
        if b._op_type == "normalization" and "moving_mean" in b._inputs:
            outputs = _oneflow_normalization(b)
        else:
            outputs = op_builder.add_op(b._op_type, op_builder.op_name(b._name, b._op_type),
                                        b._inputs, b._attrs, mirrored=b._view)
        for argument, count in b._outputs:
            got = len(outputs.get(argument, []))
            if got < count:
                raise ValueError("user_op_builder(%r): op type %s has %d '%s' output(s), %d "
                                 "requested" % (b._name, b._op_type, got, argument, count))
        self._outputs = outputs
        return self

    def RemoteBlobList(self):
        if self._outputs is None:
            raise RuntimeError("user_op_builder(%r): call InferAndTryRun() first"
                               % self._builder._name)
        return [blob for argument, count in self._builder._outputs
                for blob in self._outputs[argument][:count]]

    def SoleOutputBlob(self):
        blobs = self.RemoteBlobList()
        if len(blobs) != 1:
            raise ValueError("user_op_builder(%r): SoleOutputBlob() needs exactly one requested "
                             "output, got %d" % (self._builder._name, len(blobs)))
        return blobs[0]


def _oneflow_normalization(builder):
    """OneFlow 0.3's "normalization" user op (inputs x, moving_mean, moving_variance, gamma,
    beta; attributes axis, epsilon, training, momentum; outputs y and, in training, mean and
    inv_variance), as flow.layers.batch_normalization's ops, for scripts that build it
    themselves (OneFlow-Benchmark's dcgan layers.py)."""
    from oneflow.ops import math_ops, norm_ops

    blobs = {}
    for argument in ("x", "moving_mean", "moving_variance", "gamma", "beta"):
        values = builder._inputs.get(argument)
        blobs[argument] = values[0] if values else None
    attrs = builder._attrs
    epsilon = float(attrs.get("epsilon", 1e-5))
    training = bool(attrs.get("training", False))
    y, mean, variance = norm_ops.batch_norm_ops(
        blobs["x"], int(attrs.get("axis", 1)), epsilon, float(attrs.get("momentum", 0.9)),
        training, blobs["gamma"], blobs["beta"], blobs["moving_mean"], blobs["moving_variance"],
        builder._name)
    outputs = {"y": [y]}
    if training:
        outputs["mean"] = [mean]
        outputs["inv_variance"] = [math_ops.rsqrt(math_ops.add(variance, epsilon))]
    return outputs


class _UserOpModule:
    """OneFlow 0.3's user_op_module of a module builder: kernels are made when the job is
    compiled, so InitOpKernel has nothing to do."""

    def InitOpKernel(self):
        return self


class UserOpModuleBuilder(UserOpConfBuilder):
    """OneFlow 0.3's user_op_module_builder(op_type): a builder kept by a flow.deprecated.nn
    Module and used once per call, each time with its own op name (OpName) and inputs."""

    def __init__(self, op_type, view=None):
        super().__init__(op_type, view)
        self.Op(op_type)
        self.user_op_module = _UserOpModule()
        self._input_sizes = {}

    def InputSize(self, input_name, input_blob_size):
        """Declares how many blobs input `input_name` takes (checked when the op is built)."""
        if isinstance(input_blob_size, bool) or not isinstance(input_blob_size, numbers.Integral):
            raise TypeError("user_op_module_builder(%r).InputSize(%r): expected an int, got %r"
                            % (self._op_type, input_name, input_blob_size))
        self._input_sizes[input_name] = int(input_blob_size)
        return self

    def OpName(self, op_name):
        if not isinstance(op_name, str) or not op_name:
            raise TypeError("user_op_module_builder(%r).OpName: expected a non-empty str, got %r"
                            % (self._op_type, op_name))
        self._name = op_name
        return self

    def Build(self):
        for name, size in self._input_sizes.items():
            given = len(self._inputs.get(name, []))
            if given != size:
                raise ValueError("user_op_module_builder(%r): input %r takes %d blob(s), got %d"
                                 % (self._op_type, name, size, given))
        return super().Build()


def user_op_module_builder(op_type_name):
    return UserOpModuleBuilder(op_type_name)


def consistent_user_op_module_builder(op_type_name):
    return UserOpModuleBuilder(op_type_name, view=False)


def find_or_create_module(module_name, create, reuse=False):
    """The module called `module_name` in the job being traced, made by create() the first
    time. Asking again for a name already made in this job needs reuse=True."""
    from oneflow.deprecated import Module
    from oneflow.framework import op_builder

    if not callable(create):
        raise TypeError("find_or_create_module(%r): create must be callable, got %r"
                        % (module_name, create))
    session = op_builder.current_job()
    modules = session.scope.modules
    if module_name in modules:
        if not reuse:
            raise ValueError("find_or_create_module: module %r already exists in this job; pass "
                             "reuse=True to use it again" % module_name)
        return modules[module_name]
    module = create()
    if not isinstance(module, Module):
        raise TypeError("find_or_create_module(%r): create() must return a "
                        "flow.deprecated.nn.Module, got %r" % (module_name, module))
    modules[module_name] = module
    return module


def user_op_builder(op_name):
    """A builder of one op of the current logical view."""
    return UserOpConfBuilder(op_name)


def consistent_user_op_builder(op_name):
    """A builder of one op of the consistent view (one logical blob over the devices)."""
    return UserOpConfBuilder(op_name, view=False)
