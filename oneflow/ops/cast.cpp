// cast: out = in converted to `dtype`. The gradient casts the output's gradient back to the
// input's dtype, integers included (as in OneFlow 0.3: a cast to int8 and back carries an int8
// gradient, truncated); auto mixed precision relies on it for float16.
// fused_cast_scale (OneFlow 0.3's user op): y = x converted to scalar's dtype, times scalar[0]
// (scalar of shape (1,)); x and scalar float16, float32 or float64. Not differentiable, as in
// OneFlow.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kCastDataTypes = {kFloat,  kDouble, kInt8,   kInt32,
                                             kInt64, kUInt8,  kFloat16};

void InferCast(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  DataType data_type = ctx.Attr<DataType>("dtype");
  CheckDataTypeIn("cast", "in", in.data_type, kCastDataTypes);
  CheckDataTypeIn("cast", "dtype", data_type, kCastDataTypes);
  ctx.Output("out") = BlobDesc{in.shape, data_type};
}

void GenerateCastGrad(GradContext& ctx) {
  std::string in = ctx.Input("in");
  DataType in_data_type = ctx.Desc(in).data_type;
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din = ctx.AddOp(
      "in_grad",
      OpConfBuilder("cast", "").Input("in", ctx.OutputGrad("out")).Attr("dtype", in_data_type));
  ctx.SetInputGrad("in", din);
}

}  // namespace

REGISTER_OP("cast")
    .Input("in")
    .Output("out")
    .RequiredAttr<DataType>("dtype")
    .SetInferFn(InferCast)
    .SetSbpFn([](SbpContext& ctx) {
      // Partial sums survive only a cast between floating types.
      bool linear = IsFloatingOrHalfDataType(ctx.LogicalInput("in").data_type) &&
                    IsFloatingOrHalfDataType(ctx.Attr<DataType>("dtype"));
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), linear);
    })
    .SetGradFn(GenerateCastGrad);

REGISTER_OP("fused_cast_scale")
    .Input("x")
    .Input("scalar")
    .Output("y")
    .KernelDataTypeFrom("scalar")
    .SetInferFn([](InferContext& ctx) {
      const BlobDesc& x = ctx.Input("x");
      const BlobDesc& scalar = ctx.Input("scalar");
      CheckFloatingOrHalfDataType("fused_cast_scale", "x", x.data_type);
      CheckFloatingOrHalfDataType("fused_cast_scale", "scalar", scalar.data_type);
      if (scalar.shape != Shape({1})) {
        throw Error(ErrorKind::kValue) << "fused_cast_scale: scalar must have shape (1,), got "
                                       << scalar.shape.ToString();
      }
      ctx.Output("y") = BlobDesc{x.shape, scalar.data_type};
    })
    .SetSbpFn([](SbpContext& ctx) {
      for (int64_t axis = 0; axis < ctx.LogicalInput("x").shape.num_axes(); ++axis) {
        ctx.NewSignature().Split("x", axis).Broadcast("scalar").Split("y", axis).Build();
      }
      ctx.NewSignature().PartialSum("x").Broadcast("scalar").PartialSum("y").Build();
      ctx.NewSignature().Broadcast("x").PartialSum("scalar").PartialSum("y").Build();
      ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
