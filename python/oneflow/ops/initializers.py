"""Initializers: descriptions that the variable op carries and the C++ session runs at start.

Each returns an InitializerConf(kind, args, seed). Random ones are deterministic: without an
explicit seed, the seed is derived from the variable's name.
"""
import math
import numbers
import re

from oneflow.framework import dtypes, shapes


class InitializerConf:
    """`shape`, where not None, is the shape kaiming_initializer(shape) computed its fan from;
    as in OneFlow 0.3 it is used whatever the variable's shape."""

    def __init__(self, kind, args, seed=None, shape=None):
        for value in args:
            if not isinstance(value, numbers.Real):
                raise TypeError("%s initializer: its values must be real numbers, got %r"
                                % (kind, value))
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise TypeError("%s initializer: seed must be an int or None, got %r" % (kind, seed))
        if seed is not None and not -2 ** 63 <= seed < 2 ** 63:
            raise ValueError("%s initializer: seed %d does not fit int64" % (kind, seed))
        self.kind = kind
        self.values = list(args)  # as given (an int constant may not survive float())
        self.args = [float(a) for a in args]
        self.seed = seed
        self.shape = shape

    def __repr__(self):
        return "InitializerConf(%s, %r, seed=%r)" % (self.kind, self.args, self.seed)


def constant_initializer(value=0, dtype=dtypes.float32):
    return InitializerConf("constant", [value])


def zeros_initializer(dtype=dtypes.float32):
    return constant_initializer(0.0)


def ones_initializer(dtype=dtypes.float32):
    return constant_initializer(1.0)


def random_uniform_initializer(minval=0, maxval=1, dtype=dtypes.float32, seed=None):
    """Uniform in [minval, maxval); for an integer variable, whole numbers in [minval, maxval],
    both included, as OneFlow 0.3's integer initializer. Reversed bounds (minval > maxval)
    sample between them, as OneFlow 0.3 did (random_uniform_initializer(2) gives values in
    [1, 2])."""
    for name, value in (("minval", minval), ("maxval", maxval)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value):
            raise ValueError("random_uniform_initializer: %s must be a finite number, got %r"
                             % (name, value))
    return InitializerConf("random_uniform", [minval, maxval], seed)


