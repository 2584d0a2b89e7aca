// square: y = x * x. Its gradient dx = 2 * x * dy is built from broadcast_mul and scalar_mul.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void GenerateSquareGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string product = ctx.AddOp(
      "x_grad_mul",
      OpConfBuilder("broadcast_mul", "").Input("x", ctx.Input("x")).Input("y", ctx.OutputGrad("y")),
      "z");
  std::string dx = ctx.AddOp(
      "x_grad", OpConfBuilder("scalar_mul", "").Input("in", product).Attr("operand", 2.0));
  ctx.SetInputGrad("x", dx);
}

}  // namespace

REGISTER_OP("square")
    .Input("x")
    .Output("y")
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "square", "x", "y", {kFloat, kDouble, kFloat16});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateSquareGrad);

}  // namespace oneflow
