// CPU prelu and prelu_grad (oneflow/ops/prelu.cpp): one pass over x by rows of a BroadcastPlan,
// in which alpha is contiguous or one repeated value (e.g. one channel's alpha over H * W);
// rows split over the compute threads, loops compiled per vector ISA.

#include <cstdint>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"
#include "oneflow/kernels/cpu/cpu_dispatch.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

template <typename T>
ONEFLOW_CPU_DISPATCH void PreluRow(const T* __restrict__ x, const T* __restrict__ alpha,
                                   int64_t alpha_stride, T* __restrict__ y, int64_t count) {
  if (alpha_stride == 0) {
    const T a = alpha[0];
    for (int64_t i = 0; i < count; ++i) { y[i] = x[i] > T(0) ? x[i] : a * x[i]; }
    return;
  }
  for (int64_t i = 0; i < count; ++i) { y[i] = x[i] > T(0) ? x[i] : alpha[i] * x[i]; }
}

template <typename T>
ONEFLOW_CPU_DISPATCH void PreluGradRow(const T* __restrict__ x, const T* __restrict__ alpha,
                                       int64_t alpha_stride, const T* __restrict__ dy,
                                       T* __restrict__ dx, int64_t count) {
  if (alpha_stride == 0) {
    const T a = alpha[0];
    for (int64_t i = 0; i < count; ++i) { dx[i] = x[i] > T(0) ? dy[i] : a * dy[i]; }
    return;
  }
  for (int64_t i = 0; i < count; ++i) { dx[i] = x[i] > T(0) ? dy[i] : alpha[i] * dy[i]; }
}

template <typename T>
class PreluKernel final : public Kernel {
 public:
  explicit PreluKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("x").shape, {ctx.Desc("x").shape, ctx.Desc("alpha").shape}) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* alpha = ctx.Input("alpha").data<T>();
    T* y = ctx.Output("y").mut_data<T>();
    const BroadcastPlan& plan = plan_;
    ParallelForRows(ctx, plan.row_count(), plan.row_size(), [&](int64_t begin, int64_t end) {
      for (BroadcastPlan::RowCursor row(plan, begin); row.index() < end; row.Next()) {
        PreluRow(x + row.offset(0), alpha + row.offset(1), plan.row_stride(1), y + row.offset(0),
                 plan.row_size());
      }
    });
  }

 private:
  BroadcastPlan plan_;
};

template <typename T>
class PreluGradKernel final : public Kernel {
 public:
  explicit PreluGradKernel(const KernelInitContext& ctx)
      : plan_(ctx.Desc("x").shape, {ctx.Desc("x").shape, ctx.Desc("alpha").shape}) {}

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* alpha = ctx.Input("alpha").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    const BroadcastPlan& plan = plan_;
    ParallelForRows(ctx, plan.row_count(), plan.row_size(), [&](int64_t begin, int64_t end) {
      for (BroadcastPlan::RowCursor row(plan, begin); row.index() < end; row.Next()) {
        PreluGradRow(x + row.offset(0), alpha + row.offset(1), plan.row_stride(1),
                     dy + row.offset(0), dx + row.offset(0), plan.row_size());
      }
    });
  }

 private:
  BroadcastPlan plan_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("prelu", PreluKernel);
REGISTER_CPU_FLOATING_KERNELS("prelu_grad", PreluGradKernel);

}  // namespace oneflow
