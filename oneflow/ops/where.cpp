// where: out = condition ? x : y elementwise, the three inputs broadcast together (numpy
// rules). condition is int8, int32 or int64 (nonzero is true); x and y share out's dtype. The
// gradient routes dout to x where the condition holds and to y elsewhere, each summed back to
// its input's shape. Kernel: oneflow/kernels/cpu/where.cpp.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void InferWhere(InferContext& ctx) {
  const BlobDesc& condition = ctx.Input("condition");
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& y = ctx.Input("y");
  CheckDataTypeIn("where", "condition", condition.data_type, {kInt8, kInt32, kInt64});
  CheckSameDataType("where", "x", x.data_type, "y", y.data_type);
  CheckDataTypeIn("where", "x", x.data_type, {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64});
  Shape shape = BroadcastShapes("where", BroadcastShapes("where", condition.shape, x.shape),
                                y.shape);
  ctx.Output("out") = BlobDesc{shape, x.data_type};
}

// `grad` (out's shape) summed to the shape of input `argument` where it was broadcast.
std::string ReduceToInput(GradContext& ctx, const std::string& grad, const std::string& argument) {
  std::string input = ctx.Input(argument);
  if (ctx.Desc(input).shape == ctx.Desc(grad).shape) { return grad; }
  return ctx.AddOp(argument + "_grad_sum",
                   OpConfBuilder("reduce_sum_like", "")
                       .Input("x", grad)
                       .Input("like", input)
                       .Attr("axis", std::vector<int64_t>()),
                   "y");
}

void GenerateWhereGrad(GradContext& ctx) {
  std::string dout = ctx.OutputGrad("out");
  std::string zeros = ctx.AddOp(
      "grad_zeros", OpConfBuilder("constant_like", "").Input("like", dout).Attr("value", 0.0));
  auto route = [&](const std::string& argument, const std::string& if_true,
                   const std::string& if_false) {
    if (!ctx.NeedInputGrad(argument)) { return; }
    std::string routed = ctx.AddOp(argument + "_grad_where",
                                   OpConfBuilder("where", "")
                                       .Input("condition", ctx.Input("condition"))
                                       .Input("x", if_true)
                                       .Input("y", if_false));
    ctx.SetInputGrad(argument, ReduceToInput(ctx, routed, argument));
  };
  route("x", dout, zeros);
  route("y", zeros, dout);
}

}  // namespace

REGISTER_OP("where")
    .Input("condition")
    .Input("x")
    .Input("y")
    .Output("out")
    .NoGradInput("condition")
    .KernelDataTypeFrom("x")
    .SetInferFn(InferWhere)
    .SetSbpFn([](SbpContext& ctx) {
      AddBroadcastSignatures(ctx,
                             {{"condition", ctx.LogicalInput("condition").shape},
                              {"x", ctx.LogicalInput("x").shape},
                              {"y", ctx.LogicalInput("y").shape}},
                             "out");
      // Linear in x and y together for a fixed condition.
      ctx.NewSignature().Broadcast("condition").PartialSum("x").PartialSum("y").PartialSum("out")
          .Build();
    })
    .SetGradFn(GenerateWhereGrad);

}  // namespace oneflow
