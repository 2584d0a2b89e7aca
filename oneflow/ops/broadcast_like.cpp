// broadcast_like: repeats x along broadcast_axes so that y has like's shape. The gradient rule
// of reduce_sum uses it.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

std::vector<int64_t> BroadcastAxes(const std::vector<int64_t>& axes, int64_t num_axes) {
  if (axes.empty()) { return axes; }
  return NormalizeReduceAxes("broadcast_like", axes, num_axes);
}

void InferBroadcastLike(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& like = ctx.Input("like");
  CheckDataTypeIn("broadcast_like", "x", x.data_type, {kFloat, kDouble, kInt32, kInt64});
  std::vector<int64_t> axes =
      BroadcastAxes(Int64ListAttr(ctx.conf(), "broadcast_axes"), like.shape.num_axes());
  BroadcastLikeInputShape("broadcast_like", x.shape, like.shape, axes);
  ctx.Output("y") = BlobDesc{like.shape, x.data_type, like.is_dynamic};
}

// Splitting y on an axis that x has at full size splits x there too; on an axis x is broadcast
// along, x stays whole. Partial sums pass through (broadcasting is linear).
void GetBroadcastLikeSbp(SbpContext& ctx) {
  const Shape& x = ctx.LogicalInput("x").shape;
  const Shape& like = ctx.LogicalInput("like").shape;
  std::vector<int64_t> axes =
      BroadcastAxes(Int64ListAttr(ctx.conf(), "broadcast_axes"), like.num_axes());
  Shape aligned = BroadcastLikeInputShape("broadcast_like", x, like, axes);
  // Position in x of each aligned axis: x either has like's rank, or lacks some axes.
  bool same_rank = x.num_axes() == like.num_axes();
  bool dropped_form = !same_rank && !axes.empty() && x == ReduceShape(like, axes, false);
  int64_t dropped_before = 0;
  for (int64_t axis = 0; axis < like.num_axes(); ++axis) {
    bool broadcast = aligned.At(axis) != like.At(axis);
    bool listed = std::binary_search(axes.begin(), axes.end(), axis);
    int64_t x_axis = same_rank      ? axis
                     : dropped_form ? axis - dropped_before
                                    : axis - (like.num_axes() - x.num_axes());
    if (dropped_form && listed) { ++dropped_before; }
    if (like.At(axis) <= 1) { continue; }
    SbpContext::SignatureBuilder builder = ctx.NewSignature();
    if (broadcast) {
      builder.Broadcast("x");
    } else {
      builder.Split("x", x_axis);
    }
    builder.Split("like", axis).Split("y", axis).Build();
  }
  ctx.NewSignature().PartialSum("x").Broadcast("like").PartialSum("y").Build();
  ctx.NewSignature().Broadcast("x").Broadcast("like").Broadcast("y").Build();
}

void GenerateBroadcastLikeGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string x = ctx.Input("x");
  const Shape& x_shape = ctx.Desc(x).shape;
  const Shape& like = ctx.Desc(ctx.Input("like")).shape;
  std::vector<int64_t> axes =
      BroadcastAxes(Int64ListAttr(ctx.op(), "broadcast_axes"), like.num_axes());
  Shape aligned = BroadcastLikeInputShape("broadcast_like", x_shape, like, axes);
  // Sum dy over exactly the axes that make reduce_sum_like give x's shape back: the listed
  // axes when x has them dropped, else the axes along which x was repeated.
  std::vector<int64_t> summed;
  if (!axes.empty() && x_shape == ReduceShape(like, axes, false)) {
    summed = axes;
  } else {
    for (int64_t axis = 0; axis < like.num_axes(); ++axis) {
      if (aligned.At(axis) != like.At(axis)) { summed.push_back(axis); }
    }
  }
  std::string dy = ctx.OutputGrad("y");
  if (summed.empty()) {
    if (x_shape != like) {
      dy = ctx.AddOp("x_grad", OpConfBuilder("reshape_like", "").Input("in", dy).Input("like", x));
    }
    ctx.SetInputGrad("x", dy);
    return;
  }
  std::string grad = ctx.AddOp(
      "x_grad",
      OpConfBuilder("reduce_sum_like", "").Input("x", dy).Input("like", x).Attr("axis", summed),
      "y");
  ctx.SetInputGrad("x", grad);
}

}  // namespace

REGISTER_OP("broadcast_like")
    .Input("x")
    .Input("like")
    .Output("y")
    .Attr<std::vector<int64_t>>("broadcast_axes", {})
    .NoGradInput("like")
    .SetInferFn(InferBroadcastLike)
    .InfersDynamic()
    .SetSbpFn(GetBroadcastLikeSbp)
    .SetGradFn(GenerateBroadcastLikeGrad);

}  // namespace oneflow
