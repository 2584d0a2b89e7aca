// tanh: y = tanh(x); tanh_grad: dx = dy * (1 - y * y). Floating dtypes only.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void GenerateTanhGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string dx = ctx.AddOp(
      "x_grad",
      OpConfBuilder("tanh_grad", "").Input("y", ctx.Output("y")).Input("dy", ctx.OutputGrad("y")),
      "dx");
  ctx.SetInputGrad("x", dx);
}

}  // namespace

REGISTER_OP("tanh")
    .Input("x")
    .Output("y")
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "tanh", "x", "y", {kFloat, kDouble, kFloat16});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateTanhGrad);

REGISTER_OP("tanh_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "tanh_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("y").shape.num_axes(), false);
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
