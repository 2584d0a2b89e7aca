#pragma once
// Iteration plan shared by CPU kernels that broadcast or reduce: it walks an iteration shape
// (the broadcast output, or the input of a reduction) as rows of a contiguous innermost
// dimension, and gives each operand's element offset at the start of a row and its stride along
// the row (1, or 0 when the operand is broadcast along it). Adjacent axes that every operand
// traverses contiguously are merged first, so common cases become a few long rows.
//
// Built once in a kernel's constructor from physical shapes; rows are independent, so kernels
// that write one output element per iterated element may run rows in parallel.

#include <cstdint>
#include <vector>

#include "oneflow/common/shape.h"

namespace oneflow {

class BroadcastPlan {
 public:
  BroadcastPlan() = default;
  // Each operand shape is right-aligned to `iteration_shape`; each of its dims must equal the
  // iteration dim or be 1 (broadcast along that axis).
  BroadcastPlan(const Shape& iteration_shape, const std::vector<Shape>& operand_shapes);

  int64_t row_count() const { return row_count_; }
  int64_t row_size() const { return row_size_; }
  // Stride of operand `operand` along a row: 1 or 0.
  int64_t row_stride(int64_t operand) const { return row_strides_[operand]; }
  // Offsets of every operand's element at the start of row `row`, written to `offsets`.
  void RowOffsets(int64_t row, int64_t* offsets) const;
  int64_t operand_count() const { return static_cast<int64_t>(row_strides_.size()); }

 private:
  int64_t row_count_ = 1;
  int64_t row_size_ = 1;
  std::vector<int64_t> outer_dims_;                  // merged axes above the row, outer first
  std::vector<std::vector<int64_t>> outer_strides_;  // [operand][outer axis]
  std::vector<int64_t> row_strides_;
};

// out (the plan's operand 0 shape, `out_count` elements) = sum of `in` (the iteration shape)
// over the axes where operand 0 is broadcast. Instantiated for float, double, int32, int64.
template <typename T>
void SumByPlan(const BroadcastPlan& plan, const T* in, T* out, int64_t out_count);

// out (the iteration shape) = `in` (the plan's operand 0 shape) repeated where it broadcasts.
template <typename T>
void BroadcastByPlan(const BroadcastPlan& plan, const T* in, T* out);

}  // namespace oneflow
