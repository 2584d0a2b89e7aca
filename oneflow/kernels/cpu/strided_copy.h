#pragma once
// Copying between strided views of host buffers: the one loop behind slice, slice_update, pad,
// concat and split. A view is an element offset plus, per axis, a size and a stride (in
// elements, possibly negative). Before copying, size-1 axes are dropped and axes that stay
// contiguous in both views are merged, so a slice of whole rows is a handful of memcpy calls.

#include <cstdint>
#include <vector>

#include "oneflow/framework/kernel.h"

namespace oneflow {

struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> strides;  // one per axis of the shared dims
};

// Row-major strides of `dims`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims);

// The contiguous view of a whole buffer of shape `dims`.
StridedView ContiguousView(const std::vector<int64_t>& dims);

// A precomputed copy of `dims` elements of `element_size` bytes from `src_view` to `dst_view`;
// built once per kernel, run each iteration on that iteration's buffers.
class StridedCopy {
 public:
  StridedCopy() = default;
  StridedCopy(int64_t element_size, const std::vector<int64_t>& dims, const StridedView& src,
              const StridedView& dst);
  // Splits the rows of the copy over the device's compute threads when it pays.
  void Run(KernelContext& ctx, const void* src, void* dst) const;
  int64_t elem_count() const { return elem_count_; }

 private:
  template <typename E>
  void CopyRows(const E* src, E* dst, int64_t row_begin, int64_t row_end) const;

  int64_t element_size_ = 0;
  int64_t elem_count_ = 0;
  std::vector<int64_t> dims_;  // simplified; the last axis is the row
  std::vector<int64_t> src_strides_;
  std::vector<int64_t> dst_strides_;
  int64_t src_offset_ = 0;
  int64_t dst_offset_ = 0;
};

// Copies a whole buffer of `bytes`, in large chunks over the compute threads.
void ParallelMemcpy(KernelContext& ctx, void* dst, const void* src, int64_t bytes);

}  // namespace oneflow
