"""Message classes from a FileDescriptorProto built in Python: the modules of oneflow.core build
OneFlow's descriptors (same package, names and field numbers, so the bytes are OneFlow's) in a
private pool instead of shipping protoc's output."""
from google.protobuf import descriptor_pool

try:
    from google.protobuf import message_factory as _message_factory
except ImportError:  # pragma: no cover
    _message_factory = None


def message_classes(file_proto, names):
    """name -> message class for the messages `names` of `file_proto` (nested ones included)."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    file_descriptor = pool.FindFileByName(file_proto.name)
    descriptors = {name: file_descriptor.message_types_by_name[name] for name in names}
    if hasattr(_message_factory, "GetMessageClass"):
        return {name: _message_factory.GetMessageClass(d) for name, d in descriptors.items()}
    factory = _message_factory.MessageFactory(pool)
    return {name: factory.GetPrototype(d) for name, d in descriptors.items()}
