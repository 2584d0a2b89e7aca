// sparse_softmax_cross_entropy: prob = softmax(prediction) over the last (class) axis and
// out = -log(prob[label]) per example. Its gradient op computes (prob - onehot(label)) * dy.

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

// prediction (N..., C) and label (N...): checks and returns the label shape.
void CheckPredictionAndLabel(const std::string& op_type, const BlobDesc& prediction,
                             const BlobDesc& label) {
  CheckFloatingOrHalfDataType(op_type, "prediction", prediction.data_type);
  CheckDataTypeIn(op_type, "label", label.data_type, {kInt32, kInt64});
  const Shape& shape = prediction.shape;
  bool valid = shape.num_axes() >= 1 && label.shape.num_axes() == shape.num_axes() - 1;
  for (int64_t axis = 0; valid && axis < label.shape.num_axes(); ++axis) {
    valid = label.shape.At(axis) == shape.At(axis);
  }
  if (!valid) {
    throw Error(ErrorKind::kValue)
        << op_type << ": label " << label.shape.ToString() << " must be prediction "
        << shape.ToString() << " without its last (class) axis";
  }
}

// The example axes (all but the class axis) may be split; labels split with them.
void AddExampleSignatures(SbpContext& ctx, int64_t num_example_axes) {
  for (int64_t axis = 0; axis < num_example_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).SplitAllOutputs(axis).Build();
  }
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

void InferSparseSoftmaxCrossEntropy(InferContext& ctx) {
  const BlobDesc& prediction = ctx.Input("prediction");
  const BlobDesc& label = ctx.Input("label");
  CheckPredictionAndLabel("sparse_softmax_cross_entropy", prediction, label);
  ctx.Output("prob") = prediction;
  ctx.Output("out") = BlobDesc{label.shape, prediction.data_type};
}

void InferSparseSoftmaxCrossEntropyGrad(InferContext& ctx) {
  const BlobDesc& prob = ctx.Input("prob");
  const BlobDesc& label = ctx.Input("label");
  const BlobDesc& dy = ctx.Input("dy");
  CheckPredictionAndLabel("sparse_softmax_cross_entropy_grad", prob, label);
  CheckSameDataType("sparse_softmax_cross_entropy_grad", "prob", prob.data_type, "dy",
                    dy.data_type);
  if (dy.shape != label.shape) {
    throw Error(ErrorKind::kValue)
        << "sparse_softmax_cross_entropy_grad: dy " << dy.shape.ToString()
        << " must have label's shape " << label.shape.ToString();
  }
  ctx.Output("prediction_diff") = prob;
}

void GenerateSparseSoftmaxCrossEntropyGrad(GradContext& ctx) {
  if (!ctx.NeedInputGrad("prediction")) { return; }
  std::string diff = ctx.AddOp("prediction_grad",
                               OpConfBuilder("sparse_softmax_cross_entropy_grad", "")
                                   .Input("prob", ctx.Output("prob"))
                                   .Input("label", ctx.Input("label"))
                                   .Input("dy", ctx.OutputGrad("out")),
                               "prediction_diff");
  ctx.SetInputGrad("prediction", diff);
}

}  // namespace

REGISTER_OP("sparse_softmax_cross_entropy")
    .Input("prediction")
    .Input("label")
    .Output("prob")
    .Output("out")
    .NoGradInput("label")
    .KernelDataTypeFrom("prediction")
    .SetInferFn(InferSparseSoftmaxCrossEntropy)
    .SetSbpFn([](SbpContext& ctx) {
      AddExampleSignatures(ctx, ctx.LogicalInput("label").shape.num_axes());
    })
    .SetGradFn(GenerateSparseSoftmaxCrossEntropyGrad);

REGISTER_OP("sparse_softmax_cross_entropy_grad")
    .Input("prob")
    .Input("label")
    .Input("dy")
    .Output("prediction_diff")
    .KernelDataTypeFrom("prob")
    .SetInferFn(InferSparseSoftmaxCrossEntropyGrad)
    .SetSbpFn([](SbpContext& ctx) {
      AddExampleSignatures(ctx, ctx.LogicalInput("label").shape.num_axes());
    })
    .NonDifferentiable();

}  // namespace oneflow
