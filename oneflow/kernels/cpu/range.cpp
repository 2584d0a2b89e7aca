// CPU range: out[i] = start + (offset + i) * delta, where offset is where this device's slice
// begins in the logical blob (0 unless split).

#include "oneflow/common/data_type.h"
#include "oneflow/framework/kernel_registry.h"
#include "oneflow/kernels/cpu/parallel_for.h"
#include "oneflow/sbp/tensor_slice.h"

namespace oneflow {

namespace {

template <typename T>
class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const KernelInitContext& ctx) {
    integral_ = IsIntegralDataType(DataTypeOf<T>::value);
    integer_start_ = ctx.Attr<int64_t>("integer_start");
    integer_delta_ = ctx.Attr<int64_t>("integer_delta");
    start_ = ctx.Attr<double>("start");
    delta_ = ctx.Attr<double>("delta");
    SbpParallel sbp = ctx.Sbp("out");
    const Shape& logical = ctx.LogicalDesc("out").shape;
    if (sbp.has_split_parallel() && ctx.Desc("out").shape != logical) {
      offset_ = SliceOfPart(logical, sbp, ctx.parallel_context().parallel_id(),
                            ctx.parallel_context().parallel_num())
                    .begin[0];
    }
  }

  void Forward(KernelContext& ctx) override {
    T* out = ctx.Output("out").mut_data<T>();
    const int64_t offset = offset_;
    if (integral_) {
      const int64_t start = integer_start_, delta = integer_delta_;
      ParallelForElements(ctx, ctx.Output("out").elem_count(), kElementwiseGrain,
                          [=](int64_t begin, int64_t end) {
                            for (int64_t i = begin; i < end; ++i) {
                              out[i] = static_cast<T>(start + (offset + i) * delta);
                            }
                          });
    } else {
      const double start = start_, delta = delta_;
      ParallelForElements(ctx, ctx.Output("out").elem_count(), kElementwiseGrain,
                          [=](int64_t begin, int64_t end) {
                            for (int64_t i = begin; i < end; ++i) {
                              out[i] = static_cast<T>(start + static_cast<double>(offset + i) * delta);
                            }
                          });
    }
  }

 private:
  bool integral_ = false;
  int64_t integer_start_ = 0, integer_delta_ = 1, offset_ = 0;
  double start_ = 0.0, delta_ = 1.0;
};

}  // namespace

REGISTER_CPU_ALL_TYPE_KERNELS("range", RangeKernel);

}  // namespace oneflow
