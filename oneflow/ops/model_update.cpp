// Optimizer update ops appended by the optimizer pass, one per variable. They write model (and
// momentum) in place and have no outputs. learning_rate is always a (1,) float32 blob.
//   sgd_update:      model -= lr * (scale * diff + weight_decay * model)
//   momentum_update: v = beta * v - lr * (scale * diff + weight_decay * model); model += v
//   adam_update:     g = scale * diff; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//                    model -= lr_t (m / (sqrt(v) + epsilon) + weight_decay model), lr_t = lr, or
//                    with do_bias_correction lr sqrt(1 - b2^t) / (1 - b1^t), t = train_step + 1

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
// rate and the train step are always broadcast.
void AddModelUpdateSignatures(SbpContext& ctx, int64_t num_axes) {
  for (int64_t axis = 0; axis < num_axes; ++axis) {
    auto signature = ctx.NewSignature();
    signature.SplitAllInputs(axis).Broadcast("learning_rate");
    if (ctx.InputCount("train_step") > 0) { signature.Broadcast("train_step"); }
    signature.Build();
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

void InferAdamUpdate(InferContext& ctx) {
  const BlobDesc& model = ctx.Input("model");
  CheckFloatingDataType("adam_update", "model", model.data_type);
  CheckLikeModel("adam_update", model, "model_diff", ctx.Input("model_diff"));
  CheckLikeModel("adam_update", model, "m", ctx.Input("m"));
  CheckLikeModel("adam_update", model, "v", ctx.Input("v"));
  CheckLearningRate("adam_update", ctx.Input("learning_rate"));
  const bool bias_correction = ctx.Attr<bool>("do_bias_correction");
  if (bias_correction != ctx.HasInput("train_step")) {
    throw Error(ErrorKind::kValue)
        << "adam_update: train_step is needed exactly when do_bias_correction is true";
  }
  if (bias_correction) {
    const BlobDesc& step = ctx.Input("train_step");
    if (step.data_type != kInt64 || step.shape != Shape({1})) {
      throw Error(ErrorKind::kType) << "adam_update: train_step must be (1,) int64, got "
                                    << step.ToString();
    }
  }
  for (const char* name : {"beta1", "beta2"}) {
    const double beta = ctx.Attr<double>(name);
    if (!(beta >= 0.0 && beta < 1.0)) {
      throw Error(ErrorKind::kValue) << "adam_update: " << name << " must be in [0, 1), got "
                                     << beta;
    }
  }
  if (!(ctx.Attr<double>("epsilon") >= 0.0)) {
    throw Error(ErrorKind::kValue) << "adam_update: epsilon must be >= 0";
  }
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

REGISTER_OP("adam_update")
    .Input("model")
    .Input("model_diff")
    .Input("m")
    .Input("v")
    .Input("learning_rate")
    .OptionalInput("train_step")
    .Attr<double>("beta1", 0.9)
    .Attr<double>("beta2", 0.999)
    .Attr<double>("epsilon", 1e-8)
    .Attr<bool>("do_bias_correction", false)
    .Attr<double>("scale", 1.0)
    .Attr<double>("weight_decay", 0.0)
    .MutableInput("model")
    .MutableInput("m")
    .MutableInput("v")
    .NoGradInput("train_step")
    .KernelDataTypeFrom("model")
    .SetInferFn(InferAdamUpdate)
    .SetSbpFn([](SbpContext& ctx) {
      AddModelUpdateSignatures(ctx, ctx.LogicalInput("model").shape.num_axes());
    })
    .NonDifferentiable();

}  // namespace oneflow
