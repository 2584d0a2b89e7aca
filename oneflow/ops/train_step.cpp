// Ops of the training step counter: "learning_rate_schedule" computes this step's learning rate
// from the counter, and "increment_counter" advances the counter once per iteration.
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

void InferLearningRateSchedule(InferContext& ctx) {
  const BlobDesc& step = ctx.Input("train_step");
  if (step.data_type != kInt64 || step.shape != Shape({1})) {
    throw Error(ErrorKind::kType) << "learning_rate_schedule: train_step must be (1,) int64, got "
                                  << step.ToString();
  }
  auto boundaries = ctx.Attr<std::vector<int64_t>>("boundaries");
  auto values = ctx.Attr<std::vector<double>>("values");
  if (values.size() != boundaries.size() + 1) {
    throw Error(ErrorKind::kValue)
        << "PiecewiseConstantScheduler: len(values) must be len(boundaries) + 1, got "
        << values.size() << " values and " << boundaries.size() << " boundaries";
  }
  for (size_t i = 1; i < boundaries.size(); ++i) {
    if (boundaries[i] <= boundaries[i - 1]) {
      throw Error(ErrorKind::kValue)
          << "PiecewiseConstantScheduler: boundaries must be strictly increasing";
    }
  }
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

REGISTER_OP("learning_rate_schedule")
    .Input("train_step")
    .Output("out")
    .Attr<std::vector<int64_t>>("boundaries", {})
    .Attr<std::vector<double>>("values", {0.0})
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
