# Libraries for running one job over several processes ("machines"):
#   - gRPC for the control plane (oneflow/control/): rendezvous, key-value store, barriers,
#     heartbeats. Debian ships no CMake config for gRPC, so it comes through pkg-config, and the
#     service code of proto/control.proto is generated with grpc_cpp_plugin
#     (the message code comes from cmake/protobuf.cmake like every other proto).
#   - Gloo for the CPU data plane (TCP full mesh), which rendezvous through the control plane.
# Defines ONEFLOW_GRPC_SOURCES (generated service code) and ONEFLOW_GRPC_LIBRARIES; Gloo is the
# imported target `gloo`.
find_package(PkgConfig REQUIRED)
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin PATHS /usr/bin REQUIRED)
find_package(Gloo CONFIG REQUIRED)

set(control_proto ${PROJECT_SOURCE_DIR}/proto/control.proto)
set(grpc_generated
    ${ONEFLOW_PROTO_INCLUDE_DIR}/proto/control.grpc.pb.cc
    ${ONEFLOW_PROTO_INCLUDE_DIR}/proto/control.grpc.pb.h)
add_custom_command(
  OUTPUT ${grpc_generated}
  COMMAND protobuf::protoc --grpc_out=${ONEFLOW_PROTO_INCLUDE_DIR}
          --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN} -I ${PROJECT_SOURCE_DIR} ${control_proto}
  DEPENDS ${control_proto} protobuf::protoc
  COMMENT "grpc_cpp_plugin control.proto")
set(ONEFLOW_GRPC_SOURCES ${ONEFLOW_PROTO_INCLUDE_DIR}/proto/control.grpc.pb.cc)

# gRPC's compile flags (-DNOMINMAX) apply only to the files that include gRPC headers, so the
# rest of the library compiles with unchanged flags (and keeps its ccache hits).
file(GLOB ONEFLOW_CONTROL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/oneflow/control/*.cpp)
set_source_files_properties(${ONEFLOW_CONTROL_SOURCES} ${ONEFLOW_GRPC_SOURCES} PROPERTIES
  COMPILE_OPTIONS "${GRPCPP_CFLAGS_OTHER}")
set(ONEFLOW_GRPC_LIBRARIES ${GRPCPP_LINK_LIBRARIES})
