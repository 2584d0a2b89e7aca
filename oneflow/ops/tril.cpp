// tril and fused_scale_tril (flow.math.tril / fused_scale_tril): over the last two axes of an
// input of rank >= 2 (a batch of rows x columns matrices), keep the elements on and below
// diagonal `diagonal` (column - row <= diagonal; > 0 above the main diagonal, < 0 below) and set
// the others to fill_value; fused_scale_tril also multiplies the kept elements by scale.
// float32, float64 and the integer dtypes; for integer dtypes fill_value and scale must be
// integers the dtype holds.
//
// Both are linear in x up to the constant fill, so the gradient is the same op on dy with
// fill_value 0. Every axis may be split: the kernel offsets its rows and columns by the part it
// holds (oneflow/kernels/cpu/tril.cpp). Partial sums pass through only when fill_value is 0.

#include <algorithm>
#include <cmath>
#include <limits>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void CheckIntegerValue(const std::string& op_type, const std::string& what, double value,
                       DataType data_type) {
  const auto [low, high] = SwitchDataType(data_type, []<typename T>() {
    // int64 beyond 2^53 is not exact in a double attribute.
    const double bound = 9007199254740992.0;
    return std::pair<double, double>(std::max<double>(std::numeric_limits<T>::lowest(), -bound),
                                     std::min<double>(std::numeric_limits<T>::max(), bound));
  });
  if (!std::isfinite(value) || std::floor(value) != value || value < low || value > high) {
    throw Error(ErrorKind::kValue) << op_type << ": " << what << " must be an integer that "
                                   << DataTypeName(data_type) << " holds for an input of that "
                                   << "dtype, got " << value;
  }
}

void InferTril(InferContext& ctx, const std::string& op_type, bool scaled) {
  const BlobDesc& in = ctx.Input("in");
  CheckDataTypeIn(op_type, "in", in.data_type,
                  {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64, kUInt8});
  if (in.shape.num_axes() < 2) {
    throw Error(ErrorKind::kValue) << op_type << ": the input must have rank >= 2 (matrices in "
                                   << "its last two axes), got shape " << in.shape.ToString();
  }
  if (IsIntegralDataType(in.data_type)) {
    CheckIntegerValue(op_type, "fill_value", ctx.Attr<double>("fill_value"), in.data_type);
    if (scaled) { CheckIntegerValue(op_type, "scale", ctx.Attr<double>("scale"), in.data_type); }
  }
  ctx.Output("out") = in;
}

void GetTrilSbp(SbpContext& ctx) {
  const int64_t num_axes = ctx.LogicalInput("in").shape.num_axes();
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().Split("in", axis).Split("out", axis).Build();
  }
  if (ctx.Attr<double>("fill_value") == 0.0) {
    ctx.NewSignature().PartialSum("in").PartialSum("out").Build();
  }
  ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
}

void GenerateTrilGrad(GradContext& ctx, const std::string& op_type, bool scaled) {
  if (!ctx.NeedInputGrad("in")) { return; }
  OpConfBuilder builder(op_type, "");
  builder.Input("in", ctx.OutputGrad("out"))
      .Attr("diagonal", ctx.Attr<int64_t>("diagonal"))
      .Attr("fill_value", 0.0);
  if (scaled) { builder.Attr("scale", ctx.Attr<double>("scale")); }
  ctx.SetInputGrad("in", ctx.AddOp("in_grad", builder, "out"));
}

OpDefBuilder TrilOp(const std::string& op_type, bool scaled) {
  OpDefBuilder builder(op_type);
  builder.Input("in")
      .Output("out")
      .Attr<int64_t>("diagonal", 0)
      .Attr<double>("fill_value", 0.0)
      .SetInferFn([op_type, scaled](InferContext& ctx) { InferTril(ctx, op_type, scaled); })
      .SetSbpFn(GetTrilSbp)
      .SetGradFn([op_type, scaled](GradContext& ctx) { GenerateTrilGrad(ctx, op_type, scaled); });
  if (scaled) { builder.Attr<double>("scale", 1.0); }
  return builder;
}

}  // namespace

static OpRegistrar g_tril_registrar = TrilOp("tril", false);
static OpRegistrar g_fused_scale_tril_registrar = TrilOp("fused_scale_tril", true);

}  // namespace oneflow
