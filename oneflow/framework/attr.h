#pragma once
// Conversions between C++ attribute values and the AttrValue proto, and the type names used in
// error messages. Supported C++ types: int64_t, double, bool, std::string, Shape, DataType,
// std::vector<int64_t>, std::vector<double>, std::vector<std::string>, std::vector<Shape>,
// std::vector<DataType>.

#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/attr_value.pb.h"

namespace oneflow {

template <typename T>
AttrValue ToAttrValue(const T& value);
template <typename T>
T FromAttrValue(const AttrValue& value);

// "int64", "double", "bool", "string", "shape", "data_type", "list_int64", ...
std::string AttrTypeName(AttrValue::ValueCase value_case);
std::string AttrValueToString(const AttrValue& value);
// The entries of a list attribute; 0 for any other.
int64_t AttrListSize(const AttrValue& value);

}  // namespace oneflow
