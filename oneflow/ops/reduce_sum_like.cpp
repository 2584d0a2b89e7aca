// reduce_sum_like: sums x over `axis` (empty: the axes along which like broadcasts to x) so that
// the result y has like's shape. The gradient rules of broadcasting ops use it.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void InferReduceSumLike(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& like = ctx.Input("like");
  CheckDataTypeIn("reduce_sum_like", "x", x.data_type,
                  {kFloat, kDouble, kFloat16, kInt8, kInt32, kInt64});
  CheckSameDataType("reduce_sum_like", "x", x.data_type, "like", like.data_type);
  ReduceSumLikeAxes("reduce_sum_like", x.shape, like.shape, Int64ListAttr(ctx.conf(), "axis"));
  ctx.Output("y") = BlobDesc{like.shape, x.data_type, like.is_dynamic};
}

// Splitting x on a kept axis splits like and y on the matching axis; splitting x on a summed
// axis leaves a partial sum on every device.
void GetReduceSumLikeSbp(SbpContext& ctx) {
  const Shape& x = ctx.LogicalInput("x").shape;
  const Shape& like = ctx.LogicalInput("like").shape;
  std::vector<int64_t> axes =
      ReduceSumLikeAxes("reduce_sum_like", x, like, Int64ListAttr(ctx.conf(), "axis"));
  bool like_keeps_axes = like.num_axes() == x.num_axes();
  int64_t dropped_before = 0;
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), axis);
    if (reduced) {
      ctx.NewSignature().Split("x", axis).Broadcast("like").PartialSum("y").Build();
      ++dropped_before;
      continue;
    }
    int64_t like_axis = like_keeps_axes ? axis : axis - (x.num_axes() - like.num_axes());
    if (!like_keeps_axes && like == ReduceShape(x, axes, false)) {
      like_axis = axis - dropped_before;
    }
    if (like_axis < 0 || like.At(like_axis) != x.At(axis)) { continue; }
    ctx.NewSignature().Split("x", axis).Split("like", like_axis).Split("y", like_axis).Build();
  }
  ctx.NewSignature().PartialSum("x").Broadcast("like").PartialSum("y").Build();
  ctx.NewSignature().Broadcast("x").Broadcast("like").Broadcast("y").Build();
}

void GenerateReduceSumLikeGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string x = ctx.Input("x");
  std::vector<int64_t> axes =
      ReduceSumLikeAxes("reduce_sum_like", ctx.Desc(x).shape, ctx.Desc(ctx.Input("like")).shape,
                        Int64ListAttr(ctx.op(), "axis"));
  std::string grad = ctx.AddOp("x_grad",
                               OpConfBuilder("broadcast_like", "")
                                   .Input("x", ctx.OutputGrad("y"))
                                   .Input("like", x)
                                   .Attr("broadcast_axes", axes),
                               "y");
  ctx.SetInputGrad("x", grad);
}

}  // namespace

REGISTER_OP("reduce_sum_like")
    .Input("x")
    .Input("like")
    .Output("y")
    .Attr<std::vector<int64_t>>("axis", {})
    .NoGradInput("like")
    .SetInferFn(InferReduceSumLike)
    .InfersDynamic()
    .SetSbpFn(GetReduceSumLikeSbp)
    .SetGradFn(GenerateReduceSumLikeGrad);

}  // namespace oneflow
