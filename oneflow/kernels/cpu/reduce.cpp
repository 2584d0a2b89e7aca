// CPU reduce_max, reduce_min, reduce_prod, reduce_any, reduce_all (reduce_loops.h does the work)
// and reduce_prod_grad.

#include <vector>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/shape_functions.h"
#include "oneflow/kernels/cpu/reduce_loops.h"

namespace oneflow {

namespace {

template <template <typename> class Reducer, typename T>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInitContext& ctx) {
    const Shape& input = ctx.Desc("input_tensor").shape;
    view_ = ReduceView(input, NormalizeReduceAxes(ctx.conf().op_type(),
                                                  Int64ListAttr(ctx.conf(), "axis"),
                                                  input.num_axes()));
  }

  void Forward(KernelContext& ctx) override {
    using Out = typename Reducer<T>::Out;
    view_.Run<Reducer<T>>(ctx, ctx.Input("input_tensor").data<T>(),
                          ctx.Output("output_tensor").mut_data<Out>());
  }

 private:
  ReduceView view_;
};

template <typename T>
using ReduceMaxKernel = ReduceKernel<MaxReducer, T>;
template <typename T>
using ReduceMinKernel = ReduceKernel<MinReducer, T>;
template <typename T>
using ReduceProdKernel = ReduceKernel<ProdReducer, T>;
template <typename T>
using ReduceAnyKernel = ReduceKernel<AnyReducer, T>;
template <typename T>
using ReduceAllKernel = ReduceKernel<AllReducer, T>;

// Per output element: the product of the nonzero reduced elements and how many are zero; then
// dx = dy * (no zero: product / x; one zero: product at the zero, 0 elsewhere; more: 0). The
// division by a nonzero x loses at most an ulp; walking rows of a BroadcastPlan serves any axes.
template <typename T>
class ReduceProdGradKernel final : public Kernel {
 public:
  explicit ReduceProdGradKernel(const KernelInitContext& ctx) {
    const Shape& x = ctx.Desc("x").shape;
    std::vector<int64_t> axes =
        NormalizeReduceAxes("reduce_prod_grad", Int64ListAttr(ctx.conf(), "axis"), x.num_axes());
    Shape kept = ReduceShape(x, axes, true);
    out_count_ = kept.elem_count();
    plan_ = BroadcastPlan(x, {kept});
  }

  void Forward(KernelContext& ctx) override {
    const T* x = ctx.Input("x").data<T>();
    const T* dy = ctx.Input("dy").data<T>();
    T* dx = ctx.Output("dx").mut_data<T>();
    std::vector<double> product(out_count_, 1.0);
    std::vector<int64_t> zeros(out_count_, 0);
    const int64_t row_size = plan_.row_size();
    const int64_t stride = plan_.row_stride(0);
    for (BroadcastPlan::RowCursor row(plan_, 0); row.index() < plan_.row_count(); row.Next()) {
      const T* x_row = x + row.index() * row_size;
      for (int64_t i = 0; i < row_size; ++i) {
        const int64_t out = row.offset(0) + i * stride;
        if (x_row[i] == T(0)) {
          ++zeros[out];
        } else {
          product[out] *= static_cast<double>(x_row[i]);
        }
      }
    }
    for (BroadcastPlan::RowCursor row(plan_, 0); row.index() < plan_.row_count(); row.Next()) {
      const T* x_row = x + row.index() * row_size;
      T* dx_row = dx + row.index() * row_size;
      for (int64_t i = 0; i < row_size; ++i) {
        const int64_t out = row.offset(0) + i * stride;
        double others = 0.0;
        if (zeros[out] == 0) {
          others = product[out] / static_cast<double>(x_row[i]);
        } else if (zeros[out] == 1 && x_row[i] == T(0)) {
          others = product[out];
        }
        dx_row[i] = static_cast<T>(others * static_cast<double>(dy[out]));
      }
    }
  }

 private:
  BroadcastPlan plan_;
  int64_t out_count_ = 0;
};

}  // namespace

REGISTER_CPU_ARITHMETIC_KERNELS("reduce_max", ReduceMaxKernel);
REGISTER_KERNEL("reduce_max", "cpu", kInt8, ReduceMaxKernel<int8_t>);
REGISTER_CPU_ARITHMETIC_KERNELS("reduce_min", ReduceMinKernel);
REGISTER_KERNEL("reduce_min", "cpu", kInt8, ReduceMinKernel<int8_t>);
REGISTER_CPU_ARITHMETIC_KERNELS("reduce_prod", ReduceProdKernel);
// any / all: the kernel is chosen by the input's dtype (the output is always int8).
REGISTER_CPU_ARITHMETIC_KERNELS("reduce_any", ReduceAnyKernel);
REGISTER_KERNEL("reduce_any", "cpu", kInt8, ReduceAnyKernel<int8_t>);
REGISTER_KERNEL("reduce_any", "cpu", kUInt8, ReduceAnyKernel<uint8_t>);
REGISTER_CPU_ARITHMETIC_KERNELS("reduce_all", ReduceAllKernel);
REGISTER_KERNEL("reduce_all", "cpu", kInt8, ReduceAllKernel<int8_t>);
REGISTER_KERNEL("reduce_all", "cpu", kUInt8, ReduceAllKernel<uint8_t>);
REGISTER_CPU_FLOATING_KERNELS("reduce_prod_grad", ReduceProdGradKernel);

}  // namespace oneflow
