// reduce_sum: sums input_tensor over `axis` (empty: all axes), keeping reduced axes as 1 when
// keepdims.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/sbp/sbp_helpers.h"

namespace oneflow {

namespace {

void InferReduceSum(InferContext& ctx) {
  const BlobDesc& input = ctx.Input("input_tensor");
  CheckDataTypeIn("reduce_sum", "input_tensor", input.data_type,
                  {kFloat, kDouble, kFloat16, kInt32, kInt64});
  std::vector<int64_t> axes =
      NormalizeReduceAxes("reduce_sum", Int64ListAttr(ctx.conf(), "axis"), input.shape.num_axes());
  // A reduction over every axis has one shape whatever the input's rows.
  ctx.Output("output_tensor") =
      BlobDesc{ReduceShape(input.shape, axes, ctx.Attr<bool>("keepdims")), input.data_type,
               input.is_dynamic && static_cast<int64_t>(axes.size()) < input.shape.num_axes()};
}

void GetReduceSumSbp(SbpContext& ctx) {
  int64_t num_axes = ctx.LogicalInput("input_tensor").shape.num_axes();
  std::vector<int64_t> axes =
      NormalizeReduceAxes("reduce_sum", Int64ListAttr(ctx.conf(), "axis"), num_axes);
  AddReduceSumSignatures(ctx, "input_tensor", "output_tensor", num_axes, axes,
                         ctx.Attr<bool>("keepdims"));
}

void GenerateReduceSumGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("input_tensor")) { return; }
  std::string input = ctx.Input("input_tensor");
  std::vector<int64_t> axes = NormalizeReduceAxes("reduce_sum", Int64ListAttr(ctx.op(), "axis"),
                                                  ctx.Desc(input).shape.num_axes());
  std::string grad = ctx.AddOp("input_tensor_grad",
                               OpConfBuilder("broadcast_like", "")
                                   .Input("x", ctx.OutputGrad("output_tensor"))
                                   .Input("like", input)
                                   .Attr("broadcast_axes", axes),
                               "y");
  ctx.SetInputGrad("input_tensor", grad);
}

}  // namespace

REGISTER_OP("reduce_sum")
    .Input("input_tensor")
    .Output("output_tensor")
    .Attr<std::vector<int64_t>>("axis", {})
    .Attr<bool>("keepdims", false)
    .SetInferFn(InferReduceSum)
    .InfersDynamic()
    .SetSbpFn(GetReduceSumSbp)
    .SetGradFn(GenerateReduceSumGrad);

}  // namespace oneflow
