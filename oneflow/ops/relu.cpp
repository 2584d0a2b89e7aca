// relu: y = max(x, 0); relu_grad: dx = dy where y > 0, else 0. Floating dtypes only: integer
// inputs are rejected with a TypeError (no integer kernels are registered).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void GenerateReluGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string dx = ctx.AddOp(
      "x_grad",
      OpConfBuilder("relu_grad", "").Input("y", ctx.Output("y")).Input("dy", ctx.OutputGrad("y")),
      "dx");
  ctx.SetInputGrad("x", dx);
}

}  // namespace

REGISTER_OP("relu")
    .Input("x")
    .Output("y")
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "relu", "x", "y", {kFloat, kDouble, kFloat16});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateReluGrad);

REGISTER_OP("relu_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "relu_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("y").shape.num_axes(), false);
      // Linear in dy for a fixed y: a partial-sum dy gives a partial-sum dx.
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
