// CPU bias_add: a viewed as (outer, channels, inner) with b added along channels; the loops run
// per vector ISA (cpu_dispatch.h).

#include <algorithm>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
class BiasAddKernel final : public Kernel {
 public:
  explicit BiasAddKernel(const KernelInitContext& ctx) {
    const Shape& a = ctx.Desc("a").shape;
    int64_t axis = ctx.Attr<int64_t>("axis");
    if (axis < 0) { axis += a.num_axes(); }
    outer_ = a.Count(0, axis);
    channels_ = a.At(axis);
    inner_ = a.Count(axis + 1, a.num_axes());
  }

  void Forward(KernelContext& ctx) override {
    const T* a = ctx.Input("a").data<T>();
    const T* b = ctx.Input("b").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t channels = channels_;
    const int64_t inner = inner_;
    const int64_t block = channels * inner;
    ParallelForRows(ctx, outer_, block,
                    PerIsa([=](int64_t begin, int64_t end) ONEFLOW_PER_ISA_BODY {
                      for (int64_t o = begin; o < end; ++o) {
                        const T* __restrict__ a_block = a + o * block;
                        T* __restrict__ out_block = out + o * block;
                        if (inner == 1) {
                          for (int64_t c = 0; c < channels; ++c) {
                            out_block[c] = a_block[c] + b[c];
                          }
                          continue;
                        }
                        for (int64_t c = 0; c < channels; ++c) {
                          const T bias = b[c];
                          const T* __restrict__ a_row = a_block + c * inner;
                          T* __restrict__ out_row = out_block + c * inner;
                          for (int64_t i = 0; i < inner; ++i) { out_row[i] = a_row[i] + bias; }
                        }
                      }
                    }));
  }

 private:
  int64_t outer_, channels_, inner_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("bias_add", BiasAddKernel);

}  // namespace oneflow
