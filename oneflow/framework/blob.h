#pragma once
// A Blob is a typed view of memory owned elsewhere (a register, a variable, a host tensor).

#include <cstdint>
#include <utility>

#include "oneflow/common/data_type.h"
#include "oneflow/common/shape.h"

namespace oneflow {

class Blob {
 public:
  Blob() = default;
  Blob(void* data, BlobDesc desc) : data_(data), desc_(std::move(desc)) {}

  const BlobDesc& desc() const { return desc_; }
  const Shape& shape() const { return desc_.shape; }
  DataType data_type() const { return desc_.data_type; }
  int64_t elem_count() const { return desc_.shape.elem_count(); }
  int64_t byte_size() const { return desc_.byte_size(); }
  const void* raw() const { return data_; }
  void* mut_raw() { return data_; }
  void set_data(void* data) { data_ = data; }
  // A dynamic blob's shape in this iteration (within the bound its memory was sized for).
  void set_shape(Shape shape) { desc_.shape = std::move(shape); }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mut_data() {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  BlobDesc desc_;
};

}  // namespace oneflow
