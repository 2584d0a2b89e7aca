#pragma once
// The attributes of a slice_boxing op (ops/slice_boxing.cpp) as boxes, read once by its CPU and
// GPU kernels: the output's box of the logical blob, each input's box, and the region of each
// input that lands in the output.

#include <vector>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

struct SliceBoxingAttrs {
  bool sum = false;        // add the inputs (partial sums)
  bool zero_fill = false;  // zero the output first (where the inputs do not cover it)
  TensorSlice out_slice;
  std::vector<TensorSlice> in_slices;
  std::vector<TensorSlice> regions;  // Intersect(in_slices[i], out_slice)
};

inline SliceBoxingAttrs ReadSliceBoxingAttrs(const KernelInitContext& ctx) {
  const auto slice_at = [](const std::vector<int64_t>& values, int64_t index, int64_t num_axes) {
    TensorSlice slice;
    auto begin = values.begin() + 2 * num_axes * index;
    slice.begin.assign(begin, begin + num_axes);
    slice.extent.assign(begin + num_axes, begin + 2 * num_axes);
    return slice;
  };
  SliceBoxingAttrs attrs;
  attrs.sum = ctx.Attr<bool>("sum");
  attrs.zero_fill = ctx.Attr<bool>("zero_fill");
  const int64_t num_axes = ctx.Attr<Shape>("logical_shape").num_axes();
  attrs.out_slice = slice_at(ctx.Attr<std::vector<int64_t>>("out_slice"), 0, num_axes);
  const std::vector<int64_t> in_slices = ctx.Attr<std::vector<int64_t>>("in_slices");
  auto in = ctx.conf().input().find("in");
  const int64_t inputs = in == ctx.conf().input().end() ? 0 : in->second.value_size();
  OF_CHECK(static_cast<int64_t>(in_slices.size()) == 2 * num_axes * inputs)
      << "slice_boxing '" << ctx.conf().name() << "': " << in_slices.size() << " slice values for "
      << inputs << " inputs of rank " << num_axes;
  for (int64_t i = 0; i < inputs; ++i) {
    attrs.in_slices.push_back(slice_at(in_slices, i, num_axes));
    attrs.regions.push_back(Intersect(attrs.in_slices.back(), attrs.out_slice));
  }
  return attrs;
}

}  // namespace oneflow
