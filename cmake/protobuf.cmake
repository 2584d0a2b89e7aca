# Generates C++ from every proto/*.proto into the build tree: ONEFLOW_PROTO_SOURCES and
# ONEFLOW_PROTO_INCLUDE_DIR (headers are included as "proto/<name>.pb.h").
# Files are compiled relative to the repository root, so protobuf registers them as
# "proto/<name>.proto": a bare "attr_value.proto" collides with the copy OpenCV (loaded by
# Debian's PyTorch) registers, and protobuf aborts a process that loads both.
find_package(Protobuf REQUIRED)
file(GLOB ONEFLOW_PROTO_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/proto/*.proto)
set(ONEFLOW_PROTO_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)
set(proto_out ${ONEFLOW_PROTO_INCLUDE_DIR}/proto)
file(MAKE_DIRECTORY ${proto_out})
set(ONEFLOW_PROTO_SOURCES)
foreach(proto_file ${ONEFLOW_PROTO_FILES})
  get_filename_component(name ${proto_file} NAME_WE)
  set(generated ${proto_out}/${name}.pb.cc ${proto_out}/${name}.pb.h)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND protobuf::protoc --cpp_out=${ONEFLOW_PROTO_INCLUDE_DIR} -I ${PROJECT_SOURCE_DIR}
            ${proto_file}
    DEPENDS ${proto_file} protobuf::protoc
    COMMENT "protoc ${name}.proto")
  list(APPEND ONEFLOW_PROTO_SOURCES ${proto_out}/${name}.pb.cc)
endforeach()
