#include "oneflow/sbp/tensor_slice.h"

#include <algorithm>

#include "google/protobuf/util/message_differencer.h"
#include "oneflow/common/error.h"

namespace oneflow {

Range BalancedPart(int64_t size, int64_t parts, int64_t index) {
  OF_CHECK(parts > 0 && index >= 0 && index < parts) << "part " << index << " of " << parts;
  const int64_t base = size / parts;
  const int64_t extra = size % parts;
  Range range;
  range.begin = index * base + std::min(index, extra);
  range.end = range.begin + base + (index < extra ? 1 : 0);
  return range;
}

int64_t TensorSlice::elem_count() const {
  int64_t count = 1;
  for (int64_t extent_of_axis : extent) { count *= extent_of_axis; }
  return count;
}

std::string TensorSlice::ToString() const {
  std::string text = "[";
  for (int64_t axis = 0; axis < num_axes(); ++axis) {
    text += (axis ? ", " : "") + std::to_string(begin[axis]) + ":" +
            std::to_string(begin[axis] + extent[axis]);
  }
  return text + "]";
}

TensorSlice FullSlice(const Shape& shape) {
  TensorSlice slice;
  slice.begin.assign(shape.num_axes(), 0);
  slice.extent = shape.dims();
  return slice;
}

TensorSlice SliceOfPart(const Shape& logical, const SbpParallel& sbp, int64_t parallel_id,
                        int64_t parallel_num) {
  TensorSlice slice = FullSlice(logical);
  if (SbpOverDevices(sbp, parallel_num).has_split_parallel()) {
    const int64_t axis = sbp.split_parallel().axis();
    OF_CHECK(axis >= 0 && axis < logical.num_axes())
        << "split axis " << axis << " of shape " << logical.ToString();
    Range range = BalancedPart(logical.At(axis), parallel_num, parallel_id);
    slice.begin[axis] = range.begin;
    slice.extent[axis] = range.size();
  }
  return slice;
}

Shape PhysicalShape(const Shape& logical, const SbpParallel& sbp, int64_t parallel_id,
                    int64_t parallel_num) {
  return SliceOfPart(logical, sbp, parallel_id, parallel_num).shape();
}

TensorSlice Intersect(const TensorSlice& a, const TensorSlice& b) {
  OF_CHECK(a.num_axes() == b.num_axes()) << a.ToString() << " vs " << b.ToString();
  TensorSlice result;
  for (int64_t axis = 0; axis < a.num_axes(); ++axis) {
    const int64_t begin = std::max(a.begin[axis], b.begin[axis]);
    const int64_t end = std::min(a.begin[axis] + a.extent[axis], b.begin[axis] + b.extent[axis]);
    result.begin.push_back(begin);
    result.extent.push_back(std::max<int64_t>(0, end - begin));
  }
  return result;
}

bool SameSbp(const SbpParallel& a, const SbpParallel& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

SbpParallel SbpOverDevices(const SbpParallel& sbp, int64_t parallel_num) {
  return parallel_num == 1 ? BroadcastSbp() : sbp;
}

SbpParallel SplitSbp(int64_t axis) {
  SbpParallel sbp;
  sbp.mutable_split_parallel()->set_axis(axis);
  return sbp;
}

SbpParallel BroadcastSbp() {
  SbpParallel sbp;
  sbp.mutable_broadcast_parallel();
  return sbp;
}

SbpParallel PartialSumSbp() {
  SbpParallel sbp;
  sbp.mutable_partial_sum_parallel();
  return sbp;
}

std::string SbpToString(const SbpParallel& sbp) {
  if (sbp.has_split_parallel()) { return "S(" + std::to_string(sbp.split_parallel().axis()) + ")"; }
  if (sbp.has_partial_sum_parallel()) { return "P"; }
  return "B";
}

SbpParallel SbpFromString(const std::string& text) {
  if (text == "B") { return BroadcastSbp(); }
  if (text == "P") { return PartialSumSbp(); }
  if (text.size() > 3 && text.compare(0, 2, "S(") == 0 && text.back() == ')') {
    const std::string digits = text.substr(2, text.size() - 3);
    if (!digits.empty() && std::all_of(digits.begin(), digits.end(), ::isdigit)) {
      return SplitSbp(std::stoll(digits));
    }
  }
  throw Error(ErrorKind::kValue) << "malformed SBP '" << text << "': expected S(<axis>), B or P";
}

}  // namespace oneflow
