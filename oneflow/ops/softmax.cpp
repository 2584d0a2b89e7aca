// softmax and log_softmax over one axis (attribute "axis", default -1: the last), numerically
// stable (the maximum along the axis is subtracted first).
//   softmax_grad:     dx = y * (dy - sum(dy * y))      along the axis
//   log_softmax_grad: dx = dy - exp(y) * sum(dy)       along the axis

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// Every axis but the one normalised over may be split.
void AddAxisSignatures(SbpContext& ctx, const std::string& input) {
  const int64_t num_axes = ctx.LogicalInput(input).shape.num_axes();
  int64_t softmax_axis = ctx.Attr<int64_t>("axis");
  if (softmax_axis < 0) { softmax_axis += num_axes; }
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    if (axis == softmax_axis) { continue; }
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void InferSoftmax(InferContext& ctx, const std::string& op_type, const std::string& input,
                  const std::string& output) {
  const BlobDesc& in = ctx.Input(input);
  if (in.shape.num_axes() < 1) {
    throw Error(ErrorKind::kValue)
        << op_type << ": " << input << " must have at least 1 axis, got " << in.shape.ToString();
  }
  NormalizeAxis(op_type, "axis", ctx.Attr<int64_t>("axis"), in.shape.num_axes());
  InferElementwiseUnary(ctx, op_type, input, output, {kFloat, kDouble, kFloat16});
}

GradFn SoftmaxGrad(const std::string& grad_type, const std::string& input,
                   const std::string& output) {
  return [=](GradContext& ctx) {
    if (!ctx.NeedInputGrad(input)) { return; }
    std::string dx = ctx.AddOp(input + "_grad",
                               OpConfBuilder(grad_type, "")
                                   .Input("y", ctx.Output(output))
                                   .Input("dy", ctx.OutputGrad(output))
                                   .Attr<int64_t>("axis", ctx.Attr<int64_t>("axis")),
                               "dx");
    ctx.SetInputGrad(input, dx);
  };
}

}  // namespace

REGISTER_OP("softmax")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .SetInferFn([](InferContext& ctx) { InferSoftmax(ctx, "softmax", "in", "out"); })
    .SetSbpFn([](SbpContext& ctx) { AddAxisSignatures(ctx, "in"); })
    .SetGradFn(SoftmaxGrad("softmax_grad", "in", "out"));

REGISTER_OP("softmax_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .Attr<int64_t>("axis", -1)
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "softmax_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddAxisSignatures(ctx, "y");
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

REGISTER_OP("log_softmax")
    .Input("in")
    .Output("out")
    .Attr<int64_t>("axis", -1)
    .SetInferFn([](InferContext& ctx) { InferSoftmax(ctx, "log_softmax", "in", "out"); })
    .SetSbpFn([](SbpContext& ctx) { AddAxisSignatures(ctx, "in"); })
    .SetGradFn(SoftmaxGrad("log_softmax_grad", "in", "out"));

REGISTER_OP("log_softmax_grad")
    .Input("y")
    .Input("dy")
    .Output("dx")
    .Attr<int64_t>("axis", -1)
    .SetInferFn([](InferContext& ctx) { InferActivationGrad(ctx, "log_softmax_grad"); })
    .SetSbpFn([](SbpContext& ctx) {
      AddAxisSignatures(ctx, "y");
      ctx.NewSignature().Broadcast("y").PartialSum("dy").PartialSum("dx").Build();
    })
    .NonDifferentiable();

}  // namespace oneflow
