// scalar_add: out = in + operand; scalar_mul: out = in * operand. For integer inputs the
// operand must be a whole number (it is converted to the input's type; 0.5 would become 0).
// scalar_pow: out = in ^ exponent, floating dtypes only.

#include <cmath>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kScalarMathDataTypes = {kFloat, kDouble, kFloat16, kInt32, kInt64};

void GenerateScalarMulGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string din = ctx.AddOp("in_grad", OpConfBuilder("scalar_mul", "")
                                             .Input("in", ctx.OutputGrad("out"))
                                             .Attr("operand", ctx.Attr<double>("operand")));
  ctx.SetInputGrad("in", din);
}

void CheckOperandFitsInput(const InferContext& ctx, const char* op_type) {
  const double operand = ctx.Attr<double>("operand");
  const DataType data_type = ctx.Input("in").data_type;
  if (IsIntegralDataType(data_type) && operand != std::trunc(operand)) {
    throw Error(ErrorKind::kType) << op_type << ": the input is " << DataTypeName(data_type)
                                  << " but the scalar " << operand
                                  << " is not an integer; cast the input to a float type first";
  }
}

// d in^p = p * in^(p - 1) * dout, from scalar_pow, scalar_mul and broadcast_mul.
void GenerateScalarPowGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  const double exponent = ctx.Attr<double>("exponent");
  std::string power = ctx.AddOp("in_grad_pow", OpConfBuilder("scalar_pow", "")
                                                   .Input("in", ctx.Input("in"))
                                                   .Attr("exponent", exponent - 1.0));
  std::string scaled = ctx.AddOp(
      "in_grad_scale", OpConfBuilder("scalar_mul", "").Input("in", power).Attr("operand", exponent));
  ctx.SetInputGrad("in", ctx.AddOp("in_grad",
                                   OpConfBuilder("broadcast_mul", "")
                                       .Input("x", scaled)
                                       .Input("y", ctx.OutputGrad("out")),
                                   "z"));
}

}  // namespace

REGISTER_OP("scalar_add")
    .Input("in")
    .Output("out")
    .Attr<double>("operand", 0.0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "scalar_add", "in", "out", kScalarMathDataTypes);
      CheckOperandFitsInput(ctx, "scalar_add");
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
      CheckOperandFitsInput(ctx, "scalar_mul");
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), true);
    })
    .SetGradFn(GenerateScalarMulGrad);

REGISTER_OP("scalar_pow")
    .Input("in")
    .Output("out")
    .Attr<double>("exponent", 1.0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "scalar_pow", "in", "out", {kFloat, kDouble, kFloat16});
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes(), false);
    })
    .SetGradFn(GenerateScalarPowGrad);

}  // namespace oneflow
