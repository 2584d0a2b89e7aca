// add_n: out = in[0] + in[1] + ...; every input has the same shape and dtype. Each input's
// gradient is the output's gradient.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void InferAddN(InferContext& ctx) {
  int64_t count = ctx.InputCount("in");
  if (count < 1) { throw Error(ErrorKind::kValue) << "add_n: needs at least one input"; }
  const BlobDesc& first = ctx.Input("in", 0);
  CheckDataTypeIn("add_n", "in[0]", first.data_type, {kFloat, kDouble, kFloat16, kInt32, kInt64});
  for (int64_t index = 1; index < count; ++index) {
    const BlobDesc& other = ctx.Input("in", index);
    std::string name = "in[" + std::to_string(index) + "]";
    CheckSameDataType("add_n", "in[0]", first.data_type, name, other.data_type);
    if (other.shape != first.shape) {
      throw Error(ErrorKind::kValue)
          << "add_n: all inputs must have the same shape, got in[0] " << first.shape.ToString()
          << " and " << name << " " << other.shape.ToString();
    }
  }
  ctx.Output("out") = first;
}

void GenerateAddNGrad(GradContext& ctx) {
  for (int64_t index = 0; index < ctx.InputCount("in"); ++index) {
    if (ctx.NeedInputGrad("in", index)) { ctx.SetInputGrad("in", index, ctx.OutputGrad("out")); }
  }
}

}  // namespace

REGISTER_OP("add_n")
    .VariadicInput("in")
    .Output("out")
    .SetInferFn(InferAddN)
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("in", 0).shape.num_axes(), true);
    })
    .SetGradFn(GenerateAddNGrad);

}  // namespace oneflow
