// scalar_add: out = in + operand; scalar_mul: out = in * operand. For integer inputs the
// operand is converted to the input's type.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kScalarMathDataTypes = {kFloat, kDouble, kInt32, kInt64};

void GenerateScalarMulGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din = ctx.AddOp("in_grad", OpConfBuilder("scalar_mul", "")
                                             .Input("in", ctx.OutputGrad("out"))
                                             .Attr("operand", ctx.Attr<double>("operand")));
  ctx.SetInputGrad("in", din);
}

}  // namespace

REGISTER_OP("scalar_add")
    .Input("in")
    .Output("out")
    .Attr<double>("operand", 0.0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "scalar_add", "in", "out", kScalarMathDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      // Not partial-sum: each device would add the operand once more.
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), false);
    })
    .SetGradFn([](GradContext& ctx) {
      if (ctx.NeedInputGrad("in")) { ctx.SetInputGrad("in", ctx.OutputGrad("out")); }
    });

REGISTER_OP("scalar_mul")
    .Input("in")
    .Output("out")
    .Attr<double>("operand", 0.0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "scalar_mul", "in", "out", kScalarMathDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn(GenerateScalarMulGrad);

}  // namespace oneflow
