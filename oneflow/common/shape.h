#pragma once
// A blob's shape: a list of non-negative dimension sizes. A 0-d shape () has one element.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "proto/data_type.pb.h"

namespace oneflow {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  explicit Shape(const ShapeProto& proto) : dims_(proto.dim().begin(), proto.dim().end()) {}

  int64_t num_axes() const { return static_cast<int64_t>(dims_.size()); }
  int64_t At(int64_t axis) const { return dims_.at(axis); }
  void Set(int64_t axis, int64_t value) { dims_.at(axis) = value; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t elem_count() const;
  // Product of dims in [begin_axis, end_axis).
  int64_t Count(int64_t begin_axis, int64_t end_axis) const;

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }

  std::string ToString() const;  // "(64, 784)"; "()" for a scalar
  ShapeProto ToProto() const;

 private:
  std::vector<int64_t> dims_;
};

// Logical or physical description of one blob.
struct BlobDesc {
  Shape shape;
  DataType data_type = kInvalidDataType;
  // `shape` is an upper bound and each iteration's blob carries its own shape, which depends on
  // the data (argwhere and the ops downstream of it).
  bool is_dynamic = false;

  std::string ToString() const;  // "(64, 784) float32", "(6, 1) int32 dynamic"
  BlobDescProto ToProto() const;
  static BlobDesc FromProto(const BlobDescProto& proto);
  int64_t byte_size() const;
};

}  // namespace oneflow