def _check_normal(what, mean, stddev):
    for name, value in (("mean", mean), ("stddev", stddev)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError("%s: %s must be a real number, got %r" % (what, name, value))
        if not math.isfinite(value):
            raise ValueError("%s: %s must be finite, got %r" % (what, name, value))
    if stddev < 0:
        raise ValueError("%s: stddev must be >= 0, got %r" % (what, stddev))


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    _check_normal("random_normal_initializer", mean, stddev)
    return InitializerConf("random_normal", [mean, stddev], seed)


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    _check_normal("truncated_normal_initializer", mean, stddev)
    return InitializerConf("truncated_normal", [mean, stddev], seed)


def check_for_dtype(initializer, dtype, what):
    """Refuses what the variable's dtype cannot hold: an integer constant that a float64 (the
    initializer's arguments) would round, and uniform bounds whose range overflows a floating
    dtype (every sample would be inf, as numpy.random.uniform refuses)."""
    if initializer.kind == "constant" and dtype in (dtypes.int32, dtypes.int64, dtypes.int8,
                                                    dtypes.uint8):
        value = initializer.values[0]
        if isinstance(value, numbers.Integral) and int(float(value)) != int(value):
            raise ValueError("%s: constant_initializer(%d) for its %s value: the value is not "
                             "exactly representable as a float64, which carries it; use a "
                             "value within +-2**53" % (what, value, dtype.name))
    if initializer.kind == "random_uniform" and dtypes.is_floating(dtype):
        dtypes.check_uniform_range(what + ": random_uniform_initializer", *initializer.values,
                                   dtype)


_MODES = {"fan_in": 0, "fan_out": 1, "fan_avg": 2}
_DISTRIBUTIONS = {"truncated_normal": 0, "random_normal": 1, "random_uniform": 2}


def truncated_normal(stddev=1.0):
    """OneFlow 0.3's shorthand: a truncated normal initializer with mean 0."""
    return truncated_normal_initializer(0.0, stddev)


def _data_format(data_format, what):
    """"channels_first", "channels_last" or "" for a data_format as OneFlow 0.3 spelt it: "NC..."
    (e.g. "NCHW"), "N...C" (e.g. "NHWC") or "" (the default); also "channels_first" /
    "channels_last" (what 0.3 stored in VarianceScalingInitializerConf.data_format)."""
    if isinstance(data_format, str):
        if data_format in ("", "channels_first", "channels_last"):
            return data_format
        upper = data_format.upper()
        if re.fullmatch(r"NC[A-Z]*", upper):
            return "channels_first"
        if re.fullmatch(r"N[A-Z]*C", upper):
            return "channels_last"
    raise ValueError("%s: data_format must be \"NC...\" (channels first, e.g. \"NCHW\"), "
                     "\"N...C\" (channels last, e.g. \"NHWC\"), \"channels_first\", "
                     "\"channels_last\" or \"\", got %r" % (what, data_format))


def variance_scaling_initializer(
    scale=1.0, mode="fan_in", distribution="truncated_normal", data_format="", seed=None
):
    """The fans come from the variable's shape as OneFlow 0.3's GenInitialFan took them: fan_in
    is the product of every axis but the first; fan_out is the first axis times the kernel
    axes, (out, in, *kernel) channels first (the default) or (out, *kernel, in) channels last
    ("N...C")."""
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not scale > 0:
        raise ValueError("variance_scaling_initializer: scale must be a positive number, got %r"
                         % (scale,))
    if mode not in _MODES:
        raise ValueError("variance_scaling_initializer: mode must be one of %s, got %r"
                         % (sorted(_MODES), mode))
    if distribution not in _DISTRIBUTIONS:
        raise ValueError("variance_scaling_initializer: distribution must be one of %s, got %r"
                         % (sorted(_DISTRIBUTIONS), distribution))
    channels_last = _data_format(data_format, "variance_scaling_initializer") == "channels_last"
    return InitializerConf(
        "variance_scaling",
        [scale, _MODES[mode], _DISTRIBUTIONS[distribution], 1.0 if channels_last else 0.0], seed
    )


def glorot_uniform_initializer(data_format=""):
    return variance_scaling_initializer(1.0, "fan_avg", "random_uniform", data_format)


def glorot_normal_initializer(data_format=""):
    return variance_scaling_initializer(1.0, "fan_avg", "random_normal", data_format)


xavier_uniform_initializer = glorot_uniform_initializer
xavier_normal_initializer = glorot_normal_initializer


_NONLINEARITIES = (None, "sigmoid", "tanh", "relu", "leaky_relu")


def kaiming_initializer(
    shape=None, distribution="random_normal", mode="fan_in", nonlinearity="leaky_relu",
    negative_slope=0.0, data_format="NCHW",
):
    """He et al.'s initializer: standard deviation gain / sqrt(fan). As in OneFlow 0.3, `shape`
    is the shape of the variable it initializes (at least 2 axes: out, in, *kernel for
    "NC..." data formats, out, *kernel, in for "N...C" ones), and the fan is computed from it;
    get_variable refuses a variable of another shape. Without `shape` (an extension) the fan
    comes from the variable's shape in the channels-first layout."""
    what = "kaiming_initializer"
    if mode not in _MODES:
        raise ValueError("%s: mode must be one of %s, got %r" % (what, sorted(_MODES), mode))
    if distribution not in _DISTRIBUTIONS:
        raise ValueError("%s: distribution must be one of %s, got %r"
                         % (what, sorted(_DISTRIBUTIONS), distribution))
    if nonlinearity not in _NONLINEARITIES:
        raise ValueError("%s: nonlinearity must be one of %s, got %r"
                         % (what, ", ".join(map(repr, _NONLINEARITIES)), nonlinearity))
    if negative_slope is None:  # OneFlow 0.3's CalcGain: leaky_relu's default slope
        negative_slope = 0.01
    if isinstance(negative_slope, bool) or not isinstance(negative_slope, numbers.Real) \
            or not math.isfinite(negative_slope):
        raise ValueError("%s: negative_slope must be a finite number, got %r"
                         % (what, negative_slope))
    layout = _data_format(data_format, what) or "channels_first"
    gain_squared = {None: 1.0, "sigmoid": 1.0, "tanh": (5.0 / 3) ** 2, "relu": 2.0,
                    "leaky_relu": 2.0 / (1 + negative_slope ** 2)}[nonlinearity]
    if shape is None:
        return variance_scaling_initializer(gain_squared, mode, distribution, data_format)
    shape = shapes.to_shape(shape, what)
    if len(shape) < 2 or 0 in shape:
        raise ValueError("%s: shape must be a weight's shape, with at least 2 axes and no zero "
                         "dimension (out, in, *kernel), got %r" % (what, shape))
    # OneFlow 0.3's _CalcFan.
    if len(shape) == 2:
        fan_in, fan_out = shape[1], shape[0]
    else:
        fan_in = math.prod(shape[1:])
        kernel = shape[2:] if layout == "channels_first" else shape[1:-1]
        fan_out = shape[0] * math.prod(kernel)
    fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode]
    std = math.sqrt(gain_squared / fan)
    if distribution == "random_uniform":
        bound = math.sqrt(3.0) * std
        return InitializerConf("random_uniform", [-bound, bound], shape=shape)
    if distribution == "random_normal":
        return InitializerConf("random_normal", [0.0, std], shape=shape)
    # truncated at 2 stddev, scaled as variance_scaling_initializer's
    return InitializerConf("truncated_normal", [0.0, std / 0.87962566103423978], shape=shape)


