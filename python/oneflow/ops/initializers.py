"""Initializers: descriptions that the variable op carries and the C++ session runs at start.

Each returns an InitializerConf(kind, args, seed). Random ones are deterministic: without an
explicit seed, the seed is derived from the variable's name.
"""
import math
import numbers

from oneflow.framework import dtypes


class InitializerConf:
    def __init__(self, kind, args, seed=None):
        for value in args:
            if not isinstance(value, numbers.Real):
                raise TypeError("%s initializer: its values must be real numbers, got %r"
                                % (kind, value))
        self.kind = kind
        self.args = [float(a) for a in args]
        self.seed = seed

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


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    if stddev < 0:
        raise ValueError("random_normal_initializer: stddev must be >= 0, got %r" % (stddev,))
    return InitializerConf("random_normal", [mean, stddev], seed)


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    if stddev < 0:
        raise ValueError("truncated_normal_initializer: stddev must be >= 0, got %r" % (stddev,))
    return InitializerConf("truncated_normal", [mean, stddev], seed)


_MODES = {"fan_in": 0, "fan_out": 1, "fan_avg": 2}
_DISTRIBUTIONS = {"truncated_normal": 0, "random_normal": 1, "random_uniform": 2}


def truncated_normal(stddev=1.0):
    """OneFlow 0.3's shorthand: a truncated normal initializer with mean 0."""
    return truncated_normal_initializer(0.0, stddev)


def variance_scaling_initializer(
    scale=1.0, mode="fan_in", distribution="truncated_normal", data_format="", seed=None
):
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not scale > 0:
        raise ValueError("variance_scaling_initializer: scale must be a positive number, got %r"
                         % (scale,))
    if mode not in _MODES:
        raise ValueError("variance_scaling_initializer: mode must be one of %s" % sorted(_MODES))
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            "variance_scaling_initializer: distribution must be one of %s" % sorted(_DISTRIBUTIONS)
        )
    return InitializerConf(
        "variance_scaling", [scale, _MODES[mode], _DISTRIBUTIONS[distribution]], seed
    )


def glorot_uniform_initializer(data_format=""):
    return variance_scaling_initializer(1.0, "fan_avg", "random_uniform", data_format)


def glorot_normal_initializer(data_format=""):
    return variance_scaling_initializer(1.0, "fan_avg", "random_normal", data_format)


xavier_uniform_initializer = glorot_uniform_initializer
xavier_normal_initializer = glorot_normal_initializer


def kaiming_initializer(
    shape=None, distribution="random_normal", mode="fan_in", nonlinearity="leaky_relu",
    negative_slope=0.0, data_format="NCHW",
):
    gains = {"relu": 2.0, "leaky_relu": 2.0 / (1 + negative_slope ** 2), "tanh": (5.0 / 3) ** 2}
    scale = gains.get(nonlinearity, 1.0)
    return variance_scaling_initializer(scale, mode, distribution, data_format)


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
        for argument, names in (("mode", _VARIANCE_NORMS),
                                ("distribution", _RANDOM_DISTRIBUTIONS)):
            kwargs[argument] = names.get(kwargs[argument], kwargs[argument])
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
