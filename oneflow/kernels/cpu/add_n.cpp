// CPU add_n: the first two inputs are summed in one pass, later ones accumulated.

#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class AddNKernel final : public Kernel {
 public:
  explicit AddNKernel(const KernelInitContext& ctx) {
    while (ctx.Has("in", input_count_)) { ++input_count_; }
    inputs_.resize(input_count_);
  }

  void Forward(KernelContext& ctx) override {
    for (int64_t index = 0; index < input_count_; ++index) {
      inputs_[index] = ctx.Input("in", index).data<T>();
    }
    T* out = ctx.Output("out").mut_data<T>();
    const T* const* inputs = inputs_.data();
    const int64_t input_count = input_count_;
    ParallelForElements(ctx, ctx.Output("out").elem_count(), kElementwiseGrain,
                        PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                          T* __restrict__ sum = out;
                          const T* __restrict__ first = inputs[0];
                          if (input_count == 1) {
                            for (int64_t i = begin; i < end; ++i) { sum[i] = first[i]; }
                            return;
                          }
                          const T* __restrict__ second = inputs[1];
                          for (int64_t i = begin; i < end; ++i) { sum[i] = first[i] + second[i]; }
                          for (int64_t index = 2; index < input_count; ++index) {
                            const T* __restrict__ next = inputs[index];
                            for (int64_t i = begin; i < end; ++i) { sum[i] += next[i]; }
                          }
                        }));
  }

 private:
  int64_t input_count_ = 0;
  std::vector<const T*> inputs_;  // this iteration's input pointers, reused to avoid allocation
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("add_n", AddNKernel);
REGISTER_KERNEL("add_n", "cpu", kInt32, AddNKernel<int32_t>);
REGISTER_KERNEL("add_n", "cpu", kInt64, AddNKernel<int64_t>);

}  // namespace oneflow
