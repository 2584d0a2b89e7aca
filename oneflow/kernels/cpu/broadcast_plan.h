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
  static constexpr int64_t kMaxOperands = 4;
  class RowCursor;

  BroadcastPlan() = default;
  // Each operand shape is right-aligned to `iteration_shape`; each of its dims must equal the
  // iteration dim or be 1 (broadcast along that axis).
  BroadcastPlan(const Shape& iteration_shape, const std::vector<Shape>& operand_shapes);

  int64_t row_count() const { return row_count_; }
  int64_t row_size() const { return row_size_; }
  // Stride of operand `operand` along a row: 1 or 0.
  int64_t row_stride(int64_t operand) const { return row_strides_[operand]; }
  int64_t operand_count() const { return static_cast<int64_t>(row_strides_.size()); }

 private:
  // Offsets of every operand's element at the start of row `row`, written to `offsets`.
  void RowOffsets(int64_t row, int64_t* offsets) const;

  int64_t row_count_ = 1;
  int64_t row_size_ = 1;
  std::vector<int64_t> outer_dims_;     // merged axes above the row, outer first
  std::vector<int64_t> outer_strides_;  // [outer axis][operand], flattened
  std::vector<int64_t> row_strides_;
};

// Walks the rows of a plan in order from a starting row, keeping every operand's row offset
// current with additions: stepping carries like an odometer, where RowOffsets divides once per
// outer axis (a third of the time of a 1024-element add row). Kernels that loop over rows:
//   for (BroadcastPlan::RowCursor row(plan, begin); row.index() < end; row.Next()) {...}
class BroadcastPlan::RowCursor {
 public:
  RowCursor(const BroadcastPlan& plan, int64_t row);

  int64_t index() const { return row_; }
  int64_t offset(int64_t operand) const { return offsets_[operand]; }

  void Next() {
    ++row_;
    const int64_t operand_count = plan_.operand_count();
    for (size_t axis = axis_index_.size(); axis-- > 0;) {
      const int64_t* strides = plan_.outer_strides_.data() + axis * operand_count;
      if (++axis_index_[axis] < plan_.outer_dims_[axis]) {
        for (int64_t operand = 0; operand < operand_count; ++operand) {
          offsets_[operand] += strides[operand];
        }
        return;
      }
      axis_index_[axis] = 0;
      for (int64_t operand = 0; operand < operand_count; ++operand) {
        offsets_[operand] -= (plan_.outer_dims_[axis] - 1) * strides[operand];
      }
    }
  }

 private:
  const BroadcastPlan& plan_;
  int64_t row_;
  int64_t offsets_[kMaxOperands] = {};
  std::vector<int64_t> axis_index_;  // per outer axis, outer first
};

// out (the plan's operand 0 shape, `out_count` elements) = sum of `in` (the iteration shape)
// over the axes where operand 0 is broadcast. Instantiated for float, double, int32, int64.
template <typename T>
void SumByPlan(const BroadcastPlan& plan, const T* in, T* out, int64_t out_count);

// out (the iteration shape) = `in` (the plan's operand 0 shape) repeated where it broadcasts.
template <typename T>
void BroadcastByPlan(const BroadcastPlan& plan, const T* in, T* out);

}  // namespace oneflow