_VARIANCE_NORMS = {"kFanIn": "fan_in", "kFanOut": "fan_out", "kAverage": "fan_avg", 0: "fan_in",
                   1: "fan_out", 2: "fan_avg"}
_RANDOM_DISTRIBUTIONS = {"kTruncatedNormal": "truncated_normal", "kRandomNormal": "random_normal",
                         "kRandomUniform": "random_uniform", 0: "truncated_normal",
                         1: "random_normal", 2: "random_uniform"}

# OneFlow 0.3's InitializerConf (initializer_conf.proto): one field -> (the initializer here,
# {proto field: (keyword argument, default)}).
_CONF_KINDS = {
    "constant_conf": (constant_initializer, {"value": ("value", 0.0)}),
    "constant_int_conf": (constant_initializer, {"value": ("value", 0)}),
    "random_uniform_conf": (random_uniform_initializer,
                            {"min": ("minval", 0.0), "max": ("maxval", 1.0)}),
    "random_normal_conf": (random_normal_initializer,
                           {"mean": ("mean", 0.0), "std": ("stddev", 1.0)}),
    "truncated_normal_conf": (truncated_normal_initializer,
                              {"mean": ("mean", 0.0), "std": ("stddev", 1.0)}),
    "variance_scaling_conf": (variance_scaling_initializer, {
        "scale": ("scale", 1.0), "variance_norm": ("mode", "fan_in"),
        "distribution": ("distribution", "truncated_normal"), "data_format": ("data_format", "")}),
}
_UNSUPPORTED_CONF_KINDS = ("random_uniform_int_conf", "range_conf", "int_range_conf",
                           "empty_conf", "xavier_conf", "msra_conf")


def from_conf(conf, what):
    """The InitializerConf of OneFlow 0.3's dict form, e.g. {"constant_conf": {"value": 1.0}}."""
    if not isinstance(conf, dict) or len(conf) != 1:
        raise TypeError("%s takes a dict with one initializer, e.g. {\"constant_conf\": "
                        "{\"value\": 1.0}}; got %r" % (what, conf))
    (kind, fields), = conf.items()
    if kind in _UNSUPPORTED_CONF_KINDS:
        raise NotImplementedError("%s: initializer %r is not supported; use one of %s"
                                  % (what, kind, sorted(_CONF_KINDS)))
    if kind not in _CONF_KINDS:
        raise ValueError("%s: unknown initializer %r; expected one of %s"
                         % (what, kind, sorted(_CONF_KINDS)))
    if not isinstance(fields, dict):
        raise TypeError("%s: %r takes a dict of fields, got %r" % (what, kind, fields))
    make, field_table = _CONF_KINDS[kind]
    unknown = sorted(set(fields) - set(field_table))
    if unknown:
        raise ValueError("%s: %r has no field %s; its fields are %s"
                         % (what, kind, ", ".join(map(repr, unknown)), sorted(field_table)))
    kwargs = {argument: fields.get(field, default)
              for field, (argument, default) in field_table.items()}
    if kind == "variance_scaling_conf":
        for field, argument, names in (("variance_norm", "mode", _VARIANCE_NORMS),
                                       ("distribution", "distribution", _RANDOM_DISTRIBUTIONS)):
            value = kwargs[argument]
            if field not in fields:
                continue
            if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral)) \
                    or value not in names:
                raise ValueError("%s: %r field %r must be one of %s, got %r"
                                 % (what, kind, field, ", ".join(map(repr, names)), value))
            kwargs[argument] = names[value]
        _data_format(kwargs["data_format"], "%s: %r field 'data_format'" % (what, kind))
    return make(**kwargs)


def as_initializer(value, what):
    """A variable's initializer from what OneFlow 0.3 accepted there: a flow.*_initializer()
    result, an InitializerConf message (oneflow.core.job.initializer_conf_pb2) or its dict form
    ({"truncated_normal_conf": {"std": 0.8}})."""
    if isinstance(value, InitializerConf):
        return value
    descriptor = getattr(value, "DESCRIPTOR", None)
    if getattr(descriptor, "full_name", None) == "oneflow.InitializerConf":
        from google.protobuf import json_format

        kind = value.WhichOneof("type")
        if kind is None:
            raise ValueError("%s: the InitializerConf message sets no initializer" % what)
        fields = json_format.MessageToDict(getattr(value, kind), preserving_proto_field_name=True)
        return from_conf({kind: fields}, what)
    if isinstance(value, dict):
        return from_conf(value, what)
    raise TypeError("%s: an initializer must come from flow.*_initializer(), or be an "
                    "InitializerConf message or its dict form, got %s"
                    % (what, type(value).__name__))
