"""Protobuf enums of OneFlow 0.3's generated modules that scripts import for their constants
(`op_conf_util.kNone`, `data_type_util.kFloat`): built as descriptors in a private pool, like
record/record_pb2.py, so the names and numbers are OneFlow's."""
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal import enum_type_wrapper


def define(file_name, enums, module_globals):
    """Adds each enum of `enums` (name -> [(value name, number), ...]) of proto file
    `file_name` (package oneflow) to `module_globals`: the EnumTypeWrapper under the enum's name
    and every value under its own name, as protoc's modules have them."""
    proto = descriptor_pb2.FileDescriptorProto(name=file_name, package="oneflow",
                                               syntax="proto2")
    for enum_name, values in enums.items():
        enum = proto.enum_type.add(name=enum_name)
        for value_name, number in values:
            enum.value.add(name=value_name, number=number)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    file_descriptor = pool.FindFileByName(file_name)
    module_globals["DESCRIPTOR"] = file_descriptor
    for enum_name, values in enums.items():
        module_globals[enum_name] = enum_type_wrapper.EnumTypeWrapper(
            file_descriptor.enum_types_by_name[enum_name])
        for value_name, number in values:
            module_globals[value_name] = number
