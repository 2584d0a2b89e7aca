// Ops of the training step counter: "learning_rate_schedule" computes this step's learning rate
// from the counter (OneFlow 0.3's closed forms, oneflow/train/learning_rate_schedule.h), and "increment_counter" advances the counter once per iteration.
#include "oneflow/framework/op_registry.h"
#include "oneflow/train/learning_rate_schedule.h"

namespace oneflow {
namespace {

void InferLearningRateSchedule(InferContext& ctx) {
  const BlobDesc& step = ctx.Input("train_step");
  if (step.data_type != kInt64 || step.shape != Shape({1})) {
    throw Error(ErrorKind::kType) << "learning_rate_schedule: train_step must be (1,) int64, got "
                                  << step.ToString();
  }
  CheckLearningRateSchedule(LearningRateScheduleFromAttrs(ctx));
  ctx.Output("out") = BlobDesc{Shape({1}), kFloat};
}

void InferIncrementCounter(InferContext& ctx) {
  const BlobDesc& counter = ctx.Input("counter");
  if (counter.data_type != kInt64 || counter.shape != Shape({1})) {
    throw Error(ErrorKind::kType) << "increment_counter: counter must be (1,) int64, got "
                                  << counter.ToString();
  }
}

void BroadcastAll(SbpContext& ctx) {
  ctx.NewSignature().BroadcastAllInputs().BroadcastAllOutputs().Build();
}

}  // namespace

// The attributes are the fields of LearningRateSchedule (oneflow/train/learning_rate_schedule.h).
REGISTER_OP("learning_rate_schedule")
    .Input("train_step")
    .Output("out")
    .Attr<double>("base_lr", 0.0)
    .Attr<std::string>("decay", "none")
    .Attr<std::vector<int64_t>>("boundaries", {})
    .Attr<std::vector<double>>("values", {})
    .Attr<int64_t>("decay_batches", 0)
    .Attr<double>("decay_rate", 0.0)
    .Attr<bool>("staircase", false)
    .Attr<double>("end_learning_rate", 0.0)
    .Attr<double>("power", 1.0)
    .Attr<bool>("cycle", false)
    .Attr<double>("alpha", 0.0)
    .Attr<double>("beta", 0.0)
    .Attr<double>("num_periods", 0.0)
    .Attr<std::string>("warmup", "none")
    .Attr<int64_t>("warmup_batches", 0)
    .Attr<double>("warmup_multiplier", 0.0)
    .KernelDataTypeFrom("out")
    .SetInferFn(InferLearningRateSchedule)
    .SetSbpFn(BroadcastAll)
    .NonDifferentiable();

REGISTER_OP("increment_counter")
    .Input("counter")
    .MutableInput("counter")
    .SetInferFn(InferIncrementCounter)
    .SetSbpFn(BroadcastAll)
    .NonDifferentiable();

}  // namespace oneflow
