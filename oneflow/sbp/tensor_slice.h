#pragma once
// Which part of a logical blob each device holds. A split blob's axis is divided by the
// balanced rule: over n devices the first (dim % n) parts get one more row (20 over 6 ->
// 4, 4, 3, 3, 3, 3). Broadcast and partial-sum parts have the logical shape; a partial-sum
// part's values are one addend of the logical value.

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/common/shape.h"
#include "proto/sbp.pb.h"

namespace oneflow {

// [begin, end) of part `index` when `size` is split into `parts` balanced parts.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};
Range BalancedPart(int64_t size, int64_t parts, int64_t index);

// A box of a logical tensor: begin and extent per axis.
struct TensorSlice {
  std::vector<int64_t> begin;
  std::vector<int64_t> extent;

  int64_t num_axes() const { return static_cast<int64_t>(begin.size()); }
  int64_t elem_count() const;
  bool empty() const { return elem_count() == 0; }
  Shape shape() const { return Shape(extent); }
  bool operator==(const TensorSlice& other) const {
    return begin == other.begin && extent == other.extent;
  }
  std::string ToString() const;  // "[0:2, 0:5]"
};

TensorSlice FullSlice(const Shape& shape);
// The slice of the logical tensor that part `parallel_id` of `parallel_num` holds.
TensorSlice SliceOfPart(const Shape& logical, const SbpParallel& sbp, int64_t parallel_id,
                        int64_t parallel_num);
// Shape of part `parallel_id`; for broadcast and partial-sum, the logical shape.
Shape PhysicalShape(const Shape& logical, const SbpParallel& sbp, int64_t parallel_id,
                    int64_t parallel_num);
TensorSlice Intersect(const TensorSlice& a, const TensorSlice& b);

bool SameSbp(const SbpParallel& a, const SbpParallel& b);
// `sbp` as it acts over `parallel_num` devices: on one device every layout is the whole blob (B).
SbpParallel SbpOverDevices(const SbpParallel& sbp, int64_t parallel_num);
SbpParallel SplitSbp(int64_t axis);
SbpParallel BroadcastSbp();
SbpParallel PartialSumSbp();
std::string SbpToString(const SbpParallel& sbp);  // "S(0)", "B", "P"
// Parses "S(0)", "B", "P" (as SbpToString writes them); throws ValueError otherwise.
SbpParallel SbpFromString(const std::string& text);

}  // namespace oneflow
