#include "oneflow/kernels/cpu/tensor_slice_copy.h"

#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/kernels/cpu/copy_row.h"

namespace oneflow {

namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& extent) {
  std::vector<int64_t> strides(extent.size(), 1);
  for (int64_t axis = static_cast<int64_t>(extent.size()) - 2; axis >= 0; --axis) {
    strides[axis] = strides[axis + 1] * extent[axis + 1];
  }
  return strides;
}

struct AddBlock {
  template <typename T>
  void operator()() const {
    const T* from = static_cast<const T*>(src);
    T* to = static_cast<T*>(dst);
    for (int64_t i = 0; i < count; ++i) { to[i] += from[i]; }
  }
  const void* src;
  void* dst;
  int64_t count;
};

}  // namespace

void CopyTensorSlice(DataType data_type, const TensorSlice& region, const void* src,
                     const TensorSlice& src_slice, void* dst, const TensorSlice& dst_slice,
                     bool accumulate) {
  const int64_t num_axes = region.num_axes();
  OF_CHECK(src_slice.num_axes() == num_axes && dst_slice.num_axes() == num_axes)
      << "slice copy of " << region.ToString() << " between " << src_slice.ToString() << " and "
      << dst_slice.ToString();
  if (region.empty()) { return; }
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    OF_CHECK(region.begin[axis] >= src_slice.begin[axis] &&
             region.begin[axis] + region.extent[axis] <=
                 src_slice.begin[axis] + src_slice.extent[axis] &&
             region.begin[axis] >= dst_slice.begin[axis] &&
             region.begin[axis] + region.extent[axis] <=
                 dst_slice.begin[axis] + dst_slice.extent[axis])
        << "region " << region.ToString() << " is not inside " << src_slice.ToString() << " and "
        << dst_slice.ToString();
  }
  const int64_t element = SizeOf(data_type);
  const std::vector<int64_t> src_strides = RowMajorStrides(src_slice.extent);
  const std::vector<int64_t> dst_strides = RowMajorStrides(dst_slice.extent);
  // Axes [block_axis, num_axes) form one contiguous block in both buffers.
  int64_t block_axis = num_axes;
  int64_t block = 1;
  while (block_axis > 0) {
    const int64_t axis = block_axis - 1;
    block *= region.extent[axis];
    block_axis = axis;
    if (region.extent[axis] != src_slice.extent[axis] ||
        region.extent[axis] != dst_slice.extent[axis]) {
      break;
    }
  }
  int64_t src_base = 0;
  int64_t dst_base = 0;
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    src_base += (region.begin[axis] - src_slice.begin[axis]) * src_strides[axis];
    dst_base += (region.begin[axis] - dst_slice.begin[axis]) * dst_strides[axis];
  }
  // Odometer over the axes before the block.
  std::vector<int64_t> index(block_axis, 0);
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  while (true) {
    int64_t src_offset = src_base;
    int64_t dst_offset = dst_base;
    for (int64_t axis = 0; axis < block_axis; ++axis) {
      src_offset += index[axis] * src_strides[axis];
      dst_offset += index[axis] * dst_strides[axis];
    }
    if (accumulate) {
      SwitchDataType(data_type,
                     AddBlock{from + src_offset * element, to + dst_offset * element, block});
    } else {
      CopyRow(to + dst_offset * element, from + src_offset * element, block * element);
    }
    int64_t axis = block_axis - 1;
    while (axis >= 0 && ++index[axis] == region.extent[axis]) {
      index[axis] = 0;
      --axis;
    }
    if (axis < 0) { break; }
  }
}

}  // namespace oneflow
