// CPU in_top_k (oneflow/ops/in_top_k.cpp): per row, count the classes scoring strictly higher
// than the target's (a branch-free loop compiled per vector ISA, which also flags non-finite
// predictions); rows split over the compute threads.

#include <cmath>
#include <cstdint>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// Whether class `target` of `row` is in the top k (see the op's rule).
template <typename T>
ONEFLOW_CPU_DISPATCH bool InTopKRow(const T* __restrict__ row, int64_t classes, int64_t target,
                                    int64_t k) {
  if (target < 0 || target >= classes) { return false; }
  const T value = row[target];
  int64_t higher = 0;
  int64_t non_finite = 0;
  for (int64_t j = 0; j < classes; ++j) {
    higher += row[j] > value ? 1 : 0;
    non_finite += std::isfinite(row[j]) ? 0 : 1;
  }
  return non_finite == 0 && higher < k;
}

template <typename T>
class InTopKKernel final : public Kernel {
 public:
  explicit InTopKKernel(const KernelInitContext& ctx)
      : k_(ctx.Attr<int64_t>("k")),
        rows_(ctx.Desc("predictions").shape.At(0)),
        classes_(ctx.Desc("predictions").shape.At(1)),
        target_type_(ctx.Desc("targets").data_type) {}

  void Forward(KernelContext& ctx) override {
    if (target_type_ == kInt32) {
      Run(ctx, ctx.Input("targets").data<int32_t>());
    } else {
      Run(ctx, ctx.Input("targets").data<int64_t>());
    }
  }

 private:
  template <typename Target>
  void Run(KernelContext& ctx, const Target* targets) {
    const T* predictions = ctx.Input("predictions").data<T>();
    int8_t* out = ctx.Output("out").mut_data<int8_t>();
    const int64_t classes = classes_, k = k_;
    ParallelForRows(ctx, rows_, classes, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        out[i] = InTopKRow(predictions + i * classes, classes, static_cast<int64_t>(targets[i]), k)
                     ? 1
                     : 0;
      }
    });
  }

  int64_t k_, rows_, classes_;
  DataType target_type_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("in_top_k", InTopKKernel);

}  // namespace oneflow
