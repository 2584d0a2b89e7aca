"""OneFlow 0.3's initializer messages (oneflow/core/job/initializer_conf.proto), which model
scripts build by hand and pass as a variable's initializer:

    import oneflow.core.job.initializer_conf_pb2 as initializer_conf_util
    conf = initializer_conf_util.InitializerConf()
    conf.truncated_normal_conf.std = 0.816496580927726
    flow.layers.dense(x, 4096, kernel_initializer=conf)

get_variable turns a message into the initializer it names (flow.ops.initializers.as_initializer).
"""
from google.protobuf import descriptor_pb2
from google.protobuf.internal import enum_type_wrapper

from oneflow.core import descriptors

_F = descriptor_pb2.FieldDescriptorProto
_FILE = "oneflow/core/job/initializer_conf.proto"

# message name -> [(field, number, type, default or None, enum type name or None)]
_MESSAGES = {
    "ConstantInitializerConf": [("value", 1, _F.TYPE_FLOAT, "0", None)],
    "ConstantIntInitializerConf": [("value", 1, _F.TYPE_INT64, "0", None)],
    "RandomUniformInitializerConf": [("min", 1, _F.TYPE_FLOAT, "0", None),
                                     ("max", 2, _F.TYPE_FLOAT, "1", None)],
    "RandomUniformIntInitializerConf": [("min", 1, _F.TYPE_INT32, "0", None),
                                        ("max", 2, _F.TYPE_INT32, "1", None)],
    "RandomNormalInitializerConf": [("mean", 1, _F.TYPE_FLOAT, "0", None),
                                    ("std", 2, _F.TYPE_FLOAT, "1", None)],
    "TruncatedNormalInitializerConf": [("mean", 1, _F.TYPE_FLOAT, "0", None),
                                       ("std", 2, _F.TYPE_FLOAT, "1", None)],
    "XavierInitializerConf": [("variance_norm", 1, _F.TYPE_ENUM, None, "VarianceNorm"),
                              ("data_format", 2, _F.TYPE_STRING, None, None)],
    "MsraInitializerConf": [("variance_norm", 1, _F.TYPE_ENUM, None, "VarianceNorm"),
                            ("data_format", 2, _F.TYPE_STRING, None, None)],
    "RangeInitializerConf": [("start", 1, _F.TYPE_DOUBLE, "0", None),
                             ("stride", 2, _F.TYPE_DOUBLE, "1", None),
                             ("axis", 3, _F.TYPE_INT64, "-1", None)],
    "IntRangeInitializerConf": [("start", 1, _F.TYPE_INT64, "0", None),
                                ("stride", 2, _F.TYPE_INT64, "1", None),
                                ("axis", 3, _F.TYPE_INT64, "-1", None)],
    "VarianceScalingInitializerConf": [
        ("scale", 1, _F.TYPE_FLOAT, None, None),
        ("variance_norm", 2, _F.TYPE_ENUM, None, "VarianceNorm"),
        ("distribution", 3, _F.TYPE_ENUM, None, "RandomDistribution"),
        ("data_format", 4, _F.TYPE_STRING, None, None)],
    "EmptyInitializerConf": [],
}
# InitializerConf's oneof: (field, number, message).
_ONEOF = [
    ("constant_conf", 1, "ConstantInitializerConf"),
    ("constant_int_conf", 2, "ConstantIntInitializerConf"),
    ("random_uniform_conf", 3, "RandomUniformInitializerConf"),
    ("random_uniform_int_conf", 4, "RandomUniformIntInitializerConf"),
    ("random_normal_conf", 5, "RandomNormalInitializerConf"),
    ("truncated_normal_conf", 6, "TruncatedNormalInitializerConf"),
    ("xavier_conf", 7, "XavierInitializerConf"),
    ("msra_conf", 8, "MsraInitializerConf"),
    ("range_conf", 9, "RangeInitializerConf"),
    ("int_range_conf", 10, "IntRangeInitializerConf"),
    ("variance_scaling_conf", 11, "VarianceScalingInitializerConf"),
    ("empty_conf", 12, "EmptyInitializerConf"),
]
_ENUMS = {
    "VarianceNorm": [("kFanIn", 0), ("kFanOut", 1), ("kAverage", 2)],
    "RandomDistribution": [("kTruncatedNormal", 0), ("kRandomNormal", 1), ("kRandomUniform", 2)],
}


def _file_proto():
    proto = descriptor_pb2.FileDescriptorProto(name=_FILE, package="oneflow", syntax="proto2")
    for enum_name, values in _ENUMS.items():
        enum = proto.enum_type.add(name=enum_name)
        for value_name, number in values:
            enum.value.add(name=value_name, number=number)
    for message_name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=message_name)
        for name, number, kind, default, enum_type in fields:
            field = message.field.add(name=name, number=number, label=_F.LABEL_OPTIONAL,
                                      type=kind)
            if default is not None:
                field.default_value = default
            if enum_type is not None:
                field.type_name = ".oneflow." + enum_type
    conf = proto.message_type.add(name="InitializerConf")
    conf.oneof_decl.add(name="type")
    for name, number, message_name in _ONEOF:
        conf.field.add(name=name, number=number, label=_F.LABEL_OPTIONAL, type=_F.TYPE_MESSAGE,
                       type_name=".oneflow." + message_name, oneof_index=0)
    return proto


_CLASSES = descriptors.message_classes(_file_proto(), list(_MESSAGES) + ["InitializerConf"])
globals().update(_CLASSES)
DESCRIPTOR = _CLASSES["InitializerConf"].DESCRIPTOR.file
for _enum_name, _values in _ENUMS.items():  # module constants, as protoc writes them
    globals()[_enum_name] = enum_type_wrapper.EnumTypeWrapper(
        DESCRIPTOR.enum_types_by_name[_enum_name])
    globals().update(dict(_values))
del _CLASSES, _enum_name, _values
