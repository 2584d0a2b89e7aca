// CPU broadcast_add/sub/mul/div. Same-shape inputs run one flat loop; otherwise rows of the
// merged innermost axis run with each input either contiguous or a repeated scalar, which
// covers row and column broadcasting with vectorisable loops.

#include <algorithm>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/broadcast_plan.h"
#include "oneflow/kernels/cpu/parallel_for.h"

namespace oneflow {

namespace {

struct AddFunctor {
  template <typename T>
  static T Apply(T x, T y) {
    return x + y;
  }
};
struct SubFunctor {
  template <typename T>
  static T Apply(T x, T y) {
    return x - y;
  }
};
struct MulFunctor {
  template <typename T>
  static T Apply(T x, T y) {
    return x * y;
  }
};
struct DivFunctor {
  template <typename T>
  static T Apply(T x, T y) {
    return x / y;
  }
};

template <typename Functor, typename T>
void BinaryRow(const T* __restrict__ x, int64_t x_stride, const T* __restrict__ y, int64_t y_stride,
               T* __restrict__ z, int64_t count) {
  if (x_stride == 1 && y_stride == 1) {
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x[i], y[i]); }
  } else if (x_stride == 1) {
    const T y_value = *y;
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x[i], y_value); }
  } else if (y_stride == 1) {
    const T x_value = *x;
    for (int64_t i = 0; i < count; ++i) { z[i] = Functor::Apply(x_value, y[i]); }
  } else {
    const T value = Functor::Apply(*x, *y);
    for (int64_t i = 0; i < count; ++i) { z[i] = value; }
  }
}

template <typename Functor, typename T>
class BroadcastBinaryKernel final : public Kernel {
 public:
  explicit BroadcastBinaryKernel(const KernelInitContext& ctx) {
    const Shape& z = ctx.Desc("z").shape;
    plan_ = BroadcastPlan(z, {ctx.Desc("x").shape, ctx.Desc("y").shape});
  }

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* y = ctx.Input("y").data<T>();
    T* z = ctx.Output("z").mut_data<T>();
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
      int64_t offsets[2];
      for (int64_t row = begin; row < end; ++row) {
        plan.RowOffsets(row, offsets);
        BinaryRow<Functor>(x + offsets[0], plan.row_stride(0), y + offsets[1], plan.row_stride(1),
                           z + row * row_size, row_size);
      }
    });
  }

 private:
  BroadcastPlan plan_;
};

#define OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, data_type, T) \
  REGISTER_KERNEL(op_type, "cpu", data_type, BroadcastBinaryKernel<Functor, T>)

#define OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES(op_type, Functor)  \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kFloat, float);   \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kDouble, double); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt32, int32_t); \
  OF_REGISTER_BROADCAST_KERNEL(op_type, Functor, kInt64, int64_t)

}  // namespace

OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES("broadcast_add", AddFunctor);
OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES("broadcast_sub", SubFunctor);
OF_REGISTER_BROADCAST_KERNELS_ALL_TYPES("broadcast_mul", MulFunctor);
OF_REGISTER_BROADCAST_KERNEL("broadcast_div", DivFunctor, kFloat, float);
OF_REGISTER_BROADCAST_KERNEL("broadcast_div", DivFunctor, kDouble, double);

}  // namespace oneflow
