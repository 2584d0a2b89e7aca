// CPU kernels of the training step counter ops.
#include "oneflow/framework/kernel_registry.h"

namespace oneflow {
namespace {

// Piecewise constant: values[i] where i is the number of boundaries <= step.
class LearningRateScheduleKernel final : public Kernel {
 public:
  explicit LearningRateScheduleKernel(const KernelInitContext& ctx)
      : boundaries_(ctx.Attr<std::vector<int64_t>>("boundaries")),
        values_(ctx.Attr<std::vector<double>>("values")) {}
  void Forward(KernelContext& ctx) override {
    int64_t step = ctx.Input("train_step").data<int64_t>()[0];
    size_t index = 0;
    while (index < boundaries_.size() && step >= boundaries_[index]) { ++index; }
    ctx.Output("out").mut_data<float>()[0] = static_cast<float>(values_[index]);
  }

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
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
