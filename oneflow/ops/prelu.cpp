// prelu (flow.layers.prelu): y = x > 0 ? x : alpha * x, alpha broadcast to x by numpy rules
// (the layer's alpha has x's shape without the batch axis, 1 on shared axes); x and alpha
// floating and of one dtype.
//
// Gradients: prelu_grad (x, alpha, dy -> dx = x > 0 ? dy : alpha * dy), one fused pass; alpha's
// is sum over its broadcast axes of dy * min(x, 0), emitted as clip_by_scalar, broadcast_mul and
// reduce_sum_like, so it reuses the reduction kernels and their partial-sum signatures.
// Kernel: oneflow/kernels/cpu/prelu.cpp.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

// alpha must broadcast to x without changing x's shape.
void CheckAlpha(const std::string& op_type, const BlobDesc& x, const BlobDesc& alpha) {
  CheckFloatingOrHalfDataType(op_type, "x", x.data_type);
  CheckSameDataType(op_type, "x", x.data_type, "alpha", alpha.data_type);
  bool fits = alpha.shape.num_axes() <= x.shape.num_axes();
  for (int64_t axis = 0; fits && axis < alpha.shape.num_axes(); ++axis) {
    const int64_t x_dim = x.shape.At(x.shape.num_axes() - alpha.shape.num_axes() + axis);
    fits = alpha.shape.At(axis) == 1 || alpha.shape.At(axis) == x_dim;
  }
  if (!fits) {
    throw Error(ErrorKind::kValue)
        << op_type << ": alpha " << alpha.shape.ToString() << " must broadcast to x "
        << x.shape.ToString() << " (right-aligned, each dim 1 or x's)";
  }
}

void InferPrelu(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  CheckAlpha("prelu", x, ctx.Input("alpha"));
  ctx.Output("y") = x;
}

void InferPreluGrad(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& dy = ctx.Input("dy");
  CheckAlpha("prelu_grad", x, ctx.Input("alpha"));
  CheckSameDataType("prelu_grad", "x", x.data_type, "dy", dy.data_type);
  if (dy.shape != x.shape) {
    throw Error(ErrorKind::kValue) << "prelu_grad: dy " << dy.shape.ToString()
                                   << " must have x's shape " << x.shape.ToString();
  }
  ctx.Output("dx") = x;
}

void GetPreluSbp(SbpContext& ctx) {
  AddBroadcastBinarySignatures(ctx, "x", "alpha", "y", ctx.LogicalInput("x").shape,
                               ctx.LogicalInput("alpha").shape, PartialSumRule::kNone);
}

// dx is linear in dy.
void GetPreluGradSbp(SbpContext& ctx) {
  AddBroadcastSignatures(ctx,
                         {{"x", ctx.LogicalInput("x").shape},
                          {"alpha", ctx.LogicalInput("alpha").shape},
                          {"dy", ctx.LogicalInput("dy").shape}},
                         "dx");
  ctx.NewSignature().Broadcast("x").Broadcast("alpha").PartialSum("dy").PartialSum("dx").Build();
}

void GeneratePreluGrad(GradContext& ctx) {
  if (ctx.NeedInputGrad("x")) {
    ctx.SetInputGrad("x", ctx.AddOp("x_grad",
                                    OpConfBuilder("prelu_grad", "")
                                        .Input("x", ctx.Input("x"))
                                        .Input("alpha", ctx.Input("alpha"))
                                        .Input("dy", ctx.OutputGrad("y")),
                                    "dx"));
  }
  if (ctx.NeedInputGrad("alpha")) {
    std::string negative_part = ctx.AddOp("alpha_grad_negative_part",
                                          OpConfBuilder("clip_by_scalar", "")
                                              .Input("x", ctx.Input("x"))
                                              .Attr("has_max", true)
                                              .Attr("floating_max", 0.0),
                                          "y");
    std::string product = ctx.AddOp("alpha_grad_product",
                                    OpConfBuilder("broadcast_mul", "")
                                        .Input("x", ctx.OutputGrad("y"))
                                        .Input("y", negative_part),
                                    "z");
    ctx.SetInputGrad("alpha", ctx.AddOp("alpha_grad_sum",
                                        OpConfBuilder("reduce_sum_like", "")
                                            .Input("x", product)
                                            .Input("like", ctx.Input("alpha"))
                                            .Attr("axis", std::vector<int64_t>()),
                                        "y"));
  }
}

}  // namespace

REGISTER_OP("prelu")
    .Input("x")
    .Input("alpha")
    .Output("y")
    .SetInferFn(InferPrelu)
    .SetSbpFn(GetPreluSbp)
    .SetGradFn(GeneratePreluGrad);

REGISTER_OP("prelu_grad")
    .Input("x")
    .Input("alpha")
    .Input("dy")
    .Output("dx")
    .SetInferFn(InferPreluGrad)
    .SetSbpFn(GetPreluGradSbp)
    .NonDifferentiable();

}  // namespace oneflow
