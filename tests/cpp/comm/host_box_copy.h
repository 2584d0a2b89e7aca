#pragma once
// What one box copy of an NCCL collective plan means (comm/nccl_collective_plan.h), on host
// memory, element by element: the reference of the plan simulator and of the GPU box copy
// kernel's test.

#include <cstdint>
#include <cstring>
#include <vector>

namespace oneflow {
namespace test {

// The box `extent` from `src` (a row-major tensor of `src_dims`, corner `src_begin`) to `dst`
// (`dst_dims`, `dst_begin`), elements of `elem_size` bytes.
inline void HostBoxCopy(int64_t elem_size, const std::vector<int64_t>& extent, const void* src,
                        const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_begin,
                        void* dst, const std::vector<int64_t>& dst_dims,
                        const std::vector<int64_t>& dst_begin) {
  int64_t count = 1;
  for (int64_t dim : extent) { count *= dim; }
  std::vector<int64_t> index(extent.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    int64_t to = 0;
    for (size_t axis = 0; axis < extent.size(); ++axis) {
      from = from * src_dims[axis] + src_begin[axis] + index[axis];
      to = to * dst_dims[axis] + dst_begin[axis] + index[axis];
    }
    std::memcpy(static_cast<char*>(dst) + to * elem_size,
                static_cast<const char*>(src) + from * elem_size, elem_size);
    for (size_t axis = extent.size(); axis-- > 0;) {
      if (++index[axis] < extent[axis]) { break; }
      index[axis] = 0;
    }
  }
}

}  // namespace test
}  // namespace oneflow
