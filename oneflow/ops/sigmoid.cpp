// sigmoid: y = 1 / (1 + exp(-x)); sigmoid_grad: dx = dy * y * (1 - y). Floating dtypes only.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void GenerateSigmoidGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string dx = ctx.AddOp("x_grad",
                             OpConfBuilder("sigmoid_grad", "")
                                 .Input("y", ctx.Output("y"))
                                 .Input("dy", ctx.OutputGrad("y")),
                             "dx");
  ctx.SetInputGrad("x", dx);
}

}  // namespace

REGISTER_OP("sigmoid")
    .Input("x")
    .Output("y")
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "sigmoid", "x", "y", {kFloat, kDouble, kFloat16});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateSigmoidGrad);

REGISTER_OP("sigmoid_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "sigmoid_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("y").shape.num_axes(), false);
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
