#include "oneflow/sbp/sbp_helpers.h"

#include <algorithm>

#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

void AddElementwiseSignatures(SbpContext& ctx, int64_t num_axes, bool partial_sum_linear) {
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  if (partial_sum_linear) {
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    for (const auto& entry : ctx.conf().input()) { builder.PartialSum(entry.first); }
    builder.PartialSumAllOutputs().Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void AddBroadcastSignatures(SbpContext& ctx,
                            const std::vector<std::pair<std::string, Shape>>& inputs,
                            const std::string& output) {
  int64_t num_axes = 0;
  for (const auto& input : inputs) { num_axes = std::max(num_axes, input.second.num_axes()); }
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    int64_t out_dim = 1;
    for (const auto& input : inputs) {
      out_dim = std::max(out_dim, ExtendShapeTo(input.second, num_axes).At(axis));
    }
    if (out_dim <= 1) { continue; }
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    for (const auto& input : inputs) {
      int64_t offset = num_axes - input.second.num_axes();
      if (ExtendShapeTo(input.second, num_axes).At(axis) == out_dim) {
        builder.Split(input.first, axis - offset);
      } else {
        builder.Broadcast(input.first);
      }
    }
    builder.Split(output, axis).Build();
  }
  SbpContext::SignatureBuilder all_broadcast = ctx.NewSignature();
  for (const auto& input : inputs) { all_broadcast.Broadcast(input.first); }
  all_broadcast.Broadcast(output).Build();
}

void AddBroadcastBinarySignatures(SbpContext& ctx, const std::string& x, const std::string& y,
                                  const std::string& z, const Shape& x_shape, const Shape& y_shape,
                                  PartialSumRule rule) {
  int64_t num_axes = std::max(x_shape.num_axes(), y_shape.num_axes());
  Shape x_extended = ExtendShapeTo(x_shape, num_axes);
  Shape y_extended = ExtendShapeTo(y_shape, num_axes);
  int64_t x_offset = num_axes - x_shape.num_axes();
  int64_t y_offset = num_axes - y_shape.num_axes();
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    int64_t out_dim = std::max(x_extended.At(axis), y_extended.At(axis));
    if (out_dim <= 1) { continue; }
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    if (x_extended.At(axis) == out_dim) {
      builder.Split(x, axis - x_offset);
    } else {
      builder.Broadcast(x);
    }
    if (y_extended.At(axis) == out_dim) {
      builder.Split(y, axis - y_offset);
    } else {
      builder.Broadcast(y);
    }
    builder.Split(z, axis).Build();
  }
  switch (rule) {
    case PartialSumRule::kBothPartial:
      ctx.NewSignature().PartialSum(x).PartialSum(y).PartialSum(z).Build();
      break;
    case PartialSumRule::kEitherPartial:
      ctx.NewSignature().PartialSum(x).Broadcast(y).PartialSum(z).Build();
      ctx.NewSignature().Broadcast(x).PartialSum(y).PartialSum(z).Build();
      break;
    case PartialSumRule::kFirstPartial:
      ctx.NewSignature().PartialSum(x).Broadcast(y).PartialSum(z).Build();
      break;
    case PartialSumRule::kNone:
      break;
  }
  ctx.NewSignature().Broadcast(x).Broadcast(y).Broadcast(z).Build();
}

void AddReduceSumSignatures(SbpContext& ctx, const std::string& input, const std::string& output,
                            int64_t num_axes, const std::vector<int64_t>& axes, bool keepdims) {
  int64_t reduced_before = 0;
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), axis);
    if (reduced) {
      ctx.NewSignature().Split(input, axis).PartialSum(output).Build();
      ++reduced_before;
    } else {
      int64_t output_axis = keepdims ? axis : axis - reduced_before;
      ctx.NewSignature().Split(input, axis).Split(output, output_axis).Build();
    }
  }
  ctx.NewSignature().PartialSum(input).PartialSum(output).Build();
  ctx.NewSignature().Broadcast(input).Broadcast(output).Build();
}

void AddMatmulSignatures(SbpContext& ctx, const std::string& a, const std::string& b,
                         const std::string& out, bool transpose_a, bool transpose_b) {
  // Which axis of each stored operand holds the rows (m), the inner (k) and columns (n).
  int64_t a_row_axis = transpose_a ? 1 : 0;
  int64_t a_inner_axis = 1 - a_row_axis;
  int64_t b_inner_axis = transpose_b ? 1 : 0;
  int64_t b_column_axis = 1 - b_inner_axis;
  ctx.NewSignature().Split(a, a_row_axis).Broadcast(b).Split(out, 0).Build();
  ctx.NewSignature().Broadcast(a).Split(b, b_column_axis).Split(out, 1).Build();
  ctx.NewSignature().Split(a, a_inner_axis).Split(b, b_inner_axis).PartialSum(out).Build();
  ctx.NewSignature().PartialSum(a).Broadcast(b).PartialSum(out).Build();
  ctx.NewSignature().Broadcast(a).PartialSum(b).PartialSum(out).Build();
  ctx.NewSignature().Broadcast(a).Broadcast(b).Broadcast(out).Build();
}

}  // namespace oneflow
