// clip_by_scalar: y = min(max(x, min), max), either bound optional (has_min / has_max), the
// bounds given in floating and integral form. Its gradient passes dy where min <= x <= max and
// is zero where x was clipped (clip_by_scalar_grad).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kClipDataTypes = {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64};

void GenerateClipGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  OpConfBuilder builder("clip_by_scalar_grad", "");
  builder.Input("x", ctx.Input("x")).Input("dy", ctx.OutputGrad("y"));
  for (const char* name : {"has_min", "has_max"}) { builder.Attr(name, ctx.Attr<bool>(name)); }
  for (const char* name : {"floating_min", "floating_max"}) {
    builder.Attr(name, ctx.Attr<double>(name));
  }
  for (const char* name : {"integral_min", "integral_max"}) {
    builder.Attr(name, ctx.Attr<int64_t>(name));
  }
  ctx.SetInputGrad("x", ctx.AddOp("x_grad", builder, "dx"));
}

}  // namespace

REGISTER_OP("clip_by_scalar")
    .Input("x")
    .Output("y")
    .Attr<bool>("has_min", false)
    .Attr<bool>("has_max", false)
    .Attr<double>("floating_min", 0.0)
    .Attr<double>("floating_max", 0.0)
    .Attr<int64_t>("integral_min", 0)
    .Attr<int64_t>("integral_max", 0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "clip_by_scalar", "x", "y", kClipDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
    })
    .SetGradFn(GenerateClipGrad);

REGISTER_OP("clip_by_scalar_grad")
    .Input("x")
    .Input("dy")
    .Output("dx")
    .Attr<bool>("has_min", false)
    .Attr<bool>("has_max", false)
    .Attr<double>("floating_min", 0.0)
    .Attr<double>("floating_max", 0.0)
    .Attr<int64_t>("integral_min", 0)
    .Attr<int64_t>("integral_max", 0)
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const BlobDesc& dy = ctx.Input("dy");
      CheckDataTypeIn("clip_by_scalar_grad", "dy", dy.data_type, kClipDataTypes);
      CheckSameDataType("clip_by_scalar_grad", "x", x.data_type, "dy", dy.data_type);
      if (x.shape != dy.shape) {
        throw Error(ErrorKind::kValue) << "clip_by_scalar_grad: x " << x.shape.ToString()
                                       << " and dy " << dy.shape.ToString()
                                       << " must have the same shape";
      }
      ctx.Output("dx") = dy;
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("x").shape.num_axes(), false);
      ctx.NewSignature().Broadcast("x").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
