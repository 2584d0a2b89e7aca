// broadcast_add, broadcast_sub, broadcast_mul, broadcast_div: z = x (op) y with numpy
// broadcasting. Gradients are built from existing ops; reduce_sum_like sums a gradient back to
// an input's shape where that input was broadcast.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

std::function<void(InferContext&)> MakeBroadcastInfer(std::string op_type, bool allow_integers) {
  return [op_type, allow_integers](InferContext& ctx) {
    const BlobDesc& x = ctx.Input("x");
    const BlobDesc& y = ctx.Input("y");
    CheckSameDataType(op_type, "x", x.data_type, "y", y.data_type);
    if (allow_integers) {
      CheckDataTypeIn(op_type, "x", x.data_type, {kFloat, kDouble, kInt32, kInt64});
    } else {
      CheckFloatingDataType(op_type, "x", x.data_type);
    }
    ctx.Output("z") = BlobDesc{BroadcastShapes(op_type, x.shape, y.shape), x.data_type};
  };
}

std::function<void(SbpContext&)> MakeBroadcastSbp(PartialSumRule rule) {
  return [rule](SbpContext& ctx) {
    AddBroadcastBinarySignatures(ctx, "x", "y", "z", ctx.LogicalInput("x").shape,
                                 ctx.LogicalInput("y").shape, rule);
  };
}

// Sums `grad` (shaped like z) back to the shape of input `argument` when it was broadcast.
std::string ReduceToInput(GradContext& ctx, const std::string& grad, const std::string& argument,
                          const std::string& suffix) {
  std::string input = ctx.Input(argument);
  if (ctx.Desc(input).shape == ctx.Desc(grad).shape) { return grad; }
  return ctx.AddOp(suffix,
                   OpConfBuilder("reduce_sum_like", "")
                       .Input("x", grad)
                       .Input("like", input)
                       .Attr("axis", std::vector<int64_t>()),
                   "y");
}

std::string Binary(GradContext& ctx, const std::string& suffix, const std::string& op_type,
                   const std::string& x, const std::string& y) {
  return ctx.AddOp(suffix, OpConfBuilder(op_type, "").Input("x", x).Input("y", y), "z");
}

std::string Negate(GradContext& ctx, const std::string& suffix, const std::string& in) {
  return ctx.AddOp(suffix, OpConfBuilder("scalar_mul", "").Input("in", in).Attr("operand", -1.0));
}

void GenerateAddGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ReduceToInput(ctx, ctx.OutputGrad("z"), "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    ctx.SetInputGrad("y", ReduceToInput(ctx, ctx.OutputGrad("z"), "y", "y_grad"));
  }
}

void GenerateSubGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ReduceToInput(ctx, ctx.OutputGrad("z"), "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string reduced = ReduceToInput(ctx, ctx.OutputGrad("z"), "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

void GenerateMulGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string product =
        Binary(ctx, "x_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("y"));
    ctx.SetInputGrad("x", ReduceToInput(ctx, product, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string product =
        Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Input("x"));
    ctx.SetInputGrad("y", ReduceToInput(ctx, product, "y", "y_grad"));
  }
}

// z = x / y: dx = dz / y and dy = -dz * z / y.
void GenerateDivGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    std::string quotient =
        Binary(ctx, "x_grad_div", "broadcast_div", ctx.OutputGrad("z"), ctx.Input("y"));
    ctx.SetInputGrad("x", ReduceToInput(ctx, quotient, "x", "x_grad"));
  }
  if (ctx.NeedInputGrad("y")) {
    std::string product =
        Binary(ctx, "y_grad_mul", "broadcast_mul", ctx.OutputGrad("z"), ctx.Output("z"));
    std::string quotient = Binary(ctx, "y_grad_div", "broadcast_div", product, ctx.Input("y"));
    std::string reduced = ReduceToInput(ctx, quotient, "y", "y_grad_sum");
    ctx.SetInputGrad("y", Negate(ctx, "y_grad", reduced));
  }
}

}  // namespace

REGISTER_OP("broadcast_add")
    .Input("x")
    .Input("y")
    .Output("z")
    .SetInferFn(MakeBroadcastInfer("broadcast_add", true))
    .SetSbpFn(MakeBroadcastSbp(PartialSumRule::kBothPartial))
    .SetGradFn(GenerateAddGrad);

REGISTER_OP("broadcast_sub")
    .Input("x")
    .Input("y")
    .Output("z")
    .SetInferFn(MakeBroadcastInfer("broadcast_sub", true))
    .SetSbpFn(MakeBroadcastSbp(PartialSumRule::kBothPartial))
    .SetGradFn(GenerateSubGrad);

REGISTER_OP("broadcast_mul")
    .Input("x")
    .Input("y")
    .Output("z")
    .SetInferFn(MakeBroadcastInfer("broadcast_mul", true))
    .SetSbpFn(MakeBroadcastSbp(PartialSumRule::kEitherPartial))
    .SetGradFn(GenerateMulGrad);

REGISTER_OP("broadcast_div")
    .Input("x")
    .Input("y")
    .Output("z")
    .SetInferFn(MakeBroadcastInfer("broadcast_div", false))
    .SetSbpFn(MakeBroadcastSbp(PartialSumRule::kFirstPartial))
    .SetGradFn(GenerateDivGrad);

}  // namespace oneflow
