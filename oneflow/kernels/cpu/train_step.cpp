// CPU kernels of the training step counter ops.
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/train/learning_rate_schedule.h"

namespace oneflow {
namespace {

class LearningRateScheduleKernel final : public Kernel {
 public:
  explicit LearningRateScheduleKernel(const KernelInitContext& ctx)
      : schedule_(LearningRateScheduleFromAttrs(ctx)) {}
  void Forward(KernelContext& ctx) override {
    const int64_t step = ctx.Input("train_step").data<int64_t>()[0];
    ctx.Output("out").mut_data<float>()[0] = static_cast<float>(LearningRateAt(schedule_, step));
  }

 private:
  LearningRateSchedule schedule_;
};

class IncrementCounterKernel final : public Kernel {
 public:
  explicit IncrementCounterKernel(const KernelInitContext&) {}
  void Forward(KernelContext& ctx) override { ctx.MutableInput("counter").mut_data<int64_t>()[0]++; }
};

REGISTER_KERNEL("learning_rate_schedule", "cpu", kFloat, LearningRateScheduleKernel);
REGISTER_KERNEL("increment_counter", "cpu", kInt64, IncrementCounterKernel);

}  // namespace
}  // namespace oneflow
