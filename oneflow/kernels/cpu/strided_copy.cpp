#include "oneflow/kernels/cpu/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "oneflow/common/error.h"
#include "oneflow/kernels/cpu/copy_row.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// Bytes per chunk of a parallel memcpy: large enough that handing off is cheap.
constexpr int64_t kMemcpyGrainBytes = 1 << 20;

}  // namespace

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t axis = static_cast<int64_t>(dims.size()) - 2; axis >= 0; --axis) {
    strides[axis] = strides[axis + 1] * dims[axis + 1];
  }
  return strides;
}

StridedView ContiguousView(const std::vector<int64_t>& dims) {
  return StridedView{0, ContiguousStrides(dims)};
}

StridedCopy::StridedCopy(int64_t element_size, const std::vector<int64_t>& dims,
                         const StridedView& src, const StridedView& dst)
    : element_size_(element_size), src_offset_(src.offset), dst_offset_(dst.offset) {
  OF_CHECK(src.strides.size() == dims.size() && dst.strides.size() == dims.size())
      << "strided copy: " << dims.size() << " dims, " << src.strides.size() << " and "
      << dst.strides.size() << " strides";
  elem_count_ = 1;
  for (int64_t dim : dims) { elem_count_ *= dim; }
  if (elem_count_ == 0) { return; }
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == 1) { continue; }
    // Merge with the previous kept axis when both views step over it contiguously.
    if (!dims_.empty() && src_strides_.back() == src.strides[axis] * dims[axis] &&
        dst_strides_.back() == dst.strides[axis] * dims[axis]) {
      dims_.back() *= dims[axis];
      src_strides_.back() = src.strides[axis];
      dst_strides_.back() = dst.strides[axis];
      continue;
    }
    dims_.push_back(dims[axis]);
    src_strides_.push_back(src.strides[axis]);
    dst_strides_.push_back(dst.strides[axis]);
  }
  if (dims_.empty()) {  // a single element
    dims_ = {1};
    src_strides_ = {1};
    dst_strides_ = {1};
  }
}

template <typename E>
void StridedCopy::CopyRows(const E* src, E* dst, int64_t row_begin, int64_t row_end) const {
  const int64_t outer_axes = static_cast<int64_t>(dims_.size()) - 1;
  const int64_t row_size = dims_.back();
  const int64_t src_step = src_strides_.back();
  const int64_t dst_step = dst_strides_.back();
  const bool contiguous = src_step == 1 && dst_step == 1;
  std::vector<int64_t> index(outer_axes);
  int64_t src_offset = src_offset_;
  int64_t dst_offset = dst_offset_;
  int64_t rest = row_begin;
  for (int64_t axis = outer_axes - 1; axis >= 0; --axis) {
    index[axis] = rest % dims_[axis];
    rest /= dims_[axis];
    src_offset += index[axis] * src_strides_[axis];
    dst_offset += index[axis] * dst_strides_[axis];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    if (contiguous) {
      CopyRow(dst + dst_offset, src + src_offset, row_size * sizeof(E));
    } else {
      const E* from = src + src_offset;
      E* to = dst + dst_offset;
      for (int64_t i = 0; i < row_size; ++i) { to[i * dst_step] = from[i * src_step]; }
    }
    // Odometer over the outer axes, keeping both offsets in step.
    for (int64_t axis = outer_axes - 1; axis >= 0; --axis) {
      src_offset += src_strides_[axis];
      dst_offset += dst_strides_[axis];
      if (++index[axis] < dims_[axis]) { break; }
      src_offset -= index[axis] * src_strides_[axis];
      dst_offset -= index[axis] * dst_strides_[axis];
      index[axis] = 0;
    }
  }
}

void StridedCopy::Run(KernelContext& ctx, const void* src, void* dst) const {
  if (elem_count_ == 0) { return; }
  const int64_t row_size = dims_.back();
  const int64_t rows = elem_count_ / row_size;
  if (rows == 1 && src_strides_.back() == 1 && dst_strides_.back() == 1) {
    ParallelMemcpy(ctx, static_cast<char*>(dst) + dst_offset_ * element_size_,
                   static_cast<const char*>(src) + src_offset_ * element_size_,
                   row_size * element_size_);
    return;
  }
  auto run = [&](auto element) {
    using E = decltype(element);
    const E* from = static_cast<const E*>(src);
    E* to = static_cast<E*>(dst);
    ParallelForRows(ctx, rows, row_size,
                    [=, this](int64_t begin, int64_t end) { CopyRows(from, to, begin, end); });
  };
  switch (element_size_) {
    case 1: run(uint8_t()); break;
    case 2: run(uint16_t()); break;
    case 4: run(uint32_t()); break;
    case 8: run(uint64_t()); break;
    default: OF_CHECK(false) << "strided copy of " << element_size_ << "-byte elements";
  }
}

void ParallelMemcpy(KernelContext& ctx, void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0 || dst == src) { return; }
  char* to = static_cast<char*>(dst);
  const char* from = static_cast<const char*>(src);
  ParallelForElements(ctx, bytes, kMemcpyGrainBytes, [=](int64_t begin, int64_t end) {
    std::memcpy(to + begin, from + begin, end - begin);
  });
}

}  // namespace oneflow
