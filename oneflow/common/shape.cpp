#include "oneflow/common/shape.h"

#include "oneflow/common/data_type.h"

namespace oneflow {

int64_t Shape::elem_count() const { return Count(0, num_axes()); }

int64_t Shape::Count(int64_t begin_axis, int64_t end_axis) const {
  int64_t count = 1;
  for (int64_t axis = begin_axis; axis < end_axis; ++axis) { count *= dims_[axis]; }
  return count;
}

std::string Shape::ToString() const {
  std::string text = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) { text += ", "; }
    text += std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) { text += ","; }
  return text + ")";
}

ShapeProto Shape::ToProto() const {
  ShapeProto proto;
  for (int64_t dim : dims_) { proto.add_dim(dim); }
  return proto;
}

std::string BlobDesc::ToString() const {
  return shape.ToString() + " " + DataTypeName(data_type) + (is_dynamic ? " dynamic" : "");
}

BlobDescProto BlobDesc::ToProto() const {
  BlobDescProto proto;
  *proto.mutable_shape() = shape.ToProto();
  proto.set_data_type(data_type);
  proto.set_is_dynamic(is_dynamic);
  return proto;
}

BlobDesc BlobDesc::FromProto(const BlobDescProto& proto) {
  return BlobDesc{Shape(proto.shape()), proto.data_type(), proto.is_dynamic()};
}

int64_t BlobDesc::byte_size() const { return shape.elem_count() * SizeOf(data_type); }

}  // namespace oneflow
