#pragma once
// Element types: sizes, names and the C++ type <-> DataType mapping used by kernel templates.

#include <cstdint>
#include <string>

#include "oneflow/common/error.h"
#include "proto/data_type.pb.h"

namespace oneflow {

int64_t SizeOf(DataType data_type);
// Python-facing name: "float32", "float64", "int8", "int32", "int64", "uint8".
std::string DataTypeName(DataType data_type);
// float32 and float64: the dtypes the CPU kernels compute in.
bool IsFloatingDataType(DataType data_type);
// ... and float16, which ops on GPUs compute in under auto mixed precision.
bool IsFloatingOrHalfDataType(DataType data_type);
bool IsIntegralDataType(DataType data_type);

template <typename T>
struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = kFloat; };
template <> struct DataTypeOf<double> { static constexpr DataType value = kDouble; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = kInt8; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = kInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = kInt64; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = kUInt8; };

// Calls functor.template operator()<T>() with the C++ type of `data_type`.
template <typename Functor>
auto SwitchDataType(DataType data_type, Functor&& functor) {
  switch (data_type) {
    case kFloat: return functor.template operator()<float>();
    case kDouble: return functor.template operator()<double>();
    case kInt8: return functor.template operator()<int8_t>();
    case kInt32: return functor.template operator()<int32_t>();
    case kInt64: return functor.template operator()<int64_t>();
    case kUInt8: return functor.template operator()<uint8_t>();
    default: break;
  }
  // float16 (GPU kernels only) and unknown values: no host type to compute in.
  throw Error(ErrorKind::kNotImplemented)
      << "no host computation for dtype " << DataTypeName(data_type);
}

}  // namespace oneflow
