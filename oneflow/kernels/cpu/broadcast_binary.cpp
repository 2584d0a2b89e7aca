// CPU kernels of the broadcast binary family (oneflow/ops/broadcast_binary.cpp). Same-shape
// inputs run one flat loop; otherwise rows of the merged innermost axis run with each input
// either contiguous or a repeated scalar, which covers row and column broadcasting with
// vectorisable loops (elementwise_loops.h: compiled per vector ISA).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/broadcast_binary_formulas.h"
#include "oneflow/kernels/broadcast_binary_op_list.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"
#include "oneflow/kernels/cpu/elementwise_loops.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/kernels/host_math.h"

namespace oneflow {

namespace {

// Out: z's element type (T, or int8 for comparisons and logical ops).
template <typename Functor, typename T, typename Out = T>
class BroadcastBinaryKernel final : public Kernel {
 public:
  explicit BroadcastBinaryKernel(const KernelInitContext& ctx) {
    const Shape& z = ctx.Desc("z").shape;
    plan_ = BroadcastPlan(z, {ctx.Desc("x").shape, ctx.Desc("y").shape});
  }

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* y = ctx.Input("y").data<T>();
    Out* z = ctx.Output("z").mut_data<Out>();
    const BroadcastPlan& plan = plan_;
    const int64_t row_size = plan.row_size();
    if (plan.row_count() == 1) {
      // One long row (same shapes, or a scalar operand): split the row itself.
      ParallelForElements(ctx, row_size, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        BinaryRow<Functor>(x + begin * plan.row_stride(0), plan.row_stride(0),
                           y + begin * plan.row_stride(1), plan.row_stride(1), z + begin,
                           end - begin);
      });
      return;
    }
    ParallelForRows(ctx, plan.row_count(), row_size, [&](int64_t begin, int64_t end) {
      for (BroadcastPlan::RowCursor row(plan, begin); row.index() < end; row.Next()) {
        BinaryRow<Functor>(x + row.offset(0), plan.row_stride(0), y + row.offset(1),
                           plan.row_stride(1), z + row.index() * row_size, row_size);
      }
    });
  }

 private:
  BroadcastPlan plan_;
};

#define OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, data_type, T, Out) \
  REGISTER_KERNEL(op_type, "cpu", data_type,                              \
                  BroadcastBinaryKernel<broadcast_binary::Functor<HostMath>, T, Out>)

#define OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor)         \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, float); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, double)

#define OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES(op_type, Functor)           \
  OF_REGISTER_BROADCAST_FLOATING_KERNELS(op_type, Functor);                 \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt8, int8_t, int8_t);    \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int32_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int64_t)

#define OF_REGISTER_BROADCAST_COMPARE_KERNELS(op_type, Functor)                 \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float, int8_t);     \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt8, int8_t, int8_t);     \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t, int8_t);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t, int8_t)

}  // namespace

OF_FOR_EACH_BROADCAST_BINARY_OP(OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES,
                                OF_REGISTER_BROADCAST_FLOATING_KERNELS,
                                OF_REGISTER_BROADCAST_COMPARE_KERNELS);

}  // namespace oneflow
