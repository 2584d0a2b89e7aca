// parallel_cast (flow.parallel_cast): out = in, laid out as the attribute `sbp` says ("S(0)",
// "B"; empty: as the producer lays it out). Boxing converts the input before it if needed. Its
// gradient is a parallel_cast of the output's gradient to `grad_sbp` (empty: as it comes).
#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {
namespace {

void CheckSbpAttr(const std::string& text, const std::string& attr) {
  if (text.empty()) { return; }
  SbpParallel sbp = SbpFromString(text);
  if (sbp.has_partial_sum_parallel()) {
    throw Error(ErrorKind::kValue)
        << "parallel_cast: " << attr << " must be a split or broadcast, got P";
  }
}

void InferParallelCast(InferContext& ctx) {
  InferElementwiseUnary(ctx, "parallel_cast", "in", "out",
                        {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64, kUInt8});
  CheckSbpAttr(ctx.Attr<std::string>("sbp"), "distribute");
  CheckSbpAttr(ctx.Attr<std::string>("grad_sbp"), "gradient_distribute");
  const std::string sbp = ctx.Attr<std::string>("sbp");
  if (!sbp.empty() && SbpFromString(sbp).has_split_parallel()) {
    const int64_t axis = SbpFromString(sbp).split_parallel().axis();
    if (axis >= ctx.Input("in").shape.num_axes()) {
      throw Error(ErrorKind::kValue)
          << "parallel_cast: cannot split axis " << axis << " of a blob of "
          << ctx.Input("in").shape.num_axes() << " axes";
    }
  }
}

void GetParallelCastSbp(SbpContext& ctx) {
  const std::string sbp = ctx.Attr<std::string>("sbp");
  if (sbp.empty()) {
    AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    return;
  }
  SbpParallel layout = SbpFromString(sbp);
  if (layout.has_split_parallel()) {
    ctx.NewSignature()
        .Split("in", layout.split_parallel().axis())
        .Split("out", layout.split_parallel().axis())
        .Build();
  } else {
    ctx.NewSignature().Broadcast("in").Broadcast("out").Build();
  }
}

void GenerateParallelCastGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string dx = ctx.AddOp("grad", OpConfBuilder("parallel_cast", "")
                                         .Input("in", ctx.OutputGrad("out"))
                                         .Attr("sbp", ctx.Attr<std::string>("grad_sbp"))
                                         .Attr("grad_sbp", ctx.Attr<std::string>("sbp")));
  ctx.SetInputGrad("in", dx);
}

}  // namespace

REGISTER_OP("parallel_cast")
    .Input("in")
    .Output("out")
    .Attr<std::string>("sbp", "")
    .Attr<std::string>("grad_sbp", "")
    .SetInferFn(InferParallelCast)
    .SetSbpFn(GetParallelCastSbp)
    .SetGradFn(GenerateParallelCastGrad);

}  // namespace oneflow
