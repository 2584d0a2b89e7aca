// CPU reduce_sum and reduce_sum_like: both sum an input over axes into a smaller output whose
// memory layout is the input's shape with the summed axes set to 1. The loops, threading and
// float32 accuracy (double accumulators) are those of reduce_loops.h.

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/reduce_loops.h"

namespace oneflow {

namespace {

template <typename T>
class ReduceSumKernel final : public Kernel {
 public:
  explicit ReduceSumKernel(const KernelInitContext& ctx) {
    const Shape& input = ctx.Desc("input_tensor").shape;
    view_ = ReduceView(input, NormalizeReduceAxes("reduce_sum", Int64ListAttr(ctx.conf(), "axis"),
                                                  input.num_axes()));
  }

  void Forward(KernelContext& ctx) override {
    view_.Run<SumReducer<T>>(ctx, ctx.Input("input_tensor").data<T>(),
                             ctx.Output("output_tensor").mut_data<T>());
  }

 private:
  ReduceView view_;
};

template <typename T>
class ReduceSumLikeKernel final : public Kernel {
 public:
  explicit ReduceSumLikeKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    view_ = ReduceView(x, ReduceSumLikeAxes("reduce_sum_like", x, ctx.Desc("like").shape,
                                            Int64ListAttr(ctx.conf(), "axis")));
  }

  void Forward(KernelContext& ctx) override {
    view_.Run<SumReducer<T>>(ctx, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>());
  }

 private:
  ReduceView view_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("reduce_sum", ReduceSumKernel);
REGISTER_KERNEL("reduce_sum", "cpu", kInt32, ReduceSumKernel<int32_t>);
REGISTER_KERNEL("reduce_sum", "cpu", kInt64, ReduceSumKernel<int64_t>);
REGISTER_CPU_FLOATING_KERNELS("reduce_sum_like", ReduceSumLikeKernel);
REGISTER_KERNEL("reduce_sum_like", "cpu", kInt32, ReduceSumLikeKernel<int32_t>);
REGISTER_KERNEL("reduce_sum_like", "cpu", kInt64, ReduceSumLikeKernel<int64_t>);
// int8: the gradients of int8 broadcast ops (OneFlow 0.3 registers it); sums wrap as int8 does.
REGISTER_KERNEL("reduce_sum_like", "cpu", kInt8, ReduceSumLikeKernel<int8_t>);

}  // namespace oneflow
