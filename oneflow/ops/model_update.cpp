// Optimizer update ops appended by the optimizer pass, one per variable. They write model (and
// momentum) in place and have no outputs. learning_rate is always a (1,) float32 blob.
//   sgd_update:      model -= lr * (scale * diff + weight_decay * model)
//   momentum_update: v = beta * v - lr * (scale * diff + weight_decay * model); model += v

#include "oneflow/common/data_type.h"
#include "oneflow/framework/op_registry.h"
#include "oneflow/framework/shape_functions.h"

namespace oneflow {

namespace {

void CheckLikeModel(const std::string& op_type, const BlobDesc& model, const std::string& name,
                    const BlobDesc& other) {
  CheckSameDataType(op_type, "model", model.data_type, name, other.data_type);
  if (other.shape != model.shape) {
    throw Error(ErrorKind::kValue) << op_type << ": " << name << " " << other.shape.ToString()
                                   << " must have model's shape " << model.shape.ToString();
  }
}

void CheckLearningRate(const std::string& op_type, const BlobDesc& learning_rate) {
  CheckDataTypeIn(op_type, "learning_rate", learning_rate.data_type, {kFloat});
  if (learning_rate.shape != Shape({1})) {
    throw Error(ErrorKind::kValue) << op_type << ": learning_rate must have shape (1,), got "
                                   << learning_rate.shape.ToString();
  }
}

// Model, its diff and any optimizer state are split alike (or all broadcast); the learning
// rate is always broadcast.
void AddModelUpdateSignatures(SbpContext& ctx, int64_t num_axes) {
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    ctx.NewSignature().SplitAllInputs(axis).Broadcast("learning_rate").Build();
  }
  ctx.NewSignature().BroadcastAllInputs().Build();
}

void InferSgdUpdate(InferContext& ctx) {
  const BlobDesc& model = ctx.Input("model");
  CheckFloatingDataType("sgd_update", "model", model.data_type);
  CheckLikeModel("sgd_update", model, "model_diff", ctx.Input("model_diff"));
  CheckLearningRate("sgd_update", ctx.Input("learning_rate"));
}

void InferMomentumUpdate(InferContext& ctx) {
  const BlobDesc& model = ctx.Input("model");
  CheckFloatingDataType("momentum_update", "model", model.data_type);
  CheckLikeModel("momentum_update", model, "model_diff", ctx.Input("model_diff"));
  CheckLikeModel("momentum_update", model, "momentum", ctx.Input("momentum"));
  CheckLearningRate("momentum_update", ctx.Input("learning_rate"));
}

}  // namespace

REGISTER_OP("sgd_update")
    .Input("model")
    .Input("model_diff")
    .Input("learning_rate")
    .Attr<double>("scale", 1.0)
    .Attr<double>("weight_decay", 0.0)
    .MutableInput("model")
    .KernelDataTypeFrom("model")
    .SetInferFn(InferSgdUpdate)
    .SetSbpFn([](SbpContext& ctx) {
      AddModelUpdateSignatures(ctx, ctx.LogicalInput("model").shape.num_axes());
    })
    .NonDifferentiable();

REGISTER_OP("momentum_update")
    .Input("model")
    .Input("model_diff")
    .Input("momentum")
    .Input("learning_rate")
    .Attr<double>("beta", 0.9)
    .Attr<double>("scale", 1.0)
    .Attr<double>("weight_decay", 0.0)
    .MutableInput("model")
    .MutableInput("momentum")
    .KernelDataTypeFrom("model")
    .SetInferFn(InferMomentumUpdate)
    .SetSbpFn([](SbpContext& ctx) {
      AddModelUpdateSignatures(ctx, ctx.LogicalInput("model").shape.num_axes());
    })
    .NonDifferentiable();

}  // namespace oneflow
