// slice: y = x[start:stop:step] on every axis (attributes normalised as Python's
// slice.indices does; the Python wrappers flow.slice / flow.slice_v2 resolve None and negative
// values). slice_update: y = x with that slice replaced by `update`. slice's gradient writes dy
// into zeros with slice_update; slice_update's gradients are a slice of dy (for update) and dy
// with the slice zeroed (for x).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/index_functions.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

SliceSpec SliceSpecOf(const OperatorConf& conf) {
  return SliceSpec{Int64ListAttr(conf, "start"), Int64ListAttr(conf, "stop"),
                   Int64ListAttr(conf, "step")};
}

OpConfBuilder WithSliceAttrs(OpConfBuilder builder, const OperatorConf& conf) {
  return builder.Attr("start", Int64ListAttr(conf, "start"))
      .Attr("stop", Int64ListAttr(conf, "stop"))
      .Attr("step", Int64ListAttr(conf, "step"));
}

void InferSlice(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  CheckDataTypeIn("slice", "x", x.data_type, MovableDataTypes());
  if (x.shape.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << "slice: cannot slice a 0-d blob";
  }
  const SliceSpec spec = ClampToRunShape(SliceSpecOf(ctx.conf()), x);
  ctx.Output("y") = BlobDesc{Shape(SlicedDims("slice", x.shape, spec)), x.data_type};
}

void InferSliceUpdate(InferContext& ctx) {
  const BlobDesc& x = ctx.Input("x");
  const BlobDesc& update = ctx.Input("update");
  CheckDataTypeIn("slice_update", "x", x.data_type, MovableDataTypes());
  CheckSameDataType("slice_update", "x", x.data_type, "update", update.data_type);
  if (x.shape.num_axes() == 0) {
    throw Error(ErrorKind::kValue) << "slice_update: cannot slice a 0-d blob";
  }
  Shape sliced(SlicedDims("slice_update", x.shape, ClampToRunShape(SliceSpecOf(ctx.conf()), x)));
  if (update.shape != sliced) {
    throw Error(ErrorKind::kValue) << "slice_update: update " << update.shape.ToString()
                                   << " must have the shape of the slice of x "
                                   << x.shape.ToString() << ", which is " << sliced.ToString();
  }
  ctx.Output("y") = x;
}

// An axis the slice keeps whole can be split: every device slices its own rows alike. Both
// ops are linear in all their inputs, so partial sums pass through.
void GetSliceSbp(SbpContext& ctx, bool is_update) {
  const Shape& x = ctx.LogicalInput("x").shape;
  SliceSpec spec = SliceSpecOf(ctx.conf());
  for (int64_t axis = 0; axis < x.num_axes(); ++axis) {
    if (!SliceKeepsAxis(x, spec, axis)) { continue; }
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().PartialSum("x").PartialSum(is_update ? "update" : "x").PartialSum("y").Build();
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void GenerateSliceGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("x")) { return; }
  std::string zeros = ctx.AddOp(
      "x_grad_zeros", OpConfBuilder("constant_like", "").Input("like", ctx.Input("x")));
  std::string dx = ctx.AddOp("x_grad",
                             WithSliceAttrs(OpConfBuilder("slice_update", "")
                                                .Input("x", zeros)
                                                .Input("update", ctx.OutputGrad("y")),
                                            ctx.op()),
                             "y");
  ctx.SetInputGrad("x", dx);
}

void GenerateSliceUpdateGrad(GradContext& ctx) {
  std::string dy = ctx.OutputGrad("y");
  if (ctx.NeedInputGrad("x")) {
    std::string zeros = ctx.AddOp(
        "x_grad_zeros", OpConfBuilder("constant_like", "").Input("like", ctx.Input("update")));
    std::string dx = ctx.AddOp(
        "x_grad",
        WithSliceAttrs(OpConfBuilder("slice_update", "").Input("x", dy).Input("update", zeros),
                       ctx.op()),
        "y");
    ctx.SetInputGrad("x", dx);
  }
  if (ctx.NeedInputGrad("update")) {
    std::string dupdate = ctx.AddOp(
        "update_grad", WithSliceAttrs(OpConfBuilder("slice", "").Input("x", dy), ctx.op()), "y");
    ctx.SetInputGrad("update", dupdate);
  }
}

}  // namespace

REGISTER_OP("slice")
    .Input("x")
    .Output("y")
    .RequiredAttr<std::vector<int64_t>>("start")
    .RequiredAttr<std::vector<int64_t>>("stop")
    .RequiredAttr<std::vector<int64_t>>("step")
    .SetInferFn(InferSlice)
    .SetSbpFn([](SbpContext& ctx) { GetSliceSbp(ctx, false); })
    .SetGradFn(GenerateSliceGrad);

REGISTER_OP("slice_update")
    .Input("x")
    .Input("update")
    .Output("y")
    .RequiredAttr<std::vector<int64_t>>("start")
    .RequiredAttr<std::vector<int64_t>>("stop")
    .RequiredAttr<std::vector<int64_t>>("step")
    .SetInferFn(InferSliceUpdate)
    .SetSbpFn([](SbpContext& ctx) { GetSliceSbp(ctx, true); })
    .SetGradFn(GenerateSliceUpdateGrad);

}  // namespace oneflow
