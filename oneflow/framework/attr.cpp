#include "oneflow/framework/attr.h"

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"

namespace oneflow {

namespace {

void CheckCase(const AttrValue& value, AttrValue::ValueCase expected) {
  if (value.value_case() != expected) {
    throw Error(ErrorKind::kType) << "attribute has type " << AttrTypeName(value.value_case())
                                  << ", expected " << AttrTypeName(expected);
  }
}

}  // namespace

template <>
AttrValue ToAttrValue<int64_t>(const int64_t& value) {
  AttrValue attr;
  attr.set_int64_value(value);
  return attr;
}
template <>
AttrValue ToAttrValue<double>(const double& value) {
  AttrValue attr;
  attr.set_double_value(value);
  return attr;
}
template <>
AttrValue ToAttrValue<bool>(const bool& value) {
  AttrValue attr;
  attr.set_bool_value(value);
  return attr;
}
template <>
AttrValue ToAttrValue<std::string>(const std::string& value) {
  AttrValue attr;
  attr.set_string_value(value);
  return attr;
}
template <>
AttrValue ToAttrValue<Shape>(const Shape& value) {
  AttrValue attr;
  *attr.mutable_shape_value() = value.ToProto();
  return attr;
}
template <>
AttrValue ToAttrValue<DataType>(const DataType& value) {
  AttrValue attr;
  attr.set_data_type_value(value);
  return attr;
}
template <>
AttrValue ToAttrValue<std::vector<int64_t>>(const std::vector<int64_t>& value) {
  AttrValue attr;
  attr.mutable_list_int64_value();  // set the oneof even for an empty list
  for (int64_t item : value) { attr.mutable_list_int64_value()->add_value(item); }
  return attr;
}
template <>
AttrValue ToAttrValue<std::vector<double>>(const std::vector<double>& value) {
  AttrValue attr;
  attr.mutable_list_double_value();  // set the oneof even for an empty list
  for (double item : value) { attr.mutable_list_double_value()->add_value(item); }
  return attr;
}
template <>
AttrValue ToAttrValue<std::vector<std::string>>(const std::vector<std::string>& value) {
  AttrValue attr;
  attr.mutable_list_string_value();  // set the oneof even for an empty list
  for (const std::string& item : value) { attr.mutable_list_string_value()->add_value(item); }
  return attr;
}
template <>
AttrValue ToAttrValue<std::vector<Shape>>(const std::vector<Shape>& value) {
  AttrValue attr;
  attr.mutable_list_shape_value();  // set the oneof even for an empty list
  for (const Shape& item : value) {
    *attr.mutable_list_shape_value()->add_value() = item.ToProto();
  }
  return attr;
}
template <>
AttrValue ToAttrValue<std::vector<DataType>>(const std::vector<DataType>& value) {
  AttrValue attr;
  attr.mutable_list_data_type_value();  // set the oneof even for an empty list
  for (DataType item : value) { attr.mutable_list_data_type_value()->add_value(item); }
  return attr;
}

template <>
int64_t FromAttrValue<int64_t>(const AttrValue& value) {
  CheckCase(value, AttrValue::kInt64Value);
  return value.int64_value();
}
template <>
double FromAttrValue<double>(const AttrValue& value) {
  CheckCase(value, AttrValue::kDoubleValue);
  return value.double_value();
}
template <>
bool FromAttrValue<bool>(const AttrValue& value) {
  CheckCase(value, AttrValue::kBoolValue);
  return value.bool_value();
}
template <>
std::string FromAttrValue<std::string>(const AttrValue& value) {
  CheckCase(value, AttrValue::kStringValue);
  return value.string_value();
}
template <>
Shape FromAttrValue<Shape>(const AttrValue& value) {
  CheckCase(value, AttrValue::kShapeValue);
  return Shape(value.shape_value());
}
template <>
DataType FromAttrValue<DataType>(const AttrValue& value) {
  CheckCase(value, AttrValue::kDataTypeValue);
  return value.data_type_value();
}
template <>
std::vector<int64_t> FromAttrValue<std::vector<int64_t>>(const AttrValue& value) {
  CheckCase(value, AttrValue::kListInt64Value);
  const auto& list = value.list_int64_value().value();
  return std::vector<int64_t>(list.begin(), list.end());
}
template <>
std::vector<double> FromAttrValue<std::vector<double>>(const AttrValue& value) {
  CheckCase(value, AttrValue::kListDoubleValue);
  const auto& list = value.list_double_value().value();
  return std::vector<double>(list.begin(), list.end());
}
template <>
std::vector<std::string> FromAttrValue<std::vector<std::string>>(const AttrValue& value) {
  CheckCase(value, AttrValue::kListStringValue);
  const auto& list = value.list_string_value().value();
  return std::vector<std::string>(list.begin(), list.end());
}
template <>
std::vector<Shape> FromAttrValue<std::vector<Shape>>(const AttrValue& value) {
  CheckCase(value, AttrValue::kListShapeValue);
  std::vector<Shape> shapes;
  for (const ShapeProto& item : value.list_shape_value().value()) { shapes.emplace_back(item); }
  return shapes;
}
template <>
std::vector<DataType> FromAttrValue<std::vector<DataType>>(const AttrValue& value) {
  CheckCase(value, AttrValue::kListDataTypeValue);
  std::vector<DataType> data_types;
  for (int item : value.list_data_type_value().value()) {
    data_types.push_back(static_cast<DataType>(item));
  }
  return data_types;
}

std::string AttrTypeName(AttrValue::ValueCase value_case) {
  switch (value_case) {
    case AttrValue::kInt64Value: return "int64";
    case AttrValue::kDoubleValue: return "double";
    case AttrValue::kBoolValue: return "bool";
    case AttrValue::kStringValue: return "string";
    case AttrValue::kShapeValue: return "shape";
    case AttrValue::kDataTypeValue: return "data_type";
    case AttrValue::kListInt64Value: return "list_int64";
    case AttrValue::kListDoubleValue: return "list_double";
    case AttrValue::kListStringValue: return "list_string";
    case AttrValue::kListShapeValue: return "list_shape";
    case AttrValue::kListDataTypeValue: return "list_data_type";
    default: return "unset";
  }
}

int64_t AttrListSize(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kListInt64Value: return value.list_int64_value().value_size();
    case AttrValue::kListDoubleValue: return value.list_double_value().value_size();
    case AttrValue::kListStringValue: return value.list_string_value().value_size();
    case AttrValue::kListShapeValue: return value.list_shape_value().value_size();
    case AttrValue::kListDataTypeValue: return value.list_data_type_value().value_size();
    default: return 0;
  }
}

