// CPU kernels of the training step counter ops.
#include <cmath>

#include "oneflow/common/error.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/train/learning_rate_schedule.h"

namespace oneflow {
namespace {

class LearningRateScheduleKernel final : public Kernel {
 public:
  explicit LearningRateScheduleKernel(const KernelInitContext& ctx)
      : schedule_(LearningRateScheduleFromAttrs(ctx)) {}
  // A schedule whose decay grows (an exponential rate above 1, say) may leave float32's range
  // after enough steps; that step fails, saying so, instead of updating with an inf or NaN rate.
  void Forward(KernelContext& ctx) override {
    const int64_t step = ctx.Input("train_step").data<int64_t>()[0];
    const double rate = LearningRateAt(schedule_, step);
    const float stored = static_cast<float>(rate);
    if (!std::isfinite(stored)) {
      throw Error(ErrorKind::kValue)
          << "learning_rate_schedule: the learning rate of train step " << step << " is "
          << rate << ", which float32 cannot hold; the schedule's decay overflows by then";
    }
    ctx.Output("out").mut_data<float>()[0] = stored;
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
