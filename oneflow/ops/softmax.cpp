// softmax over the last axis; softmax_grad: dx = y * (dy - sum(dy * y)) over the last axis.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// Every axis but the last (the one normalised over) may be split.
void AddRowwiseSignatures(SbpContext& ctx, int64_t num_axes) {
  for (int64_t axis = 0; axis + 1 < num_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void InferSoftmax(InferContext& ctx) {
  const BlobDesc& in = ctx.Input("in");
  if (in.shape.num_axes() < 1) {
    throw Error(ErrorKind::kValue)
        << "softmax: in must have at least 1 axis, got " << in.shape.ToString();
  }
  InferElementwiseUnary(ctx, "softmax", "in", "out", {kFloat, kDouble});
}

void GenerateSoftmaxGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("in")) { return; }
  std::string dx = ctx.AddOp("in_grad",
                             OpConfBuilder("softmax_grad", "")
                                 .Input("y", ctx.Output("out"))
                                 .Input("dy", ctx.OutputGrad("out")),
                             "dx");
  ctx.SetInputGrad("in", dx);
}

}  // namespace

REGISTER_OP("softmax")
    .Input("in")
    .Output("out")
    .SetInferFn(InferSoftmax)
    .SetSbpFn([](SbpContext& ctx) {
      AddRowwiseSignatures(ctx, ctx.LogicalInput("in").shape.num_axes());
    })
    .SetGradFn(GenerateSoftmaxGrad);

REGISTER_OP("softmax_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "softmax_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddRowwiseSignatures(ctx, ctx.LogicalInput("y").shape.num_axes());
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