std::string AttrValueToString(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kInt64Value: return std::to_string(value.int64_value());
    case AttrValue::kDoubleValue: return std::to_string(value.double_value());
    case AttrValue::kBoolValue: return value.bool_value() ? "true" : "false";
    case AttrValue::kStringValue: return "'" + value.string_value() + "'";
    case AttrValue::kShapeValue: return Shape(value.shape_value()).ToString();
    case AttrValue::kDataTypeValue: return DataTypeName(value.data_type_value());
    case AttrValue::kListInt64Value: {
      std::string text = "[";
      for (int64_t item : value.list_int64_value().value()) {
        text += (text.size() > 1 ? ", " : "") + std::to_string(item);
      }
      return text + "]";
    }
    case AttrValue::kListShapeValue: {
      std::string text = "[";
      for (const ShapeProto& item : value.list_shape_value().value()) {
        text += (text.size() > 1 ? ", " : "") + Shape(item).ToString();
      }
      return text + "]";
    }
    case AttrValue::kListDataTypeValue: {
      std::string text = "[";
      for (int item : value.list_data_type_value().value()) {
        text += (text.size() > 1 ? ", " : "") + DataTypeName(static_cast<DataType>(item));
      }
      return text + "]";
    }
    default: return value.ShortDebugString();
  }
}

}  // namespace oneflow
