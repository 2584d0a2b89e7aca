// constant: a blob of `shape` and `dtype` filled with one value; constant_like: a blob shaped
// and typed like its input, filled with `value` (seeds the loss gradient with ones and gives
// zero gradients). Neither is differentiable.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

const std::vector<DataType> kConstantDataTypes = {kFloat,  kDouble, kFloat16, kInt8,
                                                  kInt32, kInt64,  kUInt8};

void InferConstant(InferContext& ctx) {
  DataType data_type = ctx.Attr<DataType>("dtype");
  CheckDataTypeIn("constant", "dtype", data_type, kConstantDataTypes);
  Shape shape = ctx.Attr<Shape>("shape");
  for (int64_t dim : shape.dims()) {
    if (dim < 0) {
      throw Error(ErrorKind::kValue)
          << "constant: shape " << shape.ToString() << " has a negative dimension";
    }
  }
  ctx.Output("out") = BlobDesc{shape, data_type};
}

}  // namespace

REGISTER_OP("constant")
    .Output("out")
    .Attr<double>("floating_value", 0.0)
    .Attr<int64_t>("integer_value", 0)
    .Attr<bool>("is_floating_value", true)
    .RequiredAttr<DataType>("dtype")
    .RequiredAttr<Shape>("shape")
    .SetInferFn(InferConstant)
    .SetSbpFn([](SbpContext& ctx) { ctx.NewSignature().BroadcastAllOutputs().Build(); })
    .NonDifferentiable();

REGISTER_OP("constant_like")
    .Input("like")
    .Output("out")
    .Attr<double>("value", 0.0)
    .SetInferFn([](InferContext& ctx) {
      InferElementwiseUnary(ctx, "constant_like", "like", "out", kConstantDataTypes);
    })
    .SetSbpFn([](SbpContext& ctx) {
      AddElementwiseSignatures(ctx, ctx.LogicalInput("like").shape.num_axes(), false);
    })
    .NonDifferentiable();

}  // namespace oneflow
