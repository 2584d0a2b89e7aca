// CPU broadcast_like: repeats x to like's shape.

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"

namespace oneflow {

namespace {

template <typename T>
class BroadcastLikeKernel final : public Kernel {
 public:
  explicit BroadcastLikeKernel(const KernelInitContext& ctx) {
    const Shape& like = ctx.Desc("like").shape;
    std::vector<int64_t> axes = Int64ListAttr(ctx.conf(), "broadcast_axes");
    if (!axes.empty()) { axes = NormalizeReduceAxes("broadcast_like", axes, like.num_axes()); }
    Shape aligned = BroadcastLikeInputShape("broadcast_like", ctx.Desc("x").shape, like, axes);
    plan_ = BroadcastPlan(like, {aligned});
  }

  void Forward(KernelContext& ctx) override {
    BroadcastByPlan(plan_, ctx.Input("x").data<T>(), ctx.Output("y").mut_data<T>());
  }

 private:
  BroadcastPlan plan_;
};

}  // namespace

REGISTER_CPU_FLOATING_KERNELS("broadcast_like", BroadcastLikeKernel);
REGISTER_KERNEL("broadcast_like", "cpu", kInt32, BroadcastLikeKernel<int32_t>);
REGISTER_KERNEL("broadcast_like", "cpu", kInt64, BroadcastLikeKernel<int64_t>);

}  // namespace oneflow
