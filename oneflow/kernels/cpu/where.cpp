// CPU where (oneflow/ops/where.cpp): out = condition ? x : y over the broadcast of the three
// inputs, by rows of the broadcast plan with each operand contiguous or repeated.

#include <cstdint>

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"
#include "oneflow/kernels/cpu/elementwise_loops.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

// One row; strides are 1 (contiguous) or 0 (one repeated value).
template <typename C, typename T>
ONEFLOW_CPU_DISPATCH void WhereRow(const C* __restrict__ condition, int64_t condition_stride,
                                   const T* __restrict__ x, int64_t x_stride,
                                   const T* __restrict__ y, int64_t y_stride, T* __restrict__ out,
                                   int64_t count) {
  if (condition_stride == 1 && x_stride == 1 && y_stride == 1) {
    for (int64_t i = 0; i < count; ++i) { out[i] = condition[i] != 0 ? x[i] : y[i]; }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    out[i] = condition[i * condition_stride] != 0 ? x[i * x_stride] : y[i * y_stride];
  }
}

template <typename T>
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const KernelInitContext& ctx)
      : condition_type_(ctx.Desc("condition").data_type),
        plan_(ctx.Desc("out").shape,
              {ctx.Desc("condition").shape, ctx.Desc("x").shape, ctx.Desc("y").shape}) {}

  void Forward(KernelContext& ctx) override {
    switch (condition_type_) {
      case kInt8: Run<int8_t>(ctx); break;
      case kInt32: Run<int32_t>(ctx); break;
      default: Run<int64_t>(ctx); break;
    }
  }

 private:
  template <typename C>
  void Run(KernelContext& ctx) {
    const C* condition = ctx.Input("condition").data<C>();
    const T* x = ctx.Input("x").data<T>();
    const T* y = ctx.Input("y").data<T>();
    T* out = ctx.Output("out").mut_data<T>();
    const BroadcastPlan& plan = plan_;
    const int64_t row_size = plan.row_size();
    ParallelForRows(ctx, plan.row_count(), row_size, [&](int64_t begin, int64_t end) {
      for (BroadcastPlan::RowCursor row(plan, begin); row.index() < end; row.Next()) {
        WhereRow(condition + row.offset(0), plan.row_stride(0), x + row.offset(1),
                 plan.row_stride(1), y + row.offset(2), plan.row_stride(2),
                 out + row.index() * row_size, row_size);
      }
    });
  }

  DataType condition_type_;
  BroadcastPlan plan_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("where", WhereKernel);
REGISTER_KERNEL("where", "cpu", kInt8, WhereKernel<int8_t>);
REGISTER_KERNEL("where", "cpu", kInt32, WhereKernel<int32_t>);
REGISTER_KERNEL("where", "cpu", kInt64, WhereKernel<int64_t>);

}  // namespace oneflow
