#include "oneflow/common/data_type.h"

#include "oneflow/common/error.h"

namespace oneflow {

int64_t SizeOf(DataType data_type) {
  switch (data_type) {
    case kFloat: return 4;
    case kDouble: return 8;
    case kInt8: return 1;
    case kInt32: return 4;
    case kInt64: return 8;
    case kUInt8: return 1;
    case kFloat16: return 2;
    default: break;
  }
  throw Error(ErrorKind::kValue) << "invalid data type " << static_cast<int>(data_type);
}

std::string DataTypeName(DataType data_type) {
  switch (data_type) {
    case kFloat: return "float32";
    case kDouble: return "float64";
    case kInt8: return "int8";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kUInt8: return "uint8";
    case kFloat16: return "float16";
    default: return "invalid";
  }
}

bool IsFloatingDataType(DataType data_type) { return data_type == kFloat || data_type == kDouble; }

bool IsFloatingOrHalfDataType(DataType data_type) {
  return IsFloatingDataType(data_type) || data_type == kFloat16;
}

bool IsIntegralDataType(DataType data_type) {
  return data_type == kInt8 || data_type == kInt32 || data_type == kInt64 || data_type == kUInt8;
}

}  // namespace oneflow
